// The dispatch table of the tridiagonal family: (executor, layout, precision) -> kernel.
// Each threshold carries the measurement that set it.
#include "adi/detail/tridiagonal_dispatch.hpp"

#include <string>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/device_memory_rate.hpp"

namespace adi::detail {

namespace {
bool is_cpu(Kernel k) {
  return k == Kernel::reference || k == Kernel::cpu_thomas || k == Kernel::cpu_thomas_transpose ||
         k == Kernel::cpu_thomas_vector || k == Kernel::cpu_pivoting || k == Kernel::cpu_pivoting_transpose ||
         k == Kernel::cpu_pivoting_vector;
}

// The pivoting peer of a host kernel (same layouts, same loops: solvers/cpu/thomas_sweep.hpp).
Kernel host_pivoting(Kernel k) {
  switch (k) {
    case Kernel::cpu_thomas: return Kernel::cpu_pivoting;
    case Kernel::cpu_thomas_transpose: return Kernel::cpu_pivoting_transpose;
    case Kernel::cpu_thomas_vector: return Kernel::cpu_pivoting_vector;
    default: return k;
  }
}
}  // namespace

// --- CUDA (solvers/cuda/) -------------------------------------------------------
// Thresholds from benchmarks/bench_cuda_tridiagonal.cu on an H100 80GB HBM3 (its
// line-length sweep: 2^24 values, contiguous lines for X, an interleaved batch for Y;
// % of the measured copy bandwidth, 5 arrays counted; solvers/cuda/README.md).
namespace {
// X: the warp-per-line hybrid against the transposed Thomas (which also moves c*, y*).
//   fp32: hybrid 82 / 67 / 35 / 19% at n = 512 / 1024 / 2048 / 4096, transposes
//         36 / 27 / 16 / 8.6%: the hybrid wins up to its shared-memory limit (4096).
//   fp64: hybrid 49 / 28 / 15% at n = 1024 / 2048 / 4096, shared transpose 37 / 27 / 16%.
// Past it, the shared-memory transpose: level with the shuffle one in fp32 (8.3 / 8.6% at
// 4096), ahead in fp64 (27 / 24% at 2048, 16 / 14% at 4096).
constexpr index_t kCudaPcrMaxX32 = 4096;
constexpr index_t kCudaPcrMaxX64 = 2048;
// Y/Z: the hybrid's register form (cp.async stage, segments of up to 16 rows) against the
// coalesced Thomas: fp32 77 / 72 / 66 / 50% at n = 64 / 128 / 256 / 512 vs 60 / 56 / 52 /
// 49%; fp64 81 / 79 / 74% at 64 / 128 / 256 vs 57 / 55 / 53%. Past 512 only the
// shared-memory tile form remains, and it loses: fp32 30 vs 36% at 1024. Double precision with
// per-line bands past 256 rows takes 16-row segments in blocks of 256 threads since stop 54
// (before, only the tile form: 43 vs 53% at 512); its rows are below (kCudaPcrWideMinN).
constexpr index_t kCudaPcrStridedMax = 512;
constexpr index_t kCudaPcrWideMinN = 256;  // fp64 per-line bands: 8-row segments up to here
// Y/Z lines longer than this, and at most this many of them, take the long-line kernel (a
// block per tile of lines; the measurements are with the rule below).
constexpr index_t kCudaLongMinN = 512;
constexpr index_t kCudaLongMaxLines = 8192;
// With thread-block clusters (sm_90): lines of at least this many rows, up to this many.
constexpr index_t kCudaLongClusterMinN = 4096;
constexpr index_t kCudaLongClusterMaxLines = 16384;

// Rows of the table measured on an H200 (the thresholds above are the H100's), chosen by
// what sets them apart rather than by name: the peak memory bandwidth the device reports
// (2 x memory clock x bus width; H100 SXM 3352 GB/s, H200 4915 GB/s, both 132 SMs of
// compute capability 9.0). A card with memory this fast leaves the latency-bound hybrid
// further behind its copy rate, as the H200 measured; slower cards follow the H100's rows.
constexpr double kCudaFastMemoryGBs = 4000;
bool cuda_fast_memory(const CudaDeviceTraits& dev) { return dev.peak_memory_gbs >= kCudaFastMemoryGBs; }

// The hybrids keep a line (or a tile of lines) in shared memory: it must fit.
bool cuda_hybrid_fits(Kernel k, const CudaDeviceTraits& dev, const DispatchQuery& q) {
  const std::size_t need =
      cuda_backend::tridiagonal_min_shared_bytes(k, q.lines, q.shared_bands, q.value_size);
  return need <= dev.shared_per_block_optin;
}

// Lines that the register hybrid's default copy stream (the warp's 16-byte pieces, issue 16,
// stop 31) takes for any tile of up to 32 lines: adjacent lines in groups of 32 along count0,
// every row and group start 16-byte aligned (solvers/cuda/thomas_pcr_strided.cuh,
// pcr_strided_bulk_fits; the arrays' own alignment is checked at the launch, cudaMalloc's is 256).
// (Since stop 46 the launcher also narrows its tile to 16 or 8 lines where a row of lines ends in
// part of a 32-line tile; the row below, for n > 256, was measured with 32-line tiles, so it keeps
// asking for those.)
bool cuda_pcr_strided_warp_tiles(const DispatchQuery& q) {
  const LineSet& l = q.lines;
  const auto aligned = [&](index_t values) { return values * static_cast<index_t>(q.value_size) % 16 == 0; };
  return l.stride0 == 1 && l.count0 % 32 == 0 && aligned(l.stride) && (l.count1 <= 1 || aligned(l.stride1));
}

bool cuda_kernel_supports(Kernel k, const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  const auto fits = [&] { return cuda_hybrid_fits(k, cuda_device_traits(exec), q); };
  switch (k) {
    case Kernel::cuda_thomas_naive:
    case Kernel::cuda_pivoting: return true;
    case Kernel::cuda_thomas_shuffle_transpose:
    case Kernel::cuda_thomas_shared_transpose: return l.stride == 1;
    case Kernel::cuda_thomas_pcr: return l.stride == 1 && fits();
    case Kernel::cuda_thomas_strided: return lines_adjacent(l);
    case Kernel::cuda_thomas_pcr_strided:
    case Kernel::cuda_thomas_pcr_long: return lines_adjacent(l) && fits();
    case Kernel::cuda_thomas_truncated: return lines_adjacent(l) && !q.periodic;
    default: return false;
  }
}

}  // namespace

Kernel choose_cuda_kernel(const CudaDeviceTraits& dev, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  // Partial pivoting: one thread per line, U's rows in a line-fastest workspace
  // (solvers/cuda/pivoting_thread.cuh); coalesced where neighbouring lines are adjacent.
  if (q.pivoting == Pivoting::partial) return Kernel::cuda_pivoting;
  // Contiguous lines (X sweeps, gtsv2StridedBatch layout).
  if (l.stride == 1) {
    const index_t max_n = q.value_size == 8 ? kCudaPcrMaxX64 : kCudaPcrMaxX32;
    if (l.n <= max_n && cuda_hybrid_fits(Kernel::cuda_thomas_pcr, dev, q)) return Kernel::cuda_thomas_pcr;
    return Kernel::cuda_thomas_shared_transpose;
  }
  // Neighbouring lines adjacent in memory (Y/Z sweeps, interleaved batches).
  if (lines_adjacent(l)) {
    // Lines of 1025 .. 4096 rows on sm_90 (stop 36, issue 18; bench_cuda_tridiagonal --long-sweep,
    // scripts/gpu_long_sweep.sh, H100 twice and H200: n = 1536 / 2048 / 3072 / 4096 x 4,096 ..
    // 32,768 interleaved lines; solvers/cuda/README.md "Long-line crossover"). Shared bands: the
    // hybrid's shared-memory tile form (cuda_thomas_pcr_strided) reads only d and moves u, and
    // beats the long kernel there: fp32 up to 16,384 lines (and 32,768 of at most 2048 rows) by
    // 1.4-2.3x (2048 x 16,384: 0.266 ms against the coalesced Thomas's 0.621, the pick before),
    // fp64 up to 8,192 lines below 4096 rows by 6-20%, and 16,384 lines of 3072 (1.424 against the
    // long kernel's 1.542 ms, H100); fp64 16,384 lines otherwise: the long kernel's cluster form
    // (2048 x 16,384: 0.870 against 1.036; the hybrid 2.5% / 6.6% slower, H100 / H200). Per-line
    // bands: the cluster form up to 16,384 lines in fp64 from 1025 rows (2048 x 16,384, one rank's
    // box of the public case split over two GPUs: 0.733 against the coalesced Thomas's 1.099 ms
    // on the H100, 0.654 against 0.965 on the H200) and in fp32 past 2048 rows (3072: 0.792 vs
    // 0.939; at 1536 / 2048 the coalesced Thomas stays ahead, 0.470 / 0.625 against 0.580 /
    // 0.647); fp64 32,768 lines on H100-class memory too (2048: 1.440 against 1.729; 3072: 2.692
    // against 2.602, 3.5% behind; on the H200 the coalesced Thomas, 1.333 against 1.271 at 2048
    // and ahead at 1536, 3072, 4096); fp32 lines of at most 1536 rows, up to 8,192 lines: the
    // hybrid's tile form (1536 x 4,096: 0.150 against the long kernel's 0.170 ms, H100; 0.148
    // against 0.167, H200). With these rows every pick of the sweep is within 5% of its fastest
    // candidate on both cards.
    if (dev.cc_major >= 9 && l.n > 1024 && l.n <= 4096) {
      const index_t lines = l.lines();
      if (q.shared_bands) {
        // (every bound here is a shape of the sweep, as in the rows below)
        const bool tile = q.value_size == 4 ? lines <= 16384 || (lines <= 32768 && l.n <= 2048)
                                            : l.n < 4096 && (lines <= 8192 || (lines <= 16384 && l.n > 2048));
        if (tile && cuda_hybrid_fits(Kernel::cuda_thomas_pcr_strided, dev, q))
          return Kernel::cuda_thomas_pcr_strided;
        if (q.value_size == 8 && lines <= 16384 && cuda_hybrid_fits(Kernel::cuda_thomas_pcr_long, dev, q))
          return Kernel::cuda_thomas_pcr_long;
      } else {
        if (q.value_size == 4 && l.n <= 1536 && lines <= 8192 &&
            cuda_hybrid_fits(Kernel::cuda_thomas_pcr_strided, dev, q))
          return Kernel::cuda_thomas_pcr_strided;
        const bool cluster = q.value_size == 8 ? lines <= 16384 || (lines <= 32768 && !cuda_fast_memory(dev))
                                               : l.n > 2048 && lines <= 16384;
        if (cluster && cuda_hybrid_fits(Kernel::cuda_thomas_pcr_long, dev, q)) return Kernel::cuda_thomas_pcr_long;
      }
    }
    // Few lines longer than the register hybrid takes: a block per tile of lines, a thread per
    // segment (thomas_pcr_long.cuh). One thread per line leaves the GPU idle there; the long
    // kernel splits every line over hundreds of threads but reads 16-byte pieces of rows
    // (one tile of lines must fit on one SM), which the memory serves at ~30% of copy, so it
    // loses once one thread per line has enough lines. Measured on an H100
    // (bench_cuda_tridiagonal --long-only, scripts/gpu_long_check.sh, 2026-11-26, fp64
    // per-line bands, n = 4096): 1,024 lines 0.20 ms against the coalesced Thomas's 1.46 ms,
    // 4,096 lines 0.73 vs 1.62, 16,384 lines (the public case) 2.92 vs 2.23, 65,536 lines
    // 15.2 vs 6.7; 2^24 values: n = 2048 (8,192 lines) 0.72 vs 0.90, n = 1024 (16,384
    // lines) 0.70 vs 0.55; fp32 the same way (n = 2048, 8,192 lines: 0.41 vs 0.54).
    if (l.n > kCudaLongMinN && l.lines() <= kCudaLongMaxLines &&
        cuda_hybrid_fits(Kernel::cuda_thomas_pcr_long, dev, q))
      return Kernel::cuda_thomas_pcr_long;
    // More lines, on sm_90: the same kernel over thread-block clusters of 8 blocks sharing a
    // tile of 128-byte rows (its launcher's default above 8,192 lines), which the memory
    // serves at 55% of copy: the public case (16,384 lines of 4096, fp64) 1.64 ms against
    // the coalesced Thomas's 2.23 (H100, run 2 of scripts/gpu_long_check.sh; fp32 0.98 vs
    // 1.26). Measured at n = 4096 and 16,384 lines only: beyond, the coalesced Thomas. Per-line
    // bands only: with shared bands the gain is 6% in fp64 (1.93 vs 2.06 ms) and a loss in fp32
    // (1.55 vs 1.25; there the shared-memory tile of cuda_thomas_pcr_strided, 0.81 ms, is the
    // fastest, which TridiagonalOptions::measure finds).
    if (!q.shared_bands && l.n >= kCudaLongClusterMinN && l.lines() <= kCudaLongClusterMaxLines &&
        dev.cc_major >= 9 &&
        cuda_hybrid_fits(Kernel::cuda_thomas_pcr_long, dev, q))
      return Kernel::cuda_thomas_pcr_long;
    // The H200 row (its faster memory makes the coalesced Thomas, which moves c* and y* out
    // and back, the faster one sooner): fp32 per-line bands, interleaved sweep of 2^24
    // values (bench_cuda_tridiagonal, 2026-11-26), coalesced Thomas against the hybrid:
    // n = 64: 0.142 vs 0.130 ms, 128: 0.150 vs 0.141, 256: 0.150 vs 0.157, 512: 0.187 vs 0.213;
    // boxes 256^3 Y / Z and 240x256x256 Z: 6-10% faster, 240x256x256 Y: 4% slower. On the
    // H100 the hybrid keeps its lead (256^3 fp32 Y: 0.173 vs 0.219 ms). fp64 and shared
    // bands: the hybrid on both cards.
    //
    // Since the register hybrid's full-segment path (issue 16; H100, scripts/gpu_yz_check.sh,
    // 2026-11-26, same-run A/B): 256^3 fp32 Y 0.150 against 0.171 ms (12% faster), shared
    // bands 0.071 against 0.088; fp64 2-4% (shared 10%). So the row starts past 256. Measured
    // on an H200 (stop 30 r0, scripts/gpu_yz_check.sh, copy 4230 GB/s): 256^3 fp32 Y / Z the
    // hybrid 0.134 / 0.137 ms against 0.153 / 0.148; 512^3 the coalesced Thomas 1.212 / 1.214
    // against 1.332 / 1.430 (no benchmark row with a faster kernel than the dispatch's).
    //
    // Since the warp's 16-byte copy stream (stop 31 r1, H200, same-run A/B): the hybrid takes
    // 512^3 fp32 Y / Z in 0.76 / 1.09 ms against the coalesced Thomas's ~1.21 / 1.23, so the row
    // keeps only lines that stream one value per copy (not cuda_pcr_strided_warp_tiles).
    //
    // fp32 per-line bands, 512 < n <= 1024, up to 16,384 lines, sm_90: the long-line kernel, as
    // fp64 below. 2^24-value sweep, 16,384 lines of 1024: H100 (stop 30 r2) 0.297 against the
    // coalesced Thomas's 0.314 ms; H200 0.286 against 0.295 (stop 30 r1), 0.290 against 0.291
    // (stop 31 r1).
    if (q.value_size == 4 && !q.shared_bands && l.n > 512 && l.n <= 1024 && l.lines() <= 16384 &&
        dev.cc_major >= 9 &&
        cuda_hybrid_fits(Kernel::cuda_thomas_pcr_long, dev, q))
      return Kernel::cuda_thomas_pcr_long;
    //
    // fp64 per-line bands, 256 < n <= 512, on fast memory (stop 54, run s54/1, H200, copy ~4.2
    // TB/s, bench_cuda_tridiagonal --boxes 512x512x512,256x256x512 --filter fp64): the register
    // hybrid's 16-row segments in blocks of 256 threads (215 registers, no spills) against the
    // coalesced Thomas: 512^3 Y 1.561 against 2.322 ms (81.7% against 54.9% of copy), Z 2.166
    // against 2.321 (58.8 / 54.9%), 256x256x512 Z 0.517 against 0.598, the 2^24-value sweep (32,768
    // interleaved lines of 512) 0.250 against 0.331. Lines that stream one value a copy are not
    // measured there and keep the coalesced Thomas, as fp32's (longer fp64 lines: the rows below).
    const bool past_256 = q.value_size == 4 ? l.n > 256 : l.n > kCudaPcrWideMinN && l.n <= kCudaPcrStridedMax;
    if (!q.shared_bands && past_256 && cuda_fast_memory(dev) &&
        !(l.n <= kCudaPcrStridedMax && cuda_pcr_strided_warp_tiles(q)))
      return Kernel::cuda_thomas_strided;
    // fp64 per-line bands past the register hybrid (n > 256) up to 1024 on an H100-class card:
    // the long-line kernel in its cluster form beats the coalesced Thomas with many lines too.
    // H100 (scripts/gpu_long_check.sh sweep and gpu_yz_check.sh, 2026-11-26): 2^24 values,
    // n = 512 (32,768 lines) 0.385 vs 0.428 ms, n = 1024 (16,384 lines) 0.398 vs 0.552; 512^3
    // Y/Z (262,144 lines of 512) 2.87 vs 3.32 ms (the measured plan's pick). On the H200 the
    // coalesced Thomas gains from the faster memory (n = 512: 0.334 ms, n = 1024: 0.483) and the
    // latency-bound long kernel does not, so fast-memory cards keep the coalesced Thomas: H200
    // (stop 30 r0) 512^3 fp64 Y / Z 2.320 / 2.319 ms against the long kernel's 2.647 / 2.668.
    // But at n = 1024 the long kernel wins on the H200 too (stop 30 r1, gpu_yz_check.sh's
    // line-length sweep, 2^24 values, 16,384 lines: 0.357 against the coalesced Thomas's
    // 0.490 ms, twice), so fast-memory cards take it past 512 (n between 512 and 1024
    // not measured there). Rerun with this row (stop 30 r3, H200): n = 512 and 1024 at gap 0.0%.
    // (The register hybrid's 16-row fp64 segments, stop 54, beat the coalesced Thomas on the H200,
    // below; against the long kernel on an H100 they are not measured yet, so H100-class cards keep
    // this row from 257 rows.)
    if (q.value_size == 8 && !q.shared_bands && l.n > kCudaPcrWideMinN && l.n <= 1024 &&
        dev.cc_major >= 9 && (!cuda_fast_memory(dev) || l.n > 512) &&
        cuda_hybrid_fits(Kernel::cuda_thomas_pcr_long, dev, q))
      return Kernel::cuda_thomas_pcr_long;
    // (fp64 per-line lines of 257 .. 512 take the hybrid where it was measured, on fast memory;
    // elsewhere the coalesced Thomas, as before stop 54.)
    const index_t hybrid_max = q.value_size == 8 && !q.shared_bands && !cuda_fast_memory(dev)
                                   ? kCudaPcrWideMinN
                                   : kCudaPcrStridedMax;
    if (l.n <= hybrid_max && cuda_hybrid_fits(Kernel::cuda_thomas_pcr_strided, dev, q))
      return Kernel::cuda_thomas_pcr_strided;
    return Kernel::cuda_thomas_strided;
  }
  return Kernel::cuda_thomas_naive;
}

CudaDeviceTraits cuda_device_traits(const Executor& exec) {
  const cuda_backend::DeviceInfo info = cuda_backend::device_info(exec.device());
  return {info.cc_major, cuda_backend::device_memory_gbs(exec.device()), info.shared_per_block_optin};
}

// --- host (solvers/cpu/) ----------------------------------------------------------
// Measured on an AMD EPYC (Zen 4, AVX-512) with 2 threads, float, 8M values, min of 10
// (benchmarks/bench_cpu_tridiagonal.cpp for the 3D grid; copy bandwidth 27-30 GB/s).
// The same choice holds for shared bands, periodic lines and double (the SIMD kernels
// win by more there: fewer bytes per flop).
namespace {
Kernel choose_host_kernel(const DispatchQuery& q) {
  const LineSet& l = q.lines;
  // Neighbouring lines one element apart (Y/Z sweeps, interleaved batches): SIMD lanes
  // across lines with plain vector loads. Interleaved n = 4: 22.7 GB/s against 3.6 for
  // the scalar kernel, n = 64: 21 vs 1.6; from 2 lines on (2 lines of 4M: 28 vs 46 ms).
  if (lines_adjacent(l) && l.lines() >= 2 && l.stride > 1) return Kernel::cpu_thomas_vector;
  // Lines with element stride 1 (X sweeps, the gtsv2StridedBatch layout): in-register
  // transpose. Contiguous n = 4: 6.5 GB/s against 3.4 scalar, n = 64: 13.9 vs 3.4,
  // n = 256: 14.8 vs 3.6; from 2 lines on (2 lines of 4M: 34 vs 45 ms), but a single
  // line is faster scalar (89 vs 125 ms: a one-lane "tile" per element).
  if (l.stride == 1 && l.lines() >= 2) return Kernel::cpu_thomas_transpose;
  // Anything else (gathers: neither elements nor lines adjacent; a single line).
  return Kernel::cpu_thomas;
}
}  // namespace

// --- a few very long lines (adi/large_tridiagonal.hpp) ------------------------------
// The batched kernels put one line on one dependency chain (a SIMD lane, a thread), so a
// handful of lines leaves most of the machine idle; the partition solver spreads each line
// over every core / SM. Measured (benchmarks/bench_large_tridiagonal.cpp,
// bench_cuda_large_tridiagonal.cu; docs/large_tridiagonal.md):
//   host, 2 cores, fp64, n = 2^20: 1 line cpu_thomas 10.5 ns/row against 4.1 for the
//   partition; the transpose kernel's groups of 8 lanes catch up from 8 lines on.
//   CUDA: one line of 2^16 takes a thread ~ms with the batched kernels, the partition
//   tens of microseconds; it runs line after line, so it stops paying at hundreds of lines.
namespace {
constexpr index_t kLargeMinN = index_t(1) << 16;
constexpr index_t kLargeMaxLinesHost = 4;
constexpr index_t kLargeMaxLinesCuda = 8;
bool large_lines(const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  return l.stride == 1 && l.n >= kLargeMinN && l.lines() >= 1 &&
         l.lines() <= (exec.is_host() ? kLargeMaxLinesHost : kLargeMaxLinesCuda);
}
}  // namespace

bool kernel_supports(Kernel k, const Executor& exec, const DispatchQuery& q) {
  const LineSet& l = q.lines;
  if (k == Kernel::large_partition) return l.stride == 1;
  if (exec.is_host()) {
    if (!is_cpu(k)) return false;
    switch (k) {
      case Kernel::cpu_thomas_transpose:
      case Kernel::cpu_pivoting_transpose: return l.stride == 1;
      case Kernel::cpu_thomas_vector:
      case Kernel::cpu_pivoting_vector: return lines_adjacent(l);
      default: return true;
    }
  }
  if (is_cpu(k) || k == Kernel::automatic) return false;
  return cuda_kernel_supports(k, exec, q);
}

// --- one implicit ADI stage (TridiagonalPlan::solve_stage) ------------------------------
// CUDA: the fused stage kernel (right-hand side, generated bands and Thomas-PCR solve in one
// pass: base, v and u are its only field transfers, against five for the right-hand side's
// stencil pass and the shared-band solve) wherever it takes the lines; the rule has no
// threshold: it is faster at every length it takes (bench_cuda_heat_step, "unfused" rows).
// It does not pivot: with partial pivoting the caller takes the general path.
Kernel choose_stage_kernel(const Executor& exec, const DispatchQuery& q) {
  if (exec.is_host()) return choose_kernel(exec, q);
  if (q.pivoting != Pivoting::partial && q.shared_bands && cuda_backend::fused_stage_supported(q.lines))
    return Kernel::cuda_thomas_pcr_fused_stage;
  return Kernel::automatic;
}

std::vector<Kernel> candidate_kernels(const Executor& exec, const DispatchQuery& q) {
  static constexpr Kernel host_plain[] = {Kernel::cpu_thomas, Kernel::cpu_thomas_transpose, Kernel::cpu_thomas_vector};
  static constexpr Kernel host_pivot[] = {Kernel::cpu_pivoting, Kernel::cpu_pivoting_transpose,
                                          Kernel::cpu_pivoting_vector};
  static constexpr Kernel cuda_plain[] = {Kernel::cuda_thomas_naive,   Kernel::cuda_thomas_shuffle_transpose,
                                          Kernel::cuda_thomas_shared_transpose, Kernel::cuda_thomas_pcr,
                                          Kernel::cuda_thomas_strided, Kernel::cuda_thomas_pcr_strided,
                                          Kernel::cuda_thomas_pcr_long};
  static constexpr Kernel cuda_pivot[] = {Kernel::cuda_pivoting};
  const bool partial = q.pivoting == Pivoting::partial;
  std::vector<Kernel> out;
  auto add = [&](const auto& list) {
    for (Kernel k : list)
      if (kernel_supports(k, exec, q)) out.push_back(k);
  };
  if (exec.is_host())
    partial ? add(host_pivot) : add(host_plain);
  else
    partial ? add(cuda_pivot) : add(cuda_plain);
  return out;
}

Kernel choose_kernel(const Executor& exec, const DispatchQuery& q) {
  const Kernel k = choose_exact_kernel(exec, q);
  // The truncated sweeps on long non-periodic lines of a large batch (with_long_truncated;
  // ADI_LONG_TRUNCATED; out of place: an in-place solve runs the exact kernel, TridiagonalPlan's
  // run path).
  return exec.is_cuda() ? with_long_truncated(k, q, long_truncated_mode()) : k;
}

Kernel choose_exact_kernel(const Executor& exec, const DispatchQuery& q) {
  // The partition solver does not pivot: with partial pivoting a few long lines run the
  // batched pivoting kernels (one sequential elimination per line).
  if (q.pivoting != Pivoting::partial && large_lines(exec, q)) return Kernel::large_partition;
  if (exec.is_host()) {
    const Kernel k = choose_host_kernel(q);
    return q.pivoting == Pivoting::partial ? host_pivoting(k) : k;
  }
  return choose_cuda_kernel(cuda_device_traits(exec), q);
}

}  // namespace adi::detail
