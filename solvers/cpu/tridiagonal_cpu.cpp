// The host backend: routes a validated solve to its kernel (one file per algorithm in
// this folder) and turns a bad line into SingularSystem or UnstableSystem.
#include "solvers/cpu/tridiagonal_cpu.hpp"

#include <string>

#include "adi/base/error.hpp"
#include "solvers/common/thomas_check.hpp"
#include "solvers/common/thomas_core.hpp"
#include "solvers/cpu/tridiagonal_kernels.hpp"

namespace adi::cpu {

namespace {
// The Thomas kernel behind a pivoting one (the same layouts), and the method it runs.
Kernel sweep_kernel(Kernel k) {
  switch (k) {
    case Kernel::cpu_pivoting: return Kernel::cpu_thomas;
    case Kernel::cpu_pivoting_transpose: return Kernel::cpu_thomas_transpose;
    case Kernel::cpu_pivoting_vector: return Kernel::cpu_thomas_vector;
    default: return k;
  }
}
detail::Method method_of(Kernel k, Pivoting p) {
  if (sweep_kernel(k) != k || p == Pivoting::partial) return detail::Method::pivoting;
  return p == Pivoting::automatic ? detail::Method::automatic : detail::Method::thomas;
}

// Where Thomas fails on one line (in T, as the kernels): the first row whose pivot is zero
// or not finite (unstable = false) or whose elimination fails thomas_check.hpp's growth test
// (unstable = true). Periodic lines factorise the Sherman-Morrison A' (gamma = -b_0).
struct Diagnosis {
  index_t row = -1;
  bool unstable = false;
};
template <class T>
Diagnosis diagnose(const LineSet& l, const BandView<T>& bd, index_t line, bool periodic) {
  const index_t o = l.offset(line), n = l.n;
  auto co = [&](const T* q, index_t i) { return bd.shared ? q[i] : q[o + i * l.stride]; };
  if (periodic && n <= 2) return {0, false};
  const common::PeriodicSplit<T> split(periodic ? co(bd.a, 0) : T(0), periodic ? co(bd.b, 0) : T(1),
                                       periodic ? co(bd.c, n - 1) : T(0));
  T cs = 0;
  for (index_t i = 0; i < n; ++i) {
    const T a = i == 0 ? T(0) : co(bd.a, i), c = i + 1 < n ? co(bd.c, i) : T(0);
    const T b = periodic ? split.b(i, n, co(bd.b, i)) : co(bd.b, i);
    const T r = T(1) / common::thomas_pivot(a, b, cs);
    if (common::bad_reciprocal(r)) return {i, false};
    if (common::thomas_unsafe<T>(a * cs, a, b, c)) return {i, true};
    cs = c * r;
  }
  return {n - 1, false};  // the periodic correction
}
}  // namespace

std::size_t workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic, int threads,
                            std::size_t value_size, Pivoting pivoting) {
  detail::Shape s;
  switch (sweep_kernel(kernel)) {
    case Kernel::cpu_thomas: s = detail::thomas_shape(lines, value_size, threads); break;
    case Kernel::cpu_thomas_transpose: s = detail::thomas_transpose_shape(lines, value_size, threads); break;
    case Kernel::cpu_thomas_vector: s = detail::thomas_vector_shape(lines, value_size, threads); break;
    default: return 0;  // the reference allocates its own line buffers
  }
  return detail::layout_for(s, lines, periodic, threads, value_size, method_of(kernel, pivoting)).bytes();
}

template <class T>
void solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u, bool periodic,
           bool check_pivots, void* workspace, int threads, Pivoting pivoting) {
  const detail::Method method = method_of(kernel, pivoting);
  const detail::Problem<T> p{lines, bands, d, u, periodic, method};
  index_t bad = -1;
  switch (sweep_kernel(kernel)) {
    case Kernel::reference: bad = detail::reference_lines(p); break;
    case Kernel::cpu_thomas: bad = detail::thomas(p, workspace, threads); break;
    case Kernel::cpu_thomas_transpose: bad = detail::thomas_transpose(p, workspace, threads); break;
    case Kernel::cpu_thomas_vector: bad = detail::thomas_vector(p, workspace, threads); break;
    default:
      throw InvalidArgument(std::string("host tridiagonal solve: kernel ") + kernel_name(kernel) +
                            " is not a host kernel");
  }
  if (bad < 0 || !check_pivots) return;
  const std::string where = "line " + std::to_string(bad) + " (l0 = " + std::to_string(bad % lines.count0) +
                            ", l1 = " + std::to_string(bad / lines.count0) + ") of " +
                            std::to_string(lines.lines()) + " lines" +
                            (bands.shared ? " (shared bands: every line)" : "");
  const std::string who = "tridiagonal solve (" + std::string(kernel_name(kernel)) + "): ";
  if (method == detail::Method::thomas) {
    const Diagnosis g = diagnose(lines, bands, bad, periodic);
    if (g.unstable)
      throw UnstableSystem(who + "Thomas without pivoting is unstable at row " + std::to_string(g.row) +
                               " of " + where +
                               ": the elimination grows past the stability bound (the system is not "
                               "diagonally dominant there); set TridiagonalOptions::pivoting to automatic "
                               "or partial (docs/pivoting.md)",
                           bad, g.row);
    throw SingularSystem(who + "zero or non-finite pivot at row " + std::to_string(g.row) + " of " + where +
                             "; the system is singular or not diagonally dominant enough for a solver "
                             "without pivoting (set TridiagonalOptions::pivoting to partial)" +
                             (periodic ? " (periodic: Sherman-Morrison also needs b[0] != 0)" : ""),
                         bad, g.row);
  }
  throw SingularSystem(who + "zero or non-finite pivot with partial pivoting in " + where +
                           ": the system is singular" +
                           (periodic ? " (or its periodic Sherman-Morrison correction is)" : ""),
                       bad);
}

template void solve<float>(Kernel, const LineSet&, BandView<float>, const float*, float*, bool, bool, void*,
                           int, Pivoting);
template void solve<double>(Kernel, const LineSet&, BandView<double>, const double*, double*, bool, bool,
                            void*, int, Pivoting);

}  // namespace adi::cpu
