#pragma once
// Partial pivoting of variable-size tridiagonal batches on a CUDA device, seen from plain C++
// (implemented in solvers/cuda/pivoting_variable.cu; without CUDA the stand-ins of
// kernel_list.hpp). One thread per system, the layouts of variable_tridiagonal_solve
// (backend.hpp), plain and periodic.
#include <cstddef>

#include "solvers/cuda/backend.hpp"

namespace adi::cuda_backend {
ADI_CUDA_KERNELS_BEGIN
// U's two super-diagonals (periodic: and its columns n-2, n-1), packed by the batch's offsets:
// 2 * total values (periodic 4 * total).
ADI_CUDA_KERNEL(std::size_t variable_pivoting_workspace_bytes(const VariableBatchView& v, bool periodic,
                                                              std::size_t value_size))
// Enqueues the solve; `bad_system` (device int, may be null) receives the smallest system with a
// zero or non-finite pivot, or stays kNoBadSystem (the launch sets it so first).
template <class T>
ADI_CUDA_KERNEL(void variable_pivoting_solve(VariableKernel kernel, const VariableBatchView& v,
                                             const VariableDeviceArrays<T>& x, bool periodic, void* workspace,
                                             int* bad_system, void* stream))
ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend
