// A user's program: solves one batch through the installed adi and checks the answer.
#include <adi/adi.hpp>  // every public header must be installed and self-contained

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const int n = 17, lines = 5;
  std::vector<double> a(n * lines, -1.0), b(n * lines, 4.0), c(n * lines, -1.0), u(n * lines, 0.0);
  // d = A * 1 so the exact solution is all ones.
  std::vector<double> d(n * lines);
  for (int l = 0; l < lines; ++l)
    for (int i = 0; i < n; ++i) d[l * n + i] = 4.0 - (i > 0 ? 1.0 : 0.0) - (i < n - 1 ? 1.0 : 0.0);
  adi::solve_tridiagonal(adi::Executor::host(), adi::StridedLines::contiguous(n, lines),
                         adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
  double err = 0;
  for (double x : u) err = std::fmax(err, std::fabs(x - 1.0));
  std::printf("consumer: max error %.3g\n", err);
  return err < 1e-12 ? 0 : 1;
}
