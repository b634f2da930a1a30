#pragma once
// One whole line through an access policy (variable-size batches, issue 23, stop 37): the
// elimination of solvers/common/pivoting_core.hpp (pivot_step / pivot_last, every pivoting
// route's) and its back substitution, host and device. A header of its own so that the routes
// that include pivoting_core.hpp are not rebuilt for it (their machine code is unchanged).
//
// The elimination (pivot_step / pivot_last) and its back substitution over one line of
// n >= 1 rows, reached through Io (one system of a variable-size batch: solvers/cuda/
// pivoting_variable.cuh; the host test runs it on host arrays):
//   T a(i), b(i), c(i), d(i)      row i's coefficients and right-hand side (a(0), c(n-1) are
//                                 never read);
//   void put(i, u1, u2, y)        U row i (scaled): y may go to the solution's place, since
//                                 put(i) comes after d(i + 1) was read, get(i) before store(i);
//   void get(i, u1&, u2&, y&)     the same values back;
//   void store(i, x)              the solution.
// Returns whether a pivot was zero or not finite. Not periodic.
#include "solvers/common/pivoting_core.hpp"

namespace adi::common {

template <class T, class Io>
ADI_PIVOT_HD bool pivot_line(Io& io, long long n) {
  if (n <= 0) return false;
  auto bad_r = [](T r) { return !(finite_value(r) && r != T(0)); };
  bool bad = false;
  PivotRow<T> cur{io.b(0), n > 1 ? io.c(0) : T(0), io.d(0)};
  for (long long i = 1; i < n; ++i) {
    const T a = io.a(i), b = io.b(i), c = i == n - 1 ? T(0) : io.c(i), d = io.d(i);
    const PivotOut<T> o = pivot_step<T>(cur, a, b, c, d);
    bad |= bad_r(o.r);
    io.put(i - 1, o.u1, o.u2, o.y);
  }
  const PivotOut<T> last = pivot_last<T>(cur);
  bad |= bad_r(last.r);
  T x1 = last.y, x2 = T(0);
  io.store(n - 1, x1);
  for (long long i = n - 2; i >= 0; --i) {
    T u1, u2, y;
    io.get(i, u1, u2, y);
    const T x = y - u1 * x1 - u2 * x2;
    x2 = x1;
    x1 = x;
    io.store(i, x);
  }
  return bad;
}

}  // namespace adi::common
