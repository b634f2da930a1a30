#pragma once
// Partial pivoting for few long lines (one system of 2^24, the large plan's pivoting route):
// the partition method of solvers/common/pivoting_core.hpp ("the partition method with
// partial pivoting inside each partition"), one thread per partition of M = 17 rows (a
// separator and 16 interior rows: an even block, so a zero-diagonal block is not singular).
//   1. reduce: each thread eliminates its block top-down and bottom-up with partial
//      pivoting (three right-hand sides, nothing stored per row) and writes its separator's
//      reduced row; the previous block's last-row values come from the neighbouring lane
//      (shuffle): a warp owns 31 partitions, lane 0 eliminates the one before them;
//   2. the reduced system (one row per partition, [line][partition]) is solved by the same
//      method while it is long, then by the thread-per-line kernel;
//   3. fill: each thread solves its block again with its two separators known.
// A warp stages the 32 x M rows of its 32 partitions through shared memory (coalesced loads
// and stores for stride-1 lines: the 32 partitions are one contiguous run of 544 values).
// Memory traffic: a, b, c, d read twice and u written once (9 values per row, plus 4/17 for
// the reduced rows), against 5 for a copy: at most ~55% of the copy bandwidth.
// A nearly singular block (common::partition_weak_pivot), or, in place with the dominance test
// forced on (ADI_PIVOTING_PARTITION_DOMINANCE=1, stop 34), a line that does not behave like a
// diagonally dominant one (common::partition_dominance_unsafe: where the partition elimination
// itself loses digits against LAPACK), raises a device flag that the
// fill passes and the thread-per-line kernel are gated on: the lines are then solved by the
// thread-per-line kernel (exact partial pivoting, sequential along each line: slow, but
// never a wrong answer), without the host reading anything back. Out of place (dense layouts;
// the default since stop 35), lines the dominance test flags are instead refined once (the
// residual in higher precision, the route again on it, x += e; launch_pivoting_partition),
// behind a CUDA graph's IF node (pivoting_refine_gate).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/cuda/conditional_graph.cuh"
#include "solvers/cuda/pivoting_thread_line.cuh"

// The refinement's solve gate (stop 35: a conditional IF node, captured into with
// cudaStreamBeginCaptureToGraph) needs CUDA 12.4; older toolkits take the gated launches.
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12040
#define ADI_PIVOTING_REFINE_GRAPH 1
#else
#define ADI_PIVOTING_REFINE_GRAPH 0
#endif

namespace adi::cuda_backend::kernels {

constexpr int kPivotPartitionRows = 17;  // rows per partition (M)
constexpr int kPivotPartitionWarps = 4;  // warps per block
// The route takes lines at least this long.
constexpr i64 kPivotPartitionMinRows = 4096;
// Reduced systems at least this long (per line) are partitioned again: the last level is
// solved by one thread per line, sequentially (2^24 rows: 986896, 58053, 3415, 201, then
// 12 rows on one thread; with 4096 here one thread ran the 3415 rows, an estimated
// ~1 ms of the 2.9 ms the H100 took).
constexpr i64 kPivotPartitionAgainRows = 4 * kPivotPartitionRows;

// Where partition row r of global partition gp (= line * P + k) lives; -1 past the line's end.
struct PartitionIndex {
  DeviceLines L;
  i64 P;  // partitions per line
  __device__ i64 element(i64 gp, int r, i64& row) const {
    const i64 total = L.lines() * P;
    if (gp < 0 || gp >= total) return -1;
    const i64 line = gp <= 0x7fffffff && P <= 0x7fffffff
                         ? static_cast<i64>(static_cast<unsigned>(gp) / static_cast<unsigned>(P))
                         : gp / P;
    row = (gp - line * P) * kPivotPartitionRows + r;
    if (row >= L.n) return -1;
    return L.offset(line) + row * L.stride;
  }
};

// A row as the core wants it, from its element e (-1: past the end) and its row in the
// line: rows past the end are (0, 1, 0 | 0), the line's a_0 and c_{n-1} are 0 (never read).
template <class T, bool Shared>
__device__ __forceinline__ common::PartitionRowValues<T> partition_row(const T* a, const T* b, const T* c,
                                                                        const T* d, i64 n, i64 e, i64 row) {
  if (e < 0) return {T(0), T(1), T(0), T(0)};
  const i64 ce = Shared ? row : e;
  return {row == 0 ? T(0) : a[ce], b[ce], row == n - 1 ? T(0) : c[ce], d[e]};
}

// The elements of the warp's 32 partitions: each lane finds its own partition's first row
// once (one division), and row r of the warp's partition p is read off lane p by shuffles
// (the whole warp calls element()). Before stop 29 every element of every array computed
// its partition's line by a division, with a 64-bit fall-back inlined at each of the 68
// sites: ~33000 instructions a kernel (sm_90), against 3500-11000 now.
struct PartitionRun {
  i64 e0, row0, n, stride;
  __device__ PartitionRun(const PartitionIndex& ix, i64 gp) : e0(-1), row0(0), n(ix.L.n), stride(ix.L.stride) {
    e0 = ix.element(gp, 0, row0);
  }
  // Element of row r of partition p (-1 past the end); row: its row in the line.
  __device__ __forceinline__ i64 element(int p, int r, i64& row) const {
    const i64 e = __shfl_sync(kFullMask, e0, p);
    row = __shfl_sync(kFullMask, row0, p) + r;
    return e < 0 || row >= n ? i64(-1) : e + r * stride;
  }
};

// f(t, idx, e, row) for element idx = t * 32 + lane of the warp's run (e: -1 past the end; row:
// its row in the line); the whole warp calls it.
template <class F>
__device__ __forceinline__ void partition_run_elements(const PartitionRun& run, F f) {
  constexpr int M = kPivotPartitionRows;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
#pragma unroll
  for (int t = 0; t < M; ++t) {
    const int idx = t * kWarp + lane;
    i64 row;
    const i64 e = run.element(idx / M, idx % M, row);
    f(t, idx, e, row);
  }
}

// One array of the warp's 32 partitions through shared memory: in[t] is element t * 32 + lane
// of the warp's run (row idx % M of partition idx / M); v[r] = row r of this lane's partition.
template <class T>
__device__ __forceinline__ void partition_transpose(T* tile, const T (&in)[kPivotPartitionRows],
                                                    T (&v)[kPivotPartitionRows]) {
  constexpr int M = kPivotPartitionRows;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
#pragma unroll
  for (int t = 0; t < M; ++t) tile[t * kWarp + lane] = in[t];  // tile[p * M + r]
  __syncwarp();
#pragma unroll
  for (int r = 0; r < M; ++r) v[r] = tile[lane * M + r];
  __syncwarp();
}

// The warp's partitions' a, b, c, d as partition_row gives them (rows past the end (0, 1, 0 |
// 0), the line's a_0 and c_{n-1} zero), consecutive lanes loading consecutive elements. Every
// load of the four arrays is issued before the first store to the tile, and each element's
// address is found once for the four (stop 32: one array at a time held 17 loads a lane in
// flight, 68 now, and took 8 shuffles an element instead of 2; fp32 one system of 2^24 was
// 1.9-2.0x cuSPARSE gtsv2 against the 3x asked).
//
// Fast (form 1, stop 33): a warp whose 32 partitions are one run of 544 consecutive
// rows of one line, element stride 1, inside the line and short of its last row (every warp
// of one long contiguous line but the last) loads element t * 32 + lane of the run from one
// base address (immediate offsets: no shuffles, no 64-bit address per element; ~550 of the
// fp32 reduce's 2944 instructions were that address arithmetic); the line's a_0 is zeroed
// after the transpose. Other warps take the general loads. Returns whether the run was
// contiguous (the fill stores it the same way) and its first element in e_first.
struct PartitionContiguous {
  bool yes;
  i64 e_first;
};
template <bool Shared>
__device__ __forceinline__ PartitionContiguous partition_contiguous(const PartitionRun& run) {
  constexpr int M = kPivotPartitionRows;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const i64 e_first = __shfl_sync(kFullMask, run.e0, 0);
  const i64 row_first = __shfl_sync(kFullMask, run.row0, 0);
  const i64 row_last = __shfl_sync(kFullMask, run.row0, kWarp - 1);
  const bool mine = !Shared && run.stride == 1 && e_first >= 0 && run.e0 == e_first + lane * M &&
                    run.row0 == row_first + lane * M;
  return {__all_sync(kFullMask, mine) && row_last + M < run.n, e_first};
}

template <class T, bool Shared, bool Fast = false>
__device__ __forceinline__ PartitionContiguous partition_stage_rows(
    T* tile, const PartitionRun& run, const T* a, const T* b, const T* c, const T* d, T (&ra)[kPivotPartitionRows],
    T (&rb)[kPivotPartitionRows], T (&rc)[kPivotPartitionRows], T (&rd)[kPivotPartitionRows]) {
  constexpr int M = kPivotPartitionRows;
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  T la[M], lb[M], lc[M], ld[M];
  PartitionContiguous ct{false, 0};
  if constexpr (Fast) ct = partition_contiguous<Shared>(run);
  if (Fast && ct.yes) {
    const i64 e = ct.e_first + lane;
    const T *pa = a + e, *pb = b + e, *pc = c + e, *pd = d + e;
#pragma unroll
    for (int t = 0; t < M; ++t) {
      la[t] = pa[t * kWarp];
      lb[t] = pb[t * kWarp];
      lc[t] = pc[t * kWarp];
      ld[t] = pd[t * kWarp];
    }
  } else {
    partition_run_elements(run, [&](int t, int, i64 e, i64 row) {
      const i64 eb = Shared ? row : e;
      la[t] = e < 0 || row == 0 ? T(0) : a[eb];
      lb[t] = e < 0 ? T(1) : b[eb];
      lc[t] = e < 0 || row == run.n - 1 ? T(0) : c[eb];
      ld[t] = e < 0 ? T(0) : d[e];
    });
  }
  partition_transpose<T>(tile, la, ra);
  partition_transpose<T>(tile, lb, rb);
  partition_transpose<T>(tile, lc, rc);
  partition_transpose<T>(tile, ld, rd);
  if (Fast && ct.yes && run.row0 == 0) ra[0] = T(0);  // the line's a_0 (never read, maybe not finite)
  return ct;
}

// Where a warp of the reduce and fill passes stands: its first partition (warp_gp), this
// lane's (gp), and whether the warp has a partition of its own. Overlap (the reduce pass):
// a warp owns 31 partitions, lanes 1 .. 31, and lane 0 takes the partition before them
// (its last-row values are what lane 1's separator needs), in parallel with the others.
// (Until stop 29 lane 0 owned a partition too and then eliminated the one before it on
// its own, the warp waiting: the 2^24 reduce took 400 us where the 256^3 box, whose lines
// start a new line every 16 partitions, took 240.)
constexpr int kPivotPartitionOwned = kWarp - 1;  // partitions a reduce warp owns
struct PartitionWarp {
  int lane;
  i64 total, warp_gp, gp;
  bool any;
  // gw: the warp's index in the pass (block * kPivotPartitionWarps + warp). reverse_warps > 0
  // (the fill of form 1): the pass's warps in
  // reverse order, so the first blocks take the end of the lines, which the reduce pass read
  // last and the L2 cache may still hold (as the large plan's pass 2 does).
  __device__ PartitionWarp(const PartitionIndex& ix, bool overlap, i64 gw, i64 reverse_warps = 0)
      : lane(static_cast<int>(threadIdx.x) % kWarp),
        total(ix.L.lines() * ix.P),
        warp_gp(overlap ? gw * kPivotPartitionOwned - 1 : (reverse_warps > 0 ? reverse_warps - 1 - gw : gw) * kWarp),
        gp(warp_gp + lane),
        any(warp_gp + (overlap ? 1 : 0) < total) {}
};
// The warp's index in a reduce or fill kernel's pass (warp: its index in the block).
__device__ __forceinline__ i64 partition_kernel_warp(int warp) {
  return static_cast<i64>(blockIdx.x) * kPivotPartitionWarps + warp;
}

// The route's forms (ADI_PIVOTING_PARTITION_FORM = 0 | 1, read at each solve; for the A/B
// measurement of stop 33, bench_cuda_pivoting times both):
//   0: stop 32's kernels;
//   1 (the default): contiguous warps load and store from one base address
//      (partition_stage_rows' Fast), the fill's warps in reverse order, the fill's last partition
//      of a line found from its first row (no 64-bit remainder): the same arithmetic, bit for bit.
//      sm_90, fp32, along the contiguous path: reduce 2944 -> 2232 instructions, fill 2472 ->
//      1304 (154 -> 103 registers: 3 -> 4 blocks an SM); fp64 3720 -> 2984, 2688 -> 1512
//      (static counts, the never-taken slow paths of the correctly rounded reciprocals included).
// Shared bands take form 0's kernels (one long system with shared bands is not a case worth a
// kernel). Measured and dropped at stop 33 (docs/pivoting.md): the small last levels in one
// block (as slow as the launches it replaced: the levels' latency chains one after the other),
// persistent warps with a cp.async pipeline (12 warps an SM at 168 registers lost to form 1's
// 16), and, on the host prototype, both ends of a block by one elimination and a back
// substitution (fp32 Toeplitz lines of 1000 and 40000 rows at 10.5x and 16.4x LAPACK's error,
// against 0.9x and 0.6x with the two eliminations).
constexpr int kPivotPartitionForms = 2;
// Without ADI_PIVOTING_PARTITION_FORM: form 1, the faster in the lead's H200 run of stop 33 (one
// system of 2^24: fp32 0.255 ms = 3.24x cuSPARSE gtsv2, against form 0's 0.339 ms / 2.44x; fp64
// 0.464 ms = 4.46x, form 0 3.63x). Read at each solve; a value but 0 .. kPivotPartitionForms - 1
// is an InvalidArgument (before stop 40: the default).
constexpr int kPivotPartitionDefaultForm = 1;
// Issue 15 item 8: form 0 with per-line bands (kept for comparison) is compiled only with
// -DADI_CUDA_UNROLL_ALL=ON; asked for in a build without it, said once on stderr, and form 1 runs
// (the same answers bit for bit: PartitionFormsBitIdentical).
inline int pivoting_partition_form() {
  const int f = ::adi::detail::env_int("ADI_PIVOTING_PARTITION_FORM", 0, kPivotPartitionForms - 1,
                                      kPivotPartitionDefaultForm);
#if !defined(ADI_CUDA_UNROLL_ALL)
  if (f == 0) {
    static std::once_flag once;
    note_form_not_compiled(once, "ADI_PIVOTING_PARTITION_FORM=0 (per-line bands)", "the default (form 1)");
    return kPivotPartitionDefaultForm;
  }
#endif
  return f;
}

// The dominance test (stop 34, common::partition_dominance_unsafe), a kernel argument (uniform
// branch), by ADI_PIVOTING_PARTITION_DOMINANCE (read at each solve): 1 on, 0 off, unset
// kPivotPartitionDominanceDefault (any other value an InvalidArgument; before stop 40 the default). On in place, it sends every line that is not
// dominant-like to the exact fall-back, one thread per line: within the yardstick, but ~3300x
// slower than the route on one Toeplitz 0.6 system of 2^20 (H100, stop 34); out of place (dense
// layouts) such lines are refined once instead (2.07x / 2.16x the route's time, fp32 / fp64, H100
// run s35/1; launch_pivoting_partition). out_of_place: on where the lines can be refined (out of
// place, dense), off elsewhere (in place the route's answer, as with 0: docs/pivoting.md).
enum class PivotDominance { off, on, out_of_place };
// Stop 35 (h-refgate): on out of place, where the solve gate makes the refinement's kernels
// cost nothing unless a line is flagged (docs/pivoting.md "Stop 35", "Stop 37"; before: off).
constexpr PivotDominance kPivotPartitionDominanceDefault = PivotDominance::out_of_place;
inline PivotDominance pivoting_partition_dominance() {
  switch (::adi::detail::env_choice("ADI_PIVOTING_PARTITION_DOMINANCE", {"0", "1"}, -1)) {
    case 0: return PivotDominance::off;
    case 1: return PivotDominance::on;
    default: return kPivotPartitionDominanceDefault;
  }
}

// The reduce pass's arithmetic on a lane's staged rows (the whole warp calls it: shuffles).
// The partition that holds a line's end pads it scale-neutrally (stop 34,
// common::partition_pad_rows, in a branch only that lane takes: the weak test no longer depends
// on the line's scale); dominance (pivoting_partition_dominance): lines that do not behave like
// diagonally dominant ones raise dominance_flag (common::partition_dominance_unsafe).
template <class T>
__device__ __forceinline__ void partition_reduce_rows(const PartitionRun& run, int lane, i64 gp, i64 total,
                                                      const T (&ra)[kPivotPartitionRows],
                                                      T (&rb)[kPivotPartitionRows],
                                                      const T (&rc)[kPivotPartitionRows],
                                                      const T (&rd)[kPivotPartitionRows], T* A, T* B, T* C, T* D,
                                                      int* flag, int* weak_flag, int* dominance_flag) {
  constexpr int M = kPivotPartitionRows;
  if (run.row0 + M > run.n) common::partition_pad_rows<T, M>(ra, rb, rc, static_cast<int>(run.n - run.row0));
  auto own = [&](int i) { return common::PartitionRowValues<T>{ra[i], rb[i], rc[i], rd[i]}; };
  bool bad = false, weak = false;
  T yF, vF, wF, yL, vL, wL;
  common::partition_first<T, M>(own, yF, vF, wF, bad, weak);
  common::partition_last<T, M>(own, yL, vL, wL, bad, weak);
  // The previous partition's last-row values: the lane below (lane 0 only supplies them).
  T pyL = __shfl_up_sync(kFullMask, yL, 1), pvL = __shfl_up_sync(kFullMask, vL, 1),
    pwL = __shfl_up_sync(kFullMask, wL, 1);
  if (lane == 0 || gp >= total) return;
  const bool first_of_line = run.row0 == 0;
  if (first_of_line) pyL = pvL = pwL = T(0);
  const common::PartitionRowValues<T> r = common::partition_reduced_row<T>(own(0), pyL, pvL, pwL, yF, vF, wF);
  A[gp] = r.a;
  B[gp] = r.b;
  C[gp] = r.c;
  D[gp] = r.d;
  // With the test: the refinement's flag (out of place) or the weak flag (in place, forced on: the
  // exact fall-back).
  if (dominance_flag != nullptr && common::partition_dominance_unsafe<T>(vF, wF, vL, wL, r)) *dominance_flag = 1;
  // A singular block (a non-finite 1/pivot) is always also weak: the fall-back decides then.
  report(bad && !weak, flag);
  if (weak) *weak_flag = 1;
}

// Flag bits of the partition route: bad (a non-finite pivot) goes to the plan's flag, weak
// (a nearly singular block) to the route's own int. One warp of the reduce pass (gw, its
// staging tile).
template <class T, bool Shared, int Form>
__device__ __forceinline__ void partition_reduce_warp(const PartitionIndex& ix, i64 gw, T* tile, const T* a,
                                                      const T* b, const T* c, const T* d, T* A, T* B, T* C, T* D,
                                                      int* flag, int* weak_flag, int* dominance_flag) {
  constexpr int M = kPivotPartitionRows;
  const PartitionWarp w(ix, true, gw);
  if (!w.any) return;  // uniform per warp
  const int lane = w.lane;
  const i64 total = w.total, gp = w.gp;
  const PartitionRun run(ix, gp);
  T ra[M], rb[M], rc[M], rd[M];
  partition_stage_rows<T, Shared, (Form >= 1)>(tile, run, a, b, c, d, ra, rb, rc, rd);
  partition_reduce_rows<T>(run, lane, gp, total, ra, rb, rc, rd, A, B, C, D, flag, weak_flag, dominance_flag);
}

template <class T, bool Shared, int Form = 0>
__global__ void __launch_bounds__(kPivotPartitionWarps* kWarp)
    pivoting_partition_reduce_kernel(PartitionIndex ix, const T* __restrict__ a, const T* __restrict__ b,
                                     const T* __restrict__ c, const T* d, T* __restrict__ A, T* __restrict__ B,
                                     T* __restrict__ C, T* __restrict__ D, int* flag, int* weak_flag,
                                     int* dominance_flag, const int* skip) {
  __shared__ T tiles[kPivotPartitionWarps][kWarp * kPivotPartitionRows];
  if (skip != nullptr && *skip != 0) return;  // the refinement's pass, nothing to refine
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  partition_reduce_warp<T, Shared, Form>(ix, partition_kernel_warp(warp), tiles[warp], a, b, c, d, A, B, C, D, flag,
                                         weak_flag, dominance_flag);
}

// The fill pass's arithmetic on a lane's staged rows: x, its partition's rows (zeros past the
// pass's partitions).
template <class T, int Form>
__device__ __forceinline__ void partition_fill_solve(const PartitionIndex& ix, const PartitionRun& run, i64 gp,
                                                     i64 total, const T (&ra)[kPivotPartitionRows],
                                                     const T (&rb)[kPivotPartitionRows],
                                                     const T (&rc)[kPivotPartitionRows],
                                                     const T (&rd)[kPivotPartitionRows], const T* X,
                                                     T (&x)[kPivotPartitionRows], bool& bad) {
  constexpr int M = kPivotPartitionRows;
  if (gp < total) {
    // Form 1: from the partition's first row (a 64-bit remainder before: ~60 instructions).
    const bool last_of_line = Form >= 1 ? run.row0 + M >= run.n : (gp + 1) % ix.P == 0;
    common::partition_solve<T, M>([&](int i) { return common::PartitionRowValues<T>{ra[i], rb[i], rc[i], rd[i]}; },
                                  X[gp], last_of_line ? T(0) : X[gp + 1], x, bad);
  } else {
#pragma unroll
    for (int r = 0; r < M; ++r) x[r] = T(0);
  }
}

// x back through the warp's tile, stored by consecutive lanes (a contiguous run from one base
// address, Form >= 1).
template <class T, int Form>
__device__ __forceinline__ void partition_fill_store(T* tile, const PartitionRun& run, const PartitionContiguous& ct,
                                                     int lane, const T (&x)[kPivotPartitionRows], T* u) {
  constexpr int M = kPivotPartitionRows;
#pragma unroll
  for (int r = 0; r < M; ++r) tile[lane * M + r] = x[r];
  __syncwarp();
  if (Form >= 1 && ct.yes) {
    T* pu = u + ct.e_first + lane;
#pragma unroll
    for (int t = 0; t < M; ++t) pu[t * kWarp] = tile[t * kWarp + lane];
  } else {
    partition_run_elements(run, [&](int, int idx, i64 e, i64) {
      if (e >= 0) u[e] = tile[idx];
    });
  }
}

// One warp of the fill pass (reverse_warps: PartitionWarp). The caller has checked the weak
// flag.
template <class T, bool Shared, int Form>
__device__ __forceinline__ void partition_fill_warp(const PartitionIndex& ix, i64 gw, i64 reverse_warps, T* tile,
                                                    const T* a, const T* b, const T* c, const T* d, const T* X, T* u,
                                                    int* flag) {
  constexpr int M = kPivotPartitionRows;
  const PartitionWarp w(ix, false, gw, reverse_warps);
  if (!w.any) return;  // uniform per warp
  const int lane = w.lane;
  const i64 total = w.total, gp = w.gp;
  const PartitionRun run(ix, gp);
  T ra[M], rb[M], rc[M], rd[M];
  const PartitionContiguous ct =
      partition_stage_rows<T, Shared, (Form >= 1)>(tile, run, a, b, c, d, ra, rb, rc, rd);
  bool bad = false;
  T x[M];
  partition_fill_solve<T, Form>(ix, run, gp, total, ra, rb, rc, rd, X, x, bad);
  partition_fill_store<T, Form>(tile, run, ct, lane, x, u);
  report(bad, flag);
}

template <class T, bool Shared, int Form = 0>
__global__ void __launch_bounds__(kPivotPartitionWarps* kWarp)
    pivoting_partition_fill_kernel(PartitionIndex ix, const T* __restrict__ a, const T* __restrict__ b,
                                   const T* __restrict__ c, const T* d, const T* __restrict__ X, T* u, int* flag,
                                   const int* weak_flag) {
  __shared__ T tiles[kPivotPartitionWarps][kWarp * kPivotPartitionRows];
  // A weak block: the thread route solves the lines (launch_pivoting_partition); in the
  // refinement's pass this is its skip flag (nothing to refine).
  if (*weak_flag != 0) return;
  const int warp = static_cast<int>(threadIdx.x) / kWarp;
  partition_fill_warp<T, Shared, Form>(ix, partition_kernel_warp(warp),
                                       Form >= 1 ? static_cast<i64>(gridDim.x) * kPivotPartitionWarps : 0,
                                       tiles[warp], a, b, c, d, X, u, flag);
}

// The levels: level 0 is the caller's lines; level j+1 the reduced system of level j
// (contiguous, [line][partition]), partitioned again while at least kPivotPartitionAgainRows
// long, then solved by the thread-per-line kernel.
inline i64 pivoting_partition_count(i64 n) { return (n + kPivotPartitionRows - 1) / kPivotPartitionRows; }

// Whether the partition route takes these lines: few long lines (the thread-per-line
// kernel would leave the device idle), not periodic.
inline bool pivoting_partition_fits(const LineSet& l, bool periodic) {
  return !periodic && l.n >= kPivotPartitionMinRows && l.lines() * 64 < l.n;
}

// The route's flags at the workspace's start: weak (the exact fall-back), refine (opted-in
// dominance test, out of place: the lines are refined), go / skip (the refinement runs: refine
// and not weak; skip = !go, the fill kernel's gate), weak2 (the refinement pass's own weak flag,
// never read: the same matrix as the first pass).
constexpr int kPivotPartitionFlags = 8;

// Whether the caller's lines fill exactly lines * n elements from element 0 (contiguous,
// interleaved, ...): then the refinement's residual lives in the workspace in the caller's
// layout (the route's passes index it like d). Other layouts keep the exact fall-back.
inline bool pivoting_partition_dense(const LineSet& l) {
  if (l.stride < 0 || l.stride0 < 0 || l.stride1 < 0 || l.n < 1 || l.lines() < 1) return false;
  const i64 last = (l.count0 - 1) * l.stride0 + (l.count1 - 1) * l.stride1 + (l.n - 1) * l.stride;
  return last + 1 == l.n * l.lines();
}

inline std::size_t pivoting_partition_levels_workspace(const LineSet& l, std::size_t value_size) {
  const std::size_t lines = static_cast<std::size_t>(l.lines());
  std::size_t bytes = 0;
  i64 n = l.n;
  for (;;) {
    const i64 P = pivoting_partition_count(n);
    bytes += 5 * slice_bytes(lines * static_cast<std::size_t>(P), value_size);  // A, B, C, D, X
    if (P < kPivotPartitionAgainRows) {
      bytes += 2 * slice_bytes(lines * static_cast<std::size_t>(P), value_size);  // the last level's U rows
      break;
    }
    n = P;
  }
  return bytes;
}

// The flags, then the levels; the fall-back (weak blocks): the thread-per-line kernel's scratch,
// after the flags; the refinement: the residual (n values a line), then the levels again. All
// three overlap: the fall-back runs only where the refinement does not, the refinement after
// the first pass's levels are spent. Independent of the dominance test's environment variable
// (for long lines the residual and the levels fit the fall-back's scratch: 1 + 7/16 < 2 values
// a row), so it may be set or unset between making the plan and solving.
inline std::size_t pivoting_partition_workspace(const LineSet& l, std::size_t value_size) {
  const std::size_t head = align_up(kPivotPartitionFlags * sizeof(int));
  const std::size_t levels = pivoting_partition_levels_workspace(l, value_size);
  const std::size_t count = static_cast<std::size_t>(l.n) * static_cast<std::size_t>(l.lines());
  const std::size_t refine = slice_bytes(count, value_size) + levels;
  const std::size_t fallback = pivoting_thread_workspace(l, false, value_size);
  return head + std::max(std::max(levels, refine), fallback);
}

// One level's reduce or fill pass, level 0 reading the caller's (maybe shared) bands.
template <class T>
struct PivotPartitionLevel {
  DeviceLines L;
  const T *a, *b, *c, *d;
  T* u;
  T *A, *B, *C, *D, *X;
  bool shared;
  i64 P() const { return pivoting_partition_count(L.n); }
  // Reduce: kPivotPartitionOwned partitions a warp; fill: kWarp.
  unsigned blocks(int per_warp) const {
    const i64 warps = (L.lines() * P() + per_warp - 1) / per_warp;
    return static_cast<unsigned>((warps + kPivotPartitionWarps - 1) / kPivotPartitionWarps);
  }
};

template <class T>
void pivoting_partition_reduce(const PivotPartitionLevel<T>& v, int* flag, int* weak, int form, int* dominance,
                               const int* skip, cudaStream_t stream) {
  const PartitionIndex ix{v.L, v.P()};
  const unsigned g = v.blocks(kPivotPartitionOwned);
  constexpr unsigned t = kPivotPartitionWarps * kWarp;
  if (v.shared)
    pivoting_partition_reduce_kernel<T, true><<<g, t, 0, stream>>>(ix, v.a, v.b, v.c, v.d, v.A, v.B, v.C, v.D, flag,
                                                                   weak, dominance, skip);
#if defined(ADI_CUDA_UNROLL_ALL)  // (form 0 with per-line bands: pivoting_partition_form)
  else if (form == 0)
    pivoting_partition_reduce_kernel<T, false><<<g, t, 0, stream>>>(ix, v.a, v.b, v.c, v.d, v.A, v.B, v.C, v.D, flag,
                                                                    weak, dominance, skip);
#endif
  else
    pivoting_partition_reduce_kernel<T, false, 1><<<g, t, 0, stream>>>(ix, v.a, v.b, v.c, v.d, v.A, v.B, v.C, v.D,
                                                                       flag, weak, dominance, skip);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void pivoting_partition_fill(const PivotPartitionLevel<T>& v, int* flag, const int* weak, int form,
                             cudaStream_t stream) {
  const PartitionIndex ix{v.L, v.P()};
  const unsigned g = v.blocks(kWarp);
  constexpr unsigned t = kPivotPartitionWarps * kWarp;
  if (v.shared)
    pivoting_partition_fill_kernel<T, true><<<g, t, 0, stream>>>(ix, v.a, v.b, v.c, v.d, v.X, v.u, flag, weak);
#if defined(ADI_CUDA_UNROLL_ALL)
  else if (form == 0)
    pivoting_partition_fill_kernel<T, false><<<g, t, 0, stream>>>(ix, v.a, v.b, v.c, v.d, v.X, v.u, flag, weak);
#endif
  else
    pivoting_partition_fill_kernel<T, false, 1><<<g, t, 0, stream>>>(ix, v.a, v.b, v.c, v.d, v.X, v.u, flag, weak);
  ADI_CUDA_CHECK(cudaGetLastError());
}

// One pass of the route on d -> u, the levels' scratch at `scratch`: every level's reduce pass,
// the last reduced system by the thread-per-line kernel, then every level's fill pass, deepest
// first. The fills are gated on fill_gate (return at once where it is not 0: the weak flag in the
// first pass, the refinement's skip flag in its pass); the refinement's pass also gates its
// reduce passes (skip) and the thread-per-line kernel (go); the first pass passes nullptr.
template <class T, int Chunk>
void pivoting_partition_pass(const LineSet& ls, BandView<T> bands, const T* d, T* u, char* scratch, int* flag,
                             int* weak, int* dominance, const int* fill_gate, const int* skip, const int* go,
                             int form, cudaStream_t stream) {
  ScratchCursor cur{scratch};
  constexpr int kMaxLevels = 16;
  PivotPartitionLevel<T> levels[kMaxLevels];
  int depth = 0;
  PivotPartitionLevel<T> v{to_device(ls), bands.a, bands.b, bands.c, d, u,
                           nullptr, nullptr, nullptr, nullptr, nullptr, bands.shared};
  for (;;) {
    const i64 lines = v.L.lines(), P = v.P();
    const std::size_t count = static_cast<std::size_t>(lines * P);
    v.A = cur.take<T>(count);
    v.B = cur.take<T>(count);
    v.C = cur.take<T>(count);
    v.D = cur.take<T>(count);
    v.X = cur.take<T>(count);
    pivoting_partition_reduce<T>(v, flag, weak, form, dominance, skip, stream);
    levels[depth++] = v;
    const DeviceLines R{P, 1, lines, P, 1, 0};
    if (P >= kPivotPartitionAgainRows && depth < kMaxLevels) {
      v = PivotPartitionLevel<T>{R, v.A, v.B, v.C, v.D, v.X, nullptr, nullptr, nullptr, nullptr, nullptr, false};
      continue;
    }
    T* w1 = cur.take<T>(count);
    T* w2 = cur.take<T>(count);
    constexpr int threads = 128;
    const unsigned tb = static_cast<unsigned>((lines + threads - 1) / threads);
    pivoting_thread_per_line_kernel<T, Chunk, false>
        <<<tb, threads, 0, stream>>>(R, v.A, v.B, v.C, v.D, v.X, w1, w2, nullptr, nullptr, false, flag, go);
    ADI_CUDA_CHECK(cudaGetLastError());
    break;
  }
  for (int j = depth - 1; j >= 0; --j) pivoting_partition_fill<T>(levels[j], flag, fill_gate, form, stream);
}

// The refinement (stop 34, h-refine): go = the dominance test flagged a line and no block is weak
// (weak: the exact fall-back solved the lines), skip = !go.
__device__ __forceinline__ int pivoting_partition_refine_decide(const int* weak, const int* refine, int* go,
                                                                int* skip) {
  const int g = *refine != 0 && *weak == 0;
  *go = g;
  *skip = !g;
  return g;
}
template <int = 0>
__global__ void pivoting_partition_refine_decide_kernel(const int* weak, const int* refine, int* go, int* skip) {
  pivoting_partition_refine_decide(weak, refine, go, skip);
}
#if ADI_PIVOTING_REFINE_GRAPH
// The solve gate's (stop 35): the same decision, also the condition of the graph's IF node.
template <int = 0>
__global__ void pivoting_partition_refine_condition_kernel(const int* weak, const int* refine, int* go, int* skip,
                                                           cudaGraphConditionalHandle handle) {
  cudaGraphSetConditional(handle, static_cast<unsigned>(pivoting_partition_refine_decide(weak, refine, go, skip)));
}
#endif

// r = d - A x in the caller's layout (dense: pivoting_partition_dense), each row's residual in
// higher precision (common::refine_residual). Grid-stride over the lines' rows.
template <class T>
__global__ void pivoting_partition_residual_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                                                   const T* __restrict__ c, bool shared, const T* __restrict__ d,
                                                   const T* __restrict__ x, T* __restrict__ r, const int* go) {
  if (*go == 0) return;
  const i64 total = L.lines() * L.n;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<i64>(gridDim.x) * blockDim.x) {
    const common::RefineRowIndex k = common::refine_row_index(L, i, shared);
    const i64 e = k.e, ce = k.ce;
    r[e] = common::refine_residual<T>(k.first ? T(0) : a[ce], b[ce], k.last ? T(0) : c[ce], d[e],
                                      k.first ? T(0) : x[e - L.stride], x[e], k.last ? T(0) : x[e + L.stride]);
  }
}

// x += e over the dense layout's elements.
template <class T>
__global__ void pivoting_partition_update_kernel(i64 count, const T* __restrict__ e, T* __restrict__ x,
                                                 const int* go) {
  if (*go == 0) return;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<i64>(gridDim.x) * blockDim.x)
    x[i] += e[i];
}

// How the refinement's kernels are gated where nothing is flagged (stop 35;
// ADI_PIVOTING_REFINE_GATE, read at each solve):
//   launches: stop 34's: every kernel of the refinement is launched and its blocks read the
//     device flag and return (~12 launches of full grids: +45% / +35% of a 2^20 solve, fp32 /
//     fp64, +18% / +11% at 2^24, H100 run s35/1);
//   solve (the default): the whole solve (flags' memset, the route's pass, the gated fall-back,
//     a one-thread kernel that sets the decision (go / skip) and the condition of an IF node
//     whose body holds the refinement's kernels) as one CUDA graph launch (captured once per
//     shape and pointer set, cached: pivoting_refine_graphs).
// A stream that is being captured (the caller builds its own graph) takes launches, and so does
// every solve where the toolkit is older than CUDA 12.4 (ADI_PIVOTING_REFINE_GRAPH).
// Stop 37 removed the graph gate (the route launched, then a graph of the decision and the IF
// node): slower than the solve gate everywhere (+2..+11% against the route without the test,
// H100 run s37/2) and compute-sanitizer memcheck reported reads in its conditional body
// (docs/pivoting.md "Stop 36", "Stop 37").
enum class PivotRefineGate { launches, solve };
// Without ADI_PIVOTING_REFINE_GATE: the whole solve as one graph, below the route without the
// test where nothing is flagged (H100 run s35/5: -1.4% / -1.2% at 2^24, fp32 / fp64; run s37/2:
// -1.3% / -0.7%). The former value "graph" takes it too, with one line on stderr saying so; any
// value but launches, solve, graph is an InvalidArgument (before stop 40: the default).
constexpr PivotRefineGate kPivotRefineDefaultGate = PivotRefineGate::solve;
inline PivotRefineGate pivoting_refine_gate() {
  const int gate = ::adi::detail::env_choice("ADI_PIVOTING_REFINE_GATE", {"launches", "solve", "graph"}, 1);
  if (!ADI_PIVOTING_REFINE_GRAPH) return PivotRefineGate::launches;
  if (gate == 0) return PivotRefineGate::launches;
  if (gate == 1) return PivotRefineGate::solve;
  {
    static std::once_flag once;
    std::call_once(once, [] {
      std::fprintf(stderr, "adi: ADI_PIVOTING_REFINE_GATE=graph: the graph gate was removed in stop 37 "
                           "(docs/pivoting.md); the solve gate runs (set launches or solve)\n");
    });
  }
  return kPivotRefineDefaultGate;
}

// Where one solve's route and refinement live: the caller's arrays and the workspace's flags,
// levels and residual (launch_pivoting_partition).
template <class T>
struct PivotPartitionSolve {
  LineSet ls;
  BandView<T> bands;
  const T* d;
  T* u;
  int* flag;  // the plan's flag (bad pivots)
  int *flags, *weak, *refine, *go, *skip, *weak2;
  char* body;    // the levels (first pass), the fall-back's scratch
  T* r;          // the residual, then the correction (in place)
  char* levels;  // the refinement pass's levels
  std::size_t count;
  int form;
  bool dominance, refining;
};

// The first pass: the flags cleared, the route, the exact fall-back gated on the weak flag (its
// scratch overlaps the levels: it runs only where the fills returned at once).
template <class T, int Chunk>
void pivoting_partition_route(const PivotPartitionSolve<T>& s, cudaStream_t stream) {
  ADI_CUDA_CHECK(cudaMemsetAsync(s.flags, 0, kPivotPartitionFlags * sizeof(int), stream));
  int* dominance_flag = s.dominance ? (s.refining ? s.refine : s.weak) : nullptr;
  pivoting_partition_pass<T, Chunk>(s.ls, s.bands, s.d, s.u, s.body, s.flag, s.weak, dominance_flag, s.weak, nullptr,
                                    nullptr, s.form, stream);
  launch_pivoting_thread<T, Chunk>(s.ls, s.bands, s.d, s.u, false, s.body, s.flag, stream, s.weak);
}

// The refinement's kernels after the decision (gated on go / skip): the residual, the route's
// pass on it (in place in the workspace), x += e.
template <class T, int Chunk>
void pivoting_partition_refinement(const PivotPartitionSolve<T>& s, cudaStream_t stream) {
  constexpr unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((s.count + threads - 1) / threads, 8192));
  pivoting_partition_residual_kernel<T><<<blocks, threads, 0, stream>>>(to_device(s.ls), s.bands.a, s.bands.b,
                                                                        s.bands.c, s.bands.shared, s.d, s.u, s.r, s.go);
  ADI_CUDA_CHECK(cudaGetLastError());
  pivoting_partition_pass<T, Chunk>(s.ls, s.bands, s.r, s.r, s.levels, s.flag, s.weak2, nullptr, s.skip, s.skip, s.go,
                                    s.form, stream);
  pivoting_partition_update_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<i64>(s.count), s.r, s.u, s.go);
  ADI_CUDA_CHECK(cudaGetLastError());
}

#if ADI_PIVOTING_REFINE_GRAPH
// The solve gate's graphs, one per device, value type, form, shape, pointer set (everything the
// captured kernels' arguments hold) and IF node or not (flat), least recently used replaced beyond
// kPivotRefineGraphs: a solve with a pointer set not in the cache captures and instantiates
// a new graph (host time, measured by bench_cuda_pivoting --stop35's "new pointers" row;
// cudaGraphExecUpdate is not used: the new graph's IF node has its own condition handle).
// The cache lives to the process's end (never destroyed: past the CUDA context's teardown); an
// evicted graph is destroyed at once (in flight, CUDA frees it on completion).
constexpr std::size_t kPivotRefineGraphs = 8;
struct PivotRefineGraphKey {
  i64 n, stride, count0, stride0, count1, stride1;
  const void *a, *b, *c, *d, *u, *workspace, *flag;
  int device, value_size, chunk, flat, form, shared;
  bool operator==(const PivotRefineGraphKey& o) const { return std::memcmp(this, &o, sizeof o) == 0; }
};
static_assert(sizeof(PivotRefineGraphKey) == 6 * sizeof(i64) + 7 * sizeof(void*) + 6 * sizeof(int),
              "no padding: the key is compared with memcmp");
struct PivotRefineGraphs {
  struct Entry {
    PivotRefineGraphKey key;
    cudaGraphExec_t exec;
    std::uint64_t used;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
  std::uint64_t clock = 0;
  std::string unavailable;  // why a graph could not be built (then: gated launches)
};
// The graph to launch, the cache's lock held while it lives (an evicting solve on another thread
// cannot destroy the graph between the lookup and the launch); exec nullptr: take the launches.
struct PivotRefineGraphLease {
  std::unique_lock<std::mutex> lock;
  cudaGraphExec_t exec = nullptr;
};
inline PivotRefineGraphs& pivoting_refine_graphs() {
  static PivotRefineGraphs* graphs = new PivotRefineGraphs;  // never destroyed (above)
  return *graphs;
}
// Diagnosis switches of the solve gate (stop 36: compute-sanitizer memcheck reported reads of
// the removed graph gate's IF node body that the index arithmetic, the cache key and the stream
// order all say are in bounds of live arrays; docs/pivoting.md "Stop 36", "Stop 37"), read at
// each solve, "1" / "0" or unset (adi/base/env_switch.hpp: any other value an InvalidArgument):
//   ADI_PIVOTING_REFINE_GRAPH_IF=0: the graph without the IF node: the decision kernel, then the
//     refinement's kernels in the graph itself, gated on go / skip as the launches are (the same
//     kernels on the same arguments, nothing in a conditional body; PartitionRefinementGatesAgree
//     checks it bit for bit, bench_cuda_pivoting --stop35 times it);
//   ADI_PIVOTING_REFINE_GRAPH_TRACE=1: one stderr line per graph built and per graph launched
//     ("adi: refine graph: built ..." / "launched"), so a run shows the graphs ran (not the
//     launches).
// Build the graph: route -> condition kernel -> IF node { refinement }, captured on a private
// stream (the caller's may be the legacy default stream, which cannot capture);
// flat (ADI_PIVOTING_REFINE_GRAPH_IF=0, diagnosis): route -> decision -> refinement (gated).
template <class T, int Chunk>
cudaGraphExec_t pivoting_refine_graph_build(const PivotPartitionSolve<T>& s, bool flat) {
  if (flat)
    return build_captured_graph([&](cudaStream_t cs) {
      pivoting_partition_route<T, Chunk>(s, cs);
      pivoting_partition_refine_decide_kernel<><<<1, 1, 0, cs>>>(s.weak, s.refine, s.go, s.skip);
      ADI_CUDA_CHECK(cudaGetLastError());
      pivoting_partition_refinement<T, Chunk>(s, cs);
    });
  return build_if_graph(
      [&](cudaStream_t cs, cudaGraphConditionalHandle handle) {
        pivoting_partition_route<T, Chunk>(s, cs);
        pivoting_partition_refine_condition_kernel<><<<1, 1, 0, cs>>>(s.weak, s.refine, s.go, s.skip, handle);
        ADI_CUDA_CHECK(cudaGetLastError());
      },
      [&](cudaStream_t cs) { pivoting_partition_refinement<T, Chunk>(s, cs); });
}

// The cached graph for this solve (built on a miss). Where a graph cannot be built (a driver or
// toolkit without conditional nodes, ...) the process takes the gated launches from then on,
// with one line on stderr; ADI_PIVOTING_REFINE_GATE_STRICT=1 (the tests) throws instead.
// (Stop 35's diagnosis switches ADI_PIVOTING_REFINE_GRAPH_CACHE=0 and _SYNC=1 / 2, for the
// removed graph gate's memcheck reports, went with it at stop 37.)
template <class T, int Chunk>
PivotRefineGraphLease pivoting_refine_graph(const PivotPartitionSolve<T>& s, const void* workspace) {
  PivotRefineGraphKey key{};
  ADI_CUDA_CHECK(cudaGetDevice(&key.device));
  key.value_size = static_cast<int>(sizeof(T));
  key.chunk = Chunk;
  key.form = s.form;
  key.n = s.ls.n;
  key.stride = s.ls.stride;
  key.count0 = s.ls.count0;
  key.stride0 = s.ls.stride0;
  key.count1 = s.ls.count1;
  key.stride1 = s.ls.stride1;
  key.a = s.bands.a;
  key.b = s.bands.b;
  key.c = s.bands.c;
  key.d = s.d;
  key.u = s.u;
  key.workspace = workspace;
  key.flag = s.flag;
  key.shared = s.bands.shared ? 1 : 0;
  const bool flat = !::adi::detail::env_switch("ADI_PIVOTING_REFINE_GRAPH_IF", true);
  key.flat = flat ? 1 : 0;  // diagnosis: a graph without the IF node (pivoting_refine_graph_build)
  PivotRefineGraphs& g = pivoting_refine_graphs();
  PivotRefineGraphLease lease{std::unique_lock<std::mutex>(g.mutex), nullptr};
  ++g.clock;
  for (auto& e : g.entries)
    if (e.key == key) {
      e.used = g.clock;
      lease.exec = e.exec;
      return lease;
    }
  const bool strict = ::adi::detail::env_switch("ADI_PIVOTING_REFINE_GATE_STRICT", false);
  if (!g.unavailable.empty()) {
    if (strict)
      throw ::adi::DeviceError("partition route: the refinement's solve gate (a CUDA graph) is unavailable: " +
                               g.unavailable);
    return lease;
  }
  cudaGraphExec_t exec = nullptr;
  try {
    exec = pivoting_refine_graph_build<T, Chunk>(s, flat);
    if (::adi::detail::env_switch("ADI_PIVOTING_REFINE_GRAPH_TRACE", false))
      std::fprintf(stderr, "adi: refine graph: built (gate solve%s, n %lld, %lld lines, %s bands, %d-byte values)\n",
                   flat ? ", no IF node" : "", static_cast<long long>(s.ls.n), static_cast<long long>(s.ls.lines()),
                   s.bands.shared ? "shared" : "per-line", static_cast<int>(sizeof(T)));
  } catch (const ::adi::DeviceError& e) {
    if (strict) throw;
    g.unavailable = e.what();
    std::fprintf(stderr,
                 "adi: partition route: the refinement's solve gate (a CUDA graph) is unavailable (%s); gated "
                 "launches from now on\n",
                 e.what());
    return lease;
  }
  if (g.entries.size() < kPivotRefineGraphs) {
    g.entries.push_back({key, exec, g.clock});
  } else {
    auto lru = std::min_element(g.entries.begin(), g.entries.end(),
                                [](const auto& x, const auto& y) { return x.used < y.used; });
    (void)cudaGraphExecDestroy(lru->exec);  // in flight: freed on completion
    *lru = {key, exec, g.clock};
  }
  lease.exec = exec;
  return lease;
}

#endif  // ADI_PIVOTING_REFINE_GRAPH

// The route: one pass (pivoting_partition_pass), then the thread-per-line kernel on the
// caller's lines, gated on the weak flag on the device: if a block was nearly singular the fills
// returned at once and the thread route solves the lines (d is still intact, in place too:
// nothing was written to u), otherwise the thread route's blocks return at once.
// Refinement (dominance test, out of place, dense layouts): lines the dominance test flags are
// not sent to the fall-back but refined once: r = d - A x in higher precision (residual kernel),
// the route again on r (in place, in the workspace), x += e (update kernel), gated on the device
// (go / skip: nothing is read back) by the gate of pivoting_refine_gate: stop 34's launches (every
// kernel launched, its blocks returning at once where nothing is flagged) or the solve gate (the
// whole solve as one CUDA graph, the refinement behind its IF node: the kernels do not run at
// all). In place (u == d: d is gone once x is written) or other layouts, flagged lines take the
// exact fall-back as before.
// Nothing is read back (until stop 29 the host read the weak flag between the passes: one
// synchronisation, ~10-15 us, in every solve).
template <class T, int Chunk>
void launch_pivoting_partition(const LineSet& ls, BandView<T> bands, const T* d, T* u, void* workspace, int* flag,
                               cudaStream_t stream) {
  char* base = static_cast<char*>(workspace);
  int* flags = reinterpret_cast<int*>(base);
  PivotPartitionSolve<T> s{};
  s.ls = ls;
  s.bands = bands;
  s.d = d;
  s.u = u;
  s.flag = flag;
  s.flags = s.weak = flags;
  s.refine = flags + 1;
  s.go = flags + 2;
  s.skip = flags + 3;
  s.weak2 = flags + 4;
  s.body = base + align_up(kPivotPartitionFlags * sizeof(int));
  s.count = static_cast<std::size_t>(ls.n) * static_cast<std::size_t>(ls.lines());
  s.r = reinterpret_cast<T*>(s.body);
  s.levels = s.body + slice_bytes(s.count, sizeof(T));
  s.form = pivoting_partition_form();
  const PivotDominance mode = pivoting_partition_dominance();
  const bool refinable = static_cast<const T*>(u) != d && pivoting_partition_dense(ls);
  s.dominance = mode == PivotDominance::on || (mode == PivotDominance::out_of_place && refinable);
  s.refining = s.dominance && refinable;
  PivotRefineGate gate = s.refining ? pivoting_refine_gate() : PivotRefineGate::launches;
  if (gate != PivotRefineGate::launches) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    ADI_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    if (status != cudaStreamCaptureStatusNone) gate = PivotRefineGate::launches;
  }
#if ADI_PIVOTING_REFINE_GRAPH
  // Looked up (or built) before the route is enqueued: where no graph can be had, the launches.
  PivotRefineGraphLease lease;
  if (gate != PivotRefineGate::launches) {
    lease = pivoting_refine_graph<T, Chunk>(s, workspace);
    if (lease.exec == nullptr) gate = PivotRefineGate::launches;
  }
#endif
  if (gate == PivotRefineGate::launches) pivoting_partition_route<T, Chunk>(s, stream);  // else in the graph
  if (!s.refining) return;
  if (gate == PivotRefineGate::launches) {
    pivoting_partition_refine_decide_kernel<><<<1, 1, 0, stream>>>(s.weak, s.refine, s.go, s.skip);
    ADI_CUDA_CHECK(cudaGetLastError());
    pivoting_partition_refinement<T, Chunk>(s, stream);
    return;
  }
#if ADI_PIVOTING_REFINE_GRAPH
  ADI_CUDA_CHECK(cudaGraphLaunch(lease.exec, stream));
  if (::adi::detail::env_switch("ADI_PIVOTING_REFINE_GRAPH_TRACE", false))
    std::fprintf(stderr, "adi: refine graph: launched (gate solve)\n");
#endif
}

}  // namespace adi::cuda_backend::kernels
