/* adi from C: a batch of tridiagonal systems, then one ADI heat step (examples/c).
 *   c_api_example [--cuda]     exits 0 when both answers check out, 1 otherwise.
 * With --cuda the tridiagonal batch is solved on the GPU (arrays in adi_buffers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adi/adi_c.h"

#define TRY(call)                                                                   \
  do {                                                                              \
    adi_status s_ = (call);                                                         \
    if (s_ != ADI_SUCCESS) {                                                        \
      fprintf(stderr, "%s: %s\n", adi_status_string(s_), adi_last_error_message()); \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

enum { N = 1000, COUNT = 4096, NX = 65 };

/* count systems of n: -u[i-1] + 4 u[i] - u[i+1] = d[i], solved on the host or the device. */
static int tridiagonal_batch(int cuda) {
  const size_t values = (size_t)N * COUNT, bytes = values * sizeof(double);
  double* h[5]; /* a, b, c, d, u */
  adi_buffer* dev[5] = {NULL, NULL, NULL, NULL, NULL};
  double* arg[5];
  adi_executor* ex = NULL;
  adi_lines lines;
  adi_tridiagonal_plan* plan = NULL;
  double worst = 0;
  size_t k;
  int i;
  for (i = 0; i < 5; ++i) h[i] = malloc(bytes);
  for (k = 0; k < values; ++k) h[0][k] = h[2][k] = -1, h[1][k] = 4, h[3][k] = sin(0.001 * (double)k), h[4][k] = NAN;
  TRY(cuda ? adi_executor_create_cuda(0, NULL, &ex) : adi_executor_create_host(0, &ex));
  for (i = 0; i < 5; ++i) {
    arg[i] = h[i];
    if (cuda) {
      TRY(adi_buffer_create(ex, (int64_t)bytes, &dev[i]));
      TRY(adi_buffer_copy_from_host(dev[i], h[i], (int64_t)bytes));
      arg[i] = adi_buffer_data(dev[i]);
    }
  }
  TRY(adi_lines_strided(N, COUNT, 1, N, &lines)); /* COUNT systems of N, one after another */
  TRY(adi_tridiagonal_plan_create(ex, ADI_FLOAT64, &lines, NULL, &plan));
  TRY(adi_tridiagonal_solve_f64(plan, arg[0], arg[1], arg[2], arg[3], arg[4]));
  if (cuda) TRY(adi_buffer_copy_to_host(dev[4], h[4], (int64_t)bytes));
  for (k = 0; k < values; ++k) {
    const size_t i0 = k % N;
    const double r = 4 * h[4][k] - (i0 > 0 ? h[4][k - 1] : 0) - (i0 + 1 < N ? h[4][k + 1] : 0) - h[3][k];
    worst = fabs(r) > worst || r != r ? fabs(r) : worst;
  }
  printf("tridiagonal: %d systems of %d on %s (kernel %s), residual %.2e\n", COUNT, N, cuda ? "the GPU" : "the host",
         adi_tridiagonal_plan_kernel(plan), worst);
  adi_tridiagonal_plan_destroy(plan);
  for (i = 0; i < 5; ++i) adi_buffer_destroy(dev[i]), free(h[i]);
  adi_executor_destroy(ex);
  return worst < 1e-12 ? 0 : 1;
}

/* One Douglas step of u_t = u_xx + u_yy on the unit square, u = sin(pi x) sin(pi y), u = 0 on
 * the faces: compared with the exact decay exp(-2 pi^2 t). */
static int heat_step(void) {
  const double pi = 3.14159265358979323846, dt = 1e-4;
  static double u[NX * NX];
  double worst = 0;
  int i, j;
  adi_executor* ex = NULL;
  adi_heat_problem p;
  adi_heat_solver* heat = NULL;
  TRY(adi_executor_create_host(0, &ex));
  adi_heat_problem_init(&p);
  p.n[0] = p.n[1] = NX;
  p.diffusivity[2] = 0;
  TRY(adi_heat_solver_create(ex, ADI_FLOAT64, &p, &heat));
  for (j = 0; j < NX; ++j)
    for (i = 0; i < NX; ++i) u[i + NX * j] = sin(pi * i / (NX - 1)) * sin(pi * j / (NX - 1));
  TRY(adi_heat_write_f64(heat, u));
  TRY(adi_heat_step(heat, 0.0, dt));
  TRY(adi_heat_read_f64(heat, u));
  for (j = 0; j < NX; ++j)
    for (i = 0; i < NX; ++i) {
      const double e = fabs(u[i + NX * j] - exp(-2 * pi * pi * dt) * sin(pi * i / (NX - 1)) * sin(pi * j / (NX - 1)));
      worst = e > worst || e != e ? e : worst;
    }
  printf("heat: one Douglas step on %dx%d, error %.2e\n", NX, NX, worst);
  adi_heat_solver_destroy(heat);
  adi_executor_destroy(ex);
  return worst < 1e-5 ? 0 : 1;
}

int main(int argc, char** argv) {
  const int cuda = argc > 1 && strcmp(argv[1], "--cuda") == 0;
  const int bad = tridiagonal_batch(cuda) | heat_step();
  return bad ? EXIT_FAILURE : EXIT_SUCCESS;
}
