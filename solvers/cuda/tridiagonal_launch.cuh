#pragma once
// The CUDA tridiagonal launcher: one switch from the plan's chosen kernel to the
// algorithm files. Included by the two translation units that instantiate it (one per
// precision, so they compile in parallel).
#include <cuda_runtime.h>

#include <string>

#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/pivoting_thread.cuh"
#include "solvers/cuda/thomas_naive.cuh"
#include "solvers/cuda/thomas_pcr_hybrid.cuh"
#include "solvers/cuda/thomas_pcr_long.cuh"
#include "solvers/cuda/thomas_pcr_strided.cuh"
#include "solvers/cuda/thomas_shared_transpose.cuh"
#include "solvers/cuda/thomas_shuffle_transpose.cuh"
#include "solvers/cuda/thomas_strided.cuh"
#include "solvers/cuda/thomas_truncated.cuh"

namespace adi::cuda_backend::detail {

// Rows per chunk of the coalesced strided Thomas: 4 arrays x 8 rows (fp32) or 4 rows
// (fp64) = 128 bytes in flight per thread (8 rows of fp64 spill registers).
template <class T>
constexpr int strided_chunk() {
  return 32 / static_cast<int>(sizeof(T));
}

template <class T>
void solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u, bool periodic,
           void* workspace, int* flag, void* stream_ptr, const Tuning& tuning) {
  namespace k = kernels;
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  switch (kernel) {
    case Kernel::cuda_thomas_naive:
      return k::launch_thomas_naive<T>(lines, bands, d, u, periodic, workspace, flag, stream);
    case Kernel::cuda_thomas_strided:
      return k::launch_thomas_thread_per_line<T, strided_chunk<T>()>(lines, bands, d, u, periodic, workspace,
                                                                     flag, stream);
    case Kernel::cuda_thomas_shuffle_transpose:
      return k::launch_thomas_shuffle_transpose<T>(lines, bands, d, u, periodic, workspace, flag, stream);
    case Kernel::cuda_thomas_shared_transpose:
      return k::launch_thomas_shared_transpose<T>(lines, bands, d, u, periodic, workspace, flag, stream);
    case Kernel::cuda_thomas_pcr:
      return k::launch_thomas_pcr<T>(lines, bands, d, u, periodic, flag, stream, tuning);
    case Kernel::cuda_thomas_pcr_strided:
      return k::launch_thomas_pcr_strided<T>(lines, bands, d, u, periodic, flag, stream, tuning);
    case Kernel::cuda_thomas_pcr_long:
      return k::launch_thomas_pcr_long<T>(lines, bands, d, u, periodic, flag, stream, tuning);
    case Kernel::cuda_thomas_truncated:
      // flag: set where a line's truncation or growth test refuses it (the plan then re-solves with
      // the exact kernel, adi/tridiagonal.cpp); form 3 (loads double-buffered, the 2-GPU SPIKE
      // form's default).
      if (periodic)
        throw InvalidArgument("CUDA tridiagonal solve: cuda_thomas_truncated takes non-periodic lines only; use "
                              "Kernel::automatic");
      if (u == d)
        throw InvalidArgument("CUDA tridiagonal solve: cuda_thomas_truncated solves out of place only (u != d)");
      return k::launch_thomas_truncated<T, true>(lines, bands.a, bands.b, bands.c, bands.shared, d, u, 3, flag,
                                                 stream);
    case Kernel::cuda_pivoting:
      return k::launch_pivoting_thread_per_line<T, strided_chunk<T>()>(lines, bands, d, u, periodic, workspace,
                                                                       flag, stream);
    default:
      throw InvalidArgument(std::string("CUDA tridiagonal solve: kernel ") + kernel_name(kernel) +
                            " is not a CUDA kernel");
  }
}

}  // namespace adi::cuda_backend::detail

// Explicit instantiations of the backend entry points for one value type.
#define ADI_CUDA_TRIDIAGONAL_INSTANTIATE(T)                                                                 \
  namespace adi::cuda_backend {                                                                             \
  template <>                                                                                               \
  void tridiagonal_solve<T>(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u,       \
                            bool periodic, void* workspace, int* flag, void* stream) {                      \
    detail::solve<T>(kernel, lines, bands, d, u, periodic, workspace, flag, stream, Tuning{});              \
  }                                                                                                         \
  template <>                                                                                               \
  void tridiagonal_solve_tuned<T>(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u, \
                                  bool periodic, void* workspace, int* flag, void* stream,                  \
                                  const Tuning& tuning) {                                                   \
    detail::solve<T>(kernel, lines, bands, d, u, periodic, workspace, flag, stream, tuning);                \
  }                                                                                                         \
  template <>                                                                                               \
  bool pivoting_fallback_solve<T>(const LineSet& lines, BandView<T> bands, const T* d, T* u, bool periodic, \
                                  void* workspace, const int* gate, int* flag, void* stream) {              \
    return kernels::launch_pivoting_gated<T, detail::strided_chunk<T>()>(                                   \
        lines, bands, d, u, periodic, workspace, gate, flag, static_cast<cudaStream_t>(stream));            \
  }                                                                                                         \
  }
