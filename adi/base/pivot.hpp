#pragma once
// Pivot checking, one meaning in every plan family (the options of adi/tridiagonal.hpp,
// large_tridiagonal.hpp, variable_tridiagonal.hpp, block_tridiagonal.hpp,
// batched_cholesky.hpp, hines.hpp and the distributed plans of adi/mpi/ refer here).
//
// check_pivots (bool, every family):
//   true   every pivot is checked; the first failing one throws SingularSystem (SingularBlock
//          for block families, UnstableSystem where Thomas without pivoting fails its growth
//          check and pivoting = none) with system() and row() filled in: the line / system /
//          neuron / matrix in the plan's numbering, and the row (block row; Cholesky: the
//          column) of the failing pivot. The message says the same in words. On a CUDA
//          executor the check synchronises the executor's stream at the end of solve().
//   false  no report: the solve stays asynchronous on a CUDA executor, and a failing
//          system's solution holds no meaningful values.
//   Default true everywhere except BatchedCholeskyPlan, whose per-matrix `info` (LAPACK's
//   convention) already reports a failure; there check_pivots = true throws as well.
//
// pivot_tolerance (double, the families that offer it: large systems, blocks, distributed
// blocks): a pivot p counts as singular when it is not finite or
//     |p| <= pivot_tolerance * s,
// s the largest magnitude among the entries of the row being divided by p:
//   scalar rows (a_i, b_i, c_i):   s = max(|a_i|, |b_i|, |c_i|) of row i as given;
//   block rows:                    s = max |(S_i)_rc| over the M x M pivot block
//                                  S_i = B_i - A_i C*_{i-1} whose LU produces p.
// Accepted values: finite, 0 <= pivot_tolerance < 1 (checked by check_pivot_tolerance
// below, InvalidArgument naming the option otherwise). 0 keeps each family's floor: scalar
// families then reject only zero and non-finite pivots; block families use 16 machine
// epsilons of T (an exactly zero pivot almost never appears in a block LU in floating point).
#include <cmath>
#include <string>

#include "adi/base/error.hpp"

namespace adi::detail {

// Throws InvalidArgument unless pivot_tolerance is finite and in [0, 1). `who` names the
// options struct (e.g. "LargeTridiagonalOptions").
inline void check_pivot_tolerance(double pivot_tolerance, const char* who) {
  if (!(std::isfinite(pivot_tolerance) && pivot_tolerance >= 0 && pivot_tolerance < 1))
    throw InvalidArgument(std::string(who) + ": pivot_tolerance = " + number(pivot_tolerance) +
                          " must be finite and in [0, 1) (a pivot p is singular when |p| <= pivot_tolerance * "
                          "the largest magnitude of its row or block; 0: the family's floor, adi/base/pivot.hpp)");
}

}  // namespace adi::detail
