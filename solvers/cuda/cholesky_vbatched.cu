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

void* side_stream_create(int device) {
  ADI_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  ADI_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}
void side_stream_destroy(void* stream) noexcept {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}
void* side_event_create(int device) {
  ADI_CUDA_CHECK(cudaSetDevice(device));
  cudaEvent_t e = nullptr;
  ADI_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}
void side_event_destroy(void* event) noexcept {
  if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
void side_event_record(void* event, void* stream) {
  ADI_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}
void side_stream_wait(void* stream, void* event) {
  ADI_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
}

}  // namespace adi::cuda_backend
