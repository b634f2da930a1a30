// Explicit evaluation of the ADI operator's parts on the GPU (the CUDA version of
// solvers/cpu/stencil_apply.cpp): out = alpha*base + sum_p w[p] A_p v + sources at the
// unknown nodes. A block covers 32 x-nodes of 8 rows, with x indexed from the row start
// so that every warp reads 128 aligned bytes (the unknown range usually starts at
// i = 1). The y/z neighbours of a node are read by the blocks of the neighbouring rows
// and planes shortly before or after: they come from L2, so a pass reads v about once
// from memory.
//
// Without mixed terms each thread walks a column of nodes along z, with the x and y
// coefficients and neighbour offsets set up once per column and 32-bit offsets where
// the field allows: a first version with one thread per node and 64-bit indices was
// bound by instruction issue, not memory (H100, 256^3: ~1 TB/s in either precision).
// Mixed terms take the one-node-per-thread kernel.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "adi/base/env_switch.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"

namespace adi::cuda_backend {

namespace {

using adi::detail::ApplyArgs;
using adi::detail::AxisStencil;
using adi::detail::StencilView;

constexpr int kTileX = 32, kTileY = 8;

// Weights that hold for the whole launch, decided on the host.
struct ApplyFlags {
  bool x, y, z, mixed;
};

// Neighbour index along an axis: i-1 / i+1 inside, prev/next (wrap or self) at the ends.
template <class T, class I>
__device__ __forceinline__ I prev_of(const AxisStencil<T>& S, I i) {
  return i > 0 && i < S.n - 1 ? i - 1 : static_cast<I>(S.prev[i]);
}
template <class T, class I>
__device__ __forceinline__ I next_of(const AxisStencil<T>& S, I i) {
  return i > 0 && i < S.n - 1 ? i + 1 : static_cast<I>(S.next[i]);
}

template <class T, class I>
__global__ void __launch_bounds__(kTileX* kTileY)
    stencil_columns_kernel(StencilView<T> s, ApplyArgs<T> g, ApplyFlags use, int kchunk) {
  const I i = static_cast<I>(blockIdx.x) * kTileX + static_cast<I>(threadIdx.x);
  const I j = static_cast<I>(s.lo[1]) + static_cast<I>(blockIdx.y) * kTileY + static_cast<I>(threadIdx.y);
  if (i < s.lo[0] || i > s.hi[0] || j > s.hi[1]) return;
  const I sy = static_cast<I>(s.box.sy), sz = static_cast<I>(s.box.sz);
  const I k0 = static_cast<I>(s.lo[2]) + static_cast<I>(blockIdx.z) * kchunk;
  const I k1 = min(static_cast<I>(s.hi[2]), k0 + kchunk - 1);
  const AxisStencil<T>&X = s.axis[0], &Y = s.axis[1], &Z = s.axis[2];
  // Per column: x and y neighbour offsets and shared coefficients.
  I xl = 0, xr = 0, ym = 0, yp = 0;
  T xa = T(0), xd = T(0), xc = T(0), ya = T(0), yd = T(0), yc = T(0);
  if (use.x) {
    xl = static_cast<I>(prev_of(X, i)) - i;
    xr = static_cast<I>(next_of(X, i)) - i;
    if (X.shared) {
      xa = X.a[i];
      xd = X.d[i];
      xc = X.c[i];
    }
  }
  if (use.y) {
    ym = (static_cast<I>(prev_of(Y, j)) - j) * sy;
    yp = (static_cast<I>(next_of(Y, j)) - j) * sy;
    if (Y.shared) {
      ya = g.w[2] * Y.a[j];
      yd = g.w[2] * Y.d[j];
      yc = g.w[2] * Y.c[j];
    }
  }
  const T* __restrict__ v = g.v;
  for (I k = k0; k <= k1; ++k) {
    const I node = i + j * sy + k * sz;
    T o = g.base ? g.alpha * g.base[node] : T(0);
    if (g.src[0]) o += g.src_scale[0] * g.src[0][node];
    if (g.src[1]) o += g.src_scale[1] * g.src[1][node];
    if (use.x) {
      if (X.shared)
        o += g.w[1] * (xd * v[node] - xa * v[node + xl] - xc * v[node + xr]);
      else
        o += g.w[1] * (X.d[node] * v[node] - X.a[node] * v[node + xl] - X.c[node] * v[node + xr]);
    }
    if (use.y) {
      const T vm = v[node + ym], vp = v[node + yp];
      if (Y.shared)
        o += yd * v[node] - ya * vm - yc * vp;
      else
        o += g.w[2] * (Y.d[node] * v[node] - Y.a[node] * vm - Y.c[node] * vp);
    }
    if (use.z) {
      const T vm = v[node + (static_cast<I>(prev_of(Z, k)) - k) * sz];
      const T vp = v[node + (static_cast<I>(next_of(Z, k)) - k) * sz];
      const T w = g.w[3];
      if (Z.shared)
        o += (w * Z.d[k]) * v[node] - (w * Z.a[k]) * vm - (w * Z.c[k]) * vp;
      else
        o += w * (Z.d[node] * v[node] - Z.a[node] * vm - Z.c[node] * vp);
    }
    g.out[node] = o;
  }
}

// The common case: every axis used has shared bands, base is given, no sources (the
// explicit step of a constant-coefficient problem). Coefficients are multiplied by
// their weights once per column; v's z-neighbours pass through registers as the column
// advances, and pointers advance by a plane instead of recomputing offsets.
template <class T, class I>
__global__ void __launch_bounds__(kTileX* kTileY)
    stencil_columns_shared_kernel(StencilView<T> s, ApplyArgs<T> g, ApplyFlags use, int kchunk) {
  const I i = static_cast<I>(blockIdx.x) * kTileX + static_cast<I>(threadIdx.x);
  const I j = static_cast<I>(s.lo[1]) + static_cast<I>(blockIdx.y) * kTileY + static_cast<I>(threadIdx.y);
  if (i < s.lo[0] || i > s.hi[0] || j > s.hi[1]) return;
  const I sy = static_cast<I>(s.box.sy), sz = static_cast<I>(s.box.sz);
  const I k0 = static_cast<I>(s.lo[2]) + static_cast<I>(blockIdx.z) * kchunk;
  const I k1 = min(static_cast<I>(s.hi[2]), k0 + kchunk - 1);
  const AxisStencil<T>&X = s.axis[0], &Y = s.axis[1], &Z = s.axis[2];
  I xl = 0, xr = 0, ym = 0, yp = 0;
  T xa = T(0), xd = T(0), xc = T(0), ya = T(0), yd = T(0), yc = T(0);
  if (use.x) {
    xl = static_cast<I>(prev_of(X, i)) - i;
    xr = static_cast<I>(next_of(X, i)) - i;
    xa = X.a[i];
    xd = X.d[i];
    xc = X.c[i];
  }
  if (use.y) {
    ym = (static_cast<I>(prev_of(Y, j)) - j) * sy;
    yp = (static_cast<I>(next_of(Y, j)) - j) * sy;
    ya = g.w[2] * Y.a[j];
    yd = g.w[2] * Y.d[j];
    yc = g.w[2] * Y.c[j];
  }
  const T w1 = g.w[1], w3 = g.w[3], alpha = g.alpha;
  const I first = i + j * sy + k0 * sz;
  const T* __restrict__ v = g.v + first;
  const T* b = g.base + first;  // may be out (in place): read before written
  T* o = g.out + first;
  T v_prev = T(0), v_next = T(0);  // v at k-1 and k+1 from the previous node of the column
  bool have_prev = false, have_next = false;
  for (I k = k0; k <= k1; ++k, v += sz, b += sz, o += sz) {
    T r = alpha * *b;
    const T vc = have_next ? v_next : *v;
    if (use.x) r += w1 * (xd * vc - xa * v[xl] - xc * v[xr]);
    if (use.y) r += yd * vc - ya * v[ym] - yc * v[yp];
    if (use.z) {
      const I km = prev_of(Z, k), kp = next_of(Z, k);
      const T vm = have_prev && km == k - 1 ? v_prev : v[(km - k) * sz];
      const T vp = v[(kp - k) * sz];
      r += (w3 * Z.d[k]) * vc - (w3 * Z.a[k]) * vm - (w3 * Z.c[k]) * vp;
      v_next = vp;
      have_next = kp == k + 1;
    }
    v_prev = vc;
    have_prev = true;
    *o = r;
  }
}

// The lean column form (the default since stop 38: the explicit pass 14-20% faster, the heat step
// 3-5%, on the H100 and the H200; ADI_STENCIL_LEAN=0 when stencil_apply is called runs the column
// kernel above, a switch for same-run A/B timings, scripts/gpu_heat_ab.sh --x): that column
// kernel (the same terms in the same order: the same results) with v's rows read D planes ahead into a
// ring of registers (the column's next node and its z + 1 neighbour: the only value of a node
// that no other warp has read yet, a DRAM row), and, where the column is interior along z,
// whole groups of D nodes without a test per node. The column kernel waits about one memory
// round trip per node (a warp has one plane's loads in flight: 40-48 warps x 256 / 128 bytes
// per SM, a third or less of what the H200's DRAM needs in flight; 256^3 fp64 0.145 ms, 2.3x
// its 2 fields, fp32 3.3x, and 9-11% faster on the H200 than on the H100) and spends ~96 PTX
// instructions per node; here D planes are in flight per warp (32 bytes per thread), the x / y
// neighbours of a plane (other warps' ring rows) hit L1 / L2, and an interior node costs 59.
// 32-bit offsets only (`small`). solvers/cuda/README.md, "The first stage's stencil pass".
template <class T>
constexpr int stencil_ring_depth() {
  return 32 / static_cast<int>(sizeof(T));  // fp32 8, fp64 4 planes ahead
}
// Blocks of 256 per SM the register cap allows: fp32 4 (64 registers), fp64 3 (80; at 64 the
// interior groups spill 148 bytes).
template <class T>
constexpr int stencil_ring_blocks() {
  return sizeof(T) == 4 ? 4 : 3;
}

template <class T>
__global__ void __launch_bounds__(kTileX* kTileY, stencil_ring_blocks<T>())
    stencil_columns_ring_kernel(StencilView<T> s, ApplyArgs<T> g, ApplyFlags use, int kchunk) {
  constexpr int D = stencil_ring_depth<T>();
  const int i = static_cast<int>(blockIdx.x) * kTileX + static_cast<int>(threadIdx.x);
  const int j = static_cast<int>(s.lo[1]) + static_cast<int>(blockIdx.y) * kTileY + static_cast<int>(threadIdx.y);
  if (i < s.lo[0] || i > s.hi[0] || j > s.hi[1]) return;
  const int sy = static_cast<int>(s.box.sy), sz = static_cast<int>(s.box.sz);
  const int k0 = static_cast<int>(s.lo[2]) + static_cast<int>(blockIdx.z) * kchunk;
  const int k1 = min(static_cast<int>(s.hi[2]), k0 + kchunk - 1);
  const int kv = min(k1 + 1, static_cast<int>(s.box.nz) - 1);  // the last plane of v read ahead
  const AxisStencil<T>&X = s.axis[0], &Y = s.axis[1], &Z = s.axis[2];
  int xl = 0, xr = 0, ym = 0, yp = 0;
  T xa = T(0), xd = T(0), xc = T(0), ya = T(0), yd = T(0), yc = T(0);
  if (use.x) {
    xl = prev_of(X, i) - i;
    xr = next_of(X, i) - i;
    xa = X.a[i];
    xd = X.d[i];
    xc = X.c[i];
  }
  if (use.y) {
    ym = (prev_of(Y, j) - j) * sy;
    yp = (next_of(Y, j) - j) * sy;
    ya = g.w[2] * Y.a[j];
    yd = g.w[2] * Y.d[j];
    yc = g.w[2] * Y.c[j];
  }
  const T w1 = g.w[1], w3 = g.w[3], alpha = g.alpha;
  const int first = i + j * sy + k0 * sz;
  const T* __restrict__ v = g.v + first;  // node k0 of the column; node k at (k - k0) * sz
  const T* b = g.base + first;            // may be out (in place): node k read before it is written
  T* o = g.out + first;
  const bool own = g.base == g.v;  // the explicit step and the stencil fold: base is v
  // Ring slot u holds, for the column's node k = kb + u, v at plane k + 1 (clamped to kv; used
  // only where it is the next node or the z + 1 neighbour). Base, where it is not v, is read at
  // the node (a ring for it too cost fp32 its fourth block per SM; the interior groups' loads
  // are hoisted by the compiler, D in flight).
  T ahead[D];
#pragma unroll
  for (int u = 0; u < D; ++u) ahead[u] = k0 + u <= k1 ? v[(min(k0 + u + 1, kv) - k0) * sz] : T(0);
  T vc = v[0], v_prev = T(0);
  bool have_prev = false;
  int kb = k0;
  // Interior z (a column with a plane on either side: every node's z neighbours are k -+ 1), whole
  // groups of D nodes without a test per node: the refill reads node k + D's values, clamped to
  // the column's last (a predicate there spilled: ptxas keeps both ring states live).
  if (use.z && k0 > 0 && k1 < static_cast<int>(Z.n) - 1 && kv == k1 + 1) {
    // The z bands in registers (read through the view, the compiler reloads the pointers from the
    // parameters at every node: stores to o might alias them).
    const T* __restrict__ zd = Z.d;
    const T* __restrict__ za = Z.a;
    const T* __restrict__ zc = Z.c;
    v_prev = v[-sz];
    have_prev = true;
    for (; kb + D - 1 <= k1; kb += D) {
#pragma unroll
      for (int u = 0; u < D; ++u) {
        const int k = kb + u;
        const int at = (k - k0) * sz;
        const T* __restrict__ vk = v + at;
        const T vnext = ahead[u];
        T r = alpha * (own ? vc : b[at]);
        ahead[u] = vk[(min(k + D, k1) - k + 1) * sz];  // node k + D's (or the column's last) plane + 1 <= kv
        if (use.x) r += w1 * (xd * vc - xa * vk[xl] - xc * vk[xr]);
        if (use.y) r += yd * vc - ya * vk[ym] - yc * vk[yp];
        r += (w3 * zd[k]) * vc - (w3 * za[k]) * v_prev - (w3 * zc[k]) * vnext;
        v_prev = vc;
        vc = vnext;
        o[at] = r;
      }
    }
  }
  // The rest of the column (all of it where z is not interior): slot u still holds node kb + u.
  for (; kb <= k1; kb += D) {
#pragma unroll
    for (int u = 0; u < D; ++u) {
      const int k = kb + u;
      if (k > k1) break;
      const int at = (k - k0) * sz;
      const T* __restrict__ vk = v + at;
      const T vnext = ahead[u];
      T r = alpha * (own ? vc : b[at]);
      if (k + D <= k1) ahead[u] = vk[(min(k + D + 1, kv) - k) * sz];  // refill the slot: node k + D
      if (use.x) r += w1 * (xd * vc - xa * vk[xl] - xc * vk[xr]);
      if (use.y) r += yd * vc - ya * vk[ym] - yc * vk[yp];
      if (use.z) {
        const int km = prev_of(Z, k), kp = next_of(Z, k);
        const T vm = have_prev && km == k - 1 ? v_prev : vk[(km - k) * sz];
        const T vp = kp == k + 1 ? vnext : vk[(kp - k) * sz];
        r += (w3 * Z.d[k]) * vc - (w3 * Z.a[k]) * vm - (w3 * Z.c[k]) * vp;
      }
      v_prev = vc;
      have_prev = true;
      vc = vnext;  // v at plane k + 1: the next node (k + 1 <= k1 <= kv)
      o[at] = r;
    }
  }
}

// The pair form (the default since stop 48; ADI_STENCIL_PAIRS=0, read at each stencil_apply call,
// runs the ring kernel above): the ring kernel with each thread on two neighbouring x nodes (i, i + 1,
// i even) through 8-byte (fp32) / 16-byte (fp64) loads and stores. The ring kernel spends ~77 warp
// instructions per node and issues on ~66% of the cycles (Nsight Compute, H200, 256^3 fp32, run
// s48/1: 39.3 M instructions, 82 us, DRAM 30%, half of the warps' stalls on L1TEX): a pair shares
// the address arithmetic, the y and z neighbours and the ring's refill between its two nodes, and
// the nodes' inner x neighbours are each other's centre (only i - 1 and i + 2 are loaded); the
// interior groups of the common case (base v, x and y terms) run without a test per node. The ring
// kernel's terms, the x bands weighted once per thread as the y bands are (results may differ from
// it in the last bit). Needs an even row length, even strides and pointers aligned to a pair
// (`stencil_pairs_fit`; otherwise the ring kernel runs). solvers/cuda/README.md, "Stop 48".
template <class T>
struct PairOf;
template <>
struct PairOf<float> {
  using type = float2;
};
template <>
struct PairOf<double> {
  using type = double2;
};

// D: pairs read ahead per thread; B: blocks of 256 per SM asked of the register allocator (3: 80
// registers, 2: 128). Measured (H200, runs s48/2-3, the explicit pass at 256^3 and 512^3): fp32 D = 4
// at 3 blocks (80 registers, no spill; at 4 blocks, 64 registers, it spills and runs 33% slower; D = 8
// or 2 blocks: no better than the ring kernel), fp64 D = 4 at 2 blocks (122 registers; D = 2 at 3
// blocks spills, at 2 blocks it is 5% slower).
template <class T>
struct StencilPairShape {
  static constexpr int depth = 4, blocks = sizeof(T) == 4 ? 3 : 2;
};

template <class T, int D, int B>
__global__ void __launch_bounds__(kTileX* kTileY, B)
    stencil_pairs_ring_kernel(StencilView<T> s, ApplyArgs<T> g, ApplyFlags use, int kchunk) {
  using V = typename PairOf<T>::type;
  const int i = static_cast<int>(blockIdx.x) * (2 * kTileX) + 2 * static_cast<int>(threadIdx.x);
  const int j = static_cast<int>(s.lo[1]) + static_cast<int>(blockIdx.y) * kTileY + static_cast<int>(threadIdx.y);
  const int lo = static_cast<int>(s.lo[0]), hi = static_cast<int>(s.hi[0]);
  const bool in0 = i >= lo && i <= hi, in1 = i + 1 >= lo && i + 1 <= hi;  // which nodes of the pair are unknowns
  if (!(in0 || in1) || j > s.hi[1]) return;
  const int sy = static_cast<int>(s.box.sy), sz = static_cast<int>(s.box.sz);
  const int k0 = static_cast<int>(s.lo[2]) + static_cast<int>(blockIdx.z) * kchunk;
  const int k1 = min(static_cast<int>(s.hi[2]), k0 + kchunk - 1);
  const int kv = min(k1 + 1, static_cast<int>(s.box.nz) - 1);
  const AxisStencil<T>&X = s.axis[0], &Y = s.axis[1], &Z = s.axis[2];
  // x: node i's prev and node i + 1's next (offsets from node i); the inner neighbours are the pair's
  // other centre wherever the ends' prev / next say so (`inner`), else read like the outer ones.
  int xl = 0, xr = 0, xn0 = 1, xp1 = 0, ym = 0, yp = 0;
  bool inner = true;
  T xa0 = T(0), xd0 = T(0), xc0 = T(0), xa1 = T(0), xd1 = T(0), xc1 = T(0), ya = T(0), yd = T(0), yc = T(0);
  if (use.x) {
    xl = prev_of(X, i) - i;
    xr = next_of(X, i + 1) - i;
    xn0 = next_of(X, i) - i;
    xp1 = prev_of(X, i + 1) - i;
    inner = xn0 == 1 && xp1 == 0;
    xa0 = g.w[1] * X.a[i];
    xd0 = g.w[1] * X.d[i];
    xc0 = g.w[1] * X.c[i];
    xa1 = g.w[1] * X.a[i + 1];
    xd1 = g.w[1] * X.d[i + 1];
    xc1 = g.w[1] * X.c[i + 1];
  }
  if (use.y) {
    ym = (prev_of(Y, j) - j) * sy;
    yp = (next_of(Y, j) - j) * sy;
    ya = g.w[2] * Y.a[j];
    yd = g.w[2] * Y.d[j];
    yc = g.w[2] * Y.c[j];
  }
  const T w3 = g.w[3], alpha = g.alpha;
  const int first = i + j * sy + k0 * sz;
  const T* __restrict__ v = g.v + first;
  const T* b = g.base + first;
  T* o = g.out + first;
  const bool own = g.base == g.v;
  const auto pair_at = [](const T* p) { return *reinterpret_cast<const V*>(p); };
  // One node pair: centre c, z neighbours m / p (values), the z bands' weighted values zd / za / zc.
  // Fast (a compile-time tag): base is v, x and y terms, inner x neighbours (the explicit step and
  // Douglas' stencil fold, every pair of an interior column): no test per node but the store's.
  const auto store = [&](int at, V r) {  // a pair half outside the unknowns stores one value
    T* ok = o + at;
    if (in0 && in1)
      *reinterpret_cast<V*>(ok) = r;
    else if (in0)
      ok[0] = r.x;
    else
      ok[1] = r.y;
  };
  const auto node = [&](auto fast, const T* __restrict__ vk, int at, V c, V m, V p, T zdk, T zak, T zck, bool z) {
    V r;
    if constexpr (decltype(fast)::value) {
      r.x = alpha * c.x;
      r.y = alpha * c.y;
      const T left = vk[xl], right = vk[xr];
      r.x += xd0 * c.x - xa0 * left - xc0 * c.y;
      r.y += xd1 * c.y - xa1 * c.x - xc1 * right;
      const V ymv = pair_at(vk + ym), ypv = pair_at(vk + yp);
      r.x += yd * c.x - ya * ymv.x - yc * ypv.x;
      r.y += yd * c.y - ya * ymv.y - yc * ypv.y;
      r.x += zdk * c.x - zak * m.x - zck * p.x;
      r.y += zdk * c.y - zak * m.y - zck * p.y;
      store(at, r);
      return;
    }
    if (own) {
      r.x = alpha * c.x;
      r.y = alpha * c.y;
    } else {
      const V bb = pair_at(b + at);
      r.x = alpha * bb.x;
      r.y = alpha * bb.y;
    }
    if (use.x) {
      const T left = vk[xl], right = vk[xr];
      const T n0 = inner ? c.y : vk[xn0], p1 = inner ? c.x : vk[xp1];
      r.x += xd0 * c.x - xa0 * left - xc0 * n0;
      r.y += xd1 * c.y - xa1 * p1 - xc1 * right;
    }
    if (use.y) {
      const V ymv = pair_at(vk + ym), ypv = pair_at(vk + yp);
      r.x += yd * c.x - ya * ymv.x - yc * ypv.x;
      r.y += yd * c.y - ya * ymv.y - yc * ypv.y;
    }
    if (z) {
      r.x += zdk * c.x - zak * m.x - zck * p.x;
      r.y += zdk * c.y - zak * m.y - zck * p.y;
    }
    store(at, r);
  };
  V ahead[D];
#pragma unroll
  for (int u = 0; u < D; ++u) ahead[u] = k0 + u <= k1 ? pair_at(v + (min(k0 + u + 1, kv) - k0) * sz) : V{};
  V vc = pair_at(v), v_prev{};
  bool have_prev = false;
  int kb = k0;
  if (use.z && k0 > 0 && k1 < static_cast<int>(Z.n) - 1 && kv == k1 + 1) {
    const T* __restrict__ zd = Z.d;
    const T* __restrict__ za = Z.a;
    const T* __restrict__ zc = Z.c;
    v_prev = pair_at(v - sz);
    have_prev = true;
    const auto groups = [&](auto fast) {
      for (; kb + D - 1 <= k1; kb += D) {
#pragma unroll
        for (int u = 0; u < D; ++u) {
          const int k = kb + u;
          const int at = (k - k0) * sz;
          const T* __restrict__ vk = v + at;
          const V vnext = ahead[u];
          ahead[u] = pair_at(vk + (min(k + D, k1) - k + 1) * sz);
          node(fast, vk, at, vc, v_prev, vnext, w3 * zd[k], w3 * za[k], w3 * zc[k], true);
          v_prev = vc;
          vc = vnext;
        }
      }
    };
    if (own && inner && use.x && use.y)
      groups(std::true_type{});
    else
      groups(std::false_type{});
  }
  // The rest of the column (all of it where z is not interior) node by node, every value read from
  // memory (the ring's pairs there are L1 / L2 hits; a column's ends and short chunks only).
#pragma unroll 1
  for (int k = kb; k <= k1; ++k) {
    const int at = (k - k0) * sz;
    const T* __restrict__ vk = v + at;
    const V vnext = k + 1 <= kv ? pair_at(vk + sz) : vc;
    if (use.z) {
      const int km = prev_of(Z, k), kp = next_of(Z, k);
      const V vm = have_prev && km == k - 1 ? v_prev : pair_at(vk + (km - k) * sz);
      const V vp = kp == k + 1 ? vnext : pair_at(vk + (kp - k) * sz);
      node(std::false_type{}, vk, at, vc, vm, vp, w3 * Z.d[k], w3 * Z.a[k], w3 * Z.c[k], true);
    } else {
      node(std::false_type{}, vk, at, vc, vc, vc, T(0), T(0), T(0), false);
    }
    v_prev = vc;
    have_prev = true;
    vc = vnext;
  }
}

inline std::atomic<std::size_t>& stencil_pair_count() {  // launches of the pair form (tests read it)
  static std::atomic<std::size_t> launches{0};
  return launches;
}

// The pair form's layout needs: an even row length (a pair never reaches past its row), even
// strides and every field pointer aligned to a pair, 32-bit offsets.
template <class T>
bool stencil_pairs_fit(const StencilView<T>& s, const ApplyArgs<T>& g) {
  const auto aligned = [](const void* p) {
    return p == nullptr || reinterpret_cast<std::uintptr_t>(p) % (2 * sizeof(T)) == 0;
  };
  return s.box.nx % 2 == 0 && s.box.sy % 2 == 0 && s.box.sz % 2 == 0 && aligned(g.v) && aligned(g.base) &&
         aligned(g.out);
}

inline bool stencil_pairs_requested() {  // the default since stop 48; ADI_STENCIL_PAIRS=0: the ring kernel
  return ::adi::detail::env_switch("ADI_STENCIL_PAIRS", true);  // (1 / 0 / unset; else InvalidArgument)
}

inline bool stencil_lean_requested() {  // the default since stop 38; ADI_STENCIL_LEAN=0: the column kernel
  return ::adi::detail::env_switch("ADI_STENCIL_LEAN", true);  // (1 / 0 / unset; else InvalidArgument)
}

// Mixed terms present: one node per thread, 64-bit offsets.
template <class T>
__global__ void __launch_bounds__(kTileX* kTileY)
    stencil_apply_kernel(StencilView<T> s, ApplyArgs<T> g, ApplyFlags use) {
  const index_t i = static_cast<index_t>(blockIdx.x) * kTileX + threadIdx.x;
  const index_t j = s.lo[1] + static_cast<index_t>(blockIdx.y) * kTileY + threadIdx.y;
  if (i < s.lo[0] || i > s.hi[0] || j > s.hi[1]) return;
  const index_t sy = s.box.sy, sz = s.box.sz;
  for (index_t k = s.lo[2] + blockIdx.z; k <= s.hi[2]; k += gridDim.z) {
    const index_t row = j * sy + k * sz, node = row + i;
    T o = g.base ? g.alpha * g.base[node] : T(0);
    for (int q = 0; q < 2; ++q)
      if (g.src[q]) o += g.src_scale[q] * g.src[q][node];
    const T* v = g.v;
    if (use.x) {
      const AxisStencil<T>& X = s.axis[0];
      const index_t off = X.shared ? i : node;
      o += g.w[1] * (X.d[off] * v[node] - X.a[off] * v[row + prev_of(X, i)] - X.c[off] * v[row + next_of(X, i)]);
    }
    if (use.y) {
      const AxisStencil<T>& Y = s.axis[1];
      const T vm = v[prev_of(Y, j) * sy + k * sz + i], vp = v[next_of(Y, j) * sy + k * sz + i];
      const T w = g.w[2];
      if (Y.shared)
        o += (w * Y.d[j]) * v[node] - (w * Y.a[j]) * vm - (w * Y.c[j]) * vp;
      else
        o += w * (Y.d[node] * v[node] - Y.a[node] * vm - Y.c[node] * vp);
    }
    if (use.z) {
      const AxisStencil<T>& Z = s.axis[2];
      const T vm = v[j * sy + prev_of(Z, k) * sz + i], vp = v[j * sy + next_of(Z, k) * sz + i];
      const T w = g.w[3];
      if (Z.shared)
        o += (w * Z.d[k]) * v[node] - (w * Z.a[k]) * vm - (w * Z.c[k]) * vp;
      else
        o += w * (Z.d[node] * v[node] - Z.a[node] * vm - Z.c[node] * vp);
    }
    if (use.mixed) {
      // The tensor product of the two first-derivative stencils (as the host kernel).
      const T w0 = g.w[0];
      const AxisStencil<T>& X = s.axis[0];
      for (int m = 0; m < 3; ++m) {
        const auto& M = s.mixed[m];
        if (!M.active) continue;
        const T coef = M.coef[node];
        if (M.p == 0) {
          const AxisStencil<T>& Q = s.axis[M.q];
          const index_t l = M.q == 1 ? j : k, sq = M.q == 1 ? sy : sz;
          const index_t other = M.q == 1 ? k * sz : j * sy;
          const index_t idx[3] = {Q.prev[l], l, Q.next[l]};
          const T wq[3] = {Q.fm[l], Q.f0[l], Q.fp[l]};
          const bool end = i == 0 || i == X.n - 1;
          const index_t im = end ? X.prev[i] : i - 1, ip = end ? X.next[i] : i + 1;
          for (int u = 0; u < 3; ++u) {
            if (wq[u] == T(0)) continue;
            const T* r = v + idx[u] * sq + other;
            o += (w0 * wq[u]) * coef * (X.fm[i] * r[im] + X.f0[i] * r[i] + X.fp[i] * r[ip]);
          }
        } else {
          const AxisStencil<T>&Y = s.axis[1], &Z = s.axis[2];
          const index_t jy[3] = {Y.prev[j], j, Y.next[j]}, kz[3] = {Z.prev[k], k, Z.next[k]};
          const T wy[3] = {Y.fm[j], Y.f0[j], Y.fp[j]}, wz[3] = {Z.fm[k], Z.f0[k], Z.fp[k]};
          for (int u = 0; u < 3; ++u)
            for (int q = 0; q < 3; ++q) {
              const T c = w0 * wy[u] * wz[q];
              if (c == T(0)) continue;
              o += c * coef * v[jy[u] * sy + kz[q] * sz + i];
            }
        }
      }
    }
    g.out[node] = o;
  }
}

}  // namespace

template <class T>
void stencil_apply(const StencilView<T>& s, const ApplyArgs<T>& g, void* stream) {
  ApplyFlags use{};
  use.x = s.axis[0].active && g.w[1] != T(0);
  use.y = s.axis[1].active && g.w[2] != T(0);
  use.z = s.axis[2].active && g.w[3] != T(0);
  for (const auto& m : s.mixed) use.mixed = use.mixed || (m.active && g.w[0] != T(0));
  const index_t nj = s.hi[1] - s.lo[1] + 1, nk = s.hi[2] - s.lo[2] + 1;
  if (s.hi[0] < s.lo[0] || nj <= 0 || nk <= 0) return;
  const dim3 block(kTileX, kTileY);
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  const unsigned gx = static_cast<unsigned>((s.hi[0] + kTileX) / kTileX);
  const unsigned gy = static_cast<unsigned>((nj + kTileY - 1) / kTileY);
  if (use.mixed) {
    const dim3 grid(gx, gy, static_cast<unsigned>(nk < 65535 ? nk : 65535));
    stencil_apply_kernel<T><<<grid, block, 0, st>>>(s, g, use);
  } else {
    const bool small = s.box.sz * s.box.nz < (index_t(1) << 31);
    bool simple = g.base != nullptr && !g.src[0] && !g.src[1];
    if (use.x) simple = simple && s.axis[0].shared;
    if (use.y) simple = simple && s.axis[1].shared;
    if (use.z) simple = simple && s.axis[2].shared;
    const bool lean = simple && small && stencil_lean_requested();
    const bool pairs = lean && stencil_pairs_requested() && stencil_pairs_fit(s, g);
    // Columns of about 16 nodes (8 for pairs: a pair block covers twice the x nodes; 4096 blocks
    // measured faster than 2048 or 1024 for pairs too, run s48/2): enough blocks to fill the device
    // several times over.
    const unsigned gxl = pairs ? static_cast<unsigned>((s.hi[0] + 2 * kTileX) / (2 * kTileX)) : gx;
    const index_t xy = static_cast<index_t>(gxl) * gy;
    index_t chunks = std::max<index_t>(1, std::min<index_t>(nk, (4096 + xy - 1) / xy));
    const index_t kchunk = (nk + chunks - 1) / chunks;
    chunks = (nk + kchunk - 1) / kchunk;
    const dim3 grid(gxl, gy, static_cast<unsigned>(chunks));
    const int kc = static_cast<int>(kchunk);
    if (pairs) {
      constexpr int D = StencilPairShape<T>::depth, B = StencilPairShape<T>::blocks;
      stencil_pairs_ring_kernel<T, D, B><<<grid, block, 0, st>>>(s, g, use, kc);
      ++stencil_pair_count();
    } else if (lean)
      stencil_columns_ring_kernel<T><<<grid, block, 0, st>>>(s, g, use, kc);
    else if (simple && small)
      stencil_columns_shared_kernel<T, int><<<grid, block, 0, st>>>(s, g, use, kc);
    else if (simple)
      stencil_columns_shared_kernel<T, index_t><<<grid, block, 0, st>>>(s, g, use, kc);
    else if (small)
      stencil_columns_kernel<T, int><<<grid, block, 0, st>>>(s, g, use, kc);
    else
      stencil_columns_kernel<T, index_t><<<grid, block, 0, st>>>(s, g, use, kc);
  }
  ADI_CUDA_CHECK(cudaGetLastError());
}

std::size_t stencil_pair_launches() { return stencil_pair_count(); }

template void stencil_apply<float>(const StencilView<float>&, const ApplyArgs<float>&, void*);
template void stencil_apply<double>(const StencilView<double>&, const ApplyArgs<double>&, void*);

}  // namespace adi::cuda_backend
