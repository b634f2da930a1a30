/* adi's C API: plain C99, usable from C, Fortran (iso_c_binding), Python (ctypes) and
 * anything else that calls C. A thin layer over the C++ library (adi/adi.hpp):
 *
 *   adi_executor* ex;  adi_tridiagonal_plan* plan;  adi_lines lines;
 *   adi_executor_create_host(0, &ex);
 *   adi_lines_strided(n, count, 1, n, &lines);                 // count lines of n, one after another
 *   adi_tridiagonal_plan_create(ex, ADI_FLOAT64, &lines, NULL, &plan);
 *   if (adi_tridiagonal_solve_f64(plan, a, b, c, d, u) != ADI_SUCCESS)
 *     fprintf(stderr, "%s\n", adi_last_error_message());
 *   adi_tridiagonal_plan_destroy(plan);  adi_executor_destroy(ex);
 *
 * Rules that hold for every function:
 *  - Each returns an adi_status (ADI_SUCCESS = 0); no C++ exception ever crosses this
 *    boundary. A failure leaves a message naming the argument to change in
 *    adi_last_error_message() and, for a singular system, the failing system and row in
 *    adi_last_error_system() / adi_last_error_row(). The error state is per thread and is
 *    reset by every function that returns an adi_status (so it describes the last such
 *    call on the thread); queries (adi_last_error_*, adi_status_string, adi_cuda_available,
 *    adi_buffer_data, *_kernel, ...) leave it as it is.
 *  - Handles are opaque; each is created by a *_create function and freed by its
 *    *_destroy (NULL is accepted there). A plan keeps its own copy of the executor.
 *    One plan per concurrent caller (plans own their workspace).
 *  - Sizes, strides and counts are int64_t, in elements (not bytes).
 *  - A plan is created for one precision (ADI_FLOAT32 or ADI_FLOAT64) and solved through
 *    the functions of that precision (_f32 or _f64); the other returns
 *    ADI_ERROR_WRONG_PRECISION.
 *  - Array pointers live in the executor's memory: host arrays for a host executor,
 *    device arrays (cudaMalloc, cudaMallocAsync, ...) for a CUDA executor. Mixing them
 *    returns ADI_ERROR_INVALID_ARGUMENT. On a CUDA executor the work is enqueued on the
 *    executor's stream (pivot checks, on by default, synchronise it at the end of a solve).
 *  - Booleans are int32_t (0 false, anything else true); enumerations are passed as int32_t.
 * docs/c_fortran.md lists every function, the error codes and the block storage orders. */
#ifndef ADI_C_H
#define ADI_C_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----- status and errors ---------------------------------------------------------- */

typedef enum adi_status {
  ADI_SUCCESS = 0,
  ADI_ERROR_INVALID_ARGUMENT = 1, /* a wrong size, stride, option, pointer or memory space */
  ADI_ERROR_NULL_POINTER = 2,     /* a NULL handle, output or required array pointer */
  ADI_ERROR_SINGULAR_SYSTEM = 3,  /* a zero / non-finite pivot: see adi_last_error_system/row */
  ADI_ERROR_UNSUPPORTED = 4,      /* CUDA (or another backend) not built in or no device present */
  ADI_ERROR_DEVICE = 5,           /* a CUDA runtime call failed */
  ADI_ERROR_OUT_OF_MEMORY = 6,    /* an allocation failed */
  ADI_ERROR_WRONG_PRECISION = 7,  /* an _f32 call on an ADI_FLOAT64 plan or the reverse */
  ADI_ERROR_INTERNAL = 8          /* anything else (a bug: please report the message) */
} adi_status;

/* "ADI_SUCCESS", "ADI_ERROR_INVALID_ARGUMENT", ...; "unknown adi_status" otherwise. */
const char* adi_status_string(int32_t status);
/* The message of the last failed call on this thread ("" after a successful one). Valid
 * until the next call of this API on the same thread. */
const char* adi_last_error_message(void);
/* Copies the message (truncated, always NUL-terminated when size > 0); returns its full
 * length. For callers that cannot keep a pointer (Fortran). */
int64_t adi_last_error_message_copy(char* buffer, int64_t size);
int32_t adi_last_error_status(void);
/* After ADI_ERROR_SINGULAR_SYSTEM: the failing system (line, block system, matrix,
 * neuron) and row (block row, matrix column) where the solver knows them; -1 otherwise. */
int64_t adi_last_error_system(void);
int64_t adi_last_error_row(void);

typedef enum adi_precision { ADI_FLOAT32 = 0, ADI_FLOAT64 = 1 } adi_precision;
typedef enum adi_axis { ADI_AXIS_X = 0, ADI_AXIS_Y = 1, ADI_AXIS_Z = 2 } adi_axis;

/* The library's version, "MAJOR.MINOR.PATCH". */
const char* adi_version(void);

/* ----- executors: where work runs ------------------------------------------------- */

typedef struct adi_executor adi_executor;
/* Host, on `threads` OpenMP threads (0: all). */
adi_status adi_executor_create_host(int32_t threads, adi_executor** out);
/* CUDA device `device`, work enqueued on `stream` (a cudaStream_t; NULL: the legacy
 * default stream). ADI_ERROR_UNSUPPORTED without CUDA or without a device. */
adi_status adi_executor_create_cuda(int32_t device, void* stream, adi_executor** out);
adi_status adi_executor_destroy(adi_executor* executor);
/* 1 when adi was built with CUDA and a device answers, else 0. */
int32_t adi_cuda_available(void);
/* 1 for a CUDA executor, 0 for a host one (or NULL). */
int32_t adi_executor_is_cuda(const adi_executor* executor);
/* Waits for the work queued on the executor's stream (no-op on the host). */
adi_status adi_executor_synchronize(const adi_executor* executor);

/* ----- buffers: memory in an executor's space (device arrays without CUDA headers) -- */

typedef struct adi_buffer adi_buffer;
/* `bytes` zero-filled bytes in the executor's memory (64-byte aligned on the host). */
adi_status adi_buffer_create(const adi_executor* executor, int64_t bytes, adi_buffer** out);
adi_status adi_buffer_destroy(adi_buffer* buffer);
/* The memory (NULL for a NULL or empty buffer); pass it (cast) to the solve functions. */
void* adi_buffer_data(const adi_buffer* buffer);
int64_t adi_buffer_bytes(const adi_buffer* buffer);
/* Copies `bytes` (at most the buffer's) from / to host memory, on the executor's stream
 * after the work queued there; returns when the copy is done. */
adi_status adi_buffer_copy_from_host(adi_buffer* buffer, const void* src, int64_t bytes);
adi_status adi_buffer_copy_to_host(const adi_buffer* buffer, void* dst, int64_t bytes);

/* ----- batched tridiagonal systems ------------------------------------------------ */
/* Row i of every line: a[i] u[i-1] + b[i] u[i] + c[i] u[i+1] = d[i]; a[0] and c[n-1] are
 * not read unless periodic (then they couple u[0] and u[n-1]). */

/* Element i of line l = l0 + l1*count0 at l0*stride0 + l1*stride1 + i*stride. */
typedef struct adi_lines {
  int64_t n, stride, count0, stride0, count1, stride1;
} adi_lines;
/* count lines of n elements: element i of line l at l*line_stride + i*element_stride. */
adi_status adi_lines_strided(int64_t n, int64_t count, int64_t element_stride, int64_t line_stride,
                             adi_lines* out);
/* Every line along `axis` of an nx x ny x nz box (x fastest; element (i,j,k) at
 * i + j*sy + k*sz; sy = nx, sz = nx*ny for a dense box, 0 for either means dense). */
adi_status adi_lines_box(int64_t nx, int64_t ny, int64_t nz, int64_t sy, int64_t sz, int32_t axis,
                         adi_lines* out);
/* cuThomasBatch: element k of system s at k*batch + s. */
adi_status adi_lines_interleaved(int64_t n, int64_t batch, adi_lines* out);

typedef struct adi_tridiagonal_options {
  int32_t periodic;     /* default 0 */
  int32_t check_pivots; /* default 1: ADI_ERROR_SINGULAR_SYSTEM on a zero pivot */
  const char* kernel;   /* NULL or "automatic" (default), or a kernel name (docs/c_fortran.md) */
} adi_tridiagonal_options;
void adi_tridiagonal_options_init(adi_tridiagonal_options* options);

typedef struct adi_tridiagonal_plan adi_tridiagonal_plan;
/* options may be NULL (the defaults). */
adi_status adi_tridiagonal_plan_create(const adi_executor* executor, int32_t precision, const adi_lines* lines,
                                       const adi_tridiagonal_options* options, adi_tridiagonal_plan** out);
adi_status adi_tridiagonal_plan_destroy(adi_tridiagonal_plan* plan);
/* The kernel the plan chose (a static string), NULL for a NULL plan. */
const char* adi_tridiagonal_plan_kernel(const adi_tridiagonal_plan* plan);
/* a, b, c shaped like d; u may equal d (in place). */
adi_status adi_tridiagonal_solve_f32(adi_tridiagonal_plan* plan, const float* a, const float* b, const float* c,
                                     const float* d, float* u);
adi_status adi_tridiagonal_solve_f64(adi_tridiagonal_plan* plan, const double* a, const double* b,
                                     const double* c, const double* d, double* u);
/* a, b, c: n values each, the same for every line. */
adi_status adi_tridiagonal_solve_shared_f32(adi_tridiagonal_plan* plan, const float* a, const float* b,
                                            const float* c, const float* d, float* u);
adi_status adi_tridiagonal_solve_shared_f64(adi_tridiagonal_plan* plan, const double* a, const double* b,
                                            const double* c, const double* d, double* u);

/* ----- batched block-tridiagonal systems (blocks M x M, M = 2..8) ------------------ */
/* A_i u_{i-1} + B_i u_i + C_i u_{i+1} = d_i. Value v of u_i / d_i and entry (r, c) of a
 * block (value v = r*M + c row-major, or v = c*M + r column-major: Fortran's A(r, c)) of
 * system l = l0 + l1*count0 at l0*system0 + l1*system1 + i*row + v*component. */

typedef enum adi_block_order { ADI_ROW_MAJOR = 0, ADI_COLUMN_MAJOR = 1 } adi_block_order;
typedef struct adi_block_strides {
  int64_t row, system0, system1, component;
} adi_block_strides;
typedef struct adi_block_lines {
  int32_t m;     /* block size, 2..8 */
  int32_t order; /* adi_block_order of the entries of A, B, C */
  int64_t n, count0, count1;
  adi_block_strides vectors; /* d and u */
  adi_block_strides blocks;  /* A, B and C */
} adi_block_lines;
/* System after system, block row after block row: A[((p*n + i)*M*M + entry], d[(p*n + i)*M + v]
 * (Fortran: A(M, M, n, systems), d(M, n, systems) with ADI_COLUMN_MAJOR). */
adi_status adi_block_lines_contiguous(int32_t m, int64_t n, int64_t systems, int32_t order, adi_block_lines* out);
/* Block row i of all systems together: A[(i*systems + p)*M*M + entry], d[(i*systems + p)*M + v]. */
adi_status adi_block_lines_interleaved(int32_t m, int64_t n, int64_t systems, int32_t order,
                                       adi_block_lines* out);
/* The systems along `axis` of an nx x ny x nz grid whose values sit in the caller's arrays:
 * value v of point (x, y, z) at x*sx + y*sy + z*sz + v*component; vector_strides and
 * block_strides are {sx, sy, sz, component} for d/u and for A/B/C. */
adi_status adi_block_lines_grid(int32_t m, int64_t nx, int64_t ny, int64_t nz, int32_t axis,
                                const int64_t vector_strides[4], const int64_t block_strides[4], int32_t order,
                                adi_block_lines* out);

typedef struct adi_block_options {
  int32_t periodic;       /* default 0: block-cyclic systems when 1 */
  int32_t check_pivots;   /* default 1 */
  double pivot_tolerance; /* default 0: 16 machine epsilons */
  const char* kernel;     /* NULL or "automatic", or a block kernel name */
} adi_block_options;
void adi_block_options_init(adi_block_options* options);

typedef struct adi_block_plan adi_block_plan;
adi_status adi_block_plan_create(const adi_executor* executor, int32_t precision, const adi_block_lines* lines,
                                 const adi_block_options* options, adi_block_plan** out);
adi_status adi_block_plan_destroy(adi_block_plan* plan);
const char* adi_block_plan_kernel(const adi_block_plan* plan);
/* Values the block arrays (A, B, C) and the vector arrays (d, u) must hold. */
adi_status adi_block_plan_spans(const adi_block_plan* plan, int64_t* block_span, int64_t* vector_span);
adi_status adi_block_solve_f32(adi_block_plan* plan, const float* a, const float* b, const float* c,
                               const float* d, float* u);
adi_status adi_block_solve_f64(adi_block_plan* plan, const double* a, const double* b, const double* c,
                               const double* d, double* u);

/* ----- variable-size batches of tridiagonal systems ------------------------------- */
/* System s has sizes[s] >= 0 unknowns (sizes in the executor's memory or the host's). */

typedef enum adi_variable_layout_kind {
  ADI_VARIABLE_COMPACT = 0, /* system s at offsets[s] (or back to back when offsets is NULL) */
  ADI_VARIABLE_PADDED = 1   /* element k of system s at k*stride + s (stride 0: count) */
} adi_variable_layout_kind;
typedef struct adi_variable_layout {
  int32_t kind;
  int64_t stride;          /* PADDED: distance between elements k and k+1 (0: count) */
  int64_t rows;            /* PADDED: slots per system (0: the largest size) */
  const int64_t* offsets;  /* COMPACT: count offsets, or NULL */
} adi_variable_layout;

typedef struct adi_variable_plan adi_variable_plan;
adi_status adi_variable_plan_create(const adi_executor* executor, int32_t precision, const int32_t* sizes,
                                    int64_t count, const adi_variable_layout* layout, int32_t periodic,
                                    adi_variable_plan** out);
adi_status adi_variable_plan_destroy(adi_variable_plan* plan);
/* Values each array must hold. */
adi_status adi_variable_plan_span(const adi_variable_plan* plan, int64_t* span);
adi_status adi_variable_solve_f32(adi_variable_plan* plan, const float* a, const float* b, const float* c,
                                  const float* d, float* u);
adi_status adi_variable_solve_f64(adi_variable_plan* plan, const double* a, const double* b, const double* c,
                                  const double* d, double* u);

/* ----- batched Cholesky of small SPD matrices (sizes 0..512) ----------------------- */
/* Matrix s: sizes[s] x sizes[s], column-major, at offsets[s] (NULL: back to back). */

typedef struct adi_cholesky_plan adi_cholesky_plan;
/* check_pivots (CholeskyOptions::check_pivots): a matrix that is not positive definite makes factor return
 * ADI_ERROR_SINGULAR_SYSTEM naming the first such matrix (system) and column (row); else
 * only info reports it (LAPACK's convention, info[s] = column + 1). */
adi_status adi_cholesky_plan_create(const adi_executor* executor, int32_t precision, const int32_t* sizes,
                                    int64_t count, const int64_t* offsets, int32_t check_pivots,
                                    adi_cholesky_plan** out);
adi_status adi_cholesky_plan_destroy(adi_cholesky_plan* plan);
/* A_s = L_s L_s^T in place (lower triangle). info: count ints, or NULL with check_pivots. */
adi_status adi_cholesky_factor_f32(adi_cholesky_plan* plan, float* a, int32_t* info);
adi_status adi_cholesky_factor_f64(adi_cholesky_plan* plan, double* a, int32_t* info);
/* B_s (sizes[s] x nrhs, column-major, back to back) <- A_s^{-1} B_s with the factors of
 * factor; matrices whose info[s] != 0 are skipped (info may be NULL). */
adi_status adi_cholesky_solve_f32(adi_cholesky_plan* plan, const float* l, float* b, int32_t nrhs,
                                  const int32_t* info);
adi_status adi_cholesky_solve_f64(adi_cholesky_plan* plan, const double* l, double* b, int32_t nrhs,
                                  const int32_t* info);

/* ----- one (or a few) very large tridiagonal systems ------------------------------- */

typedef struct adi_large_plan adi_large_plan;
/* count systems of n unknowns, system s from s*system_stride (0: n), elements contiguous. */
adi_status adi_large_plan_create(const adi_executor* executor, int32_t precision, int64_t n, int64_t count,
                                 int64_t system_stride, int32_t periodic, adi_large_plan** out);
adi_status adi_large_plan_destroy(adi_large_plan* plan);
/* The kernel the plan runs (a static string: "partition", ...), NULL for a NULL plan. */
const char* adi_large_plan_kernel(const adi_large_plan* plan);
/* Deprecated (one release): the former name of adi_large_plan_kernel. */
const char* adi_large_plan_variant(const adi_large_plan* plan);
adi_status adi_large_solve_f32(adi_large_plan* plan, const float* a, const float* b, const float* c,
                               const float* d, float* u);
adi_status adi_large_solve_f64(adi_large_plan* plan, const double* a, const double* b, const double* c,
                               const double* d, double* u);

/* ----- batched Hines solves (tree-structured symmetric systems, one per neuron) ---- */
/* `trees` tree shapes: tree t has tree_sizes[t] nodes, its parent array (parent[0] = -1,
 * parent[i] < i) stored in `parents` after those of the trees before it. Neuron s has
 * tree tree_of[s] (NULL: tree 0 for all) and its values at the sum of the sizes of the
 * neurons before it (neuron after neuron). Host arrays. */
typedef struct adi_hines_plan adi_hines_plan;
adi_status adi_hines_plan_create(const adi_executor* executor, int32_t precision, int32_t trees,
                                 const int32_t* tree_sizes, const int32_t* parents, int64_t count,
                                 const int32_t* tree_of, adi_hines_plan** out);
adi_status adi_hines_plan_destroy(adi_hines_plan* plan);
adi_status adi_hines_plan_span(const adi_hines_plan* plan, int64_t* span);
/* A_s x = rhs with A_s[i][i] = diag[i], A_s[i][parent(i)] = A_s[parent(i)][i] = offdiag[i].
 * rhs is overwritten by x; diag is scratch (unspecified afterwards). */
adi_status adi_hines_solve_f32(adi_hines_plan* plan, const float* offdiag, float* diag, float* rhs);
adi_status adi_hines_solve_f64(adi_hines_plan* plan, const double* offdiag, double* diag, double* rhs);

/* ----- the ADI solver: the heat equation u_t = kx u_xx + ky u_yy + kz u_zz ----------- */

typedef enum adi_boundary_kind {
  ADI_DIRICHLET = 0, /* u = value */
  ADI_NEUMANN = 1,   /* du/dn = value (outward normal) */
  ADI_PERIODIC = 2   /* both faces of the axis; the grid holds no duplicate end node */
} adi_boundary_kind;
typedef enum adi_scheme_kind {
  ADI_DOUGLAS = 0,
  ADI_CRAIG_SNEYD = 1,
  ADI_MODIFIED_CRAIG_SNEYD = 2,
  ADI_HUNDSDORFER_VERWER = 3,
  ADI_PEACEMAN_RACHFORD = 4
} adi_scheme_kind;

typedef struct adi_heat_problem {
  int64_t n[3];             /* nodes per axis ({nx, 1, 1} for 1-D) */
  double lo[3], hi[3];      /* the box (periodic axes: period hi - lo, node hi not stored) */
  double diffusivity[3];    /* kx, ky, kz */
  int32_t boundary[6];      /* adi_boundary_kind of faces x-, x+, y-, y+, z-, z+ */
  double boundary_value[6]; /* Dirichlet value or Neumann derivative per face */
  int32_t scheme;           /* adi_scheme_kind */
  double theta;             /* 0: the scheme's standard value */
  int32_t damping_steps;    /* Rannacher: the first k steps as 2k implicit half steps */
} adi_heat_problem;
void adi_heat_problem_init(adi_heat_problem* problem); /* 1-D unit interval, 2 nodes, Douglas, Dirichlet 0 */

typedef struct adi_heat_solver adi_heat_solver;
/* The solver owns u (zero at first), in the executor's memory. */
adi_status adi_heat_solver_create(const adi_executor* executor, int32_t precision, const adi_heat_problem* problem,
                                  adi_heat_solver** out);
adi_status adi_heat_solver_destroy(adi_heat_solver* solver);
/* One step from t to t + dt; `steps` equal steps from t0 to t1. */
adi_status adi_heat_step(adi_heat_solver* solver, double t, double dt);
adi_status adi_heat_advance(adi_heat_solver* solver, double t0, double t1, int64_t steps);
/* u in place: element (i, j, k) at data[i + j*sy + k*sz] (padded rows), in the executor's
 * memory; stays valid until the solver is destroyed. */
adi_status adi_heat_data(adi_heat_solver* solver, void** data, int64_t* sy, int64_t* sz);
/* Copies u to / from a dense host array of nx*ny*nz values, x fastest. */
adi_status adi_heat_read_f32(const adi_heat_solver* solver, float* u);
adi_status adi_heat_read_f64(const adi_heat_solver* solver, double* u);
adi_status adi_heat_write_f32(adi_heat_solver* solver, const float* u);
adi_status adi_heat_write_f64(adi_heat_solver* solver, const double* u);

#ifdef __cplusplus
}
#endif

#endif /* ADI_C_H */
