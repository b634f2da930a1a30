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
// Returns whether a pivot was zero or not finite. Not periodic (pivot_line_periodic below).
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/pivoting_core.hpp"

namespace adi::common {

// The elimination alone over rows 0 .. n-1 (n >= 1) through Io's a, b, c, d: before(i, cur) sees
// the current row before step i (i = 1 .. n-1), emit(i - 1, o) step i's U row; the last row's
// in `last`. Returns whether a pivot was zero or not finite. pivot_line's forward pass, and the
// X-tile route's recompute form's (solvers/common/pivoting_xtile.hpp, which saves the state).
template <class T, class Io, class Before, class Emit>
ADI_PIVOT_HD bool pivot_forward(Io& io, long long n, PivotOut<T>& last, Before&& before, Emit&& emit) {
  auto bad_r = [](T r) { return !(finite_value(r) && r != T(0)); };
  bool bad = false;
  PivotRow<T> cur{io.b(0), n > 1 ? io.c(0) : T(0), io.d(0)};
  for (long long i = 1; i < n; ++i) {
    before(i, static_cast<const PivotRow<T>&>(cur));
    const T a = io.a(i), b = io.b(i), c = i == n - 1 ? T(0) : io.c(i), d = io.d(i);
    const PivotOut<T> o = pivot_step<T>(cur, a, b, c, d);
    bad |= bad_r(o.r);
    emit(i - 1, o);
  }
  last = pivot_last<T>(cur);
  bad |= bad_r(last.r);
  return bad;
}

template <class T, class Io>
ADI_PIVOT_HD bool pivot_line(Io& io, long long n) {
  if (n <= 0) return false;
  PivotOut<T> last{};
  const bool bad = pivot_forward<T>(
      io, n, last, [](long long, const PivotRow<T>&) {},
      [&io](long long i, const PivotOut<T>& o) { io.put(i, o.u1, o.u2, o.y); });
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


// A periodic line (row 0's a couples to x_{n-1}, row n-1's c to x_0): the core's elimination of
// the cyclic matrix (cyclic_start / cyclic_step / cyclic_finish), as pivoting_thread_line.cuh
// runs it, through the same Io plus
//   void put_cyclic(i, us, ul)    U row i's columns n-2, n-1 (scaled);
//   void get_cyclic(i, us&, ul&)  the same values back.
// n = 1: (a + b + c) x = d; n = 2: the 2x2 with both couplings (as the reference). Returns
// whether a pivot was zero or not finite (n = 1: also a + b + c cancelled to rounding noise).
template <class T, class Io>
ADI_PIVOT_HD bool pivot_line_periodic(Io& io, long long n) {
  if (n <= 0) return false;
  auto bad_r = [](T r) { return !(finite_value(r) && r != T(0)); };
  if (n == 1) {
    const T a = io.a(0), b = io.b(0), c = io.c(0), p = a + b + c;
    io.store(0, io.d(0) / p);
    return bad_r(p) || singular_self_coupled<T>(a, b, c);
  }
  if (n == 2) {
    const T m00 = io.b(0), m01 = io.a(0) + io.c(0), m10 = io.a(1) + io.c(1), m11 = io.b(1);
    const T det = m00 * m11 - m01 * m10;
    const T d0 = io.d(0), d1 = io.d(1);
    io.store(0, (d0 * m11 - m01 * d1) / det);
    io.store(1, (m00 * d1 - m10 * d0) / det);
    return bad_r(det);
  }
  bool bad = false;
  CyclicRow<T> C{}, L{};
  cyclic_start(n, io.a(0), io.b(0), io.c(0), io.d(0), io.a(n - 1), io.b(n - 1), io.c(n - 1), io.d(n - 1), C, L);
  for (long long i = 1; i < n - 1; ++i) {
    const T a = io.a(i), b = io.b(i), c = io.c(i), d = io.d(i);
    const CyclicOut<T> o = cyclic_step<T>(C, L, cyclic_row(i + 1 == n - 1, a, b, c, d), i + 1 == n - 2);
    bad |= bad_r(o.r);
    io.put(i - 1, o.u1, o.u2, o.y);
    io.put_cyclic(i - 1, o.us, o.ul);
  }
  CyclicOut<T> r2, r1;
  cyclic_finish<T>(C, L, r2, r1);
  bad |= bad_r(r2.r) || bad_r(r1.r);
  const T xl = r1.y, xs = r2.y - r2.ul * xl;
  io.store(n - 1, xl);
  io.store(n - 2, xs);
  T x1 = xs, x2 = xl;
  for (long long i = n - 3; i >= 0; --i) {
    T u1, u2, y, us, ul;
    io.get(i, u1, u2, y);
    io.get_cyclic(i, us, ul);
    const T x = y - u1 * x1 - u2 * x2 - us * xs - ul * xl;
    x2 = x1;
    x1 = x;
    io.store(i, x);
  }
  return bad;
}

}  // namespace adi::common
