#pragma once
// Hopper's bulk copy engine (sm_90, plain PTX; no tensor map): one instruction copies a
// contiguous, 16-byte aligned piece of global memory (a multiple of 16 bytes) into shared
// memory and reports its bytes to an mbarrier in shared memory; the threads that read the
// piece wait on the barrier's phase. No registers are held and no per-element copies go
// through the load/store unit while the copy is in flight (the cp.async alternative issues
// one 4- or 8-byte copy per thread and element). Used by thomas_pcr_strided.cuh.
#include <cstdint>

namespace adi::cuda_backend::kernels {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ADI_HAVE_BULK_COPY 1
#else
#define ADI_HAVE_BULK_COPY 0
#endif

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// One arrival per phase (the thread that announces the bytes).
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, unsigned arrivals) {
#if ADI_HAVE_BULK_COPY
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(arrivals) : "memory");
#endif
}

// Makes the barriers' initialisation visible to the copy engine (before a block barrier).
__device__ __forceinline__ void mbarrier_init_fence() {
#if ADI_HAVE_BULK_COPY
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// Makes this thread's earlier shared-memory accesses (the barrier's initialisation, or the reads
// of a slot about to be refilled) ordered before later bulk copies (the async proxy).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if ADI_HAVE_BULK_COPY
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

// The phase's arrival, announcing `bytes` that bulk copies will complete.
__device__ __forceinline__ void mbarrier_arrive_expect(std::uint64_t* bar, unsigned bytes) {
#if ADI_HAVE_BULK_COPY
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
#endif
}

// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
#if ADI_HAVE_BULK_COPY
  asm volatile(
      "{\n"
      ".reg .pred P1;\n"
      "ADI_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@P1 bra ADI_DONE;\n"
      "bra ADI_WAIT;\n"
      "ADI_DONE:\n"
      "}\n" ::"r"(smem_address(bar)),
      "r"(parity)
      : "memory");
#endif
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) from global src to shared dst,
// completed on bar.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, unsigned bytes, std::uint64_t* bar) {
#if ADI_HAVE_BULK_COPY
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_address(dst)),
               "l"(src), "r"(bytes), "r"(smem_address(bar))
               : "memory");
#endif
}

// Asks L2 to fetch `bytes` (a multiple of 16; src 16-byte aligned) of global memory, with no
// destination and nothing to wait for: the tile after next of thomas_pcr_strided.cuh's warp form.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, unsigned bytes) {
#if ADI_HAVE_BULK_COPY
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
#endif
}

}  // namespace adi::cuda_backend::kernels
