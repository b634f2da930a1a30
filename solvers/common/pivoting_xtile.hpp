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
// Recompute form: the forward buffers stay (the backward pass stages a, b, c, d again), the
// tile of u after them.
template <int K>
constexpr int xtile_warp_elements(bool shared, bool recompute = false) {
  const int fwd = 2 * (shared ? 1 : 4) * xtile_tile<K>();
  const int bwd = 2 * 3 * kXtileWarp * K + xtile_tile<K>();
  return recompute ? fwd + xtile_tile<K>() : fwd > bwd ? fwd : bwd;
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
// three arrays of n x 32 (u1', u2', y'), row i of lane l at i * 32 + l (Recompute: the
// checkpoints, chunk k's b, c, d at (3 k + q) * 32 + l); s: the warp's shared region
// (xtile_warp_elements). Call begin() first, then pivot_line(io, n) (Recompute:
// pivot_line_recompute<T, K>(io, n)).
template <class T, int K, bool Shared, class W, bool Recompute = false>
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
  long long chunk_end = 0;                       // forward: the first row past the chunk in the buffers
  long long ready = -1;                          // backward: the workspace chunk staged last
  long long held0 = -1, held1 = -1;              // the chunk in each forward buffer (no array: registers)
  bool pending = false;                          // Recompute, backward: copies not yet waited for
  T na = T(0), nb = T(0), nc = T(0), nd = T(0);  // Recompute: the row after the chunk

  // Forward buffers: buffer b, array q (a, b, c, d; shared bands: d only).
  ADI_PIVOT_HD T* fwd(int b, int q) const { return s + (b * NA + q) * tile; }
  // Backward: workspace stage of buffer b, array q (u1', u2', y'); the tile of u.
  ADI_PIVOT_HD T* bwd(int b, int q) const { return s + (b * 3 + q) * stage; }
  ADI_PIVOT_HD T* utile() const { return s + (Recompute ? 2 * NA * tile : 6 * stage); }

  // The copies of forward chunk k into buffer k & 1, one group.
  ADI_PIVOT_HD void issue(long long k) {
    const long long i0 = k * K;
    const int b = static_cast<int>(k & 1);
    (b ? held1 : held0) = k;
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
    chunk_end = K;
  }
  // Row i is read: its chunk k (>= 1) was issued on entering chunk k - 1 (or by begin). Only
  // a(i) checks: pivot_forward reads row 0 (staged by begin) through b, c, d and each row
  // i >= 1 through a(i) first (one check a row, and the copy loops inlined once).
  ADI_PIVOT_HD void ensure(long long i) {
    if (i < chunk_end) return;
    const long long k = i / K;
    w.wait_all();
    w.sync();  // chunk k visible to every lane, chunk k - 1's buffer read by every lane
    if ((k + 1) * K < n) issue(k + 1);
    chunk_end = (k + 1) * K;
  }
  // Row i of array q in its chunk's buffer.
  ADI_PIVOT_HD T at(int q, long long i) const {
    const int b = static_cast<int>((static_cast<unsigned long long>(i) / K) & 1);
    return fwd(b, q)[w.lane * pad + (static_cast<int>(i) & (K - 1))];
  }

  ADI_PIVOT_HD T a(long long i) {
    ensure(i);
    return Shared ? w.ldg(pa + i) : at(0, i);
  }
  ADI_PIVOT_HD T b(long long i) const {
    return Shared ? w.ldg(pb + i) : at(1, i);
  }
  ADI_PIVOT_HD T c(long long i) const {
    return Shared ? w.ldg(pc + i) : at(2, i);
  }
  ADI_PIVOT_HD T d(long long i) const {
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
  // Recompute form. The state of the elimination before step k K + 1 (chunk k's first).
  ADI_PIVOT_HD void save(long long k, const PivotRow<T>& r) {
    T* const p = ws + 3 * k * kXtileWarp + w.lane;
    p[0] = r.b;
    p[kXtileWarp] = r.c;
    p[2 * kXtileWarp] = r.d;
  }
  ADI_PIVOT_HD PivotRow<T> load(long long k) const {
    const T* const p = ws + 3 * k * kXtileWarp + w.lane;
    return PivotRow<T>{p[0], p[kXtileWarp], p[2 * kXtileWarp]};
  }
  // The backward pass reaches chunk k (k = (n - 2) / K, then down to 0): steps k K + 1 ..
  // k K + K read rows k K + 1 .. k K + K - 1 from chunk k's buffer and row k K + K (chunk
  // k + 1's first) from registers, taken here before chunk k + 1's buffer takes chunk k - 1's
  // copies (in flight while the lanes recompute chunk k).
  ADI_PIVOT_HD void back(long long k) {
    chunk_end = n;  // no forward staging from here on
    const long long r1 = (k + 1) * K;
    if (r1 < n) {
      if (!Shared) {
        na = at(0, r1);
        nb = at(1, r1);
        nc = at(2, r1);
      }
      nd = at(Shared ? 0 : 3, r1);
    }
    if (pending) w.wait_all();
    pending = false;
    w.sync();  // chunk k visible to every lane; chunk k + 1's buffer read by every lane
    if (k >= 1 && (((k - 1) & 1) ? held1 : held0) != k - 1) {
      issue(k - 1);
      pending = true;
    }
  }
  // Row i (k K + 1 <= i <= k K + K, i < n) again in chunk k's backward step.
  ADI_PIVOT_HD void again(long long i, long long k, T& a, T& b, T& c, T& d) const {
    if (i == (k + 1) * K) {
      a = Shared ? w.ldg(pa + i) : na;
      b = Shared ? w.ldg(pb + i) : nb;
      c = Shared ? w.ldg(pc + i) : nc;
      d = nd;
      return;
    }
    a = Shared ? w.ldg(pa + i) : at(0, i);
    b = Shared ? w.ldg(pb + i) : at(1, i);
    c = Shared ? w.ldg(pc + i) : at(2, i);
    d = at(Shared ? 0 : 3, i);
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
    if (!Recompute && i == n - 1) {  // the backward pass starts: the forward buffers become its stages
      w.fence();
      w.sync();
      if (n >= 2) issue_back((n - 2) / K);
    }
    utile()[w.lane * pad + (static_cast<int>(i) & (K - 1))] = x;
    if ((static_cast<int>(i) & (K - 1)) == 0) flush(i);
  }
};

// pivot_line's elimination and back substitution with U recomputed instead of stored (the
// X-tile route's recompute form): the forward pass keeps only the state of the elimination
// before each chunk's first step (io.save(k, cur) before step k K + 1); the backward pass takes
// the chunks from the last, reads the state back (io.load) and the chunk's rows again
// (io.back(k), io.again), runs the same steps (pivot_step: the same values as the forward
// pass, bit for bit), keeps the chunk's K rows of U in registers and substitutes back. Traffic
// on the X-tile route: a, b, c, d read twice, u written, 6 / K values a row of checkpoints (9.75
// a row at K = 8 against the store form's 11; the last chunk is not read again). Returns
// whether a pivot was zero or not finite (the forward pass's, as pivot_line).
template <class T, int K, class Io>
ADI_PIVOT_HD bool pivot_line_recompute(Io& io, long long n) {
  if (n <= 0) return false;
  PivotOut<T> last{};
  const bool bad = pivot_forward<T>(
      io, n, last,
      [&io](long long i, const PivotRow<T>& cur) {
        if (((i - 1) & (K - 1)) == 0) io.save((i - 1) / K, cur);
      },
      [](long long, const PivotOut<T>&) {});
  T x1 = last.y, x2 = T(0);
  io.store(n - 1, x1);
  if (n < 2) return bad;
  const long long kmax = (n - 2) / K;
  PivotRow<T> next = io.load(kmax);
  for (long long k = kmax; k >= 0; --k) {
    PivotRow<T> st = next;
    if (k > 0) next = io.load(k - 1);  // in flight while chunk k is recomputed
    io.back(k);
    T u1[K], u2[K], y[K];
    ADI_PIVOT_UNROLL
    for (int j = 0; j < K; ++j) {
      const long long i = k * K + 1 + j;
      u1[j] = u2[j] = y[j] = T(0);
      if (i < n) {
        T a, b, c, d;
        io.again(i, k, a, b, c, d);
        const PivotOut<T> o = pivot_step<T>(st, a, b, i == n - 1 ? T(0) : c, d);
        u1[j] = o.u1;
        u2[j] = o.u2;
        y[j] = o.y;
      }
    }
    ADI_PIVOT_UNROLL
    for (int j = K - 1; j >= 0; --j) {
      const long long i = k * K + j;
      if (i <= n - 2) {
        const T x = y[j] - u1[j] * x1 - u2[j] * x2;
        x2 = x1;
        x1 = x;
        io.store(i, x);
      }
    }
  }
  return bad;
}

// One warp's lines: lane w.lane eliminates its line (off[w.lane] >= 0) or a filled one.
// Returns whether the lane's line has a zero or non-finite pivot.
template <class T, int K, bool Shared, bool Recompute, class W>
ADI_PIVOT_HD bool xtile_warp_solve(W& w, const long long* off, long long n, const T* a, const T* b, const T* c,
                                   const T* d, T* u, T* ws, T* s) {
  XtileIo<T, K, Shared, W, Recompute> io{w, off, a, b, c, d, u, ws, s, n};
  io.begin();
  bool bad;
  if constexpr (Recompute)
    bad = pivot_line_recompute<T, K>(io, n);
  else
    bad = pivot_line<T>(io, n);
  return bad && off[w.lane] >= 0;
}

}  // namespace adi::common
