// Variable-size batched Cholesky, fp32 (the kernels: cholesky_vbatched.cuh).
#include "solvers/cuda/cholesky_vbatched.cuh"

namespace adi::cuda_backend {

template <>
void cholesky_vbatched_factor<float>(const VariableBatchView& v, const CholeskyRange& range, float* const* A,
                                     const int* ld, int* info, void* stream) {
  cholesky_launch<float>(v, range, A, ld, info, stream);
}
template <>
void cholesky_vbatched_solve<float>(const VariableBatchView& v, const float* const* L, const int* ld, float* const* B,
                                    const int* ldb, int nrhs, const int* info, void* stream) {
  cholesky_solve_launch<float>(v, L, ld, B, ldb, nrhs, info, stream);
}
template <>
void cholesky_pointers<float>(float* base, const index_t* offsets, index_t count, float** out, void* stream) {
  cholesky_pointers_launch<float>(base, offsets, count, out, stream);
}
template <>
void cholesky_pointers<double>(double* base, const index_t* offsets, index_t count, double** out, void* stream) {
  cholesky_pointers_launch<double>(base, offsets, count, out, stream);
}

}  // namespace adi::cuda_backend
