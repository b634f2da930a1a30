// Kernel::cpu_thomas_transpose: lines with element stride 1 (X sweeps, the
// gtsv2StridedBatch layout), any line offsets. W neighbouring lines are solved
// together: W consecutive elements of each of the W lines are loaded as a W x W tile
// and transposed in registers, so lane j holds line j; W Thomas steps then run
// vectorised across lines, and the backward pass transposes the result back
// (paper section 5, "X dimension", figures 5-6). A group holds K such tiles side by
// side. Partial tiles (n % W) load and store only their valid elements; remainder
// lines run in narrower groups (batch.hpp).
#include <algorithm>
#include <cstdint>

#include "solvers/cpu/tridiagonal_kernels.hpp"

namespace adi::cpu::detail {

namespace {

// Tile policy, measured on a 256 x 256 x 128 grid (AMD EPYC Zen 4 with AVX-512, 2
// threads, copy 27-30 GB/s; bench_cpu_tridiagonal and a min-of-10 driver):
// - at most 8 lanes per tile: float X sweeps ran 10-12 GB/s with 16 x 16 tiles and
//   13-19 GB/s with 8 x 8 (fewer line streams, and 512-bit shuffles are double-pumped
//   on this core); double kept its 8 x 8 tiles either way;
// - prefetch 2 tiles ahead in every line: without it float X ran 11 GB/s, with 2 tiles
//   17.5, 4 tiles 17, 8 tiles 15 (W lines x 4 arrays are too many streams for the
//   hardware prefetchers);
// - one tile per group: two side by side were slower (more streams again).
constexpr int kMaxTileLanes = 8;
constexpr int kPrefetchTiles = 2;
constexpr int kChunks = 1;
template <class T>
constexpr int kTileWidth = std::min(simd::kWidth<T>, kMaxTileLanes);

// Asks for p[ahead] (past the line's end it fetches a neighbour's data, harmlessly).
template <class T>
inline void prefetch(const T* p, int ahead) {
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + ahead * sizeof(T)));
}

template <class T, int W, int K>
struct TransposedRows {
  using V = simd::Vec<T, W>;
  static constexpr int block = W;  // one tile of rows
  const T* q[4];                   // a, b, c, d
  index_t off[K][W];               // first element of each lane's line
  V t[4][K][W];

  void tile(int s, int j, index_t i0, int cnt) {
    V* r = t[s][j];
    if (cnt == W) {
      for (int l = 0; l < W; ++l) prefetch(q[s] + off[j][l] + i0, kPrefetchTiles * W);
      for (int l = 0; l < W; ++l) r[l] = simd::load<V>(q[s] + off[j][l] + i0);
    } else {
      for (int l = 0; l < W; ++l) {  // a partial tile: only the line's own elements
        const T* p = q[s] + off[j][l] + i0;
        r[l] = V{};
        for (int e = 0; e < cnt; ++e) r[l][e] = p[e];
      }
    }
    simd::transpose<W>(r);
  }
  template <bool Bands>
  void load(index_t i0, int cnt) {
    for (int j = 0; j < K; ++j) {
      if constexpr (Bands) {
        tile(0, j, i0, cnt);
        tile(1, j, i0, cnt);
        tile(2, j, i0, cnt);
      }
      tile(3, j, i0, cnt);
    }
  }
  V a(int k, int j) const { return t[0][j][k]; }
  V b(int k, int j) const { return t[1][j][k]; }
  V c(int k, int j) const { return t[2][j][k]; }
  V d(int k, int j) const { return t[3][j][k]; }
};

template <class T, int W, int K>
struct TransposedRowsOut {
  using V = simd::Vec<T, W>;
  static constexpr int block = W;
  T* u;
  index_t off[K][W];
  V t[K][W] = {};
  index_t i0 = 0;
  int cnt = 0;

  void begin(index_t i, int c) {
    i0 = i;
    cnt = c;
  }
  void put(int k, int j, const V& v) {
    if (k >= W) __builtin_unreachable();  // the sweeps pass k < cnt <= W (g++ 13's -Warray-bounds cannot see it)
    t[j][k] = v;
  }
  void flush() {
    for (int j = 0; j < K; ++j) {
      simd::transpose<W>(t[j]);
      if (cnt == W) {
        for (int l = 0; l < W; ++l) simd::store(u + off[j][l] + i0, t[j][l]);
      } else {
        for (int l = 0; l < W; ++l) {
          T* p = u + off[j][l] + i0;
          for (int e = 0; e < cnt; ++e) p[e] = t[j][l][e];
        }
      }
    }
  }
};

}  // namespace

Shape thomas_transpose_shape(const LineSet& lines, std::size_t value_size, int) {
  const int width = std::min(simd::kVectorBytes / static_cast<int>(value_size), kMaxTileLanes);
  const Groups g(lines.lines(), kChunks * width);
  return {g.width(), g.size()};
}

template <class T>
index_t thomas_transpose(const Problem<T>& p, void* raw, int threads) {
  if (p.periodic && p.lines.n <= 2) return solve_periodic_tiny(p);
  const LineSet& l = p.lines;
  const Groups groups(l.lines(), kChunks * kTileWidth<T>);  // consecutive line numbers
  const Shape shape{groups.width(), groups.size()};
  const Workspace<T> ws(layout_for(shape, l, p.periodic, threads, sizeof(T), p.method), raw);
  SharedFactor<T> factor;
  const SharedFactor<T>* shared = nullptr;
  const index_t bad = prepare_shared(p, ws, factor, shared);
  const BandView<T>& bd = p.bands;
  const index_t first =
      for_each_item(shape.items, l.n * l.lines(), threads_now(threads), [&](index_t item, int t) {
        const Groups::Group g = groups[item];
        return with_group<kTileWidth<T>, kChunks>(g.width, [&]<int W, int K>() {
          using V = simd::Vec<T, W>;
          TransposedRows<T, W, K> src;
          TransposedRowsOut<T, W, K> dst;
          src.q[0] = bd.a;
          src.q[1] = bd.b;
          src.q[2] = bd.c;
          src.q[3] = p.d;
          dst.u = p.u;
          for (int j = 0; j < K; ++j)
            for (int lane = 0; lane < W; ++lane)
              src.off[j][lane] = dst.off[j][lane] = l.offset(g.start + j * W + lane);
          const int lane = solve_group<T, V, K>(l.n, p.periodic, shared, src, dst, ws.template thread<V>(t), p.method);
          return lane < 0 ? kNoLine : g.start + lane;
        });
      });
  return first_bad(bad, first);
}

template index_t thomas_transpose<float>(const Problem<float>&, void*, int);
template index_t thomas_transpose<double>(const Problem<double>&, void*, int);

}  // namespace adi::cpu::detail
