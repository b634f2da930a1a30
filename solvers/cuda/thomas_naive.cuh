#pragma once
// The naive GPU baseline: one thread per line, every value loaded straight from global
// memory when it is needed (no chunking, no transpose). Along X (stride 1) each warp
// load touches 32 different cache lines, which is why the paper (section 6.1) and the
// benchmark show it far below copy bandwidth there; along Y/Z it is coalesced.
// It is the thread-per-line Thomas of thomas_strided.cuh with a chunk of one row.
#include "solvers/cuda/thomas_strided.cuh"

namespace adi::cuda_backend::kernels {

template <class T>
void launch_thomas_naive(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                         void* workspace, int* flag, cudaStream_t stream) {
  launch_thomas_thread_per_line<T, 1>(ls, bands, d, u, periodic, workspace, flag, stream);
}

}  // namespace adi::cuda_backend::kernels
