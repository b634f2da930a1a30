/* The installed C API from a C-only project: one small tridiagonal batch, checked. */
#include <adi/adi_c.h>
#include <stdio.h>

int main(void) {
  double a[6] = {0, -1, -1, 0, -1, -1}, b[6] = {4, 4, 4, 4, 4, 4}, c[6] = {-1, -1, 0, -1, -1, 0};
  double d[6] = {3, 2, 3, 3, 2, 3}, u[6];
  adi_executor* ex = NULL;
  adi_lines lines;
  adi_tridiagonal_plan* plan = NULL;
  int k, bad = 0;
  if (adi_executor_create_host(1, &ex) || adi_lines_strided(3, 2, 1, 3, &lines) ||
      adi_tridiagonal_plan_create(ex, ADI_FLOAT64, &lines, NULL, &plan) ||
      adi_tridiagonal_solve_f64(plan, a, b, c, d, u)) {
    printf("adi C consumer: %s\n", adi_last_error_message());
    return 1;
  }
  for (k = 0; k < 6; ++k) bad |= u[k] < 1 - 1e-12 || u[k] > 1 + 1e-12; /* the solution is all ones */
  printf("adi %s C consumer: u = %g %g %g ... %s\n", adi_version(), u[0], u[1], u[2], bad ? "WRONG" : "ok");
  adi_tridiagonal_plan_destroy(plan);
  adi_executor_destroy(ex);
  return bad;
}
