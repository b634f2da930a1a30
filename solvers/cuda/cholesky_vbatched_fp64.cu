// Variable-size batched Cholesky, fp64 (a file of its own; compiled in a group, CMakeLists.txt).
#include "solvers/cuda/cholesky_vbatched.cuh"

namespace adi::cuda_backend {

template <>
void cholesky_vbatched_factor<double>(const VariableBatchView& v, const CholeskyRange& range, double* const* A,
                                      const int* ld, int* info, void* stream) {
  cholesky_launch<double>(v, range, A, ld, info, stream);
}
template <>
void cholesky_vbatched_solve<double>(const VariableBatchView& v, const double* const* L, const int* ld,
                                     double* const* B, const int* ldb, int nrhs, const int* info, void* stream) {
  cholesky_solve_launch<double>(v, L, ld, B, ldb, nrhs, info, stream);
}

}  // namespace adi::cuda_backend
