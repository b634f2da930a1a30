// Host kernels of variable-size tridiagonal batches: thomas_variable_core.hpp run on SIMD
// vectors of neighbouring systems (padded and sorted interleaved layouts) or on scalars
// (one system per thread: compact and pointer layouts, and the tails of a batch).
#include "solvers/cpu/thomas_variable.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "solvers/cpu/simd.hpp"
#include "solvers/common/thomas_core.hpp"
#include "solvers/common/thomas_variable_core.hpp"
#include "solvers/reference/thomas.hpp"

namespace adi::cpu {

namespace {

using simd::load;
using simd::Vec;

// Lanes per group: two hardware vectors, so every operation has two independent chains
// (GCC splits the wider generic vector in two).
template <class T>
inline constexpr int kGroup = 2 * simd::kWidth<T>;
// Integer lanes of the same width as T, so that size comparisons give masks usable on T.
template <class T>
using LaneInt = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;

inline int threads_for(int threads) { return threads > 0 ? threads : std::max(1, omp_get_max_threads()); }

// G lanes of an interleaved layout: lane j of row k at base + k*rs + j. Scratch holds
// cs, ds, zs of each row for the G lanes (rows * 3 * G values, stays in L1/L2).
template <class T, int G>
struct VectorIo {
  using V = Vec<T, G>;
  using M = simd::Mask<V>;
  const T *pa, *pb, *pc, *pd;
  T* pu;
  index_t rs;
  T* scratch;
  int full_rows;  // rows below which every lane is live (plain stores)

  V a(int k, const M&) const { return load<V>(pa + k * rs); }
  V b(int k, const M&) const { return load<V>(pb + k * rs); }
  V c(int k, const M&) const { return load<V>(pc + k * rs); }
  V d(int k, const M&) const { return load<V>(pd + k * rs); }
  void put(int k, const V& cs, const V& ds, const V& zs, const M&) const {
    T* s = scratch + static_cast<index_t>(k) * 3 * G;
    simd::store(s, cs);
    simd::store(s + G, ds);
    simd::store(s + 2 * G, zs);
  }
  void get(int k, V& cs, V& ds, V& zs, const M&) const {
    const T* s = scratch + static_cast<index_t>(k) * 3 * G;
    cs = load<V>(s);
    ds = load<V>(s + G);
    zs = load<V>(s + 2 * G);
  }
  // Only live lanes are written: below full_rows all are, above it the old values of the
  // dead lanes are written back (the padding is never changed).
  void store_row(T* p, const V& x, const M& live) const { simd::store(p, live ? x : load<V>(p)); }
  void store(int k, const V& x, const M& live) const {
    T* p = pu + k * rs;
    if (k < full_rows)
      simd::store(p, x);
    else
      store_row(p, x, live);
  }
  void store_z(int k, const V& z, const M&) const { simd::store(scratch + static_cast<index_t>(k) * 3 * G + 2 * G, z); }
  void fix(int k, const V& f, const M& live) const {
    const V z = load<V>(scratch + static_cast<index_t>(k) * 3 * G + 2 * G);
    T* p = pu + k * rs;
    const V u = common::PeriodicSplit<T, V>::correct(load<V>(p), f, z);
    if (k < full_rows)
      simd::store(p, u);
    else
      store_row(p, u, live);
  }
};

// One system (a scalar lane), element k at base + k*rs.
template <class T>
struct ScalarIo {
  const T *pa, *pb, *pc, *pd;
  T* pu;
  index_t rs;
  T* scratch;
  T a(int k, bool) const { return pa[k * rs]; }
  T b(int k, bool) const { return pb[k * rs]; }
  T c(int k, bool) const { return pc[k * rs]; }
  T d(int k, bool) const { return pd[k * rs]; }
  void put(int k, T cs, T ds, T zs, bool) const {
    scratch[3 * k] = cs;
    scratch[3 * k + 1] = ds;
    scratch[3 * k + 2] = zs;
  }
  void get(int k, T& cs, T& ds, T& zs, bool) const {
    cs = scratch[3 * k];
    ds = scratch[3 * k + 1];
    zs = scratch[3 * k + 2];
  }
  void store(int k, T x, bool live) const {
    if (live) pu[k * rs] = x;
  }
  void store_z(int k, T z, bool) const { scratch[3 * k + 2] = z; }
  void fix(int k, T f, bool live) const {
    if (live) pu[k * rs] = common::PeriodicSplit<T>::correct(pu[k * rs], f, scratch[3 * k + 2]);
  }
};

template <class T>
bool scalar_solve(const ScalarIo<T>& io, int n, int rows, bool periodic) {
  ScalarIo<T> local = io;
  return periodic ? bool(variable_thomas::solve<true, T>(local, n, rows))
                  : bool(variable_thomas::solve<false, T>(local, n, rows));
}

// Solves G neighbouring lanes whose sizes are n[0..G); returns the first bad lane or -1.
template <class T, int G>
int vector_solve(const VectorIo<T, G>& io, const int* n, int rows, bool periodic) {
  using N = Vec<LaneInt<T>, G>;
  N nv;
  for (int j = 0; j < G; ++j) nv[j] = n[j];
  VectorIo<T, G> local = io;
  const auto bad = periodic ? variable_thomas::solve<true, Vec<T, G>>(local, nv, rows)
                            : variable_thomas::solve<false, Vec<T, G>>(local, nv, rows);
  return simd::first_set<G>(bad);
}

template <class T>
T* thread_scratch(void* workspace, int rows, int t) {
  return static_cast<T*>(workspace) + static_cast<std::size_t>(t) * 3 * kGroup<T> * std::max(rows, 1);
}

// Runs f(item, thread) on up to `threads` threads, dynamic schedule (items have unequal
// work); f returns the first bad system or -1. Single-threaded for small batches.
template <class F>
index_t for_items(index_t items, index_t work, int threads, F&& f) {
  const int nt = static_cast<int>(std::clamp<index_t>(std::min<index_t>(items, work / 32768 + 1), 1, threads));
  index_t first = INT64_MAX;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(min : first)
  {
    const int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 4)
    for (index_t i = 0; i < items; ++i) {
      const index_t bad = f(i, t);
      if (bad >= 0) first = std::min(first, bad);
    }
  }
  return first == INT64_MAX ? -1 : first;
}

}  // namespace

std::size_t variable_workspace_bytes(int rows, int threads, std::size_t value_size) {
  const int g = value_size == 8 ? kGroup<double> : kGroup<float>;
  return static_cast<std::size_t>(threads_for(threads)) * 3 * g * std::max(rows, 1) * value_size;
}

template <class T>
index_t variable_thomas_padded(const VariableBatchView& v, index_t stride, int rows, VariableArrays<T> x,
                               bool periodic, bool stop_at_size, void* workspace, int threads) {
  constexpr int G = kGroup<T>;
  const index_t groups = v.count / G, tail = v.count % G;
  const index_t work = static_cast<index_t>(rows) * v.count;
  return for_items(groups + tail, work, threads_for(threads), [&](index_t i, int t) -> index_t {
    T* scratch = thread_scratch<T>(workspace, rows, t);
    if (i < groups) {
      const index_t s0 = i * G;
      const int* n = v.sizes + s0;
      const int lo = *std::min_element(n, n + G), hi = *std::max_element(n, n + G);
      VectorIo<T, G> io{x.a + s0, x.b + s0, x.c + s0, x.d + s0, x.u + s0, stride, scratch, lo};
      const int j = vector_solve<T, G>(io, n, stop_at_size ? hi : rows, periodic);
      return j < 0 ? -1 : s0 + j;
    }
    const index_t s = groups * G + (i - groups);
    const int n = v.sizes[s];
    ScalarIo<T> io{x.a + s, x.b + s, x.c + s, x.d + s, x.u + s, stride, scratch};
    return scalar_solve(io, n, stop_at_size ? n : rows, periodic) ? s : -1;
  });
}

template <class T>
index_t variable_thomas_sorted(const VariableBatchView& v, VariableArrays<T> x, bool periodic, void* workspace,
                               int threads) {
  constexpr int G = kGroup<T>;
  const int W = v.chunk_width;
  const int per_chunk = (W + G - 1) / G;  // vector groups (the last one scalar lanes if W % G)
  return for_items(v.chunks * per_chunk, v.offsets[v.count] + v.count, threads_for(threads),
                   [&](index_t i, int t) -> index_t {
    const index_t c = i / per_chunk;
    const int j0 = static_cast<int>(i % per_chunk) * G;
    const index_t p0 = c * W + j0;
    if (p0 >= v.count) return -1;
    T* scratch = thread_scratch<T>(workspace, v.max_size, t);
    const index_t base = v.chunk_offsets[c] + j0;
    int n[G];
    for (int j = 0; j < G; ++j) n[j] = (j0 + j < W && p0 + j < v.count) ? v.sizes[v.order[p0 + j]] : 0;
    const int rows = n[0];  // sorted: the group's first lane is its largest
    if (j0 + G <= W) {
      VectorIo<T, G> io{x.a + base, x.b + base, x.c + base, x.d + base, x.u + base, W, scratch,
                        *std::min_element(n, n + G)};
      const int j = vector_solve<T, G>(io, n, rows, periodic);
      return j < 0 ? -1 : v.order[p0 + j];
    }
    index_t first = -1;
    for (int j = 0; j < W - j0 && p0 + j < v.count; ++j) {
      ScalarIo<T> io{x.a + base + j, x.b + base + j, x.c + base + j, x.d + base + j, x.u + base + j, W, scratch};
      if (scalar_solve(io, n[j], n[j], periodic)) {
        const index_t s = v.order[p0 + j];
        first = first < 0 ? s : std::min(first, s);
      }
    }
    return first;
  });
}

template <class T>
index_t variable_thomas_compact(const VariableBatchView& v, const index_t* offsets, VariableArrays<T> x,
                                bool periodic, void* workspace, int threads) {
  return for_items(v.count, v.offsets[v.count] + v.count, threads_for(threads), [&](index_t p, int t) -> index_t {
    const index_t s = v.order[p];  // largest first: the long systems do not end up last
    const index_t o = offsets[s];
    ScalarIo<T> io{x.a + o, x.b + o, x.c + o, x.d + o, x.u + o, 1, thread_scratch<T>(workspace, v.max_size, t)};
    return scalar_solve(io, v.sizes[s], v.sizes[s], periodic) ? s : -1;
  });
}

template <class T>
index_t variable_thomas_pointers(const VariableBatchView& v, VariablePointers<T> x, bool periodic, void* workspace,
                                 int threads) {
  return for_items(v.count, v.offsets[v.count] + v.count, threads_for(threads), [&](index_t p, int t) -> index_t {
    const index_t s = v.order[p];
    ScalarIo<T> io{x.a[s], x.b[s], x.c[s], x.d[s], x.u[s], 1, thread_scratch<T>(workspace, v.max_size, t)};
    return scalar_solve(io, v.sizes[s], v.sizes[s], periodic) ? s : -1;
  });
}

namespace {
// One system through element accessors, in double; writes u only when it succeeds.
template <class T, class At>
bool reference_system(int n, const T* a, const T* b, const T* c, const T* d, T* u, At at, bool periodic,
                      std::vector<double>& xs, std::vector<double>& cs, bool pivoting) {
  if (n == 0) return true;
  auto get = [&](const T* p) { return [=](index_t k) { return double(p[at(k)]); }; };
  const bool ok = pivoting   ? reference::pivoting_line(n, get(a), get(b), get(c), get(d), periodic, xs)
                  : periodic ? reference::cyclic_line(n, get(a), get(b), get(c), get(d), xs)
                             : reference::thomas_line(n, get(a), get(b), get(c), get(d), xs, cs);
  if (!ok) return false;
  for (int k = 0; k < n; ++k) u[at(k)] = static_cast<T>(xs[k]);
  return true;
}
}  // namespace

template <class T>
index_t variable_thomas_reference(const VariableBatchView& v, const index_t* offsets, index_t stride, bool sorted,
                                  VariableArrays<T> x, bool periodic, bool pivoting) {
  std::vector<double> xs, cs;
  index_t first = -1;
  for (index_t s = 0; s < v.count; ++s) {
    index_t base, step;
    if (offsets) {
      base = offsets[s];
      step = 1;
    } else if (sorted) {
      const index_t p = v.position[s];
      base = v.chunk_offsets[p / v.chunk_width] + p % v.chunk_width;
      step = v.chunk_width;
    } else {
      base = s;
      step = stride;
    }
    auto at = [=](index_t k) { return base + k * step; };
    if (!reference_system(v.sizes[s], x.a, x.b, x.c, x.d, x.u, at, periodic, xs, cs, pivoting) && first < 0)
      first = s;
  }
  return first;
}

template <class T>
index_t variable_thomas_reference(const VariableBatchView& v, VariablePointers<T> x, bool periodic, bool pivoting) {
  std::vector<double> xs, cs;
  index_t first = -1;
  for (index_t s = 0; s < v.count; ++s) {
    auto at = [](index_t k) { return k; };
    if (!reference_system(v.sizes[s], x.a[s], x.b[s], x.c[s], x.d[s], x.u[s], at, periodic, xs, cs, pivoting) &&
        first < 0)
      first = s;
  }
  return first;
}

#define ADI_VARIABLE_THOMAS(T)                                                                                 \
  template index_t variable_thomas_padded<T>(const VariableBatchView&, index_t, int, VariableArrays<T>, bool,  \
                                             bool, void*, int);                                                 \
  template index_t variable_thomas_sorted<T>(const VariableBatchView&, VariableArrays<T>, bool, void*, int);   \
  template index_t variable_thomas_compact<T>(const VariableBatchView&, const index_t*, VariableArrays<T>,     \
                                              bool, void*, int);                                                \
  template index_t variable_thomas_pointers<T>(const VariableBatchView&, VariablePointers<T>, bool, void*,     \
                                               int);                                                            \
  template index_t variable_thomas_reference<T>(const VariableBatchView&, const index_t*, index_t, bool,       \
                                                VariableArrays<T>, bool, bool);                                 \
  template index_t variable_thomas_reference<T>(const VariableBatchView&, VariablePointers<T>, bool, bool);
ADI_VARIABLE_THOMAS(float)
ADI_VARIABLE_THOMAS(double)
#undef ADI_VARIABLE_THOMAS

}  // namespace adi::cpu
