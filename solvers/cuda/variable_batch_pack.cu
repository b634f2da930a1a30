// Copies between a user layout and the plan's SortedInterleaved layout (adi/variable_batch.hpp).
// One thread per slot of the sorted layout: the sorted side is read or written coalesced,
// the user side is gathered (done once per batch, like cuThomasBatch's interleave).
#include <cuda_runtime.h>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

namespace {

template <class T>
__global__ void variable_pack_kernel(VariableBatchView v, VariableSource layout, const T* src, T* dst,
                                     bool to_sorted) {
  const index_t c = blockIdx.y + static_cast<index_t>(blockIdx.z) * gridDim.y;  // chunk
  if (c >= v.chunks) return;
  const int W = v.chunk_width;
  const index_t slots = static_cast<index_t>(v.chunk_rows[c]) * W;
  const index_t base = v.chunk_offsets[c];
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < slots;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    const int k = static_cast<int>(i / W), j = static_cast<int>(i % W);
    const index_t p = c * W + j;
    const index_t s = p < v.count ? v.order[p] : -1;
    const bool real = s >= 0 && k < v.sizes[s];
    const index_t at = real ? (layout.offsets ? layout.offsets[s] + k : k * layout.stride + s) : 0;
    if (to_sorted)
      dst[base + i] = real ? src[at] : T(0);
    else if (real)
      dst[at] = src[base + i];
  }
}

}  // namespace

template <class T>
void variable_pack(const VariableBatchView& v, VariableSource layout, const T* src, T* dst, bool to_sorted,
                   void* stream) {
  if (v.chunks == 0) return;
  // grid.y x grid.z cover the chunks (grid.y <= 65535); grid.x covers a chunk's slots.
  const unsigned threads = 256;
  const index_t rows_x = (static_cast<index_t>(v.max_size) * v.chunk_width + threads - 1) / threads;
  const unsigned gx = static_cast<unsigned>(rows_x < 1 ? 1 : rows_x > 64 ? 64 : rows_x);
  const unsigned gy = static_cast<unsigned>(v.chunks < 65535 ? v.chunks : 65535);
  const unsigned gz = static_cast<unsigned>((v.chunks + gy - 1) / gy);
  variable_pack_kernel<T><<<dim3(gx, gy, gz), threads, 0, static_cast<cudaStream_t>(stream)>>>(v, layout, src, dst,
                                                                                               to_sorted);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template void variable_pack<float>(const VariableBatchView&, VariableSource, const float*, float*, bool, void*);
template void variable_pack<double>(const VariableBatchView&, VariableSource, const double*, double*, bool,
                                    void*);
template void variable_pack<int>(const VariableBatchView&, VariableSource, const int*, int*, bool, void*);
template void variable_pack<index_t>(const VariableBatchView&, VariableSource, const index_t*, index_t*, bool,
                                     void*);

}  // namespace adi::cuda_backend
