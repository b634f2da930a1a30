#pragma once
// Thomas along contiguous lines with the transpose done in registers (paper 6.1.2,
// algorithm 9): within each group of K lanes a butterfly of shfl_xor exchanges swaps
// one bit of the lane index with one bit of the register index per stage, so log2(K)
// stages transpose the K x K block that the group loaded (K/2 shuffles per stage).
// The driver (chunked Thomas, scratch layout) is thomas_transpose.cuh.
#include "solvers/cuda/thomas_transpose.cuh"

namespace adi::cuda_backend::kernels {

template <class T>
struct ShuffleTranspose {
  static constexpr int K = transpose_chunk<T>();
  static constexpr int values_per_warp = 0;  // no shared memory
  __device__ explicit ShuffleTranspose(T*) {}
  // After the transpose, lane (group g, position p) owns line p*G + g of the tile.
  __device__ static int own(int lane) { return (lane % K) * (kWarp / K) + lane / K; }
  __device__ static void butterfly(T (&v)[K]) {
    const int p = static_cast<int>(threadIdx.x) % K;
#pragma unroll
    for (int bit = 1; bit < K; bit <<= 1) {
      const bool hi = (p & bit) != 0;
#pragma unroll
      for (int j = 0; j < K; ++j) {
        if (j & bit) continue;
        const T send = hi ? v[j] : v[j | bit];
        const T recv = __shfl_xor_sync(kFullMask, send, bit);
        if (hi)
          v[j] = recv;
        else
          v[j | bit] = recv;
      }
    }
  }
  __device__ void to_lines(T (&v)[K]) const { butterfly(v); }
  __device__ void from_lines(T (&v)[K]) const { butterfly(v); }  // a transpose is its own inverse
};

template <class T>
void launch_thomas_shuffle_transpose(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                                     void* workspace, int* flag, cudaStream_t stream) {
  launch_thomas_transpose<T, ShuffleTranspose<T>>(ls, bands, d, u, periodic, workspace, flag, stream);
}

}  // namespace adi::cuda_backend::kernels
