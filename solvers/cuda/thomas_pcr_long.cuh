#pragma once
// Long lines adjacent in memory with few lines (the public case: 128x128x4096 along z,
// 16,384 lines of 4096 rows): the Thomas-PCR hybrid with a block, not a warp, per line.
//
// Thread-per-line kernels (thomas_strided.cuh) get one thread per line: 16,384 threads
// cannot keep enough bytes in flight (an H200 holds 132 x 2048), and they move c* and y*
// out and back (1.73x the minimum). The warp hybrids hold 32 segments per line, so lines
// of at most 512 rows. Here a block takes a tile of LB neighbouring lines (16 bytes of
// each row: 2 lines in fp64, 4 in fp32) and splits each line into S = n/m segments of m
// rows, one thread per (line, segment): LB*S threads, each with m rows.
//
// Per tile, all on chip, so a, b, c, d are read once and u written once:
//   1. each thread loads its rows: a, b and c with cp.async into shared memory (no
//      registers held while in flight), d into registers; b of the next tile is copied as
//      soon as this tile's reduction has read it, so it streams in during steps 2-4;
//   2. the modified Thomas sweep of the warp hybrid on its segment (segment_reduce of
//      pcr_segment_registers.cuh: interior rows in terms of the two separators, a', c'
//      in shared memory in place of a, c; d' in registers);
//   3. the reduced system of each line (one row per segment, the separators) is formed in
//      shared memory: thread s writes its own part of row s, thread s+1 adds the coupling
//      through its first interior row (reduced_row_own, reduced_row_next: the two halves of
//      the warp hybrid's reduced_row);
//   4. one warp per line solves its S-row reduced system with the warp hybrid
//      (pcr_line_unrolled of pcr_segment_registers.cuh, the line in shared memory);
//   5. every thread fills its interior rows from the separators (segment_fill) and stores
//      u straight from registers, then issues the next tile's copies into its own slots
//      (each thread reads only the slots it copied, so no barrier is needed for them).
// Periodic lines: a_0 and c_{n-1} stay in the segment sweeps, so the reduced system is
// cyclic, and the warp hybrid solves cyclic systems (Sherman-Morrison inside its PCR).
// Shared bands: a, b, c are read from the n-long shared arrays (cached) into the same
// places, d streamed per line.
//
// Limits: LB*S <= 512 threads (256 for 32 fp64 rows; segments of 16 or 32 rows), S <= 512 reduced rows (the
// warp hybrid's 32 x 16), and the tile's a, b, c in shared memory: 3*LB*n values plus
// padding, so n up to about 8,000 (fp64, 32-row segments, one line per tile).
#include <cuda_pipeline_primitives.h>

#include <string>

#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_segment_registers.cuh"
#include "solvers/cuda/thomas_pcr_strided.cuh"

namespace adi::cuda_backend::kernels {

// Rows of a segment held per thread: d in registers, a, b and c in shared memory
// (SharedRows' addressing: row j of the right-aligned segment at pa[j]).
template <class T, int MaxM>
struct LongRows {
  T* pa;
  T* pb;
  T* pc;
  T rd[MaxM];
  __device__ __forceinline__ T& a(int j) { return pa[j]; }
  __device__ __forceinline__ T& b(int j) { return pb[j]; }
  __device__ __forceinline__ T& c(int j) { return pc[j]; }
  __device__ __forceinline__ T& d(int j) { return rd[j]; }
};

struct LongShape {
  int n = 0;           // rows per line
  int m = 16;          // rows per segment
  int segs = 1;        // S, segments per line
  int log2lb = 0;      // LB = 2^log2lb lines per tile
  int ls = 0;          // shared-memory values between two lines of the a', c' tile arrays
  PcrShape red;        // the reduced system of one line (S rows)
  int threads = 32;
  int cl = 1;          // blocks per cluster sharing a tile (1: none)
  int segs_block = 1;  // segments of a line per block: ceil(S / cl)
  int lbo = 1;         // lines whose reduced systems a block holds and solves: ceil(LB / cl)
};

// A tile split over a thread-block cluster (sm_90): block k of the cluster holds segments
// [k*segs_block, (k+1)*segs_block) of every line of the tile, so the tile can be 128 bytes
// wide (16 fp64 lines) while each block keeps only its part of the lines on chip; line l's
// reduced system lives in block l % cl, reached through distributed shared memory. Without
// a cluster (Cl = false) these are the block itself and __syncthreads.
// The cluster intrinsics of sm_90_rt.h (through cuda_runtime.h) that
// cooperative_groups::this_cluster()'s block_rank / map_shared_rank / sync call, without
// <cooperative_groups.h>: it was ~60% of this header's preprocessed text (2.6 of 4.2 MB for
// tridiagonal_cuda.cu) and ~1.6 CPU s of front end per unit (issue 15 item 8). Same machine
// code (scripts/compare_cubin.py tridiagonal_cuda tridiagonal_cuda_fp64).
template <bool Cl>
__device__ __forceinline__ int long_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Cl) return static_cast<int>(__clusterRelativeBlockRank());
#endif
  return 0;
}
template <bool Cl, class T>
__device__ __forceinline__ T* long_map(T* p, int rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Cl) return static_cast<T*>(__cluster_map_shared_rank(p, static_cast<unsigned>(rank)));
#endif
  return p;
}
template <bool Cl>
__device__ __forceinline__ void long_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (Cl) {
    __cluster_barrier_arrive();
    __cluster_barrier_wait();
    return;
  }
#endif
  __syncthreads();
}

constexpr int kLongMaxSegs = 32 * 16;  // pcr_line_unrolled<T, 16>
// Threads per block: 512 (128 registers each), 256 where b and d of 32 fp64 rows alone
// take 128 registers.
constexpr int long_max_threads(std::size_t value_size, int m) { return value_size * m >= 256 ? 256 : 512; }

template <class T, bool Shared, int MaxM, bool Cl>
__global__ void __launch_bounds__(long_max_threads(sizeof(T), MaxM))
    thomas_pcr_long_kernel(DeviceLines L, LongShape sh, const T* __restrict__ a, const T* __restrict__ b,
                           const T* __restrict__ c, const T* d, T* u, bool periodic, int* flag) {
  extern __shared__ __align__(16) unsigned char pcr_smem[];
  T* smem = reinterpret_cast<T*>(pcr_smem);
  const int LB = 1 << sh.log2lb;
  const int t = static_cast<int>(threadIdx.x);
  const int k = long_rank<Cl>();            // this block's part of the tile's lines
  const int l = t & (LB - 1), sl = t >> sh.log2lb;
  const int s = k * sh.segs_block + sl;     // the segment of line l this thread owns
  const int m = sh.m, n = sh.n, S = sh.segs;
  const bool mine = sl < sh.segs_block && s < S;
  const int len = mine ? max(0, min(m, n - s * m)) : 0;
  const int lo = MaxM - len;  // register j holds row s*m + j - lo
  const int warp = t / kWarp;
  const i64 nl = L.lines(), st = L.stride;
  const i64 tiles = (nl + LB - 1) / LB;
  const i64 group = Cl ? blockIdx.x / sh.cl : blockIdx.x, groups = Cl ? gridDim.x / sh.cl : gridDim.x;
  const int rls = sh.red.per_line, rvals = sh.lbo * rls;
  T* const ta = smem;
  T* const tb = smem + LB * sh.ls;
  T* const tc = smem + 2 * LB * sh.ls;
  // Reduced rows A, B, C, D of the lines this block solves: [array][line / cl][PcrShape::pos];
  // line l's are in block l % cl.
  T* const red = smem + 3 * LB * sh.ls;
  T* const RA = long_map<Cl>(red, l % sh.cl) + (l / sh.cl) * rls;
  T* const RB = RA + rvals;
  T* const RC = RB + rvals;
  T* const RD = RC + rvals;
  bool bad = false;

  LongRows<T, MaxM> rows;
  const int at = l * sh.ls + sl * (m + 1) - lo;  // slot of register j: at + j (this block's segments)
  rows.pa = ta + at;
  rows.pb = tb + at;
  rows.pc = tc + at;
  // Global offset of this thread's first row in `line`; the bands' offset and step
  // (shared bands: the row index).
  auto first = [&](i64 line) { return L.offset(line) + static_cast<i64>(s) * m * st; };
  const i64 band_step = Shared ? 1 : st;
  auto band_first = [&](i64 line) { return Shared ? static_cast<i64>(s) * m : first(line); };
  // The pointers walk the rows (an address per row precomputed would hold 2 registers each).
  auto load_b = [&](i64 tile) {
    const i64 line = tile * LB + l;
    if (len > 0 && line < nl) {
      const T* gb = b + band_first(line);
#pragma unroll
      for (int j = 0; j < MaxM; ++j)
        if (j >= lo) {
          __pipeline_memcpy_async(rows.pb + j, gb, sizeof(T));
          gb += band_step;
        }
    }
    __pipeline_commit();
  };
  auto load_acd = [&](i64 tile) {
    const i64 line = tile * LB + l;
    if (len > 0 && line < nl) {
      const i64 ob = band_first(line);
      const T* ga = a + ob;
      const T* gc = c + ob;
      const T* gd = d + first(line);
#pragma unroll
      for (int j = 0; j < MaxM; ++j) {
        if (j >= lo) {
          __pipeline_memcpy_async(rows.pa + j, ga, sizeof(T));
          __pipeline_memcpy_async(rows.pc + j, gc, sizeof(T));
          rows.rd[j] = *gd;
          ga += band_step;
          gc += band_step;
          gd += st;
        }
      }
    }
    __pipeline_commit();
  };

  if (group < tiles) {
    load_b(group);
    load_acd(group);
  }
  for (i64 tile = group; tile < tiles; tile += groups) {
    const i64 line = tile * LB + l;
    const int mylen = line < nl ? len : 0;
    const i64 next = tile + groups;
    __pipeline_wait_prior(0);  // this thread's a, b, c of this tile have landed
    if (!periodic && mylen > 0) {  // a_0 and c_{n-1} of a non-periodic line are never read
      if (s == 0) rows.pa[lo] = T(0);
      if (s * m + len == n) rows.pc[MaxM - 1] = T(0);
    }
    const SegmentEnds<T> e = segment_reduce<T, MaxM>(rows, mylen, bad);
    if (next < tiles) load_b(next);  // b is consumed: the next tile's streams in meanwhile

    long_sync<Cl>();  // the previous tile's separators have been read
    // Row s of the reduced system (reduced_row), less the coupling through the next
    // segment's first interior row, which thread s+1 adds below; C holds c of the
    // separator until then.
    if (mine) {
      const int q = sh.red.pos(s);
      if (mylen > 0) {
        reduced_row_own(e, RA[q], RB[q], RD[q]);
        RC[q] = e.ce;
      } else {
        RA[q] = T(0);
        RB[q] = T(1);
        RC[q] = T(0);
        RD[q] = T(0);
      }
    }
    long_sync<Cl>();
    if (mylen > 0) {  // row s-1 (cyclically) couples to this segment's first interior row
      const int q = sh.red.pos(s == 0 ? S - 1 : s - 1);
      reduced_row_next(T(RC[q]), e.Fd, e.Fa, e.Fg, RB[q], RC[q], RD[q]);
    }
    long_sync<Cl>();
    const int wl = k + warp * sh.cl;  // warp w of block k solves line k + w*cl
    if (warp < sh.lbo && wl < LB && tile * LB + wl < nl) {
      T* base = red + warp * rls;
      pcr_line_unrolled<T, 16>(sh.red, base, base + rvals, base + 2 * rvals, base + 3 * rvals, periodic, bad);
    }
    long_sync<Cl>();
    if (mylen > 0) {
      const T x = RD[sh.red.pos(s)], xl = RD[sh.red.pos(s == 0 ? S - 1 : s - 1)];
      segment_fill<T, MaxM>(rows, mylen, xl, x);
      T* gu = u + first(line);
#pragma unroll
      for (int j = 0; j < MaxM; ++j)
        if (j >= lo) {
          *gu = rows.rd[j];
          gu += st;
        }
    }
    if (next < tiles) load_acd(next);
  }
  __pipeline_wait_prior(0);
  if (Cl) long_sync<Cl>();  // no block leaves while another may still read its shared memory
  report(bad, flag);
}

inline std::size_t long_smem(const LongShape& sh, std::size_t value_size) {
  const std::size_t lb = std::size_t(1) << sh.log2lb;
  return value_size *
         (3 * lb * static_cast<std::size_t>(sh.ls) + 4 * static_cast<std::size_t>(sh.lbo) * sh.red.per_line);
}

// The launch shape: segments of m rows (the tuning's rows_per_thread, else 16; doubled
// until LB*segs_block fits the block and S <= 512), LB lines per tile (the tuning's
// lines_per_block, else 16 bytes of each row, 128 with a cluster), halved until the shared
// memory fits `smem_limit`; `cluster` blocks share a tile (<= 1: none). *smem_out: the
// shape's shared memory, -1 when no shape exists.
inline LongShape long_shape(i64 n, std::size_t value_size, int rows, int lines, int cluster,
                            std::size_t smem_limit, std::size_t* smem_out) {
  LongShape sh;
  sh.n = static_cast<int>(n);
  sh.cl = cluster > 1 ? cluster : 1;
  int lb = lines > 0 ? lines : static_cast<int>((sh.cl > 1 ? 128 : 16) / value_size);
  int log2lb = 0;
  while ((2 << log2lb) <= lb && log2lb < 5) ++log2lb;
  int m = rows > 16 ? 32 : 16;
  for (;;) {
    sh.log2lb = log2lb;
    sh.m = m;
    sh.segs = static_cast<int>((n + m - 1) / m);
    if (sh.segs < 1) sh.segs = 1;
    sh.segs_block = (sh.segs + sh.cl - 1) / sh.cl;
    const int LB = 1 << log2lb;
    sh.lbo = (LB + sh.cl - 1) / sh.cl;
    const int max_threads = long_max_threads(value_size, m);
    if ((sh.segs > kLongMaxSegs || LB * sh.segs_block > max_threads) && m < 32) {
      m *= 2;
      continue;
    }
    PcrShape seg;
    seg.per_line = sh.segs_block * (m + 1);
    sh.ls = pcr_tile_stride(seg, LB, value_size);
    sh.red = pcr_shape(sh.segs);
    const bool fits = sh.segs <= kLongMaxSegs && LB * sh.segs_block <= max_threads &&
                      long_smem(sh, value_size) <= smem_limit;
    if (fits || log2lb == 0) break;
    --log2lb;
  }
  const int LB = 1 << sh.log2lb;
  const int need = LB * sh.segs_block;
  sh.threads = (need + kWarp - 1) / kWarp * kWarp;
  if (sh.threads < kWarp * sh.lbo) sh.threads = kWarp * sh.lbo;  // every solver warp exists
  if (smem_out) {
    const int max_threads = long_max_threads(value_size, sh.m);
    const bool ok = sh.segs <= kLongMaxSegs && need <= max_threads && sh.threads <= max_threads;
    *smem_out = ok ? long_smem(sh, value_size) : static_cast<std::size_t>(-1);
  }
  return sh;
}

// Shared memory of the smallest shape (one line per tile); -1 when no shape exists.
inline std::size_t thomas_pcr_long_min_smem(i64 n, std::size_t value_size) {
  std::size_t smem = 0;
  long_shape(n, value_size, 0, 1, 1, static_cast<std::size_t>(-1), &smem);
  return smem;
}

// A cluster launch (cudaLaunchKernelEx with the cluster dimension): as many clusters as
// fit at once (cudaOccupancyMaxActiveClusters), no more than `work` tiles. Returns false,
// launching nothing, when not one cluster fits (a partitioned or smaller device).
template <class Kernel, class... Args>
bool launch_clustered(Kernel kernel, const LongShape& sh, std::size_t smem, i64 work, cudaStream_t stream,
                      Args... args) {
  ADI_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      cudaSharedmemCarveoutMaxShared));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(sh.cl);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.blockDim = dim3(static_cast<unsigned>(sh.threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  cfg.gridDim = dim3(static_cast<unsigned>(sh.cl));
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: the caller falls back or reports
    clusters = 0;
  }
  if (clusters < 1) return false;
  const i64 groups = std::max<i64>(1, std::min<i64>(work, clusters));
  cfg.gridDim = dim3(static_cast<unsigned>(groups * sh.cl));
  ADI_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
  return true;
}

// Blocks per cluster when the tuning leaves it open (Tuning::cluster = 0): 8 (tiles of
// 128-byte rows) for more than kLongClusterFromLines lines on sm_90, else none. H100, n = 4096
// fp64 (bench_cuda_tridiagonal --long-only, run 2 of scripts/gpu_long_check.sh, 2026-11-26):
// 16,384 lines (the public case) 1.64 ms with clusters of 8 against 2.90 without (2 lines
// per block) and 2.23 for the coalesced Thomas; clusters of 4: 1.93-2.07, of 2: 2.42; fp32
// 0.98 against 1.61 (1.26). Up to 8,192 lines the plain form is measured (0.19 ms at 1,024
// lines, 0.72 at 4,096).
constexpr int kLongDefaultCluster = 8;
constexpr i64 kLongClusterFromLines = 8192;

template <class T>
void launch_thomas_pcr_long(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic, int* flag,
                            cudaStream_t stream, const Tuning& tuning) {
  const DeviceLines L = to_device(ls);
  const LaunchLimits lim = launch_limits();
  int dev = 0, major = 0;
  ADI_CUDA_CHECK(cudaGetDevice(&dev));
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  int cluster = tuning.cluster > 0 ? tuning.cluster
                : major >= 9 && L.lines() > kLongClusterFromLines ? kLongDefaultCluster
                                                                   : 1;
  if (cluster > 1) {
    if (major < 9 || cluster > 8)
      throw Unsupported("cuda_thomas_pcr_long: clusters of " + std::to_string(cluster) +
                        " blocks need compute capability 9.0 and at most 8 blocks");
  }
  std::size_t smem = 0;
  LongShape sh = long_shape(L.n, sizeof(T), tuning.rows_per_thread, tuning.lines_per_block, cluster,
                            lim.smem_optin, &smem);
  if (smem > lim.smem_optin)
    throw Unsupported("cuda_thomas_pcr_long: a line of n = " + std::to_string(L.n) + " needs " +
                      (smem == static_cast<std::size_t>(-1) ? std::string("more than 512 segments")
                                                            : std::to_string(smem) + " bytes of shared memory") +
                      ", the device allows " + std::to_string(lim.smem_optin) + " bytes");
  // Launches `shape` with the kernel of its segment length; false when its cluster does not fit.
  auto run = [&](const LongShape& shape, std::size_t bytes) {
    const i64 tiles = (L.lines() + (i64(1) << shape.log2lb) - 1) >> shape.log2lb;
    auto go = [&](auto kernel, auto clustered_kernel) {
      if (shape.cl > 1)
        return launch_clustered(clustered_kernel, shape, bytes, tiles, stream, L, shape, bands.a, bands.b, bands.c,
                                d, u, periodic, flag);
      const unsigned grid = persistent_grid(kernel, shape.threads, bytes, tiles, lim);
      kernel<<<grid, shape.threads, bytes, stream>>>(L, shape, bands.a, bands.b, bands.c, d, u, periodic, flag);
      return true;
    };
    // Band kind, segment length and cluster as template parameters: 8 kernels a precision.
    // Reading the band kind and the cluster at run time (2 kernels; stop 32, issue 15 item 8)
    // was reverted: fp64 rows up to 4% slower on an H200 and a failed launch in the
    // LaunchShapes test (docs/design.md, "Serial CUDA compile time").
    if (bands.shared)
      return shape.m <= 16 ? go(thomas_pcr_long_kernel<T, true, 16, false>, thomas_pcr_long_kernel<T, true, 16, true>)
                           : go(thomas_pcr_long_kernel<T, true, 32, false>, thomas_pcr_long_kernel<T, true, 32, true>);
    return shape.m <= 16 ? go(thomas_pcr_long_kernel<T, false, 16, false>, thomas_pcr_long_kernel<T, false, 16, true>)
                         : go(thomas_pcr_long_kernel<T, false, 32, false>, thomas_pcr_long_kernel<T, false, 32, true>);
  };
  if (!run(sh, smem)) {
    if (tuning.cluster > 1)
      throw Unsupported("cuda_thomas_pcr_long: no cluster of " + std::to_string(sh.cl) + " blocks of " +
                        std::to_string(sh.threads) + " threads and " + std::to_string(smem) +
                        " bytes of shared memory fits the device");
    // The default cluster does not fit (a partitioned device): the plain form, a block per tile.
    sh = long_shape(L.n, sizeof(T), tuning.rows_per_thread, tuning.lines_per_block, 1, lim.smem_optin, &smem);
    run(sh, smem);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
