// One large system on the host by the two-pass partition method
// (solvers/common/partition_large_math.hpp has the arithmetic): pass 1 reduces every chunk
// of m rows to its two rows of the reduced system, the reduced system (2 rows per
// chunk) is solved (by the same method while it is large, then by Thomas), and pass 2
// solves every chunk by Thomas with both ends known.
//
// Going beyond the paper: one core's Thomas is latency-bound (a division on the critical
// path of every row), so a core here advances G = K*W chunks side by side, one per SIMD
// lane (K vectors of W lanes): rows are loaded as W x W tiles of W chunks and transposed
// in registers (as cpu_thomas_transpose does for batches of lines). Both passes read
// a, b, c, d once and pass 2 writes u: 9 arrays of traffic against Thomas's 9 on one
// core (and each extra PCR level's 8), with every core busy. lanes == 1 runs one chunk at
// a time per core (scalar), to measure what the lanes buy.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "solvers/cpu/large_tridiagonal_cpu.hpp"
#include "solvers/common/partition_large_math.hpp"
#include "solvers/cpu/simd.hpp"

namespace adi::cpu::large {

namespace {
using adi::large::Chunks;
using adi::large::Pass1;
using adi::large::Pass2;
using adi::large::put_reduced_rows;
using adi::large::ReducedRows;

// Lanes per vector: 8 (AVX-512 doubles, AVX floats); the batched transpose kernel found
// 16 x 16 float tiles slower than 8 x 8 on this core (thomas_transpose.cpp).
template <class T>
constexpr int kLaneWidth = std::min(simd::kWidth<T>, 8);

// Defaults, measured by benchmarks/bench_large_tridiagonal.cpp on the 2-core development
// machine (docs/large_tridiagonal.md): 2^23..2^26 doubles.
constexpr int kDefaultChunk = 512;
constexpr int kDefaultVectors = 1;
// Software prefetch distance in rows (the W x 4 streams per vector are more than the
// hardware prefetchers follow).
constexpr int kPrefetchRows = 16;
// Reduced systems at least this long are solved by the partition again, in parallel.
constexpr index_t kRecurseMin = 4096;
// Rows per thread below which a pass runs on one thread.
constexpr index_t kParallelMin = 16384;

constexpr std::size_t kAlign = 64;
std::size_t rounded(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

struct Carver {
  char* p;
  template <class X>
  X* take(index_t n) {
    X* r = reinterpret_cast<X*>(p);
    p += rounded(static_cast<std::size_t>(n) * sizeof(X));
    return r;
  }
};

int thread_capacity(int threads) { return threads > 0 ? threads : std::max(1, omp_get_num_procs()); }
int threads_now(int threads) {
  return threads > 0 ? threads : std::clamp(omp_get_max_threads(), 1, std::max(1, omp_get_num_procs()));
}

template <class T>
struct Reduced {
  T* a;
  T* b;
  T* c;
  T* d;
  T* x;
};

template <class T>
inline void prefetch(const T* p) {
  __builtin_prefetch(reinterpret_cast<const void*>(p));
}

// K*W chunks of m rows starting at chunk0; lane (j, l) holds chunk chunk0 + j*W + l.
template <class T, int W, int K>
struct Tiles {
  using V = simd::Vec<T, W>;
  const T* q[4];
  index_t off[K][W];
  V t[4][K][W];

  Tiles(const System<T>& sys, index_t chunk0, index_t m) : q{sys.a, sys.b, sys.c, sys.d} {
    for (int j = 0; j < K; ++j)
      for (int l = 0; l < W; ++l) off[j][l] = (chunk0 + j * W + l) * m;
  }
  // Rows i0 .. i0+W-1 of every chunk; afterwards t[s][j][k] lane l = row i0+k of chunk (j, l).
  void load(index_t i0, bool ahead) {
    for (int s = 0; s < 4; ++s)
      for (int j = 0; j < K; ++j) {
        V* r = t[s][j];
        for (int l = 0; l < W; ++l) {
          const T* p = q[s] + off[j][l] + i0;
          if (ahead) prefetch(p + kPrefetchRows);
          r[l] = simd::load<V>(p);
        }
        simd::transpose<W>(r);
      }
  }
};

template <class V>
inline V vabs(const V& x) {
  return x < V{} ? -x : x;
}
template <class V>
inline V vmax(const V& x, const V& y) {
  return x < y ? y : x;
}

// The vector form of adi::large::bad_pivot (the tolerance only when Tol) and of the
// growth check of every Thomas loop (adi::large::unsafe_growth, thomas_check.hpp).
template <bool Tol, class V, class T>
inline simd::Mask<V> pivot_mask(const V& piv, const V& r, const V& a, const V& b, const V& c, T tol) {
  simd::Mask<V> m = simd::not_finite_or_zero(r);
  const V scale = vmax(vabs(a), vmax(vabs(b), vabs(c)));
  if constexpr (ADI_THOMAS_CHECK_HERE) m |= vabs(b - piv) > scale * T(common::kThomasGrowth);
  if constexpr (Tol) m |= vabs(piv) <= tol * scale;
  return m;
}

// Pass 1 over one group of K*W full chunks. Returns true if some pivot was bad.
template <class T, int W, int K, bool Tol>
bool pass1_group(const System<T>& sys, index_t chunk0, index_t m, const Reduced<T>& red, T tol) {
  using V = simd::Vec<T, W>;
  Tiles<T, W, K> g(sys, chunk0, m);
  Pass1<T, V> st[K] = {};
  simd::Mask<V> bad[K] = {};
  for (index_t i0 = 0; i0 < m; i0 += W) {
    g.load(i0, i0 + kPrefetchRows < m);
    for (int k = 0; k < W; ++k) {
      const index_t i = i0 + k;
      const bool inner = i + 1 < m;
      for (int j = 0; j < K; ++j) {
        const V a = g.t[0][j][k], b = g.t[1][j][k], c = g.t[2][j][k], d = g.t[3][j][k];
        if (i == 0) {
          st[j].first_row(a, b, c, d);
          continue;
        }
        V r;
        const V piv = st[j].row(a, b, c, d, inner, r);
        bad[j] |= pivot_mask<Tol>(piv, r, a, b, c, tol);
      }
    }
  }
  bool any = false;
  for (int j = 0; j < K; ++j) {
    const ReducedRows<V> rr = st[j].rows();
    for (int l = 0; l < W; ++l) {
      put_reduced_rows(red.a, red.b, red.c, red.d, chunk0 + j * W + l, rr.aF[l], rr.bF[l], rr.cF[l], rr.dF[l], rr.aE[l],
                       rr.cE[l], rr.dE[l]);
      any = any || bad[j][l];
    }
  }
  return any;
}

// Pass 2 over one group: Thomas down the chunk (c*, d* to the thread's scratch, which
// stays in L2), then back up, W rows at a time transposed back and stored.
template <class T, int W, int K>
void pass2_group(const System<T>& sys, index_t chunk0, index_t m, const T* x, simd::Vec<T, W>* cs,
                 simd::Vec<T, W>* ds) {
  using V = simd::Vec<T, W>;
  Tiles<T, W, K> g(sys, chunk0, m);
  V F[K], E[K];
  Pass2<T, V> st[K] = {};
  for (int j = 0; j < K; ++j) {
    for (int l = 0; l < W; ++l) {
      F[j][l] = x[2 * (chunk0 + j * W + l)];
      E[j][l] = x[2 * (chunk0 + j * W + l) + 1];
    }
    st[j].first_row(F[j]);
  }
  for (index_t i0 = 0; i0 < m; i0 += W) {
    g.load(i0, i0 + kPrefetchRows < m);
    for (int k = 0; k < W; ++k) {
      const index_t i = i0 + k;
      if (i == 0 || i == m - 1) continue;
      for (int j = 0; j < K; ++j) {
        st[j].row(g.t[0][j][k], g.t[1][j][k], g.t[2][j][k], g.t[3][j][k]);
        cs[i * K + j] = st[j].cp;
        ds[i * K + j] = st[j].dp;
      }
    }
  }
  V xv[K], out[K][W];
  for (int j = 0; j < K; ++j) xv[j] = E[j];
  for (index_t i0 = m - W; i0 >= 0; i0 -= W) {
    for (int k = W - 1; k >= 0; --k) {
      const index_t i = i0 + k;
      for (int j = 0; j < K; ++j) {
        if (i == m - 1)
          xv[j] = E[j];
        else if (i == 0)
          xv[j] = F[j];
        else
          xv[j] = ds[i * K + j] - cs[i * K + j] * xv[j];
        out[j][k] = xv[j];
      }
    }
    for (int j = 0; j < K; ++j) {
      simd::transpose<W>(out[j]);
      for (int l = 0; l < W; ++l) simd::store(sys.u + g.off[j][l] + i0, out[j][l]);
    }
  }
}

// The same two passes on one chunk [s, e) with scalars (tails, lanes == 1, locating a bad
// pivot). pass1_chunk returns the first bad row or -1.
template <class T>
index_t pass1_chunk(const System<T>& sys, index_t j, index_t s, index_t e, const Reduced<T>& red, T tol,
                    bool periodic) {
  Pass1<T, T> st;
  st.first_row(sys.a[s], sys.b[s], sys.c[s], sys.d[s]);
  index_t bad = -1;
  for (index_t i = s + 1; i < e; ++i) {
    T r;
    const T piv = st.row(sys.a[i], sys.b[i], sys.c[i], sys.d[i], i + 1 < e, r);
    // c[n-1] of a non-periodic system is not part of it (and may hold anything).
    const T scale = adi::large::row_scale(sys.a[i], sys.b[i], i == sys.n - 1 && !periodic ? T(0) : sys.c[i]);
    if (bad < 0 && (adi::large::bad_pivot(piv, r, scale, tol) || adi::large::unsafe_growth(piv, sys.b[i], scale)))
      bad = i;
  }
  const ReducedRows<T> rr = st.rows();
  put_reduced_rows(red.a, red.b, red.c, red.d, j, rr);
  return bad;
}

template <class T>
void pass2_chunk(const System<T>& sys, index_t j, index_t s, index_t e, const T* x, T* cs, T* ds) {
  const T F = x[2 * j], E = x[2 * j + 1];
  Pass2<T, T> st;
  st.first_row(F);
  for (index_t i = s + 1; i + 1 < e; ++i) {
    st.row(sys.a[i], sys.b[i], sys.c[i], sys.d[i]);
    cs[i - s] = st.cp;
    ds[i - s] = st.dp;
  }
  T xv = E;
  sys.u[e - 1] = E;
  for (index_t i = e - 2; i > s; --i) {
    xv = ds[i - s] - cs[i - s] * xv;
    sys.u[i] = xv;
  }
  sys.u[s] = F;
}

// Runs body(item, thread) for items [0, count) split statically over nt threads, each
// thread's range in ascending or descending order. body returns true on a bad pivot;
// returns the smallest such item, or -1. (Pass 2 runs descending: a thread starts where
// its pass 1 ended, on data that may still be cached.)
template <class F>
index_t for_items(index_t count, int nt, bool descending, F&& body) {
  index_t first = std::numeric_limits<index_t>::max();
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(min : first)
  {
    const int t = nt > 1 ? omp_get_thread_num() : 0;
    const int tn = nt > 1 ? omp_get_num_threads() : 1;
    const index_t lo = count * t / tn, hi = count * (t + 1) / tn;
    if (descending) {
      for (index_t it = hi - 1; it >= lo; --it)
        if (body(it, t)) first = std::min(first, it);
    } else {
      for (index_t it = lo; it < hi; ++it)
        if (body(it, t)) {
          first = std::min(first, it);
          break;
        }
    }
  }
  return first == std::numeric_limits<index_t>::max() ? -1 : first;
}

struct Shape {
  index_t m;        // rows per chunk
  int lanes;        // chunks per group (1: scalar)
  int threads;      // capacity the workspace serves
  bool direct;      // solved by Thomas at this level
  index_t reduced;  // 2 * chunks
};

Shape shape_at(const Settings& s, index_t n, int level) {
  Shape sh{s.chunk, s.lanes, thread_capacity(s.threads), false, 0};
  const bool big = level == 0 ? n >= 2 * sh.m && n >= 3 : n >= std::max<index_t>(kRecurseMin, 8 * sh.m);
  sh.direct = !big;
  if (!sh.direct) sh.reduced = 2 * Chunks::make(n, sh.m).count;
  return sh;
}

std::size_t level_bytes(const Settings& s, index_t n, std::size_t vs, int level) {
  const Shape sh = shape_at(s, n, level);
  const std::size_t arr = rounded(static_cast<std::size_t>(n) * vs);
  if (sh.direct) return 2 * arr;
  const std::size_t scratch = rounded(2 * static_cast<std::size_t>(sh.m) * std::max(1, sh.lanes) * vs);
  return 5 * rounded(static_cast<std::size_t>(sh.reduced) * vs) + sh.threads * scratch +
         level_bytes(s, sh.reduced, vs, level + 1);
}

template <class T, int W, int K, bool Tol>
struct GroupKernels {
  static bool pass1(const System<T>& sys, index_t chunk0, index_t m, const Reduced<T>& red, T tol) {
    return pass1_group<T, W, K, Tol>(sys, chunk0, m, red, tol);
  }
  static void pass2(const System<T>& sys, index_t chunk0, index_t m, const T* x, void* scratch) {
    using V = simd::Vec<T, W>;
    V* cs = static_cast<V*>(scratch);
    pass2_group<T, W, K>(sys, chunk0, m, x, cs, cs + m * K);
  }
};

template <class T>
Failure solve_level(const Settings& s, const System<T>& sys, Carver ws, int level) {
  const index_t n = sys.n;
  const T tol = static_cast<T>(s.tolerance);
  const Shape sh = shape_at(s, n, level);
  if (sh.direct) {
    T* cp = ws.take<T>(n);
    T* z = ws.take<T>(n);
    const index_t bad = adi::large::solve_direct<T>(n, sys.a, sys.b, sys.c, sys.d, sys.u, cp, z, s.periodic, tol);
    return bad >= 0 ? Failure{bad, level == 0 ? "Thomas" : "reduced system", level} : Failure{};
  }
  const Chunks ch = Chunks::make(n, sh.m);
  const index_t R = sh.reduced;
  const Reduced<T> red{ws.take<T>(R), ws.take<T>(R), ws.take<T>(R), ws.take<T>(R), ws.take<T>(R)};
  const std::size_t scratch_bytes = rounded(2 * static_cast<std::size_t>(sh.m) * std::max(1, sh.lanes) * sizeof(T));
  char* scratch = ws.p;
  ws.p += sh.threads * scratch_bytes;

  const int G = sh.lanes;
  const index_t groups = G > 1 ? ch.full() / G : 0;
  const index_t tails = ch.count - groups * G;
  const index_t items = groups + tails;
  const int nt = n >= 2 * kParallelMin ? std::min(threads_now(s.threads), sh.threads) : 1;
  const index_t m = sh.m;
  constexpr int W = kLaneWidth<T>;

  auto run = [&]<int K, bool Tol>() -> Failure {
    using Kern = GroupKernels<T, W, K, Tol>;
    const index_t bad_item = for_items(items, nt, false, [&](index_t it, int) {
      if (it < groups) return Kern::pass1(sys, it * G, m, red, tol);
      const index_t j = groups * G + (it - groups);
      return pass1_chunk(sys, j, ch.begin(j), ch.end(j), red, tol, s.periodic) >= 0;
    });
    if (bad_item >= 0) {  // the error path: find the row with the scalar sweep
      const index_t j0 = bad_item < groups ? bad_item * G : groups * G + (bad_item - groups);
      const index_t j1 = bad_item < groups ? j0 + G : j0 + 1;
      for (index_t j = j0; j < j1; ++j) {
        const index_t row = pass1_chunk(sys, j, ch.begin(j), ch.end(j), red, tol, s.periodic);
        if (row >= 0) return {row, "partition chunk elimination", level};
      }
      return {ch.begin(j0), "partition chunk elimination", level};
    }
    Failure f = solve_level<T>(s, System<T>{red.a, red.b, red.c, red.d, red.x, R}, ws, level + 1);
    if (f.failed()) {  // reduced row r is row F or E of chunk r / 2
      const index_t j = f.row / 2;
      f.row = f.row % 2 == 0 ? ch.begin(j) : ch.end(j) - 1;
      return f;
    }
    for_items(items, nt, true, [&](index_t it, int t) {
      void* sc = scratch + t * scratch_bytes;
      if (it < groups) {
        Kern::pass2(sys, it * G, m, red.x, sc);
      } else {
        const index_t j = groups * G + (it - groups);
        T* cs = static_cast<T*>(sc);
        pass2_chunk(sys, j, ch.begin(j), ch.end(j), red.x, cs, cs + m);
      }
      return false;
    });
    return {};
  };
  const bool tolerant = tol > T(0);
  switch (G / W) {
    case 2: return tolerant ? run.template operator()<2, true>() : run.template operator()<2, false>();
    case 4: return tolerant ? run.template operator()<4, true>() : run.template operator()<4, false>();
    default: return tolerant ? run.template operator()<1, true>() : run.template operator()<1, false>();
  }
}

}  // namespace

int simd_width(std::size_t value_size) {
  return value_size == sizeof(float) ? kLaneWidth<float> : kLaneWidth<double>;
}
int default_chunk(std::size_t) { return kDefaultChunk; }
int default_lanes(std::size_t value_size) { return kDefaultVectors * simd_width(value_size); }

namespace detail {

std::size_t partition_workspace_bytes(const Settings& s, index_t n, std::size_t vs) {
  return level_bytes(s, n, vs, 0);
}

template <class T>
Failure partition_solve(const Settings& s, const System<T>& sys, void* workspace) {
  return solve_level<T>(s, sys, Carver{static_cast<char*>(workspace)}, 0);
}

template Failure partition_solve<float>(const Settings&, const System<float>&, void*);
template Failure partition_solve<double>(const Settings&, const System<double>&, void*);

}  // namespace detail

std::size_t workspace_bytes(const Settings& s, index_t n, std::size_t vs) {
  return s.variant == LargeKernel::partition ? detail::partition_workspace_bytes(s, n, vs)
                                              : detail::pcr_workspace_bytes(s, n, vs);
}

template <class T>
Failure solve(const Settings& s, const System<T>& sys, void* workspace) {
  return s.variant == LargeKernel::partition ? detail::partition_solve<T>(s, sys, workspace)
                                              : detail::pcr_solve<T>(s, sys, workspace);
}

template Failure solve<float>(const Settings&, const System<float>&, void*);
template Failure solve<double>(const Settings&, const System<double>&, void*);

}  // namespace adi::cpu::large
