// Kernel::cpu_thomas_vector: lines adjacent in memory (stride0 == 1: the Y and Z sweeps
// of a box, interleaved batches). Row i of neighbouring lines is read with vector loads
// at i*stride, so the lanes solve the lines with no transpose (paper section 5, "Y and
// Z dimension"); c* and d* live in a per-thread scratch.
#include <cstdint>

#include "solvers/cpu/adjacent_rows.hpp"
#include "solvers/cpu/tridiagonal_kernels.hpp"

namespace adi::cpu::detail {

namespace {

// Solves whose u has at least this many bytes write it with non-temporal stores.
std::size_t stream_bytes = std::size_t(16) << 20;

// Group policy: each row of a group reads kGroupBytes of neighbouring lines per array
// (fewer where the lines run out). Wide groups are what makes these sweeps stream: a Z
// sweep steps a whole plane per row, a Y sweep a whole x-row, and the memory system
// streams contiguous pieces of a row, not 64-byte vectors at a plane stride. Measured on
// a 256 x 256 x 128 grid, 2 threads (docs/design.md, "Host kernels"): on a Zen 4, one
// 64-byte vector per row and array 7 GB/s, 128 B 12-15, 256 B 19, 512 B 24; on a 2-core
// Zen 3 VM (copy ~20 GB/s), 512 B ran Y and Z at 40-55% of copy, groups of whole x-rows
// (1 KiB float, 2 KiB double) 85-90% for Y, and 2 KiB 60-75% for Z.
constexpr int kMaxChunks = 2048 / simd::kVectorBytes < 64 ? 2048 / simd::kVectorBytes : 64;
constexpr std::size_t kGroupBytes = std::size_t(kMaxChunks) * simd::kVectorBytes;
// ... while c* and d* of a group (2 * lanes * n values) stay within 1 MiB: L2 on the Xeon
// (2 MiB per core), L2 + L3 on the Zen 3 VM (512 KiB L2); half of that lost fp64 Y its
// whole-row groups and 35 of its 88% of copy.
constexpr std::size_t kScratchBytes = std::size_t(1) << 20;

// Rows of lines that follow each other in memory are one row of lines (the Z sweep of a
// dense box: the x-rows of a plane), so groups may span them.
LineSet merged(const LineSet& lines) {
  LineSet l = normalised(lines);
  if (l.count1 > 1 && l.stride0 == 1 && l.stride1 == l.count0) {
    l.count0 *= l.count1;
    l.count1 = 1;
    l.stride1 = 0;
  }
  return l;
}

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

std::size_t set_thomas_vector_stream_bytes_for_testing(std::size_t bytes) {
  const std::size_t old = stream_bytes;
  stream_bytes = bytes;
  return old;
}

Shape thomas_vector_shape(const LineSet& lines, std::size_t value_size, int threads) {
  const LineSet l = merged(lines);
  const Groups g(l.count0, group_lanes(l, value_size, threads));
  return {g.width(), g.size() * l.count1};
}

template <class T>
index_t thomas_vector(const Problem<T>& p0, void* raw, int threads) {
  Problem<T> p = p0;
  p.lines = merged(p0.lines);  // line numbers are unchanged by the swap and the merge
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
  // u larger than the caches is written with non-temporal stores (AdjacentRowsOut).
  const bool large = static_cast<std::size_t>(l.n * l.lines()) * sizeof(T) >= stream_bytes;
  const index_t first =
      for_each_item(shape.items, l.n * l.lines(), threads_now(threads), [&](index_t item, int t) {
        const index_t l1 = item / per_row;
        const Groups::Group g = groups[item % per_row];
        const index_t o = g.start + l1 * l.stride1, ob = bd.shared ? 0 : o;
        return with_group<simd::kWidth<T>, kMaxChunks>(g.width, [&]<int W, int K>() {
          using V = simd::Vec<T, W>;
          AdjacentRows<T, W, K> src{bd.a + ob, bd.b + ob, bd.c + ob, p.d + o, l.stride};
          // Streaming needs every vector aligned to its size and whole cache lines per row.
          const bool stream = large && W == simd::kWidth<T> && K * sizeof(V) % 64 == 0 &&
                              reinterpret_cast<std::uintptr_t>(p.u + o) % sizeof(V) == 0 &&
                              (static_cast<std::size_t>(l.stride) * sizeof(T)) % sizeof(V) == 0;
          AdjacentRowsOut<T, W, K> dst{p.u + o, l.stride, stream};
          const int lane = solve_group<T, V, K>(l.n, p.periodic, shared, src, dst, ws.template thread<V>(t), p.method);
          dst.finish();
          return lane < 0 ? kNoLine : g.start + lane + l1 * l.count0;
        });
      });
  return first_bad(bad, first);
}

template index_t thomas_vector<float>(const Problem<float>&, void*, int);
template index_t thomas_vector<double>(const Problem<double>&, void*, int);

}  // namespace adi::cpu::detail
