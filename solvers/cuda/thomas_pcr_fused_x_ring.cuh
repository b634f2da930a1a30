#pragma once
// The first stage of a Douglas chain along x with the explicit operator folded in, formed from a
// ring of U's planes in shared memory (issue 16; solvers/cuda/README.md, "The first stage in one
// pass: the x ring"). Opt-in, a same-run A/B switch: ADI_FOLD_X_RING=1 makes Operator::solve_folded
// take the kernel fold for a chain's first stage on CUDA (adi/operator.cpp) and fused_stage_run
// launch this kernel where it applies (fused_x_ring_applies), the folded fused_stage_x_kernel
// elsewhere. ADI_FOLD_X_RING_SLOTS / _WAVES: the ring depth and the chunking, for the benchmark.
//
// What it replaces. The default stage x (ExplicitFold::stencil) is two passes: the stencil pass
// reads U and writes the right-hand side Y (2 fields), the X solve reads Y and writes Y_1 (2): 4
// field transfers, 0.260 ms at 256^3 fp64 on the H100 (0.140 + 0.120). The folded
// fused_stage_x_kernel moves 2 fields but takes 0.41 ms: one warp per line reads the 4 cross
// neighbours of each row from global memory, one row per lane at a time (latency-bound).
//
// Here a block of kRingLines warps owns kRingLines adjacent y-lines and walks a chunk of z planes.
// Shared memory holds a ring of S planes, each the block's lines plus the y-1 / y+1 halo lines
// (kRingLines + 2 rows of n), filled with cp.async S - 2 planes ahead of the plane being solved:
// the z +- 1 neighbours are the ring's previous / next plane, the y +- 1 neighbours the rows beside
// it, x +- 1 the row itself. Each warp forms its line's right-hand side from the ring (the terms
// of fold_base and stage_rhs, in their order), solves it with the shared-band Thomas-PCR of the
// fused X stage (pcr_line_shared_registers, factors formed once per block) and writes Y_1. U is
// read about once from DRAM (the halo rows are the neighbouring blocks' lines, read at the same
// time: L2; each chunk's two extra planes 2 / chunk), Y_1 written once: 2 field transfers.
//
// Where it applies (else fused_stage_run runs fused_stage_x_kernel, the same function): one folded
// term whose field is V_old (Douglas' first stage; the corrected schemes' two terms are not taken),
// lines of the whole x axis with n <= 256 (8 rows a lane), the stage's bands the fold's x bands (the
// Operator's: one set of arrays per axis), and every line's y and z neighbours
// adjacent rows inside the field (the sweep interior along each axis with a weight: Dirichlet
// faces; a periodic or Neumann y / z axis is not taken). Any x ends (Dirichlet, Neumann,
// periodic), sources. 32-bit offsets (Operator::folds: the field spans < 2^31 values).
#include <cuda_pipeline_primitives.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "adi/base/env_switch.hpp"
#include "solvers/cuda/thomas_pcr_fused_stage.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kRingLines = 8;  // warps per block, one y-line each per plane

// Planes in the ring (>= 3: z - 1, z, z + 1; each more is a plane in flight ahead). Ring kernel:
// default fp32 4, fp64 3 (fp64 at 4 leaves one block per SM); its lean form (one ring of the padded
// line per warp): fp32 5, fp64 4 (2 blocks of 8 warps per SM: 2 x 95 KB). ADI_FOLD_X_RING_SLOTS=3..5
// for the benchmark's A/B (either form; read at each launch; unset: the default, any other
// value an InvalidArgument).
template <class T>
int ring_slots(bool lean = false) {
  return ::adi::detail::env_int("ADI_FOLD_X_RING_SLOTS", 3, 5, (sizeof(T) == 4 ? 4 : 3) + (lean ? 1 : 0));
}

// Shared-memory layout (values of T): factors, stage bands (4 n; also the fold's x bands:
// fused_x_ring_applies), the warps' line buffers, then the ring (16-byte aligned rows of `pitch`).
struct RingLayout {
  int pitch = 0;         // ring row pitch (values): n rounded up to 16 bytes
  int bands = 0;         // offset of the stage bands
  int lines = 0;         // of the line buffers (kRingLines x per_line)
  int ring = 0;          // of the ring (S x (kRingLines + 2) rows)
  int slots = 0;
  std::size_t bytes = 0;
  template <class T>
  __host__ __device__ static RingLayout of(const PcrShape& sh, int slots) {
    constexpr int v16 = 16 / static_cast<int>(sizeof(T));
    RingLayout r;
    r.pitch = (sh.n + v16 - 1) / v16 * v16;
    r.bands = PcrFactors<T>::values(sh.per_line);
    r.lines = r.bands + 4 * sh.n;
    r.ring = (r.lines + kRingLines * sh.per_line + v16 - 1) / v16 * v16;
    r.slots = slots;
    r.bytes = sizeof(T) * (static_cast<std::size_t>(r.ring) +
                           static_cast<std::size_t>(slots) * (kRingLines + 2) * static_cast<std::size_t>(r.pitch));
    return r;
  }
};

// The ring's geometry, decided on the host.
struct RingGeometry {
  RingLayout lay;
  int count0, count1;  // lines along y, planes along z (sweep)
  int sy, sz;          // their strides (values)
  int kchunk;          // planes per block
  bool use_y, use_z;   // the fold reads y +- 1 / z +- 1 (the halo rows / planes outside the sweep)
  bool vec;            // rows copied in 16-byte pieces (aligned field, rows of whole pieces)
};

template <int N>
__device__ __forceinline__ void ring_wait() {
  __pipeline_wait_prior(N);
}

// One plane of one line: what the row formulas read besides the row's own values (both kernels).
template <class T>
struct RingRow {
  T alpha, wx, wy, wz;        // fold_base's weights (pack_fold: 0 where inactive)
  T yd, ya, yc, zd, za, zc;   // the cross axes' coefficients at the line
  T e0, e1, ve0, ve1;         // the line's face values: Dirichlet data, v's old boundary data
  const T* neu_lo;            // x Neumann faces (null: none)
  const T* neu_hi;
  int xp0, xn0, xpn, xnn;     // the x ends' neighbours (periodic: the other end; else the row itself)
  int fa;                     // the line's index into the x face arrays
  bool use_y, use_z, hv, per;
};

// Row r of an interior row (x neighbours r -+ 1 with U's values, not a Dirichlet end): fold_base
// at r, alpha U + wx (A_x U) + wy (A_y U) + wz (A_z U) in its order, then the stage's own term
// -(A_x U) from the same values (the stage's bands are the fold's x bands: the compiler forms
// A_x U once). An axis the fold does not read (use_y / use_z false) adds nothing (fold_base adds
// w (0 pc - 0 ...) there), its neighbours are not read.
template <class T>
__device__ __forceinline__ T ring_rhs_inner(const StageArgs<T>& g, const RingRow<T>& w, T a, T d, T c, T pc, T xm,
                                            T xp, T ym, T yp, T zm, T zp, i64 node) {
  T base = w.alpha * pc;
  if (w.wx != T(0)) base += w.wx * (d * pc - a * xm - c * xp);
  if (w.use_y) base += w.wy * (w.yd * pc - w.ya * ym - w.yc * yp);
  if (w.use_z) base += w.wz * (w.zd * pc - w.za * zm - w.zc * zp);
  return w.hv ? stage_rhs_inner(g, a, d, c, base, xm, pc, xp, node)
              : stage_rhs_inner(g, a, d, c, base, T(0), T(0), T(0), node);
}

// Whether row r needs ring_rhs_general: a line's ends, and the rows next to an end whose v is the
// old boundary data (v_end).
template <class T>
__device__ __forceinline__ bool ring_edge_row(const StageArgs<T>& g, const RingRow<T>& w, int r, int n) {
  return r == 0 || r == n - 1 || (!w.per && ((r == 1 && g.vend[0]) || (r == n - 2 && g.vend[1])));
}

// Row r of any other row (ring_edge_row): a Dirichlet end's stage value; else the fold's x
// neighbours and bands as the operator's (prev / next, the bands unzeroed at the ends), v's as the
// stage's (wrapped, old boundary data at Dirichlet ends). c0(i): U at row i of the line (the ring
// kernel's ring row; the lean form's padded slot).
template <class T, class Row>
__device__ T ring_rhs_general(const StageArgs<T>& g, const StageBands<T>& B, const RingRow<T>& w, const Row& c0, int r,
                              T ym, T yp, T zm, T zp, i64 fi, i64 node) {
  const int n = g.sh.n;
  const FoldArgs<T>& f = g.fold;
  const bool end = !w.per && (r == 0 || r == n - 1);
  if (end && ((r == 0 && g.end[0]) || (r == n - 1 && g.end[1]))) return (r == 0 ? w.e0 : w.e1) * g.inv_s;
  auto vat = [&](int i) {  // v at row i for the stage's own term (U; old boundary data at Dirichlet ends)
    if (!w.per && i == 0 && g.vend[0]) return w.ve0;
    if (!w.per && i == n - 1 && g.vend[1]) return w.ve1;
    return c0(i);
  };
  const bool inner = r > 0 && r < n - 1;
  const int im = inner ? r - 1 : r == 0 ? w.xp0 : w.xpn;
  const int ip = inner ? r + 1 : r == 0 ? w.xn0 : w.xnn;
  const T pc = c0(r);
  T base = w.alpha * pc;
  if (w.wx != T(0)) {
    base += w.wx * (f.d[0][r] * pc - f.a[0][r] * c0(im) - f.c[0][r] * c0(ip));
    if (!inner) {
      const T* face = r == 0 ? w.neu_lo : w.neu_hi;
      if (face) base += w.wx * face[w.fa];
    }
  }
  if (w.use_y) base += w.wy * (w.yd * pc - w.ya * ym - w.yc * yp);
  if (w.use_z) base += w.wz * (w.zd * pc - w.za * zm - w.zc * zp);
  T vm = T(0), vc = T(0), vp = T(0);
  if (w.hv) {
    vm = vat(r > 0 ? r - 1 : n - 1);
    vc = vat(r);
    vp = vat(r < n - 1 ? r + 1 : 0);
  }
  return stage_rhs(g, B, r, base, vm, vc, vp, fi, node);
}

// The per-kernel constants of RingRow (the plane's parts: ring_row_plane).
template <class T>
__device__ __forceinline__ RingRow<T> ring_row_consts(const StageArgs<T>& g, const RingGeometry& q) {
  const FoldArgs<T>& f = g.fold;
  const int n = g.sh.n;
  RingRow<T> w{};
  w.xp0 = static_cast<int>(f.prev[0][0]);
  w.xn0 = static_cast<int>(f.next[0][0]);
  w.xpn = static_cast<int>(f.prev[0][n - 1]);
  w.xnn = static_cast<int>(f.next[0][n - 1]);
  w.alpha = f.alpha[0];
  w.wx = f.w[0][0];
  w.wy = f.w[0][1];
  w.wz = f.w[0][2];
  w.neu_lo = w.wx != T(0) ? f.neu[0][0][0] : nullptr;
  w.neu_hi = w.wx != T(0) ? f.neu[0][0][1] : nullptr;
  w.use_y = q.use_y;
  w.use_z = q.use_z;
  w.hv = g.v != nullptr;
  w.per = g.periodic;
  return w;
}

// The line's face values (index fi) into w.
template <class T>
__device__ __forceinline__ void ring_row_faces(const StageArgs<T>& g, RingRow<T>& w, i64 fi) {
  w.e0 = w.e1 = w.ve0 = w.ve1 = T(0);
  if (w.per) return;
  if (g.end[0]) w.e0 = g.end[0][fi];
  if (g.end[1]) w.e1 = g.end[1][fi];
  if (w.hv && g.vend[0]) w.ve0 = g.vend[0][fi];
  if (w.hv && g.vend[1]) w.ve1 = g.vend[1][fi];
}

template <class T>
__global__ void __launch_bounds__(kRingLines* kWarp, 2) fused_x_ring_kernel(StageArgs<T> g, RingGeometry q) {
  extern __shared__ __align__(16) unsigned char ring_smem[];
  T* smem = reinterpret_cast<T*>(ring_smem);
  const PcrShape sh = g.sh;
  const int n = sh.n;
  const RingLayout& lay = q.lay;
  const int S = lay.slots, R = kRingLines + 2;
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const PcrFactors<T> F = PcrFactors<T>::carve(smem, sh.per_line);
  const StageBands<T> B = StageBands<T>::carve(smem + lay.bands, n);
  T* buf = smem + lay.lines + warp * sh.per_line;
  T* ring = smem + lay.ring;
  const FoldArgs<T>& f = g.fold;
  const int j0 = static_cast<int>(blockIdx.x) * kRingLines;
  const int k0 = static_cast<int>(blockIdx.y) * q.kchunk;
  const int k1 = min(q.count1, k0 + q.kchunk) - 1;
  const T* __restrict__ P = f.p[0];  // U at the sweep's first node
  // Slot of plane p (p >= k0 - 1).
  auto slot = [&](int p) { return ring + ((p - k0 + 1) % S) * R * lay.pitch; };
  // Plane p of the block's rows y = j0 - 1 .. j0 + kRingLines into its slot: the rows that exist
  // and are read (the halo rows and planes only where the fold reads them). One commit per
  // thread per plane, empty or not (the waits count planes).
  auto issue = [&](int p) {
    // The chunk's planes, and the one on either side where the fold reads z +- 1 (inside the field:
    // fused_x_ring_applies).
    if ((p >= k0 && p <= k1) || (q.use_z && (p == k0 - 1 || p == k1 + 1))) {
      T* dst = slot(p);
      for (int row = warp; row < R; row += kRingLines) {
        const int y = j0 - 1 + row;
        const bool ok = (y >= 0 && y < q.count0) || (q.use_y && (y == -1 || y == q.count0));
        if (!ok) continue;
        const T* src = P + y * q.sy + p * q.sz;
        T* d = dst + row * lay.pitch;
        if (q.vec) {
          constexpr int v16 = 16 / static_cast<int>(sizeof(T));
          for (int c = lane * v16; c < n; c += kWarp * v16) __pipeline_memcpy_async(d + c, src + c, 16);
        } else {
          for (int c = lane; c < n; c += kWarp) __pipeline_memcpy_async(d + c, src + c, sizeof(T));
        }
      }
    }
    __pipeline_commit();
  };
  for (int p = k0 - 1; p <= k0 + S - 2; ++p) issue(p);
  stage_prologue(g, B, F);  // bands, factors
  RingRow<T> w = ring_row_consts(g, q);
  const int j = j0 + warp;
  const bool live = j < q.count0;
  for (int k = k0; k <= k1; ++k) {
    // The line's face values and cross coefficients, loaded before the wait (their latency behind
    // the ring's).
    const FoldLine<T> lc = live ? fold_line<0>(g, j + k * q.count0) : FoldLine<T>{};
    const i64 fi = g.face_base + j + static_cast<i64>(k) * g.face_n1;
    if (live) ring_row_faces(g, w, fi);
    switch (S) {  // plane k + 1 landed (planes up to k + S - 2 may still be in flight)
      case 3: ring_wait<0>(); break;
      case 4: ring_wait<1>(); break;
      default: ring_wait<2>(); break;
    }
    __syncthreads();
    if (live) {
      const T* c0 = slot(k) + (warp + 1) * lay.pitch;  // U at the line (its ring row)
      const T* ym = c0 - lay.pitch;
      const T* yp = c0 + lay.pitch;
      const T* zm = slot(k - 1) + (warp + 1) * lay.pitch;
      const T* zp = slot(k + 1) + (warp + 1) * lay.pitch;
      w.yd = lc.d[0], w.ya = lc.a[0], w.yc = lc.c[0], w.zd = lc.d[1], w.za = lc.a[1], w.zc = lc.c[1];
      w.fa = lc.fa;
      const int node0 = j * q.sy + k * q.sz;
#pragma unroll 2
      for (int r = lane; r < n; r += kWarp) {
        const i64 node = static_cast<i64>(node0 + r);
        buf[sh.pos(r)] = ring_edge_row(g, w, r, n)
                             ? ring_rhs_general(g, B, w, [&](int i) { return c0[i]; }, r, ym[r], yp[r], zm[r], zp[r],
                                                fi, node)
                             : ring_rhs_inner(g, w, B.a[r], B.d[r], B.c[r], c0[r], c0[r - 1], c0[r + 1], ym[r], yp[r],
                                              zm[r], zp[r], node);
      }
    }
    __syncthreads();  // every warp is done with plane k - 1's slot
    issue(k + S - 1);
    if (live) {
      __syncwarp();
      pcr_line_shared_registers<T, 8>(sh, F, buf);
      __syncwarp();
      T* out = g.u + j * q.sy + k * q.sz;
#pragma unroll 4
      for (int r = lane; r < n; r += kWarp) out[r] = buf[sh.pos(r)];
    }
  }
  __pipeline_wait_prior(0);
}

// The lean form (ADI_FOLD_X_RING=2; solvers/cuda/README.md, "The x ring's lean form"): lines of
// exactly 256 = 32 lanes x 8 rows, the X lean kernel's layout (lane l forms rows r = 32 jj + l, at
// the fixed slots 36 jj + l + l/8) and Full segment loops (pcr_line_shared_registers<T, 8, true>).
// No block barrier after the prologue: each warp walks its line's z chunk through its own ring of
// q.lay.slots planes of the line in shared memory (PCR's padded layout), filled by cp.async up to
// slots - 2 planes ahead; x -+ 1, z -+ 1 from the ring, y -+ 1 (the neighbouring warps' lines of
// the same plane, copied through L1 by their cp.async: L1; the tile's halo lines: L2) from global
// memory. The right-hand side replaces plane k - 1 in its slot (each lane reads its rows' z - 1
// and writes their right-hand side), is solved there and written out; the slot then takes plane
// k + slots - 1. Same row formulas as the ring kernel (ring_rhs_inner / ring_rhs_general): the same
// values bit for bit.
template <class T>
__global__ void __launch_bounds__(kRingLines* kWarp, 2) fused_x_ring_lean_kernel(StageArgs<T> g, RingGeometry q) {
  extern __shared__ __align__(16) unsigned char ring_smem[];
  constexpr int M = 8, N = kWarp * M, P = kWarp * (M + 1);  // rows per lane; line length; slots per plane
  T* smem = reinterpret_cast<T*>(ring_smem);
  const PcrShape sh = g.sh;
  const RingLayout& lay = q.lay;
  const int S = lay.slots;
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const PcrFactors<T> F = PcrFactors<T>::carve(smem, sh.per_line);
  const StageBands<T> B = StageBands<T>::carve(smem + lay.bands, N);
  T* wring = smem + lay.lines + warp * S * P;  // this warp's planes
  const int j0 = static_cast<int>(blockIdx.x) * kRingLines;
  const int k0 = static_cast<int>(blockIdx.y) * q.kchunk;
  const int k1 = min(q.count1, k0 + q.kchunk) - 1;
  const int j = j0 + warp;
  const bool live = j < q.count0;
  const FoldArgs<T>& f = g.fold;
  const T* __restrict__ L = f.p[0] + j * q.sy;  // U's line at plane 0
  auto slot = [&](int p) { return wring + ((p - k0 + 1) % S) * P; };  // plane p >= k0 - 1
  // Plane p of the line into its slot where it is read (the chunk's planes, z -+ 1 past its ends
  // where the fold reads them); one commit per plane, empty or not (the waits count planes).
  auto issue = [&](int p) {
    if (live && ((p >= k0 && p <= k1) || (q.use_z && (p == k0 - 1 || p == k1 + 1)))) {
      T* d = slot(p) + lane + lane / M;
      const T* src = L + p * q.sz + lane;
#pragma unroll
      for (int jj = 0; jj < M; ++jj) __pipeline_memcpy_async(d + jj * (kWarp + 4), src + jj * kWarp, sizeof(T));
    }
    __pipeline_commit();
  };
  for (int p = k0 - 1; p <= k0 + S - 2; ++p) issue(p);
  stage_prologue(g, B, F);  // bands, factors; the block's last barrier
  if (!live) {
    __pipeline_wait_prior(0);
    return;
  }
  RingRow<T> w = ring_row_consts(g, q);
  // The y coefficients are the line's (fold_line at the chunk's first plane); the z ones the plane's.
  const FoldLine<T> lc = fold_line<0>(g, j + k0 * q.count0);
  w.yd = lc.d[0], w.ya = lc.a[0], w.yc = lc.c[0];
  const int cz0 = static_cast<int>(f.org[2]) + k0;  // z coordinate of plane k0 (fold_line's cz)
  // Slot distance to rows r -+ 1 (pos(r -+ 1) = pos(r) -+ 1, -+ 2 across a segment's pad): per lane,
  // so an interior row's x neighbours are immediate offsets.
  const int om = lane % M == 0 ? 2 : 1, op = lane % M == M - 1 ? 2 : 1;
  for (int k = k0; k <= k1; ++k) {
    const i64 fi = g.face_base + j + static_cast<i64>(k) * g.face_n1;
    ring_row_faces(g, w, fi);
    if (w.use_z) {
      w.zd = f.d[2][cz0 + k - k0];
      w.za = f.a[2][cz0 + k - k0];
      w.zc = f.c[2][cz0 + k - k0];
    }
    w.fa = lc.fa + (k - k0) * static_cast<int>(f.fn1[0]);
    const T* gl = L + k * q.sz;  // U's line at plane k in global memory (its y -+ 1 neighbours)
    const int node0 = j * q.sy + k * q.sz;
    switch (S) {  // plane k + 1 landed (planes up to k + S - 2 may be in flight)
      case 3: ring_wait<0>(); break;
      case 4: ring_wait<1>(); break;
      default: ring_wait<2>(); break;
    }
    __syncwarp();  // the other lanes' copies
    const T* c0 = slot(k);
    T* zm = slot(k - 1);  // plane k - 1, then the right-hand side
    const T* zp = slot(k + 1);
    auto row = [&](int i) { return c0[i + i / M]; };  // U at row i of plane k (edge rows)
    // The 8 rows' right-hand sides in registers, stored after the last row's loads (no shared store
    // between the loads, so the compiler may issue them all up front).
    T rhs8[M];
#pragma unroll
    for (int jj = 0; jj < M; ++jj) {
      const int r = jj * kWarp + lane, at = jj * (kWarp + 4) + lane + lane / M;  // at = pos(r)
      T ym = T(0), yp = T(0), zmv = T(0), zpv = T(0);
      if (w.use_y) {
        ym = gl[r - q.sy];
        yp = gl[r + q.sy];
      }
      if (w.use_z) {
        zmv = zm[at];
        zpv = zp[at];
      }
      const i64 node = static_cast<i64>(node0 + r);
      T rhs;
      if ((jj == 0 || jj == M - 1) && ring_edge_row(g, w, r, N))
        rhs = ring_rhs_general(g, B, w, row, r, ym, yp, zmv, zpv, fi, node);
      else
        rhs = ring_rhs_inner(g, w, B.a[r], B.d[r], B.c[r], c0[at], c0[at - om], c0[at + op], ym, yp, zmv, zpv, node);
      rhs8[jj] = rhs;
    }
#pragma unroll
    for (int jj = 0; jj < M; ++jj) zm[jj * (kWarp + 4) + lane + lane / M] = rhs8[jj];  // own slots, read above by this lane only
    __syncwarp();
    pcr_line_shared_registers<T, M, true>(sh, F, zm);
    __syncwarp();
    T* out = g.u + node0 + lane;
#pragma unroll
    for (int jj = 0; jj < M; ++jj) out[jj * kWarp] = zm[jj * (kWarp + 4) + lane + lane / M];
    __syncwarp();  // every lane is done with the slot
    issue(k + S - 1);
  }
  __pipeline_wait_prior(0);
}

// Whether the ring kernel takes this folded stage (the header's conditions).
template <class T>
bool fused_x_ring_applies(const FusedStage<T>& fs) {
  const LineSet& ls = fs.lines;
  const FusedExplicit<T>& e = fs.fold;
  if (e.count != 1 || e.axis != 0 || ls.lines() == 0) return false;
  if (fs.v != nullptr && fs.v != e.p[0]) return false;
  if (ls.stride != 1 || ls.n < 1 || pcr_shape(ls.n).m > 8) return false;
  const adi::detail::StencilView<T>& v = e.view;
  if (e.org[0] != 0 || v.box.nx != ls.n || v.axis[0].n != ls.n) return false;
  // The stage's bands are the fold's x bands (the Operator's: both its axis arrays).
  if (v.axis[0].a != fs.a || v.axis[0].d != fs.d || v.axis[0].c != fs.c) return false;
  if (ls.stride0 != v.box.sy || (ls.count1 > 1 && ls.stride1 != v.box.sz)) return false;
  if (v.box.sz * v.box.nz >= (index_t(1) << 31)) return false;
  const index_t count[3] = {ls.n, ls.count0, ls.count1};
  const index_t extent[3] = {v.box.nx, v.box.ny, v.box.nz};
  for (int b = 1; b < 3; ++b) {
    const bool used = v.axis[b].active && e.w[0][b] != T(0) && extent[b] >= 2;
    if (used && (e.org[b] < 1 || e.org[b] + count[b] > extent[b] - 1)) return false;
  }
  return true;
}

// ADI_FOLD_X_RING: 0 / unset: off; 1: the ring kernel; 2: its lean form for lines of 256 (the ring
// kernel for other lengths it applies to); any other value an InvalidArgument.
inline int fold_x_ring_mode() { return ::adi::detail::env_int("ADI_FOLD_X_RING", 0, 2, 0); }
inline bool fold_x_ring_requested() { return fold_x_ring_mode() != 0; }

// Launch counters (tests read them to know which kernel ran); atomic: stages may run on several
// host threads.
inline std::atomic<std::size_t>& fused_x_ring_count() {
  static std::atomic<std::size_t> launches{0};
  return launches;
}
inline std::atomic<std::size_t>& fused_x_ring_lean_count() {
  static std::atomic<std::size_t> launches{0};
  return launches;
}

// Launches the ring kernel for a stage it applies to (the caller checked).
template <class T>
void run_fused_x_ring(const FusedStage<T>& fs, int* flag, cudaStream_t stream) {
  const LineSet& ls = fs.lines;
  StageArgs<T> g = pack_stage(fs, flag);
  g.sh = pcr_shape(ls.n);
  RingGeometry q{};
  // The lean form: lines of exactly 32 x 8 rows (its compile-time layout), no shared ring.
  const bool lean = fold_x_ring_mode() == 2 && ls.n == 8 * kWarp;
  q.lay = RingLayout::of<T>(g.sh, lean ? 0 : ring_slots<T>());  // (lean: the ring's fields unused)
  if (lean) {  // kRingLines warps x ring_slots<T>(true) planes of the padded line, where the ring was
    q.lay.slots = ring_slots<T>(true);
    q.lay.bytes = sizeof(T) * (static_cast<std::size_t>(q.lay.lines) +
                               static_cast<std::size_t>(kRingLines) * q.lay.slots * g.sh.per_line);
  }
  q.count0 = static_cast<int>(ls.count0);
  q.count1 = static_cast<int>(ls.count1);
  q.sy = static_cast<int>(ls.stride0);
  q.sz = static_cast<int>(ls.count1 > 1 ? ls.stride1 : fs.fold.view.box.sz);
  const T* p = fs.fold.p[0];
  const adi::detail::StencilView<T>& v = fs.fold.view;
  for (int b = 1; b < 3; ++b) {
    const index_t extent = b == 1 ? v.box.ny : v.box.nz;
    const bool used = v.axis[b].active && g.fold.w[0][b] != T(0) && extent >= 2;
    (b == 1 ? q.use_y : q.use_z) = used;
  }
  constexpr int v16 = 16 / static_cast<int>(sizeof(T));
  q.vec = reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && q.sy % v16 == 0 && q.sz % v16 == 0 && ls.n % v16 == 0;
  const LaunchLimits lim = launch_limits();
  if (q.lay.bytes > lim.smem_optin)
    throw Unsupported("fused ADI stage (x ring): " + std::to_string(q.lay.bytes) +
                      " bytes of shared memory, the device allows " + std::to_string(lim.smem_optin) +
                      "; set ADI_FOLD_X_RING_SLOTS=3");
  // Resident blocks (kernel attributes set once per size: persistent_grid).
  static std::mutex m;
  static std::map<std::pair<int, std::size_t>, unsigned> slots_of;
  unsigned resident = 0;
  {
    int dev = 0;
    ADI_CUDA_CHECK(cudaGetDevice(&dev));
    const std::lock_guard<std::mutex> lock(m);
    unsigned& s = slots_of[{2 * dev + (lean ? 1 : 0), q.lay.bytes}];  // per kernel: its attributes
    if (s == 0)
      s = persistent_grid(lean ? fused_x_ring_lean_kernel<T> : fused_x_ring_kernel<T>, kRingLines * kWarp, q.lay.bytes,
                          i64(1) << 40, lim);
    resident = s;
  }
  // One wave (ADI_FOLD_X_RING_WAVES=1..4 for the benchmark's A/B: that many, shorter chunks; any
  // other value an InvalidArgument): the y tiles times as many z chunks as the resident blocks allow.
  const int waves = ::adi::detail::env_int("ADI_FOLD_X_RING_WAVES", 1, 4, 1);
  const int tiles = (q.count0 + kRingLines - 1) / kRingLines;
  const int chunks = std::max(1, std::min(q.count1, waves * static_cast<int>(resident) / tiles));
  q.kchunk = (q.count1 + chunks - 1) / chunks;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>((q.count1 + q.kchunk - 1) / q.kchunk));
  if (lean)
    fused_x_ring_lean_kernel<T><<<grid, kRingLines * kWarp, q.lay.bytes, stream>>>(g, q);
  else
    fused_x_ring_kernel<T><<<grid, kRingLines * kWarp, q.lay.bytes, stream>>>(g, q);
  ADI_CUDA_CHECK(cudaGetLastError());
  ++fused_x_ring_count();
  if (lean) ++fused_x_ring_lean_count();
}

}  // namespace adi::cuda_backend::kernels
