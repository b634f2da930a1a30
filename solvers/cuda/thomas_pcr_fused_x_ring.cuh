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

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "solvers/cuda/thomas_pcr_fused_stage.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kRingLines = 8;  // warps per block, one y-line each per plane

// Planes in the ring (>= 3: z - 1, z, z + 1; each more is a plane in flight ahead). Default fp32 4,
// fp64 3 (fp64 at 4 leaves one block per SM); ADI_FOLD_X_RING_SLOTS=3..5 for the benchmark's A/B.
template <class T>
int ring_slots() {
  const char* e = std::getenv("ADI_FOLD_X_RING_SLOTS");
  const int v = e ? std::atoi(e) : 0;
  if (v >= 3 && v <= 5) return v;
  return sizeof(T) == 4 ? 4 : 3;
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
  // The x ends' neighbours (periodic: the other end; else the row itself).
  const int xp0 = static_cast<int>(f.prev[0][0]), xn0 = static_cast<int>(f.next[0][0]);
  const int xpn = static_cast<int>(f.prev[0][n - 1]), xnn = static_cast<int>(f.next[0][n - 1]);
  const T alpha = f.alpha[0], wx = f.w[0][0], wy = f.w[0][1], wz = f.w[0][2];  // pack_fold: 0 where inactive
  const T* neu_lo = wx != T(0) ? f.neu[0][0][0] : nullptr;
  const T* neu_hi = wx != T(0) ? f.neu[0][0][1] : nullptr;
  const bool hv = g.v != nullptr, per = g.periodic;
  const int j = j0 + warp;
  const bool live = j < q.count0;
  for (int k = k0; k <= k1; ++k) {
    // The line's face values and cross coefficients, loaded before the wait (their latency behind
    // the ring's).
    const FoldLine<T> lc = live ? fold_line<0>(g, j + k * q.count0) : FoldLine<T>{};
    const i64 fi = g.face_base + j + static_cast<i64>(k) * g.face_n1;
    T e0 = T(0), e1 = T(0), ve0 = T(0), ve1 = T(0);
    if (live && !per) {
      if (g.end[0]) e0 = g.end[0][fi];
      if (g.end[1]) e1 = g.end[1][fi];
      if (hv && g.vend[0]) ve0 = g.vend[0][fi];
      if (hv && g.vend[1]) ve1 = g.vend[1][fi];
    }
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
      const T yd = lc.d[0], ya = lc.a[0], yc = lc.c[0], zd = lc.d[1], za = lc.a[1], zc = lc.c[1];
      const int node0 = j * q.sy + k * q.sz;
      // v at row i for the stage's own term (U; old boundary data at Dirichlet ends).
      auto vat = [&](int i) {
        if (!per && i == 0 && g.vend[0]) return ve0;
        if (!per && i == n - 1 && g.vend[1]) return ve1;
        return c0[i];
      };
#pragma unroll 2
      for (int r = lane; r < n; r += kWarp) {
        const bool end = !per && (r == 0 || r == n - 1);
        const bool dirichlet_end = end && ((r == 0 && g.end[0]) || (r == n - 1 && g.end[1]));
        // Rows whose x neighbours are not r -+ 1 with U's values: a line's ends, and next to an
        // end whose v is the old boundary data (v_end).
        const bool edge = r == 0 || r == n - 1 || (!per && ((r == 1 && g.vend[0]) || (r == n - 2 && g.vend[1])));
        T rhs;
        if (dirichlet_end) {
          rhs = (r == 0 ? e0 : e1) * g.inv_s;  // stage_rhs_end's Dirichlet row
        } else if (!edge) {
          // fold_base at row r: alpha U + wx (A_x U) + wy (A_y U) + wz (A_z U), its order; the stage's
          // own term -(A_x U) from the same values (the stage's bands are the fold's x bands: the
          // compiler forms A_x U once).
          const T a = B.a[r], d = B.d[r], c = B.c[r];
          const T pc = c0[r], xm = c0[r - 1], xp = c0[r + 1];
          T base = alpha * pc;
          if (wx != T(0)) base += wx * (d * pc - a * xm - c * xp);
          // (An axis the fold does not read, use_y / use_z false, adds nothing: fold_base adds
          // w (0 pc - 0 ...) there; its ring rows are not loaded.)
          if (q.use_y) base += wy * (yd * pc - ya * ym[r] - yc * yp[r]);
          if (q.use_z) base += wz * (zd * pc - za * zm[r] - zc * zp[r]);
          rhs = hv ? stage_rhs_inner(g, a, d, c, base, xm, pc, xp, static_cast<i64>(node0 + r))
                   : stage_rhs_inner(g, a, d, c, base, T(0), T(0), T(0), static_cast<i64>(node0 + r));
        } else {
          // The general row: the fold's x neighbours and bands as the operator's (prev / next, the
          // bands unzeroed at the ends), v's as the stage's (wrapped, old boundary data at Dirichlet ends).
          const bool inner = r > 0 && r < n - 1;
          const int im = inner ? r - 1 : r == 0 ? xp0 : xpn;
          const int ip = inner ? r + 1 : r == 0 ? xn0 : xnn;
          const T pc = c0[r];
          T base = alpha * pc;
          if (wx != T(0)) {
            base += wx * (f.d[0][r] * pc - f.a[0][r] * c0[im] - f.c[0][r] * c0[ip]);
            if (!inner) {
              const T* face = r == 0 ? neu_lo : neu_hi;
              if (face) base += wx * face[lc.fa];
            }
          }
          if (q.use_y) base += wy * (yd * pc - ya * ym[r] - yc * yp[r]);
          if (q.use_z) base += wz * (zd * pc - za * zm[r] - zc * zp[r]);
          T vm = T(0), vc = T(0), vp = T(0);
          if (hv) {
            vm = vat(r > 0 ? r - 1 : n - 1);
            vc = vat(r);
            vp = vat(r < n - 1 ? r + 1 : 0);
          }
          rhs = stage_rhs(g, B, r, base, vm, vc, vp, fi, static_cast<i64>(node0 + r));
        }
        buf[sh.pos(r)] = rhs;
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

inline bool fold_x_ring_requested() {
  const char* v = std::getenv("ADI_FOLD_X_RING");
  return v != nullptr && std::string(v) == "1";
}

inline std::size_t& fused_x_ring_count() {
  static std::size_t launches = 0;
  return launches;
}

// Launches the ring kernel for a stage it applies to (the caller checked).
template <class T>
void run_fused_x_ring(const FusedStage<T>& fs, int* flag, cudaStream_t stream) {
  const LineSet& ls = fs.lines;
  StageArgs<T> g = pack_stage(fs, flag);
  g.sh = pcr_shape(ls.n);
  RingGeometry q{};
  q.lay = RingLayout::of<T>(g.sh, ring_slots<T>());
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
    unsigned& s = slots_of[{dev, q.lay.bytes}];
    if (s == 0) s = persistent_grid(fused_x_ring_kernel<T>, kRingLines * kWarp, q.lay.bytes, i64(1) << 40, lim);
    resident = s;
  }
  // One wave (ADI_FOLD_X_RING_WAVES=2..4 for the benchmark's A/B: that many, shorter chunks): the y
  // tiles times as many z chunks as the resident blocks allow.
  const char* we = std::getenv("ADI_FOLD_X_RING_WAVES");
  const int waves = we && std::atoi(we) >= 1 && std::atoi(we) <= 4 ? std::atoi(we) : 1;
  const int tiles = (q.count0 + kRingLines - 1) / kRingLines;
  const int chunks = std::max(1, std::min(q.count1, waves * static_cast<int>(resident) / tiles));
  q.kchunk = (q.count1 + chunks - 1) / chunks;
  const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>((q.count1 + q.kchunk - 1) / q.kchunk));
  fused_x_ring_kernel<T><<<grid, kRingLines * kWarp, q.lay.bytes, stream>>>(g, q);
  ADI_CUDA_CHECK(cudaGetLastError());
  ++fused_x_ring_count();
}

}  // namespace adi::cuda_backend::kernels
