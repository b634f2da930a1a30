#pragma once
// Thomas along contiguous lines with the transpose done through shared memory (paper
// 6.1.1, algorithm 8): the warp writes the 32-line x K-row tile it loaded into a
// [32][K+1] array (the +1 pad spreads a column over all banks) and each lane reads back
// its own line's row. One tile per warp, reused for each array; warp-synchronous
// (__syncwarp), no block barrier. The driver is thomas_transpose.cuh.
#include "solvers/cuda/thomas_transpose.cuh"

namespace adi::cuda_backend::kernels {

template <class T>
struct SharedTranspose {
  static constexpr int K = transpose_chunk<T>();
  static constexpr int G = kWarp / K;
  static constexpr int values_per_warp = kWarp * (K + 1);
  T* tile;
  __device__ explicit SharedTranspose(T* t) : tile(t) {}
  __device__ static int own(int lane) { return lane; }
  __device__ void to_lines(T (&v)[K]) const {
    const int lane = static_cast<int>(threadIdx.x) % kWarp, g = lane / K, p = lane % K;
#pragma unroll
    for (int j = 0; j < K; ++j) tile[(j * G + g) * (K + 1) + p] = v[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = tile[lane * (K + 1) + j];
    __syncwarp();
  }
  __device__ void from_lines(T (&v)[K]) const {
    const int lane = static_cast<int>(threadIdx.x) % kWarp, g = lane / K, p = lane % K;
#pragma unroll
    for (int j = 0; j < K; ++j) tile[lane * (K + 1) + j] = v[j];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = tile[(j * G + g) * (K + 1) + p];
    __syncwarp();
  }
};

template <class T>
void launch_thomas_shared_transpose(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                                    void* workspace, int* flag, cudaStream_t stream) {
  launch_thomas_transpose<T, SharedTranspose<T>>(ls, bands, d, u, periodic, workspace, flag, stream);
}

}  // namespace adi::cuda_backend::kernels
