// Block-tridiagonal CUDA kernels: placeholder until the kernels land (issue 4).
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi::cuda_backend {

std::size_t block_tridiagonal_workspace_bytes(BlockKernel, const BlockLineSet&, std::size_t) {
  throw Unsupported("block tridiagonal solves on CUDA are not implemented yet; use Executor::host()");
}
template <class T>
void block_tridiagonal_solve(BlockKernel, const BlockLineSet&, const T*, const T*, const T*, const T*, T*, double,
                             void*, unsigned long long*, void*) {
  throw Unsupported("block tridiagonal solves on CUDA are not implemented yet; use Executor::host()");
}
template void block_tridiagonal_solve<float>(BlockKernel, const BlockLineSet&, const float*, const float*,
                                             const float*, const float*, float*, double, void*,
                                             unsigned long long*, void*);
template void block_tridiagonal_solve<double>(BlockKernel, const BlockLineSet&, const double*, const double*,
                                              const double*, const double*, double*, double, void*,
                                              unsigned long long*, void*);

}  // namespace adi::cuda_backend
