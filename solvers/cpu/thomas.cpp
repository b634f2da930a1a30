// Kernel::cpu_thomas: one line at a time (one lane), any element and line strides,
// OpenMP across lines. The fallback for layouts the SIMD kernels cannot read.
#include "solvers/cpu/adjacent_rows.hpp"
#include "solvers/cpu/tridiagonal_kernels.hpp"

namespace adi::cpu::detail {

Shape thomas_shape(const LineSet& lines, std::size_t, int) { return {1, lines.lines()}; }

template <class T>
index_t thomas(const Problem<T>& p, void* raw, int threads) {
  if (p.periodic && p.lines.n <= 2) return solve_periodic_tiny(p);
  const LineSet& l = p.lines;
  const Shape shape = thomas_shape(l, sizeof(T), threads);
  const Workspace<T> ws(layout_for(shape, l, p.periodic, threads, sizeof(T), p.method), raw);
  SharedFactor<T> factor;
  const SharedFactor<T>* shared = nullptr;
  const index_t bad = prepare_shared(p, ws, factor, shared);
  const BandView<T>& bd = p.bands;
  using V = simd::Vec<T, 1>;
  const index_t first =
      for_each_item(shape.items, l.n * l.lines(), threads_now(threads), [&](index_t line, int t) {
        const index_t o = l.offset(line), ob = bd.shared ? 0 : o;
        AdjacentRows<T, 1, 1> src{bd.a + ob, bd.b + ob, bd.c + ob, p.d + o, l.stride};
        AdjacentRowsOut<T, 1, 1> dst{p.u + o, l.stride};
        const int lane = solve_group<T, V, 1>(l.n, p.periodic, shared, src, dst, ws.template thread<V>(t), p.method);
        return lane < 0 ? kNoLine : line;
      });
  return first_bad(bad, first);
}

template index_t thomas<float>(const Problem<float>&, void*, int);
template index_t thomas<double>(const Problem<double>&, void*, int);

}  // namespace adi::cpu::detail
