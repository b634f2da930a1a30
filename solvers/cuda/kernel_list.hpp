#pragma once
// How the CUDA backend's headers declare its entry points: each once, in the header that
// lists its family (backend.hpp, partition_local_passes.hpp, halo_planes.hpp), and the
// build without CUDA gets its answers from that same list instead of hand-written stubs.
//
//   ADI_CUDA_KERNEL(void f(int n, T* x))            an entry point; without CUDA it throws
//                                                   Unsupported if ever reached
//   ADI_CUDA_KERNEL_OR(return 0;, int f(int n))     the same with the answer a build without
//                                                   CUDA gives (queries: no devices, ...)
//
// With ADI_HAVE_CUDA (adi built with CUDA: a PUBLIC definition of the adi and adi_cuda
// targets, so every translation unit that sees these headers agrees) each is a plain
// declaration, defined in the .cu files; without it, an inline definition. Templates put
// `template <class T>` in front as usual.
#include "adi/base/error.hpp"

namespace adi::cuda_backend {
[[noreturn]] inline void not_compiled() {
  throw Unsupported("adi was built without CUDA; rebuild with -DADI_WITH_CUDA=ON or use Executor::host()");
}
}  // namespace adi::cuda_backend

#if defined(ADI_HAVE_CUDA)
#define ADI_CUDA_KERNEL(...) __VA_ARGS__;
#define ADI_CUDA_KERNEL_OR(body, ...) __VA_ARGS__;
#define ADI_CUDA_KERNELS_BEGIN
#define ADI_CUDA_KERNELS_END
#else
#define ADI_CUDA_KERNEL(...) \
  inline __VA_ARGS__ { ::adi::cuda_backend::not_compiled(); }
#define ADI_CUDA_KERNEL_OR(body, ...) \
  inline __VA_ARGS__ { body }
// The parameters of the stand-ins are unused by design.
#define ADI_CUDA_KERNELS_BEGIN \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")
#define ADI_CUDA_KERNELS_END _Pragma("GCC diagnostic pop")
#endif
