// Block-tridiagonal CUDA entry point, double precision (see block_thomas_cuda.cu).
#include "solvers/cuda/block_thomas_launch.cuh"

namespace adi::cuda_backend {

template <>
void block_tridiagonal_solve<double>(BlockKernel kernel, const BlockLineSet& l, const double* a, const double* b,
                                     const double* c, const double* d, double* u, double tol, bool periodic,
                                     void* workspace, unsigned long long* singular, void* stream) {
  block::solve<double>(kernel, l, a, b, c, d, u, tol, periodic, workspace, singular, stream);
}

}  // namespace adi::cuda_backend
