// Kernel::cpu_thomas_vector: lines adjacent in memory (stride0 == 1: the Y and Z sweeps
// of a box, interleaved batches). Row i of W neighbouring lines is one vector load at
// i*stride, so the lanes solve W lines with no transpose (paper section 5, "Y and Z
// dimension"); c* and d* live in a per-thread scratch of W*n values each.
#include "solvers/cpu/adjacent_rows.hpp"
#include "solvers/cpu/kernels.hpp"

namespace adi::cpu::detail {

Shape thomas_vector_shape(const LineSet& lines, std::size_t value_size) {
  const LineSet l = normalised(lines);
  const Groups g(l.count0, simd::kVectorBytes / static_cast<int>(value_size));
  return {g.width(), g.size() * l.count1};
}

template <class T>
index_t thomas_vector(const Problem<T>& p0, void* raw, int threads) {
  Problem<T> p = p0;
  p.lines = normalised(p0.lines);  // line numbers are unchanged by the swap
  if (p.periodic && p.lines.n <= 2) return solve_periodic_tiny(p);
  const LineSet& l = p.lines;
  const Groups groups(l.count0, simd::kWidth<T>);  // groups within one row of l0
  const Shape shape = thomas_vector_shape(l, sizeof(T));
  const Workspace<T> ws(layout_for(shape, l, p.periodic, threads, sizeof(T)), raw);
  SharedFactor<T> factor;
  const SharedFactor<T>* shared = nullptr;
  const index_t bad = prepare_shared(p, ws, factor, shared);
  const BandView<T>& bd = p.bands;
  const index_t per_row = groups.size();
  const index_t first = for_each_item(shape.items, threads_now(threads), [&](index_t item, int t) {
    const index_t l1 = item / per_row;
    const Groups::Group g = groups[item % per_row];
    const index_t o = g.start + l1 * l.stride1, ob = bd.shared ? 0 : o;
    return with_width<T>(g.width, [&]<int W>() {
      AdjacentRows<T, W> src{bd.a + ob, bd.b + ob, bd.c + ob, p.d + o, l.stride};
      AdjacentRowsOut<T, W> dst{p.u + o, l.stride};
      const auto m = solve_group<T, W>(l.n, p.periodic, shared, src, dst, ws.template thread<W>(t));
      const int j = simd::first_set<W>(m);
      return j < 0 ? kNoLine : g.start + j + l1 * l.count0;
    });
  });
  return first_bad(bad, first);
}

template index_t thomas_vector<float>(const Problem<float>&, void*, int);
template index_t thomas_vector<double>(const Problem<double>&, void*, int);

}  // namespace adi::cpu::detail
