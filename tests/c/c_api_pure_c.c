/* The C API from a C99 translation unit compiled with -std=c99 -pedantic -Werror (tests/c/
 * CMakeLists.txt): the header is plain C. Solves a batch of tridiagonal systems in both
 * precisions and a column-major block batch, checks the answers and two error paths;
 * exits non-zero on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "adi/adi_c.h"

static int failures = 0;
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
              adi_last_error_message());                                         \
      ++failures;                                                                \
    }                                                                            \
  } while (0)

/* The README's C example ("From C and Fortran"), as it is printed there: keep them equal. */
static int readme_example(void) {
  enum { nx = 5, ny = 7, nz = 3 };
  static double a[nx * ny * nz], b[nx * ny * nz], c[nx * ny * nz], d[nx * ny * nz], u[nx * ny * nz];
  int k, ok = 1;
  for (k = 0; k < nx * ny * nz; ++k) a[k] = c[k] = -1, b[k] = 2, d[k] = 0;
  for (k = 0; k < nx * nz; ++k) d[(k % nx) + nx * ny * (k / nx)] = d[(k % nx) + nx * (ny - 1) + nx * ny * (k / nx)] = 1;
  {
    adi_executor* ex;  adi_lines lines;  adi_tridiagonal_plan* plan;
    adi_executor_create_host(0, &ex);           /* or adi_executor_create_cuda(0, stream, &ex) */
    adi_lines_box(nx, ny, nz, 0, 0, ADI_AXIS_Y, &lines);   /* every line along y of a box */
    adi_tridiagonal_plan_create(ex, ADI_FLOAT64, &lines, NULL, &plan);
    if (adi_tridiagonal_solve_f64(plan, a, b, c, d, u) != ADI_SUCCESS)
      fprintf(stderr, "%s (line %lld)\n", adi_last_error_message(), (long long)adi_last_error_system()), ok = 0;
    adi_tridiagonal_plan_destroy(plan);  adi_executor_destroy(ex);
  }
  for (k = 0; k < nx * ny * nz; ++k) ok &= fabs(u[k] - 1) < 1e-12; /* -u[j-1] + 2u[j] - u[j+1] = 0, ends 1: u = 1 */
  return ok;
}

int main(void) {
  enum { N = 31, COUNT = 33, M = 3, NB = 5 };
  static double a[N * COUNT], b[N * COUNT], c[N * COUNT], d[N * COUNT], u[N * COUNT];
  static float af[N * COUNT], bf[N * COUNT], cf[N * COUNT], df[N * COUNT], uf[N * COUNT];
  static double A[COUNT * NB * M * M], B[COUNT * NB * M * M], C[COUNT * NB * M * M], bd[COUNT * NB * M],
      bu[COUNT * NB * M];
  adi_executor* ex = NULL;
  adi_tridiagonal_plan* plan = NULL;
  adi_tridiagonal_plan* planf = NULL;
  adi_block_plan* bplan = NULL;
  adi_lines lines;
  adi_block_lines blines;
  double worst = 0;
  int k, s, i, r, q;

  for (k = 0; k < N * COUNT; ++k) {
    a[k] = c[k] = -1.0, b[k] = 4.0, d[k] = sin(0.3 * k), u[k] = NAN;
    af[k] = cf[k] = -1.0f, bf[k] = 4.0f, df[k] = (float)d[k], uf[k] = NAN;
  }
  CHECK(adi_executor_create_host(0, &ex) == ADI_SUCCESS);
  CHECK(adi_lines_strided(N, COUNT, 1, N, &lines) == ADI_SUCCESS);
  CHECK(adi_tridiagonal_plan_create(ex, ADI_FLOAT64, &lines, NULL, &plan) == ADI_SUCCESS);
  CHECK(adi_tridiagonal_plan_create(ex, ADI_FLOAT32, &lines, NULL, &planf) == ADI_SUCCESS);
  CHECK(adi_tridiagonal_solve_f64(plan, a, b, c, d, u) == ADI_SUCCESS);
  CHECK(adi_tridiagonal_solve_f32(planf, af, bf, cf, df, uf) == ADI_SUCCESS);
  for (s = 0; s < COUNT; ++s)
    for (i = 0; i < N; ++i) {
      const int o = s * N + i;
      const double res = (i > 0 ? -u[o - 1] : 0) + 4 * u[o] - (i + 1 < N ? u[o + 1] : 0) - d[o];
      worst = fabs(res) > worst || res != res ? fabs(res) : worst;
      CHECK(fabs(uf[o] - u[o]) < 1e-5);
    }
  CHECK(worst < 1e-12);
  CHECK(adi_tridiagonal_solve_f32((adi_tridiagonal_plan*)plan, af, bf, cf, df, uf) == ADI_ERROR_WRONG_PRECISION);
  CHECK(adi_lines_strided(0, COUNT, 1, N, &lines) == ADI_ERROR_INVALID_ARGUMENT);

  /* Column-major 3x3 blocks, Fortran's A(r, c, i, s): B = 4 I + small, A = C = -I / 2. */
  for (s = 0; s < COUNT; ++s)
    for (i = 0; i < NB; ++i)
      for (r = 0; r < M; ++r) {
        for (q = 0; q < M; ++q) {
          const int e = ((s * NB + i) * M + q) * M + r;
          A[e] = C[e] = r == q ? -0.5 : 0.0;
          B[e] = r == q ? 4.0 : 0.1 * (r - q);
        }
        bd[(s * NB + i) * M + r] = 1.0 + r;
      }
  CHECK(adi_block_lines_contiguous(M, NB, COUNT, ADI_COLUMN_MAJOR, &blines) == ADI_SUCCESS);
  CHECK(adi_block_plan_create(ex, ADI_FLOAT64, &blines, NULL, &bplan) == ADI_SUCCESS);
  CHECK(adi_block_solve_f64(bplan, A, B, C, bd, bu) == ADI_SUCCESS);
  worst = 0;
  for (s = 0; s < COUNT; ++s)
    for (i = 0; i < NB; ++i)
      for (r = 0; r < M; ++r) {
        double res = -bd[(s * NB + i) * M + r];
        for (q = 0; q < M; ++q) {
          const int e = ((s * NB + i) * M + q) * M + r;
          if (i > 0) res += A[e] * bu[(s * NB + i - 1) * M + q];
          res += B[e] * bu[(s * NB + i) * M + q];
          if (i + 1 < NB) res += C[e] * bu[(s * NB + i + 1) * M + q];
        }
        worst = fabs(res) > worst || res != res ? fabs(res) : worst;
      }
  CHECK(worst < 1e-12);
  B[((4 * NB + 2) * M + 0) * M + 0] = B[((4 * NB + 2) * M + 1) * M + 1] = B[((4 * NB + 2) * M + 2) * M + 2] = 0;
  for (q = 0; q < M; ++q)
    for (r = 0; r < M; ++r) A[((4 * NB + 2) * M + q) * M + r] = B[((4 * NB + 2) * M + q) * M + r] = 0;
  CHECK(adi_block_solve_f64(bplan, A, B, C, bd, bu) == ADI_ERROR_SINGULAR_SYSTEM);
  CHECK(adi_last_error_system() == 4 && adi_last_error_row() == 2);

  CHECK(readme_example());
  adi_block_plan_destroy(bplan);
  adi_tridiagonal_plan_destroy(planf);
  adi_tridiagonal_plan_destroy(plan);
  adi_executor_destroy(ex);
  printf("C API from C99: %s (%d failures)\n", failures ? "FAILED" : "ok", failures);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
