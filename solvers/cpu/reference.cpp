// Kernel::reference: the fp64 oracle of solvers/reference/thomas.hpp, one line at a
// time on the calling thread (Thomas; with pivoting automatic or partial, its partial
// pivoting solve: the reference has no stability check to fall back on). Lines it cannot solve are filled with NaN (they only
// reach the caller when check_pivots is off).
#include <limits>

#include "solvers/cpu/tridiagonal_kernels.hpp"
#include "solvers/reference/thomas.hpp"

namespace adi::cpu::detail {

template <class T>
index_t reference_lines(const Problem<T>& p) {
  const LineSet& l = p.lines;
  const LineSet one{l.n, l.stride, 1, 0, 1, 0};
  const BandView<T>& bd = p.bands;
  index_t bad = -1;
  for (index_t line = 0; line < l.lines(); ++line) {
    const index_t o = l.offset(line), ob = bd.shared ? 0 : o;
    if (reference::thomas(one, bd.a + ob, bd.b + ob, bd.c + ob, bd.shared, p.d + o, p.u + o, p.periodic,
                          p.method != Method::thomas) >= 0) {
      if (bad < 0) bad = line;
      for (index_t i = 0; i < l.n; ++i) p.u[o + i * l.stride] = std::numeric_limits<T>::quiet_NaN();
    }
  }
  return bad;
}

template index_t reference_lines<float>(const Problem<float>&);
template index_t reference_lines<double>(const Problem<double>&);

}  // namespace adi::cpu::detail
