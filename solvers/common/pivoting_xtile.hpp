#pragma once
// The X-tile route of partial pivoting (issue 23, stop 39, branch h-pivx; the CUDA kernel is
// solvers/cuda/pivoting_xtile.cuh, forced with ADI_PIVOTING_ROUTE=xtile): contiguous lines
// (X sweeps, element stride 1), not periodic. A warp owns 32 neighbouring lines; lane l runs
// common::pivot_line (solvers/common/pivoting_line.hpp: the core's pivot_step / pivot_last and
// its back substitution, every pivoting route's elimination) on line l through XtileIo below,
// which stages every global access through the warp's shared memory so that it is coalesced:
//   - forward: chunks of K rows of a, b, c, d of the warp's 32 lines are copied into a
//     [line][K + 1] tile per array (the pad spreads a line's rows over the banks) by
//     consecutive lanes on consecutive addresses of one line (K lanes per line and chunk);
//     two buffers: chunk k + 1 is in flight while the lanes eliminate chunk k. Lines past the
//     last are filled (a = c = d = 0, b = 1) and their flag is dropped;
//   - U's rows (u1', u2', y') go to the tile's workspace laid out [row][lane] (each put is one
//     coalesced row of the warp);
//   - backward: the workspace's rows come back a chunk at a time, [row][lane] into shared
//     memory (each lane copies its own values: no warp barrier), the next chunk (going up) in
//     flight while the lanes substitute; x goes into a [line][K + 1] tile that the warp writes
//     out, a chunk at a time, by consecutive lanes on consecutive addresses of one line.
// Traffic: a, b, c, d read, u written, three values per row written and read back (11 per row
// against a copy's 5, the tile route's: at most ~45% of copy); what changes against the tile
// route (pivoting_tile.cuh) is that the copies are asynchronous (no register holds them; two
// chunks of four arrays in flight per warp), the chain's registers are a line's state only,
// and the backward pass's rows are prefetched a chunk ahead.
//
// The copies, barriers and the lane's number come from W (the device's: cp.async,
// __syncwarp; tests/solvers/cpu/test_pivoting_xtile.cpp runs the same code on the host with 32
// threads and a barrier per warp):
//   int lane;                              this lane (0 .. 31)
//   void copy(T* s, const T* g)            s = *g (shared <- global), asynchronous
//   void commit()                          closes the copies issued since the last commit
//   void wait_prior1(), wait_all()         waits until at most one / no group is pending
//   void sync()                            the warp's barrier (with memory ordering)
//   void fence()                           this lane's global stores before its later copies
//   T ldg(const T* g)                      a read-only load (shared bands)
#include "solvers/common/pivoting_line.hpp"

// The copy loops' unrolling (a full unroll of fp32's 16 rows x 4 arrays held 166 registers).
#if defined(__CUDACC__)
#define ADI_XTILE_UNROLL _Pragma("unroll 4")
#else
#define ADI_XTILE_UNROLL
#endif

namespace adi::common {

constexpr int kXtileWarp = 32;

// Rows a chunk: 64 bytes of a line (fp32 16, fp64 8); Bytes = 32 or 128 for measurement.
template <class T, int Bytes = 64>
constexpr int xtile_rows() {
  return Bytes / static_cast<int>(sizeof(T));
}

// A warp's shared region in elements of T: the forward pass's two buffers of NA arrays of
// [32][K + 1] (NA = 4, or 1 with shared bands: d only), the backward pass's two buffers of
// three [K][32] workspace stages and the [32][K + 1] tile of u (the same memory, later).
template <int K>
constexpr int xtile_tile() {
  return kXtileWarp * (K + 1);
}
template <int K>
constexpr int xtile_warp_elements(bool shared) {
  const int fwd = 2 * (shared ? 1 : 4) * xtile_tile<K>();
  const int bwd = 2 * 3 * kXtileWarp * K + xtile_tile<K>();
  return fwd > bwd ? fwd : bwd;
}

// Element t * 32 + lane of a chunk's 32 lines x K rows, t = 0 .. K-1: line p, row r (K
// consecutive lanes on one line's K consecutive rows).
template <int K>
ADI_PIVOT_HD void xtile_place(int t, int lane, int& p, int& r) {
  const int idx = t * kXtileWarp + lane;
  p = idx / K;
  r = idx % K;
}

// pivot_line's access policy for lane w.lane of a warp's 32 lines (see the top). off: the
// warp's 32 line offsets (-1: no line), readable by every lane; ws: the tile's workspace,
// three arrays of n x 32 (u1', u2', y'), row i of lane l at i * 32 + l; s: the warp's shared
// region (xtile_warp_elements). Call begin() first, then pivot_line(io, n).
template <class T, int K, bool Shared, class W>
struct XtileIo {
  static_assert(K >= 1 && K <= kXtileWarp && (K & (K - 1)) == 0, "K: a power of two up to 32");
  static constexpr int NA = Shared ? 1 : 4;  // staged arrays of the forward pass
  static constexpr int pad = K + 1;
  static constexpr int tile = xtile_tile<K>();
  static constexpr int stage = kXtileWarp * K;  // one workspace array of one chunk

  W& w;
  const long long* off;
  const T* pa;
  const T* pb;
  const T* pc;
  const T* pd;  // may be pu (in place: every read of d comes before the first store)
  T* pu;
  T* ws;
  T* s;
  long long n;
  long long chunk_end = 0;  // forward: the first row past the chunk in the buffers
  int buf = 0;              // forward: the buffer of that chunk
  long long ready = -1;     // backward: the workspace chunk staged last

  // Forward buffers: buffer b, array q (a, b, c, d; shared bands: d only).
  ADI_PIVOT_HD T* fwd(int b, int q) const { return s + (b * NA + q) * tile; }
  // Backward: workspace stage of buffer b, array q (u1', u2', y'); the tile of u.
  ADI_PIVOT_HD T* bwd(int b, int q) const { return s + (b * 3 + q) * stage; }
  ADI_PIVOT_HD T* utile() const { return s + 6 * stage; }

  // The copies of forward chunk k into buffer k & 1, one group.
  ADI_PIVOT_HD void issue(long long k) {
    const long long i0 = k * K;
    const int b = static_cast<int>(k & 1);
    ADI_XTILE_UNROLL
    for (int j = 0; j < K; ++j) {
      int p, r;
      xtile_place<K>(j, w.lane, p, r);
      const long long o = off[p];
      const int e = p * pad + r;
      if (o < 0) {  // no line: a = c = d = 0, b = 1 (Shared: d = 0)
        ADI_PIVOT_UNROLL
        for (int q = 0; q < NA; ++q) fwd(b, q)[e] = (!Shared && q == 1) ? T(1) : T(0);
      } else if (i0 + r < n) {
        const long long g = o + i0 + r;
        if (Shared) {
          w.copy(fwd(b, 0) + e, pd + g);
        } else {
          w.copy(fwd(b, 0) + e, pa + g);
          w.copy(fwd(b, 1) + e, pb + g);
          w.copy(fwd(b, 2) + e, pc + g);
          w.copy(fwd(b, 3) + e, pd + g);
        }
      }
    }
    w.commit();
  }
  ADI_PIVOT_HD void begin() {
    issue(0);
    if (n > K) {
      issue(1);
      w.wait_prior1();
    } else {
      w.wait_all();
    }
    w.sync();
    buf = 0;
    chunk_end = K;
  }
  // Row i is read: its chunk k (>= 1) was issued on entering chunk k - 1 (or by begin).
  ADI_PIVOT_HD void ensure(long long i) {
    if (i < chunk_end) return;
    const long long k = i / K;
    w.wait_all();
    w.sync();  // chunk k visible to every lane, chunk k - 1's buffer read by every lane
    if ((k + 1) * K < n) issue(k + 1);
    buf = static_cast<int>(k & 1);
    chunk_end = (k + 1) * K;
  }
  ADI_PIVOT_HD T at(int q, long long i) const { return fwd(buf, q)[w.lane * pad + (static_cast<int>(i) & (K - 1))]; }

  ADI_PIVOT_HD T a(long long i) {
    ensure(i);
    return Shared ? w.ldg(pa + i) : at(0, i);
  }
  ADI_PIVOT_HD T b(long long i) {
    ensure(i);
    return Shared ? w.ldg(pb + i) : at(1, i);
  }
  ADI_PIVOT_HD T c(long long i) {
    ensure(i);
    return Shared ? w.ldg(pc + i) : at(2, i);
  }
  ADI_PIVOT_HD T d(long long i) {
    ensure(i);
    return at(Shared ? 0 : 3, i);
  }
  ADI_PIVOT_HD void put(long long i, T u1, T u2, T y) {
    const long long e = i * kXtileWarp + w.lane;
    const long long m = n * kXtileWarp;
    ws[e] = u1;
    ws[m + e] = u2;
    ws[2 * m + e] = y;
  }

  // The workspace's rows of chunk k (rows up to n - 2: those put) into stage buffer k & 1:
  // this lane's own values only.
  ADI_PIVOT_HD void issue_back(long long k) {
    const long long i0 = k * K, m = n * kXtileWarp;
    ADI_XTILE_UNROLL
    for (int r = 0; r < K; ++r)
      if (i0 + r < n - 1) {
        const long long e = (i0 + r) * kXtileWarp + w.lane;
        ADI_PIVOT_UNROLL
        for (int q = 0; q < 3; ++q) w.copy(bwd(static_cast<int>(k & 1), q) + r * kXtileWarp + w.lane, ws + q * m + e);
      }
    w.commit();
  }
  ADI_PIVOT_HD void get(long long i, T& u1, T& u2, T& y) {
    const long long k = i / K;
    if (k != ready) {  // rows go down: the chunk issued before (by store(n - 1) or the last get)
      w.wait_all();
      if (k > 0) issue_back(k - 1);
      ready = k;
    }
    const int e = (static_cast<int>(i) & (K - 1)) * kXtileWarp + w.lane, b = static_cast<int>(k & 1);
    u1 = bwd(b, 0)[e];
    u2 = bwd(b, 1)[e];
    y = bwd(b, 2)[e];
  }
  // The warp's tile of u rows i0 .. i0 + K - 1 out (rows < n of existing lines).
  ADI_PIVOT_HD void flush(long long i0) {
    w.sync();
    ADI_XTILE_UNROLL
    for (int j = 0; j < K; ++j) {
      int p, r;
      xtile_place<K>(j, w.lane, p, r);
      const long long o = off[p];
      if (o >= 0 && i0 + r < n) pu[o + i0 + r] = utile()[p * pad + r];
    }
    w.sync();
  }
  ADI_PIVOT_HD void store(long long i, T x) {
    if (i == n - 1) {  // the backward pass starts: the forward buffers become its stages
      w.fence();
      w.sync();
      if (n >= 2) issue_back((n - 2) / K);
    }
    utile()[w.lane * pad + (static_cast<int>(i) & (K - 1))] = x;
    if ((static_cast<int>(i) & (K - 1)) == 0) flush(i);
  }
};

// One warp's lines: lane w.lane eliminates its line (off[w.lane] >= 0) or a filled one.
// Returns whether the lane's line has a zero or non-finite pivot.
template <class T, int K, bool Shared, class W>
ADI_PIVOT_HD bool xtile_warp_solve(W& w, const long long* off, long long n, const T* a, const T* b, const T* c,
                                   const T* d, T* u, T* ws, T* s) {
  XtileIo<T, K, Shared, W> io{w, off, a, b, c, d, u, ws, s, n};
  io.begin();
  const bool bad = pivot_line<T>(io, n);
  return bad && off[w.lane] >= 0;
}

}  // namespace adi::common
