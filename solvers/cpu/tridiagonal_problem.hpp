#pragma once
// What the host kernels share: the problem they receive, the grouping of lines into
// SIMD-width groups, the workspace layout (shared factorisation + one scratch slice
// per thread, carved from the plan's single allocation), and the OpenMP loop.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "adi/base/layout.hpp"
#include "solvers/common/thomas_core.hpp"
#include "solvers/cpu/thomas_sweep.hpp"
#include "solvers/cpu/tridiagonal_cpu.hpp"

namespace adi::cpu::detail {

template <class T>
struct Problem {
  LineSet lines;
  BandView<T> bands;
  const T* d;
  T* u;
  bool periodic;
  Method method = Method::thomas;
};

inline constexpr index_t kNoLine = std::numeric_limits<index_t>::max();

// A LineSet with a single inner line per row is the same set with l0 and l1 swapped;
// normalising lets "lines adjacent in memory" be tested on stride0 alone.
inline LineSet normalised(LineSet l) {
  if (l.count0 == 1 && l.count1 > 1) {
    l.count0 = l.count1;
    l.stride0 = l.stride1;
    l.count1 = 1;
    l.stride1 = 0;
  }
  return l;
}

// Threads the workspace serves: `threads`, or every processor for 0 (= all).
inline int thread_capacity(int threads) { return threads > 0 ? threads : std::max(1, omp_get_num_procs()); }
// Threads a solve runs on: never more than thread_capacity, whatever omp_set_num_threads
// did since the plan was built.
inline int threads_now(int threads) {
  return threads > 0 ? threads : std::clamp(omp_get_max_threads(), 1, std::max(1, omp_get_num_procs()));
}

inline int floor_pow2(index_t x) {
  int p = 1;
  while (2 * static_cast<index_t>(p) <= x && p < (1 << 20)) p *= 2;
  return p;
}

// `count` neighbouring lines split into groups of `width` (a power of two), then the
// remainder in power-of-two groups (width/2, ..., 1): every group runs full vectors,
// no masks, and no lane ever touches a line outside the set.
class Groups {
 public:
  struct Group {
    index_t start;
    int width;
  };
  Groups(index_t count, int max_width) {
    width_ = std::min(max_width, floor_pow2(std::max<index_t>(count, 1)));
    full_ = count / width_;
    index_t start = full_ * width_, rem = count - start;
    for (int w = width_ / 2; w >= 1; w /= 2)
      if (rem & w) {
        tail_[ntail_++] = {start, w};
        start += w;
      }
  }
  int width() const { return width_; }
  index_t size() const { return full_ + ntail_; }
  Group operator[](index_t g) const { return g < full_ ? Group{g * width_, width_} : tail_[g - full_]; }

 private:
  int width_ = 1;
  index_t full_ = 0;
  int ntail_ = 0;
  Group tail_[24] = {};
};

// How a kernel splits a LineSet: `items` groups of at most `width` lines.
struct Shape {
  int width = 1;
  index_t items = 0;
};

// [64-byte slack][shared factorisation: 4 arrays of n][per thread: `arrays` arrays of width*n]
struct WorkspaceLayout {
  index_t n = 0;
  int width = 1;
  int arrays = 0;
  int threads = 1;
  std::size_t value_size = 8;

  static std::size_t round64(std::size_t b) { return (b + 63) / 64 * 64; }
  std::size_t shared_array() const { return round64(static_cast<std::size_t>(n) * value_size); }
  std::size_t lane_array() const { return round64(static_cast<std::size_t>(n) * width * value_size); }
  std::size_t thread_bytes() const { return arrays * lane_array(); }
  std::size_t bytes() const { return 64 + kSharedArrays * shared_array() + threads * thread_bytes(); }
  static constexpr int kSharedArrays = 4;
};

inline WorkspaceLayout layout_for(const Shape& s, const LineSet& l, bool periodic, int threads,
                                  std::size_t value_size, Method method = Method::thomas) {
  WorkspaceLayout w;
  w.n = l.n;
  w.width = s.width;
  // c*, d* (and z*); pivoting (automatic may fall back to it): u1', y', -, u2' or, periodic,
  // u1', y', us', u2', ul'.
  w.arrays = method != Method::thomas ? (periodic ? 5 : 4) : periodic ? 3 : 2;
  w.threads = static_cast<int>(std::clamp<index_t>(s.items, 1, thread_capacity(threads)));
  w.value_size = value_size;
  return w;
}

// Typed views into the plan's workspace.
template <class T>
class Workspace {
 public:
  Workspace(const WorkspaceLayout& l, void* raw) : l_(l) {
    const auto p = reinterpret_cast<std::uintptr_t>(raw);
    base_ = reinterpret_cast<std::byte*>((p + 63) / 64 * 64);
  }
  // Shared array q (0..3) of n values.
  T* shared(int q) const { return reinterpret_cast<T*>(base_ + q * l_.shared_array()); }
  // Thread t's scratch for groups of vectors V (no more lanes than the layout's width).
  template <class V>
  Scratch<V> thread(int t) const {
    std::byte* p = base_ + WorkspaceLayout::kSharedArrays * l_.shared_array() +
                   static_cast<std::size_t>(t) * l_.thread_bytes();
    const std::size_t a = l_.lane_array();
    return {reinterpret_cast<V*>(p), reinterpret_cast<V*>(p + a),
            l_.arrays > 2 ? reinterpret_cast<V*>(p + 2 * a) : nullptr,
            l_.arrays > 3 ? reinterpret_cast<V*>(p + 3 * a) : nullptr,
            l_.arrays > 4 ? reinterpret_cast<V*>(p + 4 * a) : nullptr};
  }

 private:
  WorkspaceLayout l_;
  std::byte* base_;
};

// Elements a thread must get before another thread is worth waking: a fork/join costs
// microseconds, a solve about a nanosecond per element (and far more when the cores
// are shared with other processes and a sleeping thread holds up the barrier).
inline constexpr index_t kMinElementsPerThread = 32768;

// Calls f(item, thread) for every item on up to `threads` OpenMP threads (static
// schedule: the items are equal work; fewer threads for small problems). f returns
// the first bad line of its item or kNoLine; returns the smallest, or -1.
template <class F>
index_t for_each_item(index_t items, index_t elements, int threads, F&& f) {
  const index_t useful = std::max<index_t>(1, elements / kMinElementsPerThread);
  const int nt = static_cast<int>(std::clamp<index_t>(std::min(items, useful), 1, threads));
  index_t first = kNoLine;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(min : first)
  {
    const int t = omp_get_thread_num();
#pragma omp for schedule(static)
    for (index_t g = 0; g < items; ++g) first = std::min(first, f(g, t));
  }
  return first == kNoLine ? -1 : first;
}

template <int W, int K, class F>
decltype(auto) with_chunks(int k, F&& f) {
  if constexpr (K == 1) {
    return f.template operator()<W, 1>();
  } else {
    if (k == K) return f.template operator()<W, K>();
    return with_chunks<W, K / 2>(k, static_cast<F&&>(f));
  }
}

// Calls f.template operator()<W, K>() for a group of `lanes` lines (a power of two):
// K chunks of full vectors (W = Wmax, K <= Kmax) when lanes >= Wmax, else one
// narrower vector (W = lanes, K = 1).
template <int Wmax, int Kmax, int W = Wmax, class F>
decltype(auto) with_group(int lanes, F&& f) {
  if constexpr (W == Wmax) {
    if (lanes >= W) return with_chunks<W, Kmax>(lanes / W, static_cast<F&&>(f));
  }
  if constexpr (W == 1) {
    return f.template operator()<1, 1>();
  } else {
    if (lanes == W) return f.template operator()<W, 1>();
    return with_group<Wmax, Kmax, W / 2>(lanes, static_cast<F&&>(f));
  }
}

// Shared bands: factorises them once into the workspace and points `shared` at the
// result (null for per-line bands). Returns 0 (the first line) when a pivot is bad: all
// lines share it. The sweep still runs, so unchecked solves produce non-finite values.
template <class T>
index_t prepare_shared(const Problem<T>& p, const Workspace<T>& ws, SharedFactor<T>& f,
                       const SharedFactor<T>*& shared) {
  shared = nullptr;
  if (!p.bands.shared) return -1;
  shared = &f;
  const BandView<T>& b = p.bands;
  const index_t n = p.lines.n;
  auto pivoting = [&]() {  // nothing to factorise: the sweeps broadcast the bands
    f = SharedFactor<T>{};
    f.pivoting = true;
    f.sa = b.a;
    f.sb = b.b;
    f.sc = b.c;
    return true;
  };
  if (p.method == Method::pivoting) return pivoting() ? -1 : 0;
  bool ok = factor_shared<T>(n, b.a, b.b, b.c, p.periodic, ws.shared(0), ws.shared(1), ws.shared(2),
                             ws.shared(3), f);
  if (!ok && p.method == Method::automatic) ok = pivoting();
  return ok ? -1 : 0;
}

// The smaller of two "first bad line" results (-1: none).
inline index_t first_bad(index_t x, index_t y) { return x < 0 ? y : y < 0 ? x : std::min(x, y); }

// Periodic lines of 1 or 2 unknowns, as the reference: n = 1 is (a+b+c) u = d; n = 2
// is the 2x2 system with both couplings added. Returns the first bad line or -1.
template <class T>
index_t solve_periodic_tiny(const Problem<T>& p) {
  const LineSet& l = p.lines;
  const BandView<T>& bd = p.bands;
  index_t bad = -1;
  for (index_t line = 0; line < l.lines(); ++line) {
    const index_t o = l.offset(line);
    auto co = [&](const T* q, index_t i) { return bd.shared ? q[i] : q[o + i * l.stride]; };
    T inv;
    if (l.n == 1) {
      inv = T(1) / (co(bd.a, 0) + co(bd.b, 0) + co(bd.c, 0));
      p.u[o] = p.d[o] * inv;
    } else {
      const common::PeriodicPair<T> m(co(bd.a, 0), co(bd.b, 0), co(bd.c, 0), co(bd.a, 1), co(bd.b, 1), co(bd.c, 1));
      inv = T(1) / m.det();
      m.solve(p.d[o], p.d[o + l.stride], inv, p.u[o], p.u[o + l.stride]);
    }
    if (bad < 0 && !finite_nonzero(inv)) bad = line;
  }
  return bad;
}

}  // namespace adi::cpu::detail
