// PLACEHOLDER (scaffold): plain per-line Thomas so the tree builds; replaced by the
// real host backend (reference, transpose, vector kernels, periodic).
#include "solvers/cpu/tridiagonal_cpu.hpp"

#include <vector>

namespace adi::cpu {

std::size_t workspace_bytes(Kernel, const LineSet& l, bool, int, std::size_t vs) {
  return static_cast<std::size_t>(l.n) * vs;
}

template <class T>
void solve(Kernel, const LineSet& l, BandView<T> bd, const T* d, T* u, bool, bool, void* ws, int) {
  T* cs = static_cast<T*>(ws);
  for (index_t line = 0; line < l.lines(); ++line) {
    const index_t o = l.offset(line);
    auto at = [&](const T* p, index_t i) { return bd.shared ? p[i] : p[o + i * l.stride]; };
    T r = T(1) / at(bd.b, 0);
    cs[0] = at(bd.c, 0) * r;
    u[o] = d[o] * r;
    for (index_t i = 1; i < l.n; ++i) {
      r = T(1) / (at(bd.b, i) - at(bd.a, i) * cs[i - 1]);
      cs[i] = at(bd.c, i) * r;
      u[o + i * l.stride] = (d[o + i * l.stride] - at(bd.a, i) * u[o + (i - 1) * l.stride]) * r;
    }
    for (index_t i = l.n - 2; i >= 0; --i) u[o + i * l.stride] -= cs[i] * u[o + (i + 1) * l.stride];
  }
}

template void solve<float>(Kernel, const LineSet&, BandView<float>, const float*, float*, bool, bool, void*, int);
template void solve<double>(Kernel, const LineSet&, BandView<double>, const double*, double*, bool, bool, void*,
                            int);
}  // namespace adi::cpu
