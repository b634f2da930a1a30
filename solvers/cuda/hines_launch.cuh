#pragma once
// Host side of the Hines kernels: launch shapes (solvers/cuda/hines.cuh), one definition for
// both precisions (hines.cu: float, hines_fp64.cu: double).
#include <algorithm>
#include <string>

#include "solvers/cuda/hines.cuh"

namespace adi::cuda_backend {

namespace hines {

inline int shared_optin(int device) {
  int v = 0;
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return v;
}

template <class Kernel>
void allow_shared(Kernel k, std::size_t bytes) {
  if (bytes > 48 * 1024) ADI_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                             static_cast<int>(bytes)));
}

inline unsigned blocks_for(index_t items, int threads) {
  return static_cast<unsigned>((items + threads - 1) / threads);
}

// Threads per block of the shared-memory kernels: as many as fit (`per_thread` bytes each),
// at most `most`; the override must fit too.
inline int threads_fitting(std::size_t per_thread, int cap, int most, int forced, const char* kernel, int rows) {
  const int fit = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(most), cap / per_thread));
  if (forced > 0) {
    if (static_cast<std::size_t>(forced) * per_thread > static_cast<std::size_t>(cap))
      throw InvalidArgument(std::string("HinesPlan: ") + kernel + " with threads_per_block = " +
                            std::to_string(forced) + " needs " + std::to_string(forced * per_thread) +
                            " bytes of shared memory for neurons of " + std::to_string(rows) +
                            " compartments; the device allows " + std::to_string(cap));
    return forced;
  }
  if (fit < 1)
    throw Unsupported(std::string("HinesPlan: ") + kernel + ": one neuron of " + std::to_string(rows) +
                      " compartments needs " + std::to_string(per_thread) + " bytes of shared memory, over the " +
                      std::to_string(cap) + " a block may have; use HinesKernel::cuda_paper or cuda_branch");
  return fit;
}

}  // namespace hines

inline int hines_stack_threads_impl(int max_size, std::size_t value_size, int device) {
  const std::size_t per = 2 * static_cast<std::size_t>(std::max(1, max_size)) * value_size;
  return static_cast<int>(std::min<std::size_t>(256, hines::shared_optin(device) / per));
}

template <class T>
void hines_solve(HinesKernel kernel, const adi::detail::HinesView& v, const T* l, T* d, T* r, const HinesLaunch& launch,
                 int* bad, void* stream) {
  using namespace hines;
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (bad) ADI_CUDA_CHECK(cudaMemsetAsync(bad, 0x7f, sizeof(int), st));  // kNoBadNeuron
  if (v.count == 0) return;
  int device = 0;
  ADI_CUDA_CHECK(cudaGetDevice(&device));
  const int cap = shared_optin(device);
  const int forced = launch.threads_per_block;
  switch (kernel) {
    case HinesKernel::cuda_block_shared:
    case HinesKernel::cuda_stack: {
      const bool stack = kernel == HinesKernel::cuda_stack;
      const int ranges = launch.ranges > 0 ? launch.ranges : 1;
      for (int k = 0; k < ranges; ++k) {
        const index_t first = launch.ranges > 0 ? launch.range_first[k] : 0;
        const index_t last = launch.ranges > 0 ? launch.range_first[k + 1] : v.count;
        const int rows = std::max(1, launch.ranges > 0 ? launch.range_rows[k] : v.max_size);
        const std::size_t per = static_cast<std::size_t>(rows) * sizeof(T) * (stack ? 2 : 1);
        // The paper's block-shared kernel used 128 threads per block; the stack kernel wants as
        // many threads as shared memory allows (they hide each other's latency).
        const int threads = threads_fitting(per, cap, stack ? 256 : 128, forced, stack ? "cuda_stack" : "cuda_block_shared", rows);
        const std::size_t smem = per * threads;
        if (stack) {
          allow_shared(stack_kernel<T>, smem);
          stack_kernel<T><<<blocks_for(last - first, threads), threads, smem, st>>>(v, l, d, r, first, last, rows, bad);
        } else {
          allow_shared(shared_kernel<T>, smem);
          shared_kernel<T><<<blocks_for(last - first, threads), threads, smem, st>>>(v, l, d, r, first, last, bad);
        }
        ADI_CUDA_CHECK(cudaGetLastError());
      }
      return;
    }
    case HinesKernel::cuda_branch: {
      // A warp per neuron for the paper's sizes (up to ~700 compartments, few branches per
      // level); 4 warps for large cells, whose levels hold tens to hundreds of branches.
      const int threads = forced > 0 ? forced : v.max_size < 1024 ? 32 : 128;
      const std::size_t smem = 3 * static_cast<std::size_t>(v.max_size) * sizeof(T);
      if (smem <= static_cast<std::size_t>(cap)) {
        allow_shared(branch_kernel<T, true>, smem);
        branch_kernel<T, true><<<static_cast<unsigned>(v.count), threads, smem, st>>>(v, l, d, r, bad);
      } else {
        branch_kernel<T, false><<<static_cast<unsigned>(v.count), threads, 0, st>>>(v, l, d, r, bad);
      }
      ADI_CUDA_CHECK(cudaGetLastError());
      return;
    }
    default: {  // cuda_paper: the paper's CUDA block of 128 threads
      const int threads = forced > 0 ? forced : 128;
      paper_kernel<T><<<blocks_for(v.count, threads), threads, 0, st>>>(v, l, d, r, 0, v.count, bad);
      ADI_CUDA_CHECK(cudaGetLastError());
      return;
    }
  }
}

template <class T>
void hines_assemble(index_t span, const T* d0, const T* cdt, const T* ge, T* diag, T* v, const index_t* stim_pos,
                    const T* stim_amp, int nstim, void* stream) {
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (span > 0) {
    const index_t blocks = std::min<index_t>((span + 255) / 256, 65536);
    hines::assemble_kernel<T><<<static_cast<unsigned>(blocks), 256, 0, st>>>(span, d0, cdt, ge, diag, v);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
  if (nstim > 0) {
    hines::stimulus_kernel<T><<<(nstim + 127) / 128, 128, 0, st>>>(stim_pos, stim_amp, nstim, v);
    ADI_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace adi::cuda_backend
