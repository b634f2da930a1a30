#pragma once
// One implicit ADI stage per kernel: right-hand side, bands and Thomas-PCR solve fused
// (cuda_backend::FusedStage in backend.hpp says what is computed).
//
// Unfused, a stage is two passes over the field: the right-hand side
// base/s - A v + ... (read base and v, write the rhs) and the tridiagonal solve (read the
// rhs, write u), five field transfers. Here the kernel loads base and v of a line, forms
// the right-hand side where the line already sits (the stencil of A acts along the line
// being solved, so v's neighbours are in the same line), and solves: three transfers.
// The coefficients are generated, not streamed: A's line coefficients a, d, c (length
// n, the same for every line when the operator's coefficients are constant or depend on
// the sweep coordinate only) go to shared memory once per block, b = 1/s - d is formed
// there, and the shared-band factorisation of pcr_warp_core.cuh is computed once per
// block. A Dirichlet end row takes the stage's boundary value from a face array; v's
// value there (g at the old time) comes from a face array too, so v's boundary nodes
// need not be written first.
//
// Two launch forms, as the plain hybrids:
//  - X (stride-1 lines, n <= 1024): one warp per line, the line's base and v copied into
//    shared memory with cp.async, double-buffered per warp (thomas_pcr_hybrid.cuh).
//  - Y/Z (adjacent lines, n <= 512): a tile of 32 lines, thread (line, segment) holding its
//    rows in registers, cp.async stage refilled by each thread right after it read its
//    slots (thomas_pcr_strided.cuh). The stencil's neighbour rows outside the segment
//    arrive in two per-thread halo slots.
#include <cuda_pipeline_primitives.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "adi/base/env_switch.hpp"
#include "adi/base/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/comparison_forms.hpp"
#include "solvers/common/stage_rhs_core.hpp"
#include "solvers/cuda/pcr_launch.cuh"
#include "solvers/cuda/pcr_segment_registers.cuh"
#include "solvers/cuda/thomas_pcr_strided.cuh"
#include "solvers/cuda/warp_tile_copy.cuh"

namespace adi::cuda_backend::kernels {

constexpr i64 kFusedMaxNX = 1024;  // X: factors + 2 line buffers of 2 arrays per warp fit
constexpr i64 kFusedMaxNYZ = 512;  // Y/Z: 32 segments of at most 16 register rows

// The explicit operator folded into the stage (FusedExplicit in backend.hpp), in the form
// the kernels read: per axis b (x, y, z) its shared line coefficients and neighbours.
template <class T>
struct FoldArgs {
  int count;  // terms; 0: a plain stage
  const T* p[2];
  T alpha[2];
  T w[2][3];
  const T* neu[2][3][2];
  const T* a[3];
  const T* d[3];
  const T* c[3];
  const i64* prev[3];
  const i64* next[3];
  i64 n[3], stride[3], org[3];
  i64 fn1[3];  // n1 of axis b's face arrays (the extent of b's first other axis)
  int axis;
};

template <class T>
struct StageArgs {
  DeviceLines L;
  PcrShape sh;
  bool periodic;
  const T* base;
  const T* v;
  T inv_s;
  const T* a;
  const T* d;
  const T* c;
  const T* end[2];
  const T* vend[2];
  const T* nadd[2];
  const T* nsub[2];
  i64 face_base, face_n1;
  const T* src[2];
  T src_scale[2];
  T* u;
  int* flag;
  FoldArgs<T> fold;

  // Face-array index of a line (its coordinates on the two other axes).
  __device__ i64 face_index(i64 line) const {
    if (L.count1 == 1) return face_base + line;
    const i64 l1 = line <= 0x7fffffff && L.count0 <= 0x7fffffff
                       ? static_cast<i64>(static_cast<unsigned>(line) / static_cast<unsigned>(L.count0))
                       : line / L.count0;
    return face_base + (line - l1 * L.count0) + l1 * face_n1;
  }
};

// x, y or z of three values by a run-time axis, without indexing an array (which would
// put the kernel's argument arrays in local memory).
template <class V>
__device__ __forceinline__ V pick3(int b, V x, V y, V z) {
  return b == 0 ? x : b == 1 ? y : z;
}

// The folded explicit operator's per-line part: the two axes across the line have the same
// coefficients, neighbour offsets and Neumann face for every row of the line: looked up once
// per line (the weights stay in the kernel's arguments).
template <class T>
struct FoldLine {
  int ca;            // the line's first row's coordinate along the stage's axis
  int fa;            // the line's index into the stage axis's face arrays
  T d[2], a[2], c[2];  // [cross axis k]: its line coefficients at the line
  int om[2], op[2];  // its neighbour offsets (elements; Operator::folds: the field spans < 2^31)
  int fi[2];         // index into its face's arrays at row 0 (-1: the line is not on a face)
  int side[2];       // that face (0 lo, 1 hi)
  int fstep[2];      // the face index's step per row
};

// Cross axis k (0, 1) of stage axis a: the other two axes in order x, y, z.
__device__ __forceinline__ int cross_axis(int a, int k) { return k == 0 ? (a == 0 ? 1 : 0) : (a == 2 ? 1 : 2); }

// The stage's axis from the arguments (A < 0; callers write A >= 0 ? A : fold_axis<A>(f)); A = -2:
// through an opaque move, so that the lookups depending on it stay where they are used instead of
// being hoisted out of the kernel's loops into registers live across them (the strided body's Staged).
template <int A, class T>
__device__ __forceinline__ int fold_axis(const FoldArgs<T>& f) {
  int a = f.axis;
  if constexpr (A == -2) asm volatile("" : "+r"(a));
  return a;
}

// A: the stage's axis when the kernel knows it (X: 0), -1 to read it from the arguments (-2: fold_axis).
template <int A, class T>
__device__ FoldLine<T> fold_line(const StageArgs<T>& g, i64 line) {
  const FoldArgs<T>& f = g.fold;
  int l0 = static_cast<int>(line), l1 = 0;
  if (g.L.count1 != 1) {
    l1 = static_cast<int>(static_cast<unsigned>(line) / static_cast<unsigned>(g.L.count0));
    l0 = static_cast<int>(line) - l1 * static_cast<int>(g.L.count0);
  }
  const int a = A >= 0 ? A : fold_axis<A>(f);
  const int o0 = cross_axis(a, 0), o1 = cross_axis(a, 1);
  // Coordinates of the line's first row.
  const int cx = static_cast<int>(f.org[0]) + (a == 0 ? 0 : o0 == 0 ? l0 : l1);
  const int cy = static_cast<int>(f.org[1]) + (a == 1 ? 0 : o0 == 1 ? l0 : l1);
  const int cz = static_cast<int>(f.org[2]) + (a == 2 ? 0 : o0 == 2 ? l0 : l1);
  FoldLine<T> L;
  L.ca = pick3(a, cx, cy, cz);
  L.fa = pick3(o0, cx, cy, cz) + pick3(o1, cx, cy, cz) * static_cast<int>(pick3(a, f.fn1[0], f.fn1[1], f.fn1[2]));
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int b = k == 0 ? o0 : o1;
    const int cb = pick3(b, cx, cy, cz), nb = static_cast<int>(pick3(b, f.n[0], f.n[1], f.n[2]));
    const int sb = static_cast<int>(pick3(b, f.stride[0], f.stride[1], f.stride[2]));
    const bool inner = cb > 0 && cb < nb - 1;
    L.d[k] = L.a[k] = L.c[k] = T(0);
    L.om[k] = L.op[k] = 0;
    L.side[k] = cb == 0 ? 0 : 1;
    const int f1 = b == 0 ? 1 : 0, f2 = b == 2 ? 1 : 2;  // axis b's face arrays: c1 + c2 * n1
    const int n1 = static_cast<int>(pick3(b, f.fn1[0], f.fn1[1], f.fn1[2]));
    L.fi[k] = inner ? -1 : pick3(f1, cx, cy, cz) + pick3(f2, cx, cy, cz) * n1;
    L.fstep[k] = a == f1 ? 1 : n1;
    if (nb < 2) continue;  // an axis of one node: no part (its weights are 0)
    L.d[k] = pick3(b, f.d[0], f.d[1], f.d[2])[cb];
    L.a[k] = pick3(b, f.a[0], f.a[1], f.a[2])[cb];
    L.c[k] = pick3(b, f.c[0], f.c[1], f.c[2])[cb];
    const int im = inner ? cb - 1 : static_cast<int>(pick3(b, f.prev[0], f.prev[1], f.prev[2])[cb]);
    const int ip = inner ? cb + 1 : static_cast<int>(pick3(b, f.next[0], f.next[1], f.next[2])[cb]);
    L.om[k] = (im - cb) * sb;
    L.op[k] = (ip - cb) * sb;
  }
  return L;
}

// Neumann face data of term q, axis b, side (null: none).
template <class T>
__device__ __forceinline__ const T* fold_face(const FoldArgs<T>& f, int q, int b, int side) {
  return side == 0 ? pick3(b, f.neu[q][0][0], f.neu[q][1][0], f.neu[q][2][0])
                   : pick3(b, f.neu[q][0][1], f.neu[q][1][1], f.neu[q][2][1]);
}

// The strided fold's lean rows (fused_stage_strided_body, Lean; thomas_pcr_fused_strided_fold.cuh):
// one term, v's field, its weights folded into the line's cross coefficients once per line, so that
// a row is base = diag v + w_a A_a v - sum_k (a_k P[om_k] + c_k P[op_k]). faces: the line lies on a
// cross face with Neumann data (such lines take the general rows).
template <class T>
struct FoldLean {
  T diag, a[2], c[2];
  int om[2], op[2];
  bool faces;
};
template <int A, class T>
__device__ FoldLean<T> fold_lean(const FoldArgs<T>& f, const FoldLine<T>& L) {
  FoldLean<T> r;
  r.diag = f.alpha[0];
  r.faces = false;
  const int a = A >= 0 ? A : fold_axis<A>(f);
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int b = cross_axis(a, k);
    const T wb = pick3(b, f.w[0][0], f.w[0][1], f.w[0][2]);
    r.diag += wb * L.d[k];
    r.a[k] = wb * L.a[k];
    r.c[k] = wb * L.c[k];
    r.om[k] = L.om[k];
    r.op[k] = L.op[k];
    r.faces = r.faces || (wb != T(0) && L.fi[k] >= 0 && fold_face(f, 0, b, L.side[k]) != nullptr);
  }
  return r;
}

// The folded explicit base at row r of a line (node relative to the sweep's first node):
// sum_q alpha_q P_q + w_q[b] (A_b P_q + Neumann data of b), the same terms as the explicit
// stencil pass (solvers/cuda/stencil_apply.cu) and its Neumann face writes.
template <int A, class T>
__device__ T fold_base(const FoldArgs<T>& f, const FoldLine<T>& L, int r, i64 node) {
  const int a = A >= 0 ? A : fold_axis<A>(f);
  const int ca = L.ca + r, na = static_cast<int>(pick3(a, f.n[0], f.n[1], f.n[2]));
  const int sa = static_cast<int>(pick3(a, f.stride[0], f.stride[1], f.stride[2]));
  const bool inner = ca > 0 && ca < na - 1;
  const T da = pick3(a, f.d[0], f.d[1], f.d[2])[ca];
  const T aa = pick3(a, f.a[0], f.a[1], f.a[2])[ca];
  const T cc = pick3(a, f.c[0], f.c[1], f.c[2])[ca];
  const int oma = inner ? -sa : (static_cast<int>(pick3(a, f.prev[0], f.prev[1], f.prev[2])[ca]) - ca) * sa;
  const int opa = inner ? sa : (static_cast<int>(pick3(a, f.next[0], f.next[1], f.next[2])[ca]) - ca) * sa;
  T e = T(0);
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    if (q >= f.count) break;
    const T* __restrict__ P = f.p[q] + node;
    const T pc = P[0];
    T x = f.alpha[q] * pc;
    const T w = pick3(a, f.w[q][0], f.w[q][1], f.w[q][2]);
    if (w != T(0)) {
      x += w * (da * pc - aa * P[oma] - cc * P[opa]);
      if (!inner) {
        const T* face = fold_face(f, q, a, ca == 0 ? 0 : 1);
        if (face) x += w * face[L.fa];
      }
    }
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int b = cross_axis(a, k);
      const T wb = pick3(b, f.w[q][0], f.w[q][1], f.w[q][2]);
      if (wb == T(0)) continue;
      x += wb * (L.d[k] * pc - L.a[k] * P[L.om[k]] - L.c[k] * P[L.op[k]]);
      if (L.fi[k] >= 0) {
        const T* face = fold_face(f, q, b, L.side[k]);
        if (face) x += wb * face[L.fi[k] + r * L.fstep[k]];
      }
    }
    e += x;
  }
  return e;
}

// The operator's line coefficients in shared memory (a and c zeroed where a
// non-periodic line has no neighbour) and the generated diagonal b = 1/s - d.
template <class T>
struct StageBands {
  T *a, *d, *c, *b;
  __device__ static StageBands carve(T* at, int n) { return {at, at + n, at + 2 * n, at + 3 * n}; }
  static constexpr int arrays = 4;
  __device__ void load(const StageArgs<T>& g) const {
    const int n = g.sh.n;
    for (int r = static_cast<int>(threadIdx.x); r < n; r += static_cast<int>(blockDim.x)) {
      a[r] = (r == 0 && !g.periodic) ? T(0) : g.a[r];
      c[r] = (r == n - 1 && !g.periodic) ? T(0) : g.c[r];
      d[r] = g.d[r];
      b[r] = g.inv_s - g.d[r];
    }
  }
};

// Right-hand side of a row that is not the end row of a non-periodic line, from v at the
// row and its two neighbours (the same terms, in the same order, as the host's
// stencil_apply in Operator::solve). v's values at Dirichlet ends must already be the
// boundary data at the old time: the loaders patch them in (patch_v_ends).
template <class T>
__device__ __forceinline__ T stage_rhs_inner(const StageArgs<T>& g, T a, T d, T c, T base_r, T vm, T vc, T vp,
                                             i64 node) {
  return common::stage_rhs_inner(g, a, d, c, base_r, vm, vc, vp, node);
}

// End row `side` (0: row 0, 1: row n-1) of a non-periodic line: the stage's Dirichlet
// value, or the inner formula (no neighbour beyond the end; a or c is 0 there) plus the
// Neumann terms (the host's face writes).
template <class T>
__device__ T stage_rhs_end(const StageArgs<T>& g, int side, T a, T d, T c, T base_r, T vm, T vc, T vp, i64 fi,
                           i64 node) {
  return common::stage_rhs_end(g, side, a, d, c, base_r, vm, vc, vp, fi, node);
}

template <class T>
__device__ __forceinline__ T stage_rhs(const StageArgs<T>& g, const StageBands<T>& B, int r, T base_r, T vm, T vc,
                                       T vp, i64 fi, i64 node) {
  const T a = B.a[r], d = B.d[r], c = B.c[r];
  if (!g.periodic && (r == 0 || r == g.sh.n - 1))
    return stage_rhs_end(g, r == 0 ? 0 : 1, a, d, c, base_r, vm, vc, vp, fi, node);
  return stage_rhs_inner(g, a, d, c, base_r, vm, vc, vp, node);
}

// Whether row r is a Dirichlet end row: it needs no base, the fold is not evaluated there (the
// staged rows; stage_rhs_row spells the same test out: through this call the folded X kernels'
// machine code changed, scripts/compare_cubin.py).
template <class T>
__device__ __forceinline__ bool dirichlet_end_row(const StageArgs<T>& g, int r) {
  return !g.periodic && ((r == 0 && g.end[0]) || (r == g.sh.n - 1 && g.end[1]));
}

// The folded bases of rows r0, r0 + step, ... (count rows) of a line into slot[r * LB]: the strided
// body's Staged form, a rolled loop. The axis through fold_axis<-2>: with it read plainly, the
// compiler hoists fold_line's and fold_base's axis-dependent lookups out of the tile loop into
// registers live across the rows (ptxas sm_90 fp64: 24 B / 68 B spilled; with the opaque axis 4 B /
// 4 B). A __noinline__ function instead spilled 120 B / 224 B (the call saves the live registers).
template <class T>
__device__ __forceinline__ void fold_stage_rows(const StageArgs<T>& g, i64 line, T* slot, int LB, int r0, int step,
                                                int count, i64 off, i64 st) {
  const FoldLine<T> lc = fold_line<-2>(g, line);
#pragma unroll 1
  for (int j = 0, r = r0; j < count; ++j, r += step)
    if (!dirichlet_end_row(g, r)) slot[r * LB] = fold_base<-2>(g.fold, lc, r, off + static_cast<i64>(r) * st);
}

// The right-hand side of row r with the folded explicit base (Fold) or the loaded one.
template <bool Fold, int A, class T>
__device__ __forceinline__ T stage_rhs_row(const StageArgs<T>& g, const StageBands<T>& B, int r, T base_r, T vm,
                                           T vc, T vp, i64 fi, i64 node, const FoldLine<T>& lc) {
  if constexpr (Fold) {
    const bool dirichlet_end = !g.periodic && ((r == 0 && g.end[0]) || (r == g.sh.n - 1 && g.end[1]));
    if (!dirichlet_end) base_r = fold_base<A>(g.fold, lc, r, node);
  }
  return stage_rhs(g, B, r, base_r, vm, vc, vp, fi, node);
}

// Block start: the bands into shared memory, then warp 0 factorises them, with the device's
// stability check (issue 23; pcr_factorize_shared's Check): once per block, so no cost per line.
// A zero or non-finite pivot and a failed check both set the axis's flag (Operator::check_stages
// throws UnstableSystem), reported here: the lines' solves check nothing more, so no flag stays
// live in registers across them (ptxas: the folded fp64 X kernel, m = 16, spilled 4 bytes).
template <class T>
__device__ void stage_prologue(const StageArgs<T>& g, const StageBands<T>& B, const PcrFactors<T>& F) {
  B.load(g);
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < kWarp) {
    bool bad = false;
    pcr_factorize_shared<T, true>(g.sh, B.a, B.b, B.c, g.periodic, F, bad);
    report(bad, g.flag);
  }
  __syncthreads();
}

// ---- X: one warp per line -------------------------------------------------------------

template <class T, int MaxM, int MinBlocks, bool Fold>
__global__ void __launch_bounds__(256, MinBlocks) fused_stage_x_kernel(StageArgs<T> g) {
  extern __shared__ __align__(16) unsigned char fused_smem[];
  T* smem = reinterpret_cast<T*>(fused_smem);
  const PcrShape sh = g.sh;
  const int lane = lane_id(), warp = static_cast<int>(threadIdx.x) / kWarp;
  const int W = static_cast<int>(blockDim.x) / kWarp;
  const int P = sh.per_line, n = sh.n;
  const i64 nl = g.L.lines();
  const PcrFactors<T> F = PcrFactors<T>::carve(smem, P);
  const StageBands<T> B = StageBands<T>::carve(smem + PcrFactors<T>::values(P), n);
  T* mine = smem + PcrFactors<T>::values(P) + StageBands<T>::arrays * n + warp * 4 * P;  // [buffer][base, v][P]
  stage_prologue(g, B, F);
  const bool hv = g.v != nullptr;
  auto buffer = [&](int k) { return mine + (k & 1) * 2 * P; };
  auto issue = [&](i64 off, T* buf) {
    for (int r = lane; r < n; r += kWarp) {
      const int p = sh.pos(r);
      if (!Fold) __pipeline_memcpy_async(buf + p, g.base + off + r, sizeof(T));
      if (hv) __pipeline_memcpy_async(buf + P + p, g.v + off + r, sizeof(T));
    }
    __pipeline_commit();
  };
  const i64 step = static_cast<i64>(gridDim.x) * W;
  i64 line = static_cast<i64>(blockIdx.x) * W + warp;
  i64 off = line < nl ? g.L.offset(line) : 0;
  if (line < nl) issue(off, buffer(0));
  for (int it = 0; line < nl; line += step, ++it) {
    T* buf = buffer(it);
    const T* sv = buf + P;
    const i64 this_off = off;
    if (line + step < nl) {
      off = g.L.offset(line + step);
      issue(off, buffer(it + 1));
      __pipeline_wait_prior(1);
    } else {
      __pipeline_wait_prior(0);
    }
    __syncwarp();
    const i64 fi = g.face_index(line);
    const FoldLine<T> lc = Fold ? fold_line<0>(g, line) : FoldLine<T>{};
    if (hv && !g.periodic && lane == 0) {  // v at Dirichlet ends: the old boundary data
      if (g.vend[0]) buf[P + sh.pos(0)] = g.vend[0][fi];
      if (g.vend[1]) buf[P + sh.pos(n - 1)] = g.vend[1][fi];
    }
    __syncwarp();
    auto rhs_row = [&](int r) {
      const int p = sh.pos(r);
      T vm = T(0), vc = T(0), vp = T(0);
      if (hv) {
        vm = sv[sh.pos(r > 0 ? r - 1 : n - 1)];
        vc = sv[p];
        vp = sv[sh.pos(r < n - 1 ? r + 1 : 0)];
      }
      buf[p] = stage_rhs_row<Fold, 0>(g, B, r, Fold ? T(0) : buf[p], vm, vc, vp, fi, this_off + r, lc);
    };
    if constexpr (Fold) {
      // Two rows in flight hide more of the neighbour loads' latency: fp32 fits its 128
      // registers (119-123, sm_90), fp64 then spills 20-32 bytes, so it takes one.
      constexpr int kRows = sizeof(T) == 4 ? 2 : 1;
#pragma unroll kRows
      for (int r = lane; r < n; r += kWarp) rhs_row(r);
    } else {
      for (int r = lane; r < n; r += kWarp) rhs_row(r);
    }
    __syncwarp();
    if constexpr (MaxM > 0)
      pcr_line_shared_registers<T, MaxM>(sh, F, buf);
    else
      pcr_line_shared(sh, F, buf);
    __syncwarp();
#pragma unroll 4
    for (int r = lane; r < n; r += kWarp) g.u[this_off + r] = buf[sh.pos(r)];
    __syncwarp();
  }
  __pipeline_wait_prior(0);
}

template <class T>
std::size_t fused_stage_x_smem(const PcrShape& sh, int warps) {
  return sizeof(T) * (PcrFactors<T>::values(sh.per_line) + StageBands<T>::arrays * sh.n +
                      static_cast<std::size_t>(warps) * 4 * sh.per_line);
}

// ---- Y/Z: a tile of adjacent lines, segments in registers ------------------------------

// Warp: the warp copy stream (warp_tile_copy.cuh): tiles aligned in memory, per plane of lines
// (count0 lines adjacent in memory), starting `shift` values before its line 0, so that each
// row of a tile is LB values at a 16-byte boundary; slots outside the plane's lines are idle.
// Otherwise tiles of LB consecutive lines (any layout) and each thread copies its own rows.
// Lean (the lean form, fused_stage_lean_kernel; the default, ADI_FUSED_YZ_LEAN=0 off), in a stage with v and
// without sources: the right-hand side of the interior rows without per-row tests, through
// pointers set once per segment (the two end rows of a non-periodic line recomputed after it with
// the general formula), and the stores through a pointer stepped by the stride; a full segment
// (MaxM rows) also sweeps and fills at len = MaxM, every row offset a compile-time constant; the
// short last segment of a line (s > 0) keeps the run-time length there. Lines of one short
// segment (n < MaxM), idle slots and other stages run the general code. The last segment's warp
// takes the lean path too: each tile waits at __syncthreads for its slowest warp.
//
// Staged (with Fold and Lean: the strided fold's staged form, thomas_pcr_fused_strided_fold.cuh): the
// rows that take the general formula (a line's end rows on the lean path, every row of the lines
// off it) get their folded base into the stage's base slots first (unused: a folded stage loads no
// base), in a rolled loop before the rows' registers are live; those rows then run the plain
// stage's code, which reads the base there. Without it fold_base is inlined for every row of the
// unrolled general loops (ptxas sm_90, fp64: 128 registers, 84 B spill stores / 172 B loads).
template <class T, int MaxM, bool Fold, bool Warp, bool Lean, bool Staged = false>
__device__ __forceinline__ void fused_stage_strided_body(const StageArgs<T>& g, int log2lb, int shift) {
  extern __shared__ __align__(16) unsigned char fused_smem[];
  T* smem = reinterpret_cast<T*>(fused_smem);
  const PcrShape sh = g.sh;
  const int LB = 1 << log2lb;
  const int t = static_cast<int>(threadIdx.x);
  const int l = t & (LB - 1), s = t >> log2lb;
  const int spad = static_cast<int>(blockDim.x) >> log2lb;
  const int lane = lane_id(), warp = t / kWarp, W = static_cast<int>(blockDim.x) / kWarp;
  const int S = sh.segs, m = sh.m, n = sh.n;
  const int len = max(0, min(m, n - s * m));
  const int base_slot = s * (m + 1);
  const i64 nl = g.L.lines(), st = g.L.stride;
  const i64 per_plane = Warp ? (g.L.count0 + shift + LB - 1) >> log2lb : 0;  // Warp: tiles per plane of lines
  const i64 tiles = Warp ? per_plane * g.L.count1 : (nl + LB - 1) / LB;
  const PcrFactors<T> F = PcrFactors<T>::carve(smem, sh.per_line);
  const StageBands<T> B = StageBands<T>::carve(smem + PcrFactors<T>::values(sh.per_line), n);
  T* ends = smem + PcrFactors<T>::values(sh.per_line) + StageBands<T>::arrays * n;
  T* stage = align_stage(ends + kEndFields * spad * (LB + 1));  // [base, v][row][line]
  if constexpr (Lean) {
    // The same address as an offset from `ends`, so that the compiler keeps it in the shared
    // window (align_stage's integer round trip makes the row loads generic LD, not LDS).
    T* raw = ends + kEndFields * spad * (LB + 1);
    const unsigned at = static_cast<unsigned>(__cvta_generic_to_shared(raw));
    stage = raw + ((16 - (at & 15u)) & 15u) / sizeof(T);
  }
  T* halo = stage + 2 * n * LB;                     // [below, above][segment][line]
  auto at = [&](int field, int seg, int line) -> T& { return ends[(field * spad + seg) * (LB + 1) + line]; };
  stage_prologue(g, B, F);
  const bool hv = g.v != nullptr;
  // Lean: the stage the lean path takes. With Fold (the strided fold's lean form): one term, v's field,
  // so that the rows' v window is the term's along the line.
  const bool lean_stage =
      Lean && hv && !g.src[0] && !g.src[1] && (!Fold || (g.fold.count == 1 && g.fold.p[0] == g.v));
  const T fold_wa = Fold ? pick3(g.fold.axis, g.fold.w[0][0], g.fold.w[0][1], g.fold.w[0][2]) : T(0);
  int width = 1;
  while (width < S) width <<= 1;
  const int lines_per_warp = kWarp / width;
  T* halo_lo = halo + s * LB + l;
  T* halo_hi = halo + (spad + s) * LB + l;
  // A tile's first slot: Warp, plane p and line l0 of it (l0 < 0 and l0 + slot >= count0: no
  // line); else the line tile * LB. Slot ll's line: first + ll where it is one.
  struct TileAt {
    i64 plane, l0;
  };
  auto tile_at = [&](i64 tile) -> TileAt {
    if constexpr (!Warp) {
      return {0, tile * LB};
    } else {
      const i64 p = g.L.count1 == 1 ? 0
                    : tile <= 0x7fffffff && per_plane <= 0x7fffffff
                        ? static_cast<i64>(static_cast<unsigned>(tile) / static_cast<unsigned>(per_plane))
                        : tile / per_plane;
      return {p, (tile - p * per_plane) * LB - shift};
    }
  };
  auto line_at = [&](const TileAt& ta, int ll) -> i64 {  // -1: none
    const i64 l0 = ta.l0 + ll;
    if (Warp) return l0 >= 0 && l0 < g.L.count0 ? ta.plane * g.L.count0 + l0 : i64(-1);
    return l0 < nl ? l0 : i64(-1);
  };
  // Warp: the element offset of a tile's first slot (stride0 = 1), and the warp's rows.
  auto tile_offset = [&](const TileAt& ta) { return ta.plane * g.L.stride1 + ta.l0; };
  const WarpTileRows wr = warp_tile_rows_of(warp, log2lb, m, n);

  // This thread's rows of a tile (and v's rows just outside its segment) into the stage.
  auto issue = [&](i64 tile) {
    const i64 line = tile * LB + l;
    if (line < nl && len > 0) {
      const i64 o = g.L.offset(line);
      const i64 first = o + static_cast<i64>(s) * m * st;
      T* dst = stage + s * m * LB + l;
      const T* fb = g.base + first;
      const T* fv = hv ? g.v + first : nullptr;
      for (int j = 0; j < len; ++j, dst += LB, fb += st) {
        if (!Fold) __pipeline_memcpy_async(dst, fb, sizeof(T));
        if (hv) {
          __pipeline_memcpy_async(dst + n * LB, fv, sizeof(T));
          fv += st;
        }
      }
      if (hv) {
        int rm = s * m - 1, rp = s * m + len;
        if (g.periodic) {
          rm = rm < 0 ? n - 1 : rm;
          rp = rp >= n ? 0 : rp;
        }
        if (rm >= 0) __pipeline_memcpy_async(halo_lo, g.v + o + rm * st, sizeof(T));
        if (rp < n) __pipeline_memcpy_async(halo_hi, g.v + o + rp * st, sizeof(T));
      }
    }
    __pipeline_commit();
  };

  // Warp: the warp's rows of base and v (pieces holding lines of the tile only), and v's rows
  // just outside each of its segments into the halo slots.
  auto warp_issue = [&](i64 tile) {
    constexpr int V = 16 / static_cast<int>(sizeof(T));
    const TileAt ta = tile_at(tile);
    const i64 o = tile_offset(ta);
    const int first = ta.l0 < 0 ? static_cast<int>(-ta.l0) / V : 0;
    const int last = static_cast<int>((min(static_cast<i64>(LB), g.L.count0 - ta.l0) + V - 1) / V);
    warp_tile_rows<true, T>(
        wr.count, log2lb, [&](int r) { return o + (wr.first + r) * st; },
        [&](int r) { return stage + (wr.first + r) * LB; }, static_cast<i64>(n) * LB, Fold ? nullptr : g.base,
        g.v, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), first, last);
    if (hv) {
      const int s0 = (warp * kWarp) >> log2lb, spw = LB >= kWarp ? 1 : kWarp >> log2lb;
      warp_tile_rows<true, T>(
          2 * spw, log2lb,
          [&](int i) {
            const int q = s0 + (i >> 1), qlen = max(0, min(m, n - q * m));
            int r = (i & 1) ? q * m + qlen : q * m - 1;
            if (g.periodic) r = r < 0 ? n - 1 : r >= n ? 0 : r;
            return qlen > 0 && r >= 0 && r < n ? o + r * st : kNoTileRow;
          },
          [&](int i) { return halo + ((i & 1) * spad + s0 + (i >> 1)) * LB; }, 0, g.v,
          static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), first,
          last);
    }
    __pipeline_commit();
  };

  if (static_cast<i64>(blockIdx.x) < tiles) {
    if (Warp)
      warp_issue(blockIdx.x);
    else
      issue(blockIdx.x);
  }
  for (i64 tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    __pipeline_wait_prior(0);
    if (Warp) __syncwarp();  // the rows the warp's other lanes copied
    const TileAt ta = tile_at(tile);
    const i64 line = line_at(ta, l);
    const bool valid_line = line >= 0;
    const int mylen = valid_line ? len : 0;
    const int lo = MaxM - mylen;  // right-aligned: row s*m + j - lo in register j
    const i64 off = !valid_line ? 0 : Warp ? tile_offset(ta) + l : g.L.offset(line);
    const i64 fi = valid_line ? g.face_index(line) : 0;
    const FoldLine<T> lc = Fold && valid_line ? fold_line<Staged ? -2 : -1>(g, line) : FoldLine<T>{};
    // v at Dirichlet ends (the old boundary data) into this thread's own slots: row 0 and
    // row n-1 of its segment, or row n-1 as its upper halo.
    if (hv && mylen > 0 && !g.periodic) {
      if (g.vend[0] && s == 0) stage[n * LB + l] = g.vend[0][fi];
      if (g.vend[1]) {
        if (s * m + len == n) stage[n * LB + (n - 1) * LB + l] = g.vend[1][fi];
        if (s * m + len == n - 1) *halo_hi = g.vend[1][fi];
      }
    }
    // Right-hand sides, v's rows through a sliding window (one shared-memory load of v
    // per row; the rows just outside the segment from the halo slots). Full segments
    // (every one but maybe the last) take the loop with compile-time row offsets.
    T rd[MaxM];
    const T vlo = hv && mylen > 0 ? *halo_lo : T(0), vhi = hv && mylen > 0 ? *halo_hi : T(0);
    auto rhs_rows = [&](auto full) {
      constexpr bool Full = decltype(full)::value;
      const int first = Full ? 0 : lo;
      T vm = vlo, vc = T(0);
#pragma unroll
      for (int j = 0; j < MaxM; ++j) {
        if (Full || j >= first) {
          const int r = s * m + j - first;
          const T* p = stage + r * LB + l;
          if (j == first) vc = hv ? p[n * LB] : T(0);
          const T vp = j + 1 < MaxM ? (hv ? p[n * LB + LB] : T(0)) : vhi;
          rd[j] = stage_rhs_row<Fold && !Staged, -1>(g, B, r, Fold && !Staged ? T(0) : p[0], vm, vc, vp, fi,
                                                     off + r * st, lc);
          vm = vc;
          vc = vp;
        }
      }
    };
    // Lean: interior rows without tests, the end rows of a non-periodic line after them. Full:
    // register j holds row s*m + j; else (a short last segment, s > 0) row s*m + j - lo.
    const FoldLean<T> fl =
        Fold && Lean && lean_stage && valid_line ? fold_lean<Staged ? -2 : -1>(g.fold, lc) : FoldLean<T>{};
    const bool lean = Lean && lean_stage && mylen > 0 && (mylen == MaxM || s > 0) && !(Fold && fl.faces);
    auto rhs_lean = [&](auto full) {
      constexpr bool Full = decltype(full)::value;
      const int first = Full ? 0 : lo;
      const int r0 = s * m - first;  // the row of register 0 (> 0 for a short segment: s > 0)
      const T* p = stage + r0 * LB + l;  // base at register j: p[j * LB]; v: pv[j * LB]
      const T* pv = p + n * LB;
      const T *ba = B.a + r0, *bd = B.d + r0, *bc = B.c + r0;
      const T inv_s = g.inv_s;
      [[maybe_unused]] const T* fp = Fold ? g.fold.p[0] + off + static_cast<i64>(r0) * st : nullptr;  // term at reg. 0
      T vm = vlo, vc = T(0);
#pragma unroll
      for (int j = 0; j < MaxM; ++j) {
        if (Full || j >= first) {
          if (j == first) vc = pv[j * LB];
          const T vp = j + 1 < MaxM ? pv[(j + 1) * LB] : vhi;
          if constexpr (Fold) {  // base = alpha v + w_a A_a v + the cross parts (v: the term's field)
            const T av = bd[j] * vc - ba[j] * vm - bc[j] * vp;
            const T* P = fp + j * st;
            T e = fl.diag * vc + fold_wa * av;
            e -= fl.a[0] * P[fl.om[0]] + fl.c[0] * P[fl.op[0]] + fl.a[1] * P[fl.om[1]] + fl.c[1] * P[fl.op[1]];
            rd[j] = inv_s * e - av;
          } else {
            T x = inv_s * p[j * LB];
            x -= bd[j] * vc - ba[j] * vm - bc[j] * vp;
            rd[j] = x;
          }
          vm = vc;
          vc = vp;
        }
      }
      if (!g.periodic) {
        if (Full && s == 0) {
          if constexpr (Fold && !Staged)
            rd[0] = stage_rhs_row<true, -1>(g, B, 0, T(0), vlo, pv[0], MaxM > 1 ? pv[LB] : vhi, fi, off,
                                            fold_line<-1>(g, line));  // (lc not kept live through the rows)
          else
            rd[0] = stage_rhs_end(g, 0, ba[0], bd[0], bc[0], p[0], vlo, pv[0], MaxM > 1 ? pv[LB] : vhi, fi, off);
        }
        if (s * m + mylen == n) {  // row n-1: the last register (the warp's own rows only)
          constexpr int k = MaxM - 1;
          T vm1 = vlo;
          if (k > 0 && mylen >= 2) vm1 = pv[(k - 1) * LB];
          const i64 last = off + static_cast<i64>(n - 1) * st;
          if constexpr (Fold && !Staged)
            rd[k] = stage_rhs_row<true, -1>(g, B, n - 1, T(0), vm1, pv[k * LB], vhi, fi, last, fold_line<-1>(g, line));
          else
            rd[k] = stage_rhs_end(g, 1, ba[k], bd[k], bc[k], p[k * LB], vm1, pv[k * LB], vhi, fi, last);
        }
      }
    };
    if constexpr (Staged) {  // the general rows' folded bases into the base slots (above)
      // Lean: the end rows rhs_lean recomputes (lean at s == 0: a full segment) but for Dirichlet ends,
      // which need no base; else every row.
      const bool lo_end = lean && !g.periodic && s == 0 && !g.end[0];
      const bool hi_end = lean && !g.periodic && s * m + mylen == n && !g.end[1];
      if (!lean && mylen > 0)
        fold_stage_rows(g, line, stage + l, LB, s * m, 1, mylen, off, st);
      else if (lo_end || hi_end)
        fold_stage_rows(g, line, stage + l, LB, lo_end ? 0 : n - 1, n - 1, lo_end + hi_end, off, st);
    }
    if (lean) {
      if (mylen == MaxM)
        rhs_lean(std::true_type{});
      else
        rhs_lean(std::false_type{});
    } else if (mylen == MaxM) {
      rhs_rows(std::true_type{});
    } else {
      rhs_rows(std::false_type{});
    }
    if (tile + gridDim.x < tiles) {
      if (Warp) {
        __syncwarp();  // every lane's reads of the warp's rows before their refill
        warp_issue(tile + gridDim.x);
      } else {
        issue(tile + gridDim.x);
      }
    }
    const SegmentEnds<T> e =
        lean && mylen == MaxM
            ? segment_reduce_shared<T, MaxM>(rd, MaxM, F.f[0] + base_slot, F.f[1] + base_slot, F.f[2] + base_slot)
            : segment_reduce_shared<T, MaxM>(rd, mylen, F.f[0] + base_slot, F.f[1] + base_slot, F.f[2] + base_slot);
    // Shared bands: only the d-dependent ends vary per line (same field numbers as the plain kernel).
    at(0, s, l) = e.Fd;
    at(3, s, l) = e.Ld;
    at(6, s, l) = e.ae;
    at(8, s, l) = e.ce;
    at(9, s, l) = e.dv;
    __syncthreads();

    // The reduced systems, 32/width lines per warp (as thomas_pcr_strided.cuh).
    for (int l0 = warp * lines_per_warp; l0 < LB; l0 += W * lines_per_warp) {
      const int ll = l0 + lane / width;
      const bool valid = ll < LB && line_at(ta, ll) >= 0;
      const int q = lane & (width - 1);
      const int qlen = valid && q < S ? max(0, min(m, n - q * m)) : 0;
      SegmentEnds<T> eq;
      T nFd = T(0);
      if (qlen > 0) {
        eq.Ld = at(3, q, ll);
        eq.ae = at(6, q, ll);
        eq.ce = at(8, q, ll);
        eq.dv = at(9, q, ll);
        nFd = at(0, q + 1 < S ? q + 1 : 0, ll);
      }
      const T x = reduced_solve_shared(reduced_rhs_shared(eq, nFd, qlen), S, F, width);
      if (qlen > 0) at(10, q, ll) = x;
    }
    __syncthreads();

    if (lean) {  // the stores through a pointer stepped by the stride (register 0: row s*m - lo >= 0)
      const T xl = at(10, s == 0 ? S - 1 : s - 1, l), x = at(10, s, l);
      T* out = g.u + off + static_cast<i64>(s * m - lo) * st;
      if (mylen == MaxM) {
        segment_fill_shared<T, MaxM>(rd, MaxM, F.f[3] + base_slot, F.f[4] + base_slot, xl, x);
#pragma unroll
        for (int j = 0; j < MaxM; ++j, out += st) *out = rd[j];
      } else {
        segment_fill_shared<T, MaxM>(rd, mylen, F.f[3] + base_slot, F.f[4] + base_slot, xl, x);
#pragma unroll
        for (int j = 0; j < MaxM; ++j, out += st)
          if (j >= lo) *out = rd[j];
      }
    } else if (mylen > 0) {
      const T xl = at(10, s == 0 ? S - 1 : s - 1, l), x = at(10, s, l);
      segment_fill_shared<T, MaxM>(rd, mylen, F.f[3] + base_slot, F.f[4] + base_slot, xl, x);
#pragma unroll
      for (int j = 0; j < MaxM; ++j)
        if (j >= lo) g.u[off + (s * m + j - lo) * st] = rd[j];
    }
  }
  __pipeline_wait_prior(0);
}

template <class T, int MaxM, int MinBlocks, bool Fold, bool Warp>
__global__ void __launch_bounds__(512, MinBlocks) fused_stage_strided_kernel(StageArgs<T> g, int log2lb, int shift) {
  fused_stage_strided_body<T, MaxM, Fold, Warp, false>(g, log2lb, shift);
}

// The lean form (above): the default shape only (16-row segments, 1 block per SM, the warp
// stream: variant 8 of with_fused_yz_kernel).
template <class T>
__global__ void __launch_bounds__(512, 1) fused_stage_lean_kernel(StageArgs<T> g, int log2lb, int shift) {
  fused_stage_strided_body<T, 16, false, true, true>(g, log2lb, shift);
}

template <class T>
std::size_t fused_stage_strided_smem(const PcrShape& sh, const PcrRegisterShape& r) {
  const std::size_t ends = static_cast<std::size_t>(kEndFields) * r.spad * (r.lb + 1);
  const std::size_t stage = static_cast<std::size_t>(2) * sh.n * r.lb;
  const std::size_t halo = static_cast<std::size_t>(2) * r.spad * r.lb;
  // + 16: the stage starts at a 16-byte boundary (align_stage; the warp copy stream).
  return sizeof(T) * (PcrFactors<T>::values(sh.per_line) + StageBands<T>::arrays * sh.n + ends + stage + halo) + 16;
}

inline bool fused_supported(const LineSet& l) {
  if (l.n < 1) return false;
  if (l.stride == 1) return l.n <= kFusedMaxNX;
  return (l.stride0 == 1 || l.count0 <= 1) && l.n <= kFusedMaxNYZ;
}

// Launch shape defaults, from bench_cuda_heat_step --tune (H100, 256^3, ms per stage):
//  X: 8 warps, 2 blocks/SM (register cap 128): fp32 0.127 / fp64 0.191; capping registers
//     for 3 or 4 blocks/SM (63 registers) measured 0.150-0.155 / 0.197-0.206.
//  Y/Z: 16-row segments, 32 lines per tile, 1 block/SM: fp32 0.161 (16 lines 0.155, 8 rows
//     0.17-0.20), fp64 0.231 (16 lines 0.284, 8 rows 0.26-0.31); 2 blocks/SM (64
//     registers, spills) 0.16-0.43.
constexpr int kFusedXWarps = 8;
constexpr int kFusedXMinBlocks = 2;
constexpr int kFusedYZRows = 16;
constexpr int kFusedYZLines = 32;
constexpr int kFusedYZMinBlocks = 1;

// The kernel instances, by FusedLaunch::variant: X (stride-1 lines) 0..4, Y/Z 5..8.
constexpr int kFusedYZVariant0 = 5;
// With the explicit operator folded in (Fold), only the default register caps are
// instantiated (X: 2 blocks/SM, Y/Z: 1): the tuning rows' other caps take those.
template <class T, bool Fold, class F>
void with_fused_x_kernel(int variant, F&& f) {
  if constexpr (Fold) {
    switch (variant) {
      case 0:
      case 1:
      case 2: f(fused_stage_x_kernel<T, 8, 2, true>); break;
      case 3: f(fused_stage_x_kernel<T, 16, 2, true>); break;
      default: f(fused_stage_x_kernel<T, 0, 2, true>); break;
    }
  } else {
    switch (variant) {
#if defined(ADI_CUDA_UNROLL_ALL)  // 3 and 4 blocks/SM: the tuning rows only (fused_tuning_form)
      case 0: f(fused_stage_x_kernel<T, 8, 4, false>); break;
      case 1: f(fused_stage_x_kernel<T, 8, 3, false>); break;
#endif
      case 2: f(fused_stage_x_kernel<T, 8, 2, false>); break;
      case 3: f(fused_stage_x_kernel<T, 16, 2, false>); break;
      default: f(fused_stage_x_kernel<T, 0, 2, false>); break;
    }
  }
}
// Y/Z lines are not folded (the first stage of a chain is along x unless the grid has one
// node along x; Operator::folds says so): the kernel takes Fold, but no instance is built
// (ptxas needs a minute per folded Y/Z instance), except the z-first order's opt-in one
// (thomas_pcr_fused_strided_fold.cuh: ADI_FOLD_STRIDED_KERNELS, ADI_FOLD_STRIDED=1).
// The warp copy stream (Warp) is built for the default register cap (1 block/SM) only.
template <class T, class F>
void with_fused_yz_kernel(int variant, bool warp, F&& f) {
  switch (variant) {
#if defined(ADI_CUDA_UNROLL_ALL)  // 2 blocks/SM: the tuning rows only (fused_tuning_form)
    case 5: f(fused_stage_strided_kernel<T, 8, 2, false, false>); break;
#endif
#if defined(ADI_CUDA_UNROLL_ALL)  // 8-row segments: FusedTuning::rows = 8 only (fused_rows_form)
    case 6:
      if (warp)
        f(fused_stage_strided_kernel<T, 8, 1, false, true>);
      else
        f(fused_stage_strided_kernel<T, 8, 1, false, false>);
      break;
    case 7: f(fused_stage_strided_kernel<T, 16, 2, false, false>); break;
#endif
    default:
      if (warp)
#if defined(ADI_CUDA_UNROLL_ALL)  // the general 16-row warp instance: fused_stage_lean_form
        f(fused_stage_strided_kernel<T, 16, 1, false, true>);
#else  // (not reached: prepare_fused_stage gives variant 8's warp stream the lean form here)
        f(fused_stage_lean_kernel<T>);
#endif
      else
        f(fused_stage_strided_kernel<T, 16, 1, false, false>);
      break;
  }
}
inline bool fused_yz_has_warp(int variant) { return variant == 6 || variant == 8; }

// The Y/Z form's lean path (fused_stage_lean_kernel): the default since stop 37 (runs s37/7-9:
// the Y/Z stages 20-31% faster on the H200, 9-29% on the H100, no row slower);
// ADI_FUSED_YZ_LEAN=0 when the launch is prepared (read at each prepare_fused_stage, so a test
// can set it around an Operator's construction) runs the general form: a switch for same-run
// A/B timings (scripts/gpu_heat_ab.sh), not an option; both compute the same function (tests:
// test_thomas_pcr_fused_stage under each). Applies where the warp stream runs 16-row segments
// at 1 block per SM. 1 / 0 / unset (adi/base/env_switch.hpp: else InvalidArgument).
inline bool fused_stage_lean_requested() { return ::adi::detail::env_switch("ADI_FUSED_YZ_LEAN", true); }
// Whether variant 8's warp stream (16-row segments, 1 block per SM) takes the lean form: rows ==
// 16 (FusedTuning::rows = 8 on lines of 257 .. 512 keeps 16-row segments but not the lean form)
// and ADI_FUSED_YZ_LEAN not 0. Issue 15 item 8 (stop 40, h-gatex): the general instance those two
// reach, fused_stage_strided_kernel<T, 16, 1, false, true>, is compiled only with
// ADI_CUDA_UNROLL_ALL (a same-run A/B form: scripts/gpu_heat_ab.sh configures with it); other
// builds say so once on stderr and run the lean form, the same function (GeneralForm* tests).
inline bool fused_stage_lean_form(int rows) {
  const bool lean = rows == 16 && fused_stage_lean_requested();
#if !defined(ADI_CUDA_UNROLL_ALL)
  if (!lean) {
    static std::once_flag once;
    note_form_not_compiled(once,
                           "the fused Y/Z stage's general form of 16-row segments (ADI_FUSED_YZ_LEAN=0, or "
                           "FusedTuning::rows = 8 on lines of 257 .. 512)",
                           "the lean form");
    return true;
  }
#endif
  return lean;
}

// Issue 15 item 8: the default build compiles only the default register caps (X: 2 blocks/SM,
// Y/Z: 1); the others (FusedTuning::min_blocks, the benchmark's tuning rows) only with
// ADI_CUDA_UNROLL_ALL. Asked for one this build lacks, says so once on stderr and returns
// false: the caller runs the default.
inline bool fused_tuning_form(const char* what) {
#if defined(ADI_CUDA_UNROLL_ALL)
  (void)what;
  return true;
#else
  static std::once_flag once;
  const std::string form = std::string("fused ADI stage FusedTuning::min_blocks = ") + what + " (register cap)";
  note_form_not_compiled(once, form.c_str(), "the default (X 2, Y/Z 1 blocks per SM)");
  return false;
#endif
}

// Issue 15 item 8 (stop 40, h-reach): the Y/Z stage's 8-row segments (variant 6: FusedTuning::rows
// = 8, the benchmark's tuning rows; the library passes FusedTuning{}, whose 16 rows give
// pcr_shape(n, 16).m >= 16, so variant 8 always) only with ADI_CUDA_UNROLL_ALL. Asked for in a
// build without them, says so once on stderr and returns false: the caller runs 16-row segments.
inline bool fused_rows_form() {
#if defined(ADI_CUDA_UNROLL_ALL)
  return true;
#else
  static std::once_flag once;
  note_form_not_compiled(once, "fused ADI stage FusedTuning::rows = 8 (Y/Z segments of 8 rows)",
                         "the default (16-row segments)");
  return false;
#endif
}

// The Y/Z form's copy stream: the warp's 16-byte pieces (warp_tile_copy.cuh; where the tiles'
// rows are 16-byte aligned, else as `thread`) unless the environment sets
// ADI_FUSED_STAGE_STREAM=thread (each thread copies its own rows, as before stop 32): a switch
// for same-run A/B timings (scripts/gpu_stage_check.sh), not an option; both compute the same
// function (tests: test_thomas_pcr_fused_stage at each). Read once per process: warp (unset: the
// default) or thread, any other value an InvalidArgument.
inline bool fused_stage_warp_stream() {
  static const bool on = ::adi::detail::env_choice("ADI_FUSED_STAGE_STREAM", {"warp", "thread"}, 0) == 0;
  return on;
}

// The folded X kernel reads U's neighbouring lines (y +- 1 from the block's other warps)
// through L1: the carveout its resident blocks need (persistent_grid asked for all of it),
// the rest L1; back to all shared if the occupancy would drop. The attribute belongs to the
// kernel, not the launch: it only grows over the process (an operator with longer lines
// prepared later must not lose occupancy to an earlier, smaller carveout).
template <class Kernel>
void fit_carveout(Kernel kernel, int threads, std::size_t smem) {
  static std::mutex m;
  static std::map<const void*, int> kept;  // per kernel: the largest carveout set so far
  const std::lock_guard<std::mutex> lock(m);
  int per_sm = 0, dev = 0, smem_sm = 0, reserved = 0;
  ADI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  ADI_CUDA_CHECK(cudaGetDevice(&dev));
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  ADI_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
  if (per_sm < 1 || smem_sm < 1) return;
  const double need = double(per_sm) * double(smem + static_cast<std::size_t>(reserved));
  int& percent = kept[reinterpret_cast<const void*>(kernel)];
  percent = std::max(percent, std::min(100, static_cast<int>(std::ceil(100.0 * need / double(smem_sm))) + 1));
  ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
  int after = 0;
  ADI_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&after, kernel, threads, smem));
  if (after < per_sm) {
    percent = 100;
    ADI_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                        cudaSharedmemCarveoutMaxShared));
  }
}

}  // namespace adi::cuda_backend::kernels
#include "solvers/cuda/thomas_pcr_fused_strided_fold.cuh"  // the folded Y/Z stage (ADI_FOLD_STRIDED)
namespace adi::cuda_backend::kernels {

// Everything about a launch that depends on the lines and the device only: decided once
// (the Operator prepares one per axis when it is built), so a stage launches at once.
template <class T>
FusedLaunch prepare_fused_stage(const LineSet& ls, const FusedTuning& tuning) {
  if (!fused_supported(ls))
    throw Unsupported("fused ADI stage: lines of n = " + std::to_string(ls.n) + " with element stride " +
                      std::to_string(ls.stride) + " are not supported (X up to " + std::to_string(kFusedMaxNX) +
                      ", Y/Z up to " + std::to_string(kFusedMaxNYZ) + ")");
  FusedLaunch L;
  if (ls.lines() == 0) return L;
  const LaunchLimits lim = launch_limits();
  if (ls.stride == 1) {
    const PcrShape sh = pcr_shape(ls.n);
    int warps = tuning.warps > 0 ? tuning.warps : kFusedXWarps;
    while (warps > 1 && fused_stage_x_smem<T>(sh, warps) > lim.smem_optin) warps /= 2;
    const std::size_t smem = fused_stage_x_smem<T>(sh, warps);
    if (smem > lim.smem_optin)
      throw Unsupported("fused ADI stage: a line of n = " + std::to_string(ls.n) + " needs " +
                        std::to_string(smem) + " bytes of shared memory, the device allows " +
                        std::to_string(lim.smem_optin));
    int mb = tuning.min_blocks > 0 ? tuning.min_blocks : kFusedXMinBlocks;
    if (sh.m <= 8 && mb >= 3 && !fused_tuning_form(mb >= 4 ? "4 (X)" : "3 (X)")) mb = kFusedXMinBlocks;
    L.variant = sh.m <= 8 ? (mb >= 4 ? 0 : mb == 3 ? 1 : 2) : sh.m <= 16 ? 3 : 4;
    L.threads = warps * kWarp;
    L.smem = smem;
    const i64 work = (ls.lines() + warps - 1) / warps;
    with_fused_x_kernel<T, false>(L.variant,
                                  [&](auto kernel) { L.grid = persistent_grid(kernel, L.threads, smem, work, lim); });
    with_fused_x_kernel<T, true>(L.variant, [&](auto kernel) {
      L.fold_grid = persistent_grid(kernel, L.threads, smem, work, lim);
      if (!tuning.fold_max_shared) fit_carveout(kernel, L.threads, smem);
    });
  } else {
    // Segments of `rows` rows (8 or 16), kFusedYZLines lines per tile.
    int rows = tuning.rows == 8 || (tuning.rows <= 0 && kFusedYZRows == 8) ? 8 : 16;
    PcrShape sh = pcr_shape(ls.n, rows);
    if (sh.m <= 8 && !fused_rows_form()) {
      rows = 16;
      sh = pcr_shape(ls.n, 16);
    }
    if (sh.m > 16) {
      rows = 16;
      sh = pcr_shape(ls.n, 16);
    }
    const int lb0 = tuning.lines > 0 ? tuning.lines : kFusedYZLines;
    PcrRegisterShape rs = pcr_register_shape(sh, lb0);
    while (rs.lb > 1 && fused_stage_strided_smem<T>(sh, rs) > lim.smem_optin)
      rs = pcr_register_shape(sh, rs.lb / 2);
    const std::size_t smem = fused_stage_strided_smem<T>(sh, rs);
    if (smem > lim.smem_optin)
      throw Unsupported("fused ADI stage: lines of n = " + std::to_string(ls.n) + " need " +
                        std::to_string(smem) + " bytes of shared memory, the device allows " +
                        std::to_string(lim.smem_optin));
    while ((1 << L.log2lb) < rs.lb) ++L.log2lb;
    bool two = (tuning.min_blocks > 0 ? tuning.min_blocks : kFusedYZMinBlocks) >= 2;
    if (two && !fused_tuning_form("2 (Y/Z)")) two = false;
    L.variant = kFusedYZVariant0 + (sh.m <= 8 ? 0 : 2) + (two ? 0 : 1);
    L.rows = rows;
    L.threads = rs.lb * rs.spad;
    L.smem = smem;
    const i64 tiles = (ls.lines() + rs.lb - 1) / rs.lb;
    with_fused_yz_kernel<T>(L.variant, false,
                            [&](auto kernel) { L.grid = persistent_grid(kernel, L.threads, smem, tiles, lim); });
    // The warp stream's tiles per plane start up to 16 bytes before its line 0.
    const bool rows16 = rs.lb * sizeof(T) % 16 == 0 && ls.stride0 == 1;
    if (fused_stage_warp_stream() && rows16 && fused_yz_has_warp(L.variant)) {
      const i64 wtiles = (ls.count0 + static_cast<i64>(16 / sizeof(T)) - 1 + rs.lb - 1) / rs.lb * ls.count1;
      // The lean form: the same shape (block, shared memory, 1 block per SM); its grid (and its
      // dynamic shared-memory limit, set by persistent_grid) in place of the warp instance's,
      // which run_fused_stage then never launches (only the chosen kernel's grid is computed).
      L.lean = L.variant == 8 && fused_stage_lean_form(rows);
      if (L.lean)
        L.warp_grid = persistent_grid(fused_stage_lean_kernel<T>, L.threads, smem, wtiles, lim);
      else
        with_fused_yz_kernel<T>(L.variant, true, [&](auto kernel) {
          L.warp_grid = persistent_grid(kernel, L.threads, smem, wtiles, lim);
        });
      L.fold_grid = strided_fold_grid<T>(L, !two, wtiles, lim);
    }
  }
  return L;
}

// The folded explicit operator's arguments in the kernels' form.
template <class T>
void pack_fold(const FusedExplicit<T>& e, FoldArgs<T>& f) {
  f.count = e.count;
  f.axis = e.axis;
  for (int q = 0; q < 2; ++q) {
    f.p[q] = q < e.count ? e.p[q] : nullptr;
    f.alpha[q] = e.alpha[q];
    for (int b = 0; b < 3; ++b) {
      f.w[q][b] = q < e.count && e.view.axis[b].active ? e.w[q][b] : T(0);
      for (int side = 0; side < 2; ++side) f.neu[q][b][side] = f.w[q][b] != T(0) ? e.neumann[q][b][side] : nullptr;
    }
  }
  const i64 strides[3] = {1, e.view.box.sy, e.view.box.sz};
  const i64 extents[3] = {e.view.box.nx, e.view.box.ny, e.view.box.nz};
  for (int b = 0; b < 3; ++b) {
    const adi::detail::AxisStencil<T>& S = e.view.axis[b];
    f.a[b] = S.a;
    f.d[b] = S.d;
    f.c[b] = S.c;
    f.prev[b] = S.prev;
    f.next[b] = S.next;
    f.n[b] = S.n;
    f.stride[b] = strides[b];
    f.org[b] = e.org[b];
    f.fn1[b] = extents[b == 0 ? 1 : 0];
  }
}

// A stage's arguments in the kernels' form (all but the line shape, sh), the fold's too.
template <class T>
StageArgs<T> pack_stage(const FusedStage<T>& fs, int* flag) {
  StageArgs<T> g{};
  g.L = to_device(fs.lines);
  g.periodic = fs.periodic;
  g.base = fs.base;
  g.v = fs.v;
  g.inv_s = fs.inv_s;
  g.a = fs.a;
  g.d = fs.d;
  g.c = fs.c;
  for (int k = 0; k < 2; ++k) {
    g.end[k] = fs.end[k];
    g.vend[k] = fs.v_end[k];
    g.nadd[k] = fs.neu_add[k];
    g.nsub[k] = fs.neu_sub[k];
    g.src[k] = fs.src[k];
    g.src_scale[k] = fs.src_scale[k];
  }
  g.face_base = fs.face_base;
  g.face_n1 = fs.face_n1;
  g.u = fs.u;
  g.flag = flag;
  if (fs.fold.count > 0) pack_fold(fs.fold, g.fold);
  return g;
}

// One stage with a prepared launch: packs the arguments and launches, nothing else.
template <class T>
void run_fused_stage(const FusedStage<T>& fs, const FusedLaunch& L, int* flag, cudaStream_t stream) {
  const LineSet& ls = fs.lines;
  if (ls.lines() == 0 || L.variant < 0) return;
  StageArgs<T> g = pack_stage(fs, flag);
  const bool fold = fs.fold.count > 0;
  auto launch = [&](auto fold_tag) {
    constexpr bool Fold = decltype(fold_tag)::value;
    const unsigned grid = Fold ? L.fold_grid : L.grid;
    if (L.variant < kFusedYZVariant0) {
      g.sh = pcr_shape(ls.n);
      with_fused_x_kernel<T, Fold>(L.variant, [&](auto kernel) { kernel<<<grid, L.threads, L.smem, stream>>>(g); });
    } else if constexpr (Fold) {
      g.sh = pcr_shape(ls.n, L.rows);
      const T* streamed[2] = {nullptr, fs.v};
      run_strided_fold<T>(g, L, L.warp_grid > 0 ? warp_tile_shift<T>(g.L, 1 << L.log2lb, streamed, 2) : -1, stream);
    } else {
      g.sh = pcr_shape(ls.n, L.rows);
      // The warp stream where base and v sit alike within 16 bytes (decided per call: the fields').
      const T* streamed[2] = {fs.base, fs.v};
      const int shift = L.warp_grid > 0 ? warp_tile_shift<T>(g.L, 1 << L.log2lb, streamed, 2) : -1;
      if (shift >= 0 && L.lean)
        fused_stage_lean_kernel<T><<<L.warp_grid, L.threads, L.smem, stream>>>(g, L.log2lb, shift);
      else
        with_fused_yz_kernel<T>(L.variant, shift >= 0, [&](auto kernel) {
          kernel<<<shift >= 0 ? L.warp_grid : grid, L.threads, L.smem, stream>>>(g, L.log2lb, shift);
        });
    }
  };
  if (fold)
    launch(std::true_type{});
  else
    launch(std::false_type{});
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
