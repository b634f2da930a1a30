// Kernel::cpu_thomas_vector: lines adjacent in memory (stride0 == 1: the Y and Z sweeps
// of a box, interleaved batches). Row i of neighbouring lines is read with vector loads
// at i*stride, so the lanes solve the lines with no transpose (paper section 5, "Y and
// Z dimension"); c* and d* live in a per-thread scratch.
#include "solvers/cpu/adjacent_rows.hpp"
#include "solvers/cpu/tridiagonal_kernels.hpp"

namespace adi::cpu::detail {

namespace {

// Group policy, measured on a 256 x 256 x 128 float grid (AMD EPYC Zen 4, 2 threads,
// copy 30 GB/s). A Z sweep steps a whole plane (256 KiB) per row: groups of one vector
// (64 B per row and array) streamed 7 GB/s, 128 B 12-15, 256 B 19, 512 B 24 GB/s
// (prototype of this loop order). Each row must read enough neighbouring bytes for
// the memory system to stream; 512 B per row and array does.
constexpr std::size_t kGroupBytes = 512;
constexpr int kMaxChunks = static_cast<int>(kGroupBytes) / simd::kVectorBytes;
// ... while c* and d* of a group (2 * lanes * n values) stay in L2 (1 MiB per core here).
constexpr std::size_t kScratchBytes = std::size_t(256) << 10;

int group_lanes(const LineSet& l, std::size_t value_size, int threads) {
  const int width = simd::kVectorBytes / static_cast<int>(value_size);
  int lanes = static_cast<int>(kGroupBytes / value_size);
  const std::size_t n = static_cast<std::size_t>(l.n);
  while (lanes > width && 2 * lanes * n * value_size > kScratchBytes) lanes /= 2;
  // Enough groups for every thread.
  while (lanes > width && (l.count0 / lanes) * l.count1 < 2 * thread_capacity(threads)) lanes /= 2;
  return lanes;
}

}  // namespace

Shape thomas_vector_shape(const LineSet& lines, std::size_t value_size, int threads) {
  const LineSet l = normalised(lines);
  const Groups g(l.count0, group_lanes(l, value_size, threads));
  return {g.width(), g.size() * l.count1};
}

template <class T>
index_t thomas_vector(const Problem<T>& p0, void* raw, int threads) {
  Problem<T> p = p0;
  p.lines = normalised(p0.lines);  // line numbers are unchanged by the swap
  if (p.periodic && p.lines.n <= 2) return solve_periodic_tiny(p);
  const LineSet& l = p.lines;
  const Groups groups(l.count0, group_lanes(l, sizeof(T), threads));  // within one row of l0
  const Shape shape{groups.width(), groups.size() * l.count1};
  const Workspace<T> ws(layout_for(shape, l, p.periodic, threads, sizeof(T), p.method), raw);
  SharedFactor<T> factor;
  const SharedFactor<T>* shared = nullptr;
  const index_t bad = prepare_shared(p, ws, factor, shared);
  const BandView<T>& bd = p.bands;
  const index_t per_row = groups.size();
  const index_t first =
      for_each_item(shape.items, l.n * l.lines(), threads_now(threads), [&](index_t item, int t) {
        const index_t l1 = item / per_row;
        const Groups::Group g = groups[item % per_row];
        const index_t o = g.start + l1 * l.stride1, ob = bd.shared ? 0 : o;
        return with_group<simd::kWidth<T>, kMaxChunks>(g.width, [&]<int W, int K>() {
          using V = simd::Vec<T, W>;
          AdjacentRows<T, W, K> src{bd.a + ob, bd.b + ob, bd.c + ob, p.d + o, l.stride};
          AdjacentRowsOut<T, W, K> dst{p.u + o, l.stride};
          const int lane = solve_group<T, V, K>(l.n, p.periodic, shared, src, dst, ws.template thread<V>(t), p.method);
          return lane < 0 ? kNoLine : g.start + lane + l1 * l.count0;
        });
      });
  return first_bad(bad, first);
}

template index_t thomas_vector<float>(const Problem<float>&, void*, int);
template index_t thomas_vector<double>(const Problem<double>&, void*, int);

}  // namespace adi::cpu::detail
