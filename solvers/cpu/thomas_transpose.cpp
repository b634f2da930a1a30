// Kernel::cpu_thomas_transpose: lines with element stride 1 (X sweeps, the
// gtsv2StridedBatch layout), any line offsets. W neighbouring lines are solved
// together: W consecutive elements of each of the W lines are loaded as a W x W tile
// and transposed in registers, so lane j holds line j; W Thomas steps then run
// vectorised across lines, and the backward pass transposes the result back
// (paper section 5, "X dimension", figures 5-6). Partial tiles (n % W) load and store
// only their valid elements; remainder lines run in narrower groups (batch.hpp).
#include <cstring>

#include "solvers/cpu/kernels.hpp"

namespace adi::cpu::detail {

namespace {

template <class T, int W>
struct TransposedRows {
  using V = simd::Vec<T, W>;
  static constexpr int block = W;  // one tile of rows
  const T* q[4];                   // a, b, c, d
  index_t off[W];                  // first element of lane j's line
  V t[4][W];

  void tile(int s, index_t i0, int cnt) {
    V* r = t[s];
    if (cnt == W) {
      for (int j = 0; j < W; ++j) r[j] = simd::load<V>(q[s] + off[j] + i0);
    } else {
      for (int j = 0; j < W; ++j) {
        r[j] = V{};
        std::memcpy(&r[j], q[s] + off[j] + i0, static_cast<std::size_t>(cnt) * sizeof(T));
      }
    }
    simd::transpose<W>(r);
  }
  template <bool Bands>
  void load(index_t i0, int cnt) {
    if constexpr (Bands) {
      tile(0, i0, cnt);
      tile(1, i0, cnt);
      tile(2, i0, cnt);
    }
    tile(3, i0, cnt);
  }
  V a(int k) const { return t[0][k]; }
  V b(int k) const { return t[1][k]; }
  V c(int k) const { return t[2][k]; }
  V d(int k) const { return t[3][k]; }
};

template <class T, int W>
struct TransposedRowsOut {
  using V = simd::Vec<T, W>;
  static constexpr int block = W;
  T* u;
  index_t off[W];
  V t[W] = {};
  index_t i0 = 0;
  int cnt = 0;

  void begin(index_t i, int c) {
    i0 = i;
    cnt = c;
  }
  void put(int k, const V& v) { t[k] = v; }
  void flush() {
    simd::transpose<W>(t);
    if (cnt == W) {
      for (int j = 0; j < W; ++j) simd::store(u + off[j] + i0, t[j]);
    } else {
      for (int j = 0; j < W; ++j)
        std::memcpy(u + off[j] + i0, &t[j], static_cast<std::size_t>(cnt) * sizeof(T));
    }
  }
};

}  // namespace

Shape thomas_transpose_shape(const LineSet& lines, std::size_t value_size) {
  const Groups g(lines.lines(), simd::kVectorBytes / static_cast<int>(value_size));
  return {g.width(), g.size()};
}

template <class T>
index_t thomas_transpose(const Problem<T>& p, void* raw, int threads) {
  if (p.periodic && p.lines.n <= 2) return solve_periodic_tiny(p);
  const LineSet& l = p.lines;
  const Groups groups(l.lines(), simd::kWidth<T>);  // consecutive line numbers
  const Shape shape = thomas_transpose_shape(l, sizeof(T));
  const Workspace<T> ws(layout_for(shape, l, p.periodic, threads, sizeof(T)), raw);
  SharedFactor<T> factor;
  const SharedFactor<T>* shared = nullptr;
  const index_t bad = prepare_shared(p, ws, factor, shared);
  const BandView<T>& bd = p.bands;
  const index_t first = for_each_item(shape.items, threads_now(threads), [&](index_t item, int t) {
    const Groups::Group g = groups[item];
    return with_width<T>(g.width, [&]<int W>() {
      TransposedRows<T, W> src;
      TransposedRowsOut<T, W> dst;
      src.q[0] = bd.a;
      src.q[1] = bd.b;
      src.q[2] = bd.c;
      src.q[3] = p.d;
      dst.u = p.u;
      for (int j = 0; j < W; ++j) src.off[j] = dst.off[j] = l.offset(g.start + j);
      const auto m = solve_group<T, W>(l.n, p.periodic, shared, src, dst, ws.template thread<W>(t));
      const int j = simd::first_set<W>(m);
      return j < 0 ? kNoLine : g.start + j;
    });
  });
  return first_bad(bad, first);
}

template index_t thomas_transpose<float>(const Problem<float>&, void*, int);
template index_t thomas_transpose<double>(const Problem<double>&, void*, int);

}  // namespace adi::cpu::detail
