// The host backend: routes a validated solve to its kernel (one file per algorithm in
// this folder) and turns a bad pivot into SingularSystem.
#include "solvers/cpu/tridiagonal_cpu.hpp"

#include <string>

#include "adi/base/error.hpp"
#include "solvers/cpu/tridiagonal_kernels.hpp"

namespace adi::cpu {

std::size_t workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic, int threads,
                            std::size_t value_size) {
  detail::Shape s;
  switch (kernel) {
    case Kernel::cpu_thomas: s = detail::thomas_shape(lines, value_size, threads); break;
    case Kernel::cpu_thomas_transpose: s = detail::thomas_transpose_shape(lines, value_size, threads); break;
    case Kernel::cpu_thomas_vector: s = detail::thomas_vector_shape(lines, value_size, threads); break;
    default: return 0;  // the reference allocates its own line buffers
  }
  return detail::layout_for(s, lines, periodic, threads, value_size).bytes();
}

template <class T>
void solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u, bool periodic,
           bool check_pivots, void* workspace, int threads) {
  const detail::Problem<T> p{lines, bands, d, u, periodic};
  index_t bad = -1;
  switch (kernel) {
    case Kernel::reference: bad = detail::reference_lines(p); break;
    case Kernel::cpu_thomas: bad = detail::thomas(p, workspace, threads); break;
    case Kernel::cpu_thomas_transpose: bad = detail::thomas_transpose(p, workspace, threads); break;
    case Kernel::cpu_thomas_vector: bad = detail::thomas_vector(p, workspace, threads); break;
    default:
      throw InvalidArgument(std::string("host tridiagonal solve: kernel ") + kernel_name(kernel) +
                            " is not a host kernel");
  }
  if (bad >= 0 && check_pivots)
    throw SingularSystem(
        "tridiagonal solve (" + std::string(kernel_name(kernel)) + "): zero or non-finite pivot in line " +
        std::to_string(bad) + " (l0 = " + std::to_string(bad % lines.count0) +
        ", l1 = " + std::to_string(bad / lines.count0) + ") of " + std::to_string(lines.lines()) + " lines" +
        (bands.shared ? " (shared bands: every line)" : "") +
        "; the system is singular or not diagonally dominant enough for a solver "
        "without pivoting" +
        (periodic ? " (periodic: Sherman-Morrison also needs b[0] != 0)" : ""), bad);
}

template void solve<float>(Kernel, const LineSet&, BandView<float>, const float*, float*, bool, bool, void*,
                           int);
template void solve<double>(Kernel, const LineSet&, BandView<double>, const double*, double*, bool, bool,
                            void*, int);

}  // namespace adi::cpu
