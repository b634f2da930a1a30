#pragma once
// Thomas-PCR hybrid along contiguous lines (paper 6.3, algorithm 10): one warp per
// line. The warp reads the line with coalesced loads (32 consecutive values per
// instruction, any alignment, no vector-width assumption) straight into the padded
// shared-memory layout of pcr_warp_core.cuh, so the "transpose" of algorithm 10 is
// free, solves it there and writes u back coalesced: one read of a, b, c, d and one
// write of u, nothing else in global memory. Segment loops are unrolled for up to MaxM
// rows (pcr_segment_registers.cuh); MaxM = 0 runs pcr_line's plain loops (longer lines,
// up to kPcrMaxN). Blocks are persistent; each warp streams its lines either through
// registers or, with shared bands, double-buffered with cp.async (see the kernel).
#include <cuda_pipeline_primitives.h>

#include <cstdlib>

#include "adi/base/env_switch.hpp"
#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_segment_registers.cuh"

namespace adi::cuda_backend::kernels {

// Rows a lane loads before its first shared-memory store: 4 arrays x 8 rows (fp32) or
// 4 rows (fp64) = 128 bytes in flight per lane; more costs registers (occupancy).
template <class T>
constexpr int pcr_stage_unroll() {
  return 32 / static_cast<int>(sizeof(T));
}

// Async = true: each warp has two line buffers and copies the next line into one with
// cp.async (global -> shared, no registers held) while it solves the other, so its
// loads stay in flight through the solve. Async = false: the line goes through
// registers into one buffer, then is solved (the warp alternates between the two).
template <class T, bool Shared, int MaxM, bool Async>
__global__ void __launch_bounds__(256, 2)
    thomas_pcr_kernel(DeviceLines L, PcrShape sh, const T* __restrict__ a, const T* __restrict__ b,
                      const T* __restrict__ c, const T* d, T* u, bool periodic, int* flag) {
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  T* smem = reinterpret_cast<T*>(pcr_smem);
  constexpr int NA = Shared ? 1 : 4;  // arrays per line buffer: d (, a, b, c)
  constexpr int NB = Async ? 2 : 1;   // line buffers per warp
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  const int P = sh.per_line, n = sh.n;
  const i64 nl = L.lines(), st = L.stride;
  bool bad = false;
  PcrFactors<T> F{};
  T* mine = smem + warp * NB * NA * P;  // this warp's buffers: [buffer][array][P]
  if (Shared) {
    F = PcrFactors<T>::carve(smem, P);
    mine += PcrFactors<T>::values(P);
    if (warp == 0) pcr_factorize_shared<T, true>(sh, a, b, c, periodic, F, bad);
    __syncthreads();
  }
  const T* src[4] = {d, a, b, c};
  auto buffer = [&](int k) { return mine + (k % NB) * NA * P; };  // d, a, b, c at +0, P, 2P, 3P
  auto issue = [&](i64 off, T* buf) {                             // cp.async of one line into buf
    for (int r = lane; r < n; r += kWarp) {
      const int p = sh.pos(r);
#pragma unroll
      for (int k = 0; k < NA; ++k) __pipeline_memcpy_async(buf + k * P + p, src[k] + off + r * st, sizeof(T));
    }
    __pipeline_commit();
  };
  auto stage = [&](i64 off, T* buf) {  // through registers, U rows per lane in flight
    constexpr int U = pcr_stage_unroll<T>();
    for (int r0 = 0; r0 < n; r0 += U * kWarp) {
      T v[NA][U];
#pragma unroll
      for (int j = 0; j < U; ++j) {
        const int r = r0 + j * kWarp + lane;
        if (r < n) {
#pragma unroll
          for (int k = 0; k < NA; ++k) v[k][j] = src[k][off + r * st];
        }
      }
#pragma unroll
      for (int j = 0; j < U; ++j) {
        const int r = r0 + j * kWarp + lane;
        if (r < n) {
#pragma unroll
          for (int k = 0; k < NA; ++k) buf[k * P + sh.pos(r)] = v[k][j];
        }
      }
    }
  };
  const i64 step = static_cast<i64>(gridDim.x) * W;
  i64 line = static_cast<i64>(blockIdx.x) * W + warp;
  i64 off = line < nl ? L.offset(line) : 0;
  if (Async && line < nl) issue(off, buffer(0));
  for (int it = 0; line < nl; line += step, ++it) {
    T* buf = buffer(it);
    const i64 this_off = off;
    if (line + step < nl) off = L.offset(line + step);
    if constexpr (Async) {
      if (line + step < nl) {
        issue(off, buffer(it + 1));
        __pipeline_wait_prior(1);  // this line's copies (the older group) have landed
      } else {
        __pipeline_wait_prior(0);
      }
    } else {
      stage(this_off, buf);
    }
    __syncwarp();
    T *sd = buf, *sa = buf + P, *sb = buf + 2 * P, *sc = buf + 3 * P;
    if (!Shared && !periodic && lane == 0) {  // a_0 and c_{n-1} are not part of the system
      sa[0] = T(0);
      sc[sh.pos(n - 1)] = T(0);
    }
    __syncwarp();
    if constexpr (Shared) {
      if constexpr (MaxM > 0)
        pcr_line_shared_registers<T, MaxM>(sh, F, sd);
      else
        pcr_line_shared(sh, F, sd);
    } else {
      if constexpr (MaxM > 0)
        pcr_line_unrolled<T, MaxM>(sh, sa, sb, sc, sd, periodic, bad);
      else
        pcr_line(sh, sa, sb, sc, sd, periodic, bad);
    }
    __syncwarp();
#pragma unroll 4
    for (int r = lane; r < n; r += kWarp) u[this_off + r * st] = sd[sh.pos(r)];
    __syncwarp();
  }
  if constexpr (Async) __pipeline_wait_prior(0);
  report(bad, flag);
}

// The lean form for contiguous lines of 32 * 8 = 256 rows with per-line bands (issue 16;
// solvers/cuda/README.md "X lines of 256: what binds the X hybrid, and the lean form"): the same
// function as thomas_pcr_kernel<T, false, 8, false>, with a line's row index math fixed at compile
// time.
// Lane l moves rows r = 32 j + l (j < 8) in and out; their slots pos(r) = r + r/8 = 36 j + l + l/8,
// so each array costs one base pointer per line and immediate offsets (no 64-bit index, stride or
// r < n test per value); the segment loops run with len = 8 on every lane (pcr_line_unrolled's
// Full form: no per-row predicate; a non-periodic line's reduced PCR unrolled over its 5 levels).
// Tail (stop 46): non-periodic lines of 225 .. 255 rows solved as 256: the rows past n are identity
// rows (b = 1, a = c = d = 0; c of row n - 1 zeroed, as c_{n-1} of every non-periodic line), so the
// 256-row system splits into the line's and a block that solves to zero; only the last of a lane's
// 8 rows is tested against n (loaded and stored where r < n). sh is pcr_shape(256).
// M = 16 (stop 47): lines of 512 rows (slot pos(r) = 34 j + l + l/16), staged through registers 8
// rows of the four arrays at a time; its tail: non-periodic lines of 481 .. 511 rows (sh pcr_shape(512)).
// Launched by default with per-line bands for lines of 256 and 512 and the tails (not periodic)
// 225 .. 255 and 481 .. 511 (launch_thomas_pcr; ADI_PCR_X_LEAN=0: the general kernel).
template <class T, bool Tail = false, int M = 8>
__global__ void __launch_bounds__(256, 2)
    thomas_pcr_lean_kernel(DeviceLines L, PcrShape sh, const T* __restrict__ a, const T* __restrict__ b,
                           const T* __restrict__ c, const T* d, T* u, bool periodic, int* flag) {
  static_assert(M == 8 || M == 16, "lines of 256 or 512 (and their tails)");
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  constexpr int P = kWarp * (M + 1), J = kWarp + kWarp / M;  // slots of one line array; slot step of j
  constexpr int G = 8;                                        // rows of each array staged at a time
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  const i64 nl = L.lines();
  // Tail: whether this lane's last row (r = 32 (M - 1) + lane) is a row of the line.
  const bool last_in = !Tail || lane + kWarp * (M - 1) < static_cast<int>(L.n);
  bool bad = false;
  T* buf = reinterpret_cast<T*>(pcr_smem) + warp * 4 * P;  // d, a, b, c at +0, P, 2P, 3P
  T* mine = buf + lane + lane / M;                          // this lane's slot of row j: mine[J j]
  const T* src[4] = {d, a, b, c};
  const i64 step = static_cast<i64>(gridDim.x) * W;
  for (i64 line = static_cast<i64>(blockIdx.x) * W + warp; line < nl; line += step) {
    const i64 off = L.offset(line) + lane;  // stride 1 (the dispatch's condition for this kernel)
    stage_line_rows<T, M, G>(mine, [&](int g, T(&v)[4][G]) {
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const T* p = src[k] + off;
#pragma unroll
        for (int jj = 0; jj < G; ++jj) {
          const int j = g + jj;
          v[k][jj] = j < M - 1 || last_in ? p[j * kWarp] : T(k == 2 ? 1 : 0);  // (identity rows: b = 1)
        }
      }
    });
    __syncwarp();
    T *sd = buf, *sa = buf + P, *sb = buf + 2 * P, *sc = buf + 3 * P;
    if (!periodic && lane == 0) {  // a_0 and c_{n-1} are not part of the system
      sa[0] = T(0);
      const int last = Tail ? static_cast<int>(L.n) - 1 : kWarp * M - 1;
      sc[last + last / M] = T(0);  // pos(n - 1)
    }
    __syncwarp();
    pcr_line_unrolled<T, M, true>(sh, sa, sb, sc, sd, periodic, bad);
    __syncwarp();
    T* out = u + off;
#pragma unroll
    for (int j = 0; j < M; ++j)
      if (j < M - 1 || last_in) out[j * kWarp] = mine[j * J];
    __syncwarp();
  }
  report(bad, flag);
}

// The lean form with shared bands (stop 47, issue 16): thomas_pcr_kernel<T, true, M, *>'s function
// for contiguous lines of 32 * M rows (M = 8: 256 rows, M = 16: 512), periodic or not, with the lean
// form's compile-time row map (lane l moves rows r = 32 j + l, slot pos(r) = r + r/M = J j + l + l/M
// with J = 32 + 32/M: one base pointer a line and immediate offsets, no 64-bit index, stride or r < n
// test per value) and pcr_line_shared_registers' Full form (every segment M rows, the reduced PCR's 5
// levels unrolled). d streams in with cp.async Depth - 1 lines ahead of the line being solved, each
// warp's Depth buffers of one line (the general kernel: one line ahead for 256 rows, none for 512);
// the factors are formed once per block (pcr_factorize_shared) as there.
// Launched by default for lines of 256 and 512 with shared bands at Depth 2 (launch_thomas_pcr;
// ADI_PCR_X_LEAN=0: the general kernels). Depth 3 measured no faster at 256 (H200, run s47/2: 256^3 fp32
// 0.0540-0.0545 ms against 0.0545-0.0554, fp64 0.0923-0.0926 against 0.0926-0.0927) and is not
// instantiated. Blocks of 256 per SM at least: 3 for M = 8 (fp64 took 86-88 registers without the
// bound, two blocks an SM against the general kernel's 80 registers and three), 2 for M = 16.
// Tail (stop 47): non-periodic lines of 32 (M - 1) + 1 .. 32 M - 1 rows solved as 32 M, as the per-line
// kernel's tail: the factors of the bands with identity rows past n (pcr_factorize_shared's Tail), d = 0
// there (stored, not copied), u stored for rows < n only.
template <class T, int M, int Depth, bool Tail = false>
__global__ void __launch_bounds__(256, M == 8 ? 3 : 2)
    thomas_pcr_lean_shared_kernel(DeviceLines L, PcrShape sh, const T* __restrict__ a, const T* __restrict__ b,
                                  const T* __restrict__ c, const T* d, T* u, bool periodic, int* flag) {
  static_assert(Depth >= 2, "at least the line solved and the next one");
  static_assert(M == 8 || M == 16, "segments of 8 or 16 rows");
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  constexpr int P = kWarp * (M + 1), J = kWarp + kWarp / M;  // slots a line; slot step of j
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  const i64 nl = L.lines();
  bool bad = false;
  T* smem = reinterpret_cast<T*>(pcr_smem);
  const PcrFactors<T> F = PcrFactors<T>::carve(smem, P);
  T* bufs = smem + PcrFactors<T>::values(P) + warp * Depth * P;  // this warp's Depth line buffers
  const int slot = lane + lane / M;                              // this lane's slot of row j: slot + J j
  // Tail: whether this lane's last row (r = 32 (M - 1) + lane) is a row of the line.
  const bool last_in = !Tail || lane + kWarp * (M - 1) < static_cast<int>(L.n);
  if (warp == 0) pcr_factorize_shared<T, true, Tail>(sh, a, b, c, periodic, F, bad, static_cast<int>(L.n));
  __syncthreads();
  auto issue = [&](i64 line, T* buf) {  // one commit group, empty past the last line
    if (line < nl) {
      const T* p = d + L.offset(line) + lane;  // stride 1 (the launcher's condition)
#pragma unroll
      for (int j = 0; j < M; ++j) {
        if (j < M - 1 || last_in)
          __pipeline_memcpy_async(buf + slot + j * J, p + j * kWarp, sizeof(T));
        else
          buf[slot + j * J] = T(0);  // (identity row: d = 0)
      }
    }
    __pipeline_commit();
  };
  const i64 step = static_cast<i64>(gridDim.x) * W;
  const i64 first = static_cast<i64>(blockIdx.x) * W + warp;
#pragma unroll
  for (int k = 0; k < Depth - 1; ++k) issue(first + k * step, bufs + k * P);
  int cur = 0;  // buffer of this iteration's line; the line Depth - 1 ahead goes to the one before it
  for (i64 line = first; line < nl; line += step) {
    T* buf = bufs + cur * P;
    const int ahead = cur == 0 ? Depth - 1 : cur - 1;  // (cur + Depth - 1) % Depth: read out last iteration
    issue(line + (Depth - 1) * step, bufs + ahead * P);
    __pipeline_wait_prior(Depth - 1);  // this line's group (Depth - 1 groups younger) has landed
    __syncwarp();
    pcr_line_shared_registers<T, M, true>(sh, F, buf);
    __syncwarp();
    T* out = u + L.offset(line) + lane;
#pragma unroll
    for (int j = 0; j < M; ++j)
      if (j < M - 1 || last_in) out[j * kWarp] = buf[slot + j * J];
    __syncwarp();
    cur = cur + 1 == Depth ? 0 : cur + 1;
  }
  __pipeline_wait_prior(0);
  report(bad, flag);
}

// The lean form's switch: the default since stop 38 (256^3 fp32 X -6.9% on the H100, -17.1% on
// the H200; fp64 -0.4% / -2.9%; other shapes unchanged); ADI_PCR_X_LEAN=0 in the environment
// (read at each launch, so tests can set it around a solve) runs the general kernel, for same-run
// A/B timings (scripts/gpu_x_ab.sh), not an option: both forms compute the same function (tests:
// CudaThomasPcr.LeanForm*, GeneralForm*, LeanTail*, Lean512*, LeanShared*): every lean X kernel's switch
// (stop 47: shared bands, lines of 512, the tails). 1 / 0 / unset (adi/base/env_switch.hpp: else InvalidArgument).
inline bool pcr_x_lean_requested() { return ::adi::detail::env_switch("ADI_PCR_X_LEAN", true); }

// The lean X kernels' segment length M for contiguous lines of n rows: 8 for lines of 256 and, not
// periodic, 225 .. 255 (solved as 256 with identity rows), 16 for 512 and 481 .. 511; else 0.
inline int pcr_lean_rows(i64 n, bool periodic) {
  for (const int m : {8, 16}) {
    const i64 full = static_cast<i64>(m) * kWarp;
    if (n == full || (!periodic && n > full - kWarp && n < full)) return m;
  }
  return 0;
}

// Shared memory of one block of W warps.
template <class T>
std::size_t thomas_pcr_smem(const PcrShape& sh, bool shared, int warps, bool async = false) {
  const std::size_t per = static_cast<std::size_t>(sh.per_line) * (shared ? 1 : 4) * (async ? 2 : 1);
  return sizeof(T) * ((shared ? PcrFactors<T>::values(sh.per_line) : 0) + warps * per);
}

template <class T>
void launch_thomas_pcr(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic, int* flag,
                       cudaStream_t stream, const Tuning& tuning) {
  const DeviceLines L = to_device(ls);
  const PcrShape sh = pcr_shape(L.n);
  const LaunchLimits lim = launch_limits();
  // Default: 4 warps (Bands: 4 line arrays each) or 8 warps (SharedBands: d only, the
  // factors shared by the block). Fewer when the lines are long.
  // cp.async double buffering for lines up to 256 with shared bands (H100, 256^3: fp32
  // 52% -> 66%, fp64 70% -> 81% of copy); per-line bands measured no gain (fp32 80% either
  // way, fp64 90% -> 86%), so they go through registers.
  bool async = tuning.prefetch >= 0 ? tuning.prefetch != 0 : bands.shared;
#if !defined(ADI_CUDA_UNROLL_ALL)
  // Issue 15 item 8: the default build compiles, for lines up to 256, only the default form of
  // each band kind (cp.async with shared bands, registers with per-line ones); the other
  // (Tuning::prefetch, the benchmark's tuning rows) with ADI_CUDA_UNROLL_ALL.
  if (sh.m <= 8 && async != bands.shared) {
    static std::once_flag once;
    note_form_not_compiled(once,
                           "cuda_thomas_pcr Tuning::prefetch, the form that differs from the default for lines "
                           "up to 256",
                           "the default (prefetch with shared bands, none with per-line)");
    async = bands.shared;
  }
#endif
  int warps = tuning.warps_per_block > 0 ? tuning.warps_per_block : (bands.shared ? 8 : 4);
  while (warps > 1 && thomas_pcr_smem<T>(sh, bands.shared, warps, async) > lim.smem_optin) warps /= 2;
  const std::size_t smem = thomas_pcr_smem<T>(sh, bands.shared, warps, async && sh.m <= 8);
  if (smem > lim.smem_optin)
    throw Unsupported("cuda_thomas_pcr: a line of n = " + std::to_string(L.n) + " needs " +
                      std::to_string(smem) + " bytes of shared memory, the device allows " +
                      std::to_string(lim.smem_optin));
  const i64 work = (L.lines() + warps - 1) / warps;
  const int threads = warps * kWarp;
  auto go = [&](auto kernel) {
    const unsigned grid = persistent_grid(kernel, threads, smem, work, lim);
    kernel<<<grid, threads, smem, stream>>>(L, sh, bands.a, bands.b, bands.c, d, u, periodic, flag);
  };
  // The lean forms (solvers/cuda/README.md, stops 38, 46, 47): contiguous lines of 256 / 512 rows and,
  // not periodic, their tails (pcr_lean_rows), solved as 32 M rows; per-line bands through registers
  // (the default form), shared bands with cp.async (unless the caller's Tuning::prefetch asked for none).
  const int lean_m = L.stride == 1 && pcr_x_lean_requested() ? pcr_lean_rows(L.n, periodic) : 0;
  const bool lean_form = bands.shared ? (sh.m <= 8 ? async : tuning.prefetch != 0) : !async;
  if (lean_m > 0 && lean_form) {
    constexpr int depth = 2;  // lines in flight per warp (thomas_pcr_lean_shared_kernel)
    const bool tail = L.n != static_cast<i64>(lean_m) * kWarp;
    const PcrShape full = pcr_shape(static_cast<i64>(lean_m) * kWarp);
    const std::size_t lean_smem =
        bands.shared ? sizeof(T) * (PcrFactors<T>::values(full.per_line) +
                                    static_cast<std::size_t>(warps) * depth * full.per_line)
                     : thomas_pcr_smem<T>(full, false, warps, false);
    if (lean_smem <= lim.smem_optin) {
      auto lean = [&](auto kernel) {
        const unsigned grid = persistent_grid(kernel, threads, lean_smem, work, lim);
        kernel<<<grid, threads, lean_smem, stream>>>(L, full, bands.a, bands.b, bands.c, d, u, periodic, flag);
      };
      if (bands.shared && lean_m == 8)
        tail ? lean(thomas_pcr_lean_shared_kernel<T, 8, depth, true>)
             : lean(thomas_pcr_lean_shared_kernel<T, 8, depth>);
      else if (bands.shared)
        tail ? lean(thomas_pcr_lean_shared_kernel<T, 16, depth, true>)
             : lean(thomas_pcr_lean_shared_kernel<T, 16, depth>);
      else if (lean_m == 8)
        tail ? lean(thomas_pcr_lean_kernel<T, true>) : lean(thomas_pcr_lean_kernel<T, false>);
      else
        tail ? lean(thomas_pcr_lean_kernel<T, true, 16>) : lean(thomas_pcr_lean_kernel<T, false, 16>);
      ADI_CUDA_CHECK(cudaGetLastError());
      return;
    }
  }
  // Unrolled segment loops for up to 8 / 16 rows (lines up to 256 / 512), plain loops
  // beyond.
  // (<Shared, 8, !Shared>: ADI_CUDA_UNROLL_ALL only, above.)
  if (bands.shared) {
    if (sh.m <= 8 && async)
      go(thomas_pcr_kernel<T, true, 8, true>);
#if defined(ADI_CUDA_UNROLL_ALL)
    else if (sh.m <= 8)
      go(thomas_pcr_kernel<T, true, 8, false>);
#endif
    else if (sh.m <= 16)
      go(thomas_pcr_kernel<T, true, 16, false>);
    else
      go(thomas_pcr_kernel<T, true, 0, false>);
  } else {
#if defined(ADI_CUDA_UNROLL_ALL)
    if (sh.m <= 8 && async)
      go(thomas_pcr_kernel<T, false, 8, true>);
    else
#endif
    if (sh.m <= 8)
      go(thomas_pcr_kernel<T, false, 8, false>);
    else if (sh.m <= 16)
      go(thomas_pcr_kernel<T, false, 16, false>);
    else
      go(thomas_pcr_kernel<T, false, 0, false>);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
