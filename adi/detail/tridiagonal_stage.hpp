#pragma once
// Internal: the description of one implicit ADI stage that TridiagonalPlan::solve_stage
// runs (adi::Operator fills it; adi/tridiagonal.hpp says what the plan does with it). The
// fields are those of cuda_backend::FusedStage (solvers/cuda/backend.hpp), which the CUDA
// kernel reads as they are: per line the right-hand side
//   base*inv_s - (A v) + sources + Neumann terms        (Dirichlet end rows: `end`)
// with A's line coefficients a, d, c (length n, shared by every line), then the solve of
// (I/s - A) u = rhs; fold.count > 0 (CUDA, lines along x): base formed from the explicit terms.
#include "adi/tridiagonal.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi::detail {

template <class T>
struct TridiagonalStage : cuda_backend::FusedStage<T> {};

}  // namespace adi::detail
