#pragma once
// The X-tile route of partial pivoting (Kernel::cuda_pivoting; issue 23, stop 39, branch
// h-pivx; automatic's route on contiguous lines since stop 40, in its recompute form, where the
// GPU gives a block the shared memory below: 256^3 X on an H100, fp32 0.475 -> 0.371 ms, fp64
// 0.833 -> 0.726 ms against the tile route, docs/pivoting.md "Stop 40"): contiguous lines (X sweeps,
// StridedLines of element stride 1), not periodic, any n >= 1. One thread per line, a warp
// owns 32 neighbouring lines, and every global access goes through the warp's shared memory
// with cp.async copies, coalesced (consecutive lanes on consecutive addresses of one line):
// the elimination is common::pivot_line (the thread route's pivot_step / pivot_last and back
// substitution, bit for bit), reached through common::XtileIo
// (solvers/common/pivoting_xtile.hpp, which says how the tiles go; the host test runs the same
// code with 32 threads a warp). Against the tile route (pivoting_tile.cuh, automatic's on X:
// 255 / 158 registers, one array's 32 bytes a line in flight at a time per warp), the copies
// hold no registers, two chunks of four arrays are in flight per warp, and the backward pass's
// rows are prefetched a chunk ahead. Same traffic (11 values a row): at most ~45% of copy.
// Shared memory: 4 warps a block, each two buffers of 4 x [32][K + 1] (K = 64 bytes of a
// line: fp32 16, fp64 8 rows): 70 / 74 KB a block, three blocks an SM on an H100 / H200; the
// recompute form adds u's [32][K + 1] tile a warp: 78 / 83 KB, two blocks an SM there.
// ADI_PIVOTING_XTILE_BYTES=32 halves the chunk (twice the blocks an SM), for measurement.
// ADI_PIVOTING_XTILE_FORM=store | recompute (unset: recompute, the default since stop 40; store is
// kept for measurement): the recompute form (common::pivot_line_recompute: U is not
// stored; each chunk's rows are staged again and its steps rerun from a checkpoint of the
// elimination's state, the same values bit for bit): a, b, c, d read twice, u written, 6 / K
// checkpoint values a row (9.75 at K = 8 against 11); twice the elimination's arithmetic.
// Issue 15 item 8 (stop 40): the forms only those two switches reach (store with 64- or 32-byte
// chunks, recompute with 32) are compiled only with -DADI_CUDA_UNROLL_ALL=ON; asked for in a
// build without them, said once on stderr, and the default (recompute, 64 bytes) runs: the same
// answers bit for bit (test_pivoting_xtile_cuda).
#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "adi/base/env_switch.hpp"
#include "solvers/common/pivoting_xtile.hpp"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pivoting_thread_line.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kXtileWarps = 4;  // warps a block

inline bool pivoting_xtile_fits(const LineSet& l, bool periodic) {
  return !periodic && l.stride == 1 && l.n >= 1 && l.n < (i64(1) << 30);
}

// The form a launch takes: the recompute form (U recomputed from checkpoints) with 64-byte
// chunks, the default; ADI_PIVOTING_XTILE_FORM=store (U stored) and ADI_PIVOTING_XTILE_BYTES=32
// (half the chunk) pick the forms kept for measurement, compiled only with ADI_CUDA_UNROLL_ALL
// (else one note on stderr and the default). Read at each launch; any other value an
// InvalidArgument (env_choice).
struct XtileForm {
  bool recompute = true;
  int bytes = 64;
};
inline XtileForm pivoting_xtile_form() {
  const XtileForm f{::adi::detail::env_choice("ADI_PIVOTING_XTILE_FORM", {"recompute", "store"}, 0) == 0,
                    ::adi::detail::env_choice("ADI_PIVOTING_XTILE_BYTES", {"64", "32"}, 0) == 1 ? 32 : 64};
#if !defined(ADI_CUDA_UNROLL_ALL)
  if (!f.recompute || f.bytes != 64) {
    static std::once_flag once;
    note_form_not_compiled(once,
                           (std::string("ADI_PIVOTING_XTILE_FORM=") + (f.recompute ? "recompute" : "store") +
                            ", ADI_PIVOTING_XTILE_BYTES=" + std::to_string(f.bytes) +
                            " (an X-tile pivoting form kept for measurement)")
                               .c_str(),
                           "the default (the recompute form, 64-byte chunks)");
    return XtileForm{};
  }
#endif
  return f;
}

// The shared memory a block of the largest form asks for (fp64, 64-byte chunks, bands not
// shared, U recomputed: 82,944 bytes dynamic, the store form's 73,728 less, xtile_warp_elements;
// + the kernel's 1,024 static bytes of line offsets); automatic takes the route only on a GPU
// that grants it (an H100 / H200 grants 232,448; a Turing card 65,536 takes the tile route
// instead). (Stop 40 counted the store form's 73,728 alone; no GPU grants a block an amount
// between the two.)
inline std::size_t pivoting_xtile_most_smem() {
  constexpr int K = common::xtile_rows<double, 64>();
  return static_cast<std::size_t>(kXtileWarps) *
         (std::max(common::xtile_warp_elements<K>(false, true), common::xtile_warp_elements<K>(false, false)) *
              sizeof(double) +
          kWarp * sizeof(long long));
}
inline bool pivoting_xtile_device_fits() { return launch_limits().smem_optin >= pivoting_xtile_most_smem(); }

// The device's copies and barriers for common::XtileIo.
struct XtileDeviceWarp {
  int lane;
  template <class T>
  __device__ __forceinline__ void copy(T* s, const T* g) const {
    __pipeline_memcpy_async(s, g, sizeof(T));
  }
  __device__ __forceinline__ void commit() const { __pipeline_commit(); }
  __device__ __forceinline__ void wait_prior1() const { __pipeline_wait_prior(1); }
  __device__ __forceinline__ void wait_all() const { __pipeline_wait_prior(0); }
  __device__ __forceinline__ void sync() const { __syncwarp(); }
  __device__ __forceinline__ void fence() const { __threadfence_block(); }
  template <class T>
  __device__ __forceinline__ T ldg(const T* g) const {
    return __ldg(g);
  }
};

// ws: the workspace, three arrays of n x 32 per tile of 32 lines (u1', u2', y'; recompute: the
// checkpoints, 3 x ceil(n / K) x 32).
template <class T, int K, bool Shared, bool Recompute>
__global__ void __launch_bounds__(kXtileWarps* kWarp)
    pivoting_xtile_kernel(DeviceLines L, const T* a, const T* b, const T* c, const T* d, T* u, T* ws, int* flag,
                          const int* gate) {
  extern __shared__ __align__(16) unsigned char pivot_xtile_smem[];
  __shared__ long long s_off[kXtileWarps][kWarp];
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  const i64 nl = L.lines(), n = L.n;
  const i64 tile = static_cast<i64>(blockIdx.x) * kXtileWarps + warp;
  if (tile * kWarp >= nl || pivot_gate_closed(gate)) return;  // uniform per warp
  const i64 line = tile * kWarp + lane;
  s_off[warp][lane] = line < nl ? static_cast<long long>(L.offset(line)) : -1LL;
  __syncwarp();
  XtileDeviceWarp w{lane};
  T* const s = reinterpret_cast<T*>(pivot_xtile_smem) + warp * common::xtile_warp_elements<K>(Shared, Recompute);
  T* const wt = ws + tile * 3 * n * kWarp;
  report(common::xtile_warp_solve<T, K, Shared, Recompute>(w, s_off[warp], n, a, b, c, d, u, wt, s), flag);
}

inline std::size_t pivoting_xtile_workspace(const LineSet& l, std::size_t value_size) {
  const std::size_t tiles = static_cast<std::size_t>((l.lines() + kWarp - 1) / kWarp);
  return slice_bytes(3 * tiles * static_cast<std::size_t>(l.n) * kWarp, value_size);
}

template <class T, int K, bool Recompute>
void launch_pivoting_xtile_rows(const DeviceLines& L, BandView<T> bands, const T* d, T* u, T* ws, int* flag,
                                cudaStream_t stream, const int* gate) {
  const i64 tiles = (L.lines() + kWarp - 1) / kWarp;
  const unsigned blocks = static_cast<unsigned>((tiles + kXtileWarps - 1) / kXtileWarps);
  const std::size_t smem =
      static_cast<std::size_t>(kXtileWarps) * common::xtile_warp_elements<K>(bands.shared, Recompute) * sizeof(T);
  auto launch = [&](auto kernel) {
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
    kernel<<<blocks, kXtileWarps * kWarp, smem, stream>>>(L, bands.a, bands.b, bands.c, d, u, ws, flag, gate);
  };
  if (bands.shared)
    launch(pivoting_xtile_kernel<T, K, true, Recompute>);
  else
    launch(pivoting_xtile_kernel<T, K, false, Recompute>);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launch_pivoting_xtile(const LineSet& ls, BandView<T> bands, const T* d, T* u, void* workspace, int* flag,
                           cudaStream_t stream, const int* gate = nullptr) {
  const DeviceLines L = to_device(ls);
  T* const ws = static_cast<T*>(workspace);
  constexpr int wide = common::xtile_rows<T, 64>();
  [[maybe_unused]] const XtileForm f = pivoting_xtile_form();
#if defined(ADI_CUDA_UNROLL_ALL)  // (the forms kept for measurement: pivoting_xtile_form)
  constexpr int narrow = common::xtile_rows<T, 32>();
  const bool half = f.bytes == 32;
  if (!f.recompute && half) return launch_pivoting_xtile_rows<T, narrow, false>(L, bands, d, u, ws, flag, stream, gate);
  if (!f.recompute) return launch_pivoting_xtile_rows<T, wide, false>(L, bands, d, u, ws, flag, stream, gate);
  if (half) return launch_pivoting_xtile_rows<T, narrow, true>(L, bands, d, u, ws, flag, stream, gate);
#endif
  launch_pivoting_xtile_rows<T, wide, true>(L, bands, d, u, ws, flag, stream, gate);
}

}  // namespace adi::cuda_backend::kernels
