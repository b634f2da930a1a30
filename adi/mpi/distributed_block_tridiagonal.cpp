// The partition method for block-tridiagonal lines split over the ranks of one axis.
//
// Local block rows 0..m-1 of a system on one rank (A_i, B_i, C_i are M x M). Rows
// 1..m-2 are eliminated keeping u_0 as a parameter (block modified Thomas):
//     u_i = delta_i - alpha_i u_0 - gamma_i u_{i+1},                 i = 1..m-2,
//     S_i = B_i - A_i gamma_{i-1},   alpha_i = -S_i^-1 A_i alpha_{i-1} (alpha_1 = S_1^-1 A_1),
//     gamma_i = S_i^-1 C_i,          delta_i = S_i^-1 (d_i - A_i delta_{i-1}),
// (delta in u, alpha and gamma in the plan's workspace). The same pass accumulates u_1
// in terms of the two ends, u_1 = Pv - Q u_0 + Pi_{m-1} u_{m-1} with Pi_1 = I,
// Pi_{i+1} = -Pi_i gamma_i, Pv = sum Pi_i delta_i, Q = sum Pi_i alpha_i, so rows 0 and
// m-1 become the rank's two rows of the reduced block system without a second pass:
//     row 0:   A_0 u_prev + (B_0 - C_0 Q) u_0 + C_0 Pi_{m-1} u_{m-1} = d_0 - C_0 Pv
//     row m-1: -A_{m-1} alpha_{m-2} u_0 + (B_{m-1} - A_{m-1} gamma_{m-2}) u_{m-1} + C_{m-1} u_next
//              = d_{m-1} - A_{m-1} delta_{m-2}.
// The 2P-row reduced systems (unknowns u_0^0, u_{m-1}^0, u_0^1, ...) are solved by
// BlockTridiagonalPlan (block-cyclic when periodic), then every rank back-substitutes.
// Pivot blocks are factored with partial pivoting inside the block, like the single-device
// block solver; a singular one poisons the line's reduced rows so that every rank of the
// axis sees it in the reduced solve and throws without another collective.
//
// Device memory (split axis): the same passes run on the GPU, one thread per line or per
// (line, sub-segment) with a second level over the sub-segments' rows
// (solvers/cuda/block_partition_local_passes.cuh, operation for operation the code below), with
// alpha/gamma in a device workspace. Only the reduced rows (2R values per line) are copied
// to page-locked host memory; the exchange and the reduced solve are the host's, then the
// 2M interface values per line go back and the GPU back-substitutes. The NaN of a singular
// block reaches every rank's host copy of the interface values, which is checked before
// the copy back: every rank throws at the same point, nothing stays enqueued.
#include "adi/mpi/distributed_block_tridiagonal.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "adi/field.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "solvers/common/block_lu_core.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/block_partition_local_passes.hpp"
#include "solvers/cuda/partition_local_passes.hpp"

namespace adi::mpi {

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// The single-device plan's options (unsplit axis, reduced systems) from the distributed ones.
BlockTridiagonalOptions local_options(const DistributedBlockOptions& o) {
  BlockTridiagonalOptions l;
  l.kernel = o.kernel;
  l.pivot_tolerance = o.pivot_tolerance;
  l.periodic = o.periodic;
  l.check_pivots = o.check_pivots;
  return l;
}

// Solves S X = X in place for the row-major M x M S (overwritten) and X of M rows of
// `cols` values (leading dimension ld), by the one pivot-block solve
// (solvers/common/block_lu_core.hpp). false when a pivot is at or below tol * max|S| or not
// finite.
template <class T>
bool solve_block(int M, T* S, T* X, int cols, int ld, T tol) {
  struct Rows {
    T* x;
    int cols, ld;
    void swap(int k, int p) const {
      for (int j = 0; j < cols; ++j) std::swap(x[k * ld + j], x[p * ld + j]);
    }
    void axpy(int i, T f, int k) const {
      for (int j = 0; j < cols; ++j) x[i * ld + j] -= f * x[k * ld + j];
    }
    void scale(int i, T inv) const {
      for (int j = 0; j < cols; ++j) x[i * ld + j] *= inv;
    }
  };
  auto run = [&](auto block) {
    constexpr int B = decltype(block)::value;
    auto s = [S](int i, int j) -> T& { return S[i * B + j]; };
    Rows r{X, cols, ld};
    return common::block_lu_solve<T, B>(s, r, tol);
  };
  switch (M) {
    case 2: return run(std::integral_constant<int, 2>{});
    case 3: return run(std::integral_constant<int, 3>{});
    case 4: return run(std::integral_constant<int, 4>{});
    case 5: return run(std::integral_constant<int, 5>{});
    case 6: return run(std::integral_constant<int, 6>{});
    case 7: return run(std::integral_constant<int, 7>{});
    case 8: return run(std::integral_constant<int, 8>{});
    default: return false;  // validated at plan time: 2 <= M <= 8
  }
}

// out (M x cols, ld_o) += s * X (M x M, row-major) * Y (M x cols, ld_y).
template <class T>
void mul_add(int M, T s, const T* X, const T* Y, int cols, int ld_y, T* out, int ld_o) {
  for (int i = 0; i < M; ++i)
    for (int k = 0; k < M; ++k) {
      const T f = s * X[i * M + k];
      for (int j = 0; j < cols; ++j) out[i * ld_o + j] += f * Y[k * ld_y + j];
    }
}

}  // namespace

template <class T>
struct DistributedBlockTridiagonalPlan<T>::Impl {
  Axis axis = Axis::x;
  BlockLineSet ls;
  DistributedBlockOptions opt;
  MPI_Comm comm = MPI_COMM_NULL;
  int P = 1, r = 0, M = 2;
  index_t m = 0, L = 0;
  int R = 0;  // values per reduced block row: A, B, C (M*M each) and d (M)
  ReducedStrategy strategy = ReducedStrategy::allgather;
  T tol = 0;
  std::optional<BlockTridiagonalPlan<T>> local;    // unsplit axis
  std::optional<BlockTridiagonalPlan<T>> reduced;  // the reduced systems this rank solves
  index_t solved = 0;                              // their number (L or this rank's chunk)
  index_t chunk_lo = 0;
  std::vector<int> cnt_r, dsp_r, rcnt_r, rdsp_r, cnt_s, dsp_s, rcnt_s, rdsp_s;
  std::vector<T> alpha, gamma;      // per system: m * M*M (rows 1..m-2 used)
  std::vector<T> red;               // per system: 2 rows of R values (host passes)
  T* redp = nullptr;                // the reduced rows in host memory: red.data() or h_red
  T* solp = nullptr;                // the interface values in host memory: sol.data() or h_sol
  std::vector<T> gather;            // [source rank][system][2][R]
  std::vector<T> ra, rb, rc, rd, ru;  // reduced systems, BlockContiguous {M, 2P, solved}
  std::vector<T> back;              // alltoall: [destination rank][system of my chunk][2][M]
  std::vector<T> sol;               // per system: u_0 and u_{m-1} (2M values)
  std::vector<T> scratch;           // per thread
  // Device executor on a split axis: host mirrors of A, B, C, d and u (the passes run on
  // the host; correct, not fast: every solve copies the arrays both ways).
  Executor exec = Executor::host();
  std::vector<T> ha, hb, hc, hd, hu;
  // Device passes (device executor, split axis, options.device_passes): the workspace
  // [(i*M*M + v)*L + l] and the reduced rows / interface values on the device, and their
  // page-locked host copies.
  bool on_device = false;
  Array<T> d_alpha, d_gamma, d_red, d_sol, d_red1, d_alpha2, d_gamma2, d_x2;
  cuda_backend::block_partition::Workspace<T> dw;
  T* h_red = nullptr;
  T* h_sol = nullptr;
  void* ev[6] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  double t_local = 0, t_exchange = 0, t_staging = 0, bytes = 0;
  // NCCL transport (device passes): the reduced rows in rows-together layout,
  // d_red[(j*L + l)*R + ...]; d_gather the gathered rows, row k = 2p + j of solved system q at
  // (k*solved + q)*R (the layout the device reduced plan reads in place); alltoall: the
  // solution's d slots packed (d_back[(k*solved + q)*M]) and the interface values back
  // (d_usol[(j*L + l)*M]). Counts and displacements in rows: cnt / dsp[j] of this rank's rows
  // for each rank's share of the lines, rcnt / rdsp[j] of the share it solves.
  Transport transport = Transport::host_staging;
  std::shared_ptr<nccl::Communicator> nccl_comm;
  Array<T> d_gather, d_back, d_usol;
  const T* d_solp = nullptr;  // the interface values the back-substitution reads
  std::vector<int> a2a_cnt, a2a_rcnt, a2a_dsp[2], a2a_rdsp[2];

  ~Impl() {
    cuda_backend::partition::pinned_free(h_red);
    cuda_backend::partition::pinned_free(h_sol);
    for (void* e : ev)
      if (e) cuda_backend::partition::event_destroy(e);
  }

  static constexpr int kScratch = 8 * 64 + 8 * 17 + 64;

  index_t voff(index_t l, index_t i) const {
    return (l % ls.count0) * ls.vectors.system0 + (l / ls.count0) * ls.vectors.system1 + i * ls.vectors.row;
  }
  index_t boff(index_t l, index_t i) const {
    return (l % ls.count0) * ls.blocks.system0 + (l / ls.count0) * ls.blocks.system1 + i * ls.blocks.row;
  }
  void load_block(const T* p, index_t l, index_t i, T* out) const {
    const index_t o = boff(l, i), s = ls.blocks.component;
    for (int v = 0; v < M * M; ++v) out[v] = p[o + v * s];
  }
  void load_vector(const T* p, index_t l, index_t i, T* out, int ld) const {
    const index_t o = voff(l, i), s = ls.vectors.component;
    for (int v = 0; v < M; ++v) out[v * ld] = p[o + v * s];
  }
  void store_vector(T* p, index_t l, index_t i, const T* x) const {
    const index_t o = voff(l, i), s = ls.vectors.component;
    for (int v = 0; v < M; ++v) p[o + v * s] = x[v];
  }

  bool reduce_line(const BlockBands<T>& bd, const T* d, T* u, index_t l, T* s);
  void back_line(T* u, index_t l, T* s) const;
  void exchange_and_solve();
  void check_solution() const;
  SingularBlock singular_error(index_t line) const;  // what every rank of the axis throws
  void resolve_transport(const ProcessGrid& procs);
  void setup_nccl();
  void run_nccl(const BlockBands<T>& bd, const T* d, T* u);
  void run(const BlockBands<T>& bd, const T* d, T* u);
  void run_device(const BlockBands<T>& bd, const T* d, T* u);
  void run_mirrored(const BlockBands<T>& bd, const T* d, T* u);  // device memory through the host mirrors
  void run_local(const BlockBands<T>& bd, const T* d, T* u) { local->solve(bd, d, u); }
  // The solve path, chosen once in the constructor: run_local (unsplit axis), run (host),
  // run_device (device passes) or run_mirrored.
  void (Impl::*solve_path)(const BlockBands<T>&, const T*, T*) = &Impl::run;
};

template <class T>
bool DistributedBlockTridiagonalPlan<T>::Impl::reduce_line(const BlockBands<T>& bd, const T* d, T* u, index_t l,
                                                           T* s) {
  const int MM = M * M, ld = 2 * M + 1;
  T *Ab = s, *Bb = s + MM, *Cb = s + 2 * MM, *S = s + 3 * MM, *Pi = s + 4 * MM, *Q = s + 5 * MM, *tmp = s + 6 * MM;
  T *X = s + 8 * MM, *Pv = X + 8 * 17, *dl = Pv + 8;
  T* rr = redp + std::size_t(l) * 2 * R;
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  auto put_row = [&](T* row, const T* a, const T* b, const T* c, const T* dv, bool zero_a, bool zero_c) {
    for (int v = 0; v < MM; ++v) {
      row[v] = zero_a ? T(0) : a[v];
      row[MM + v] = b[v];
      row[2 * MM + v] = zero_c ? T(0) : c[v];
    }
    for (int v = 0; v < M; ++v) row[3 * MM + v] = dv[v];
  };
  if (m == 2) {
    for (int k = 0; k < 2; ++k) {
      load_block(bd.a, l, k, Ab);
      load_block(bd.b, l, k, Bb);
      load_block(bd.c, l, k, Cb);
      load_vector(d, l, k, dl, 1);
      put_row(rr + k * R, Ab, Bb, Cb, dl, k == 0 && first_open, k == 1 && last_open);
    }
    return true;
  }
  T* al = alpha.data() + std::size_t(l * m) * MM;
  T* ga = gamma.data() + std::size_t(l * m) * MM;
  std::fill(Pi, Pi + MM, T(0));
  std::fill(Q, Q + MM, T(0));
  std::fill(Pv, Pv + M, T(0));
  for (int v = 0; v < M; ++v) Pi[v * M + v] = T(1);
  for (index_t i = 1; i <= m - 2; ++i) {
    load_block(bd.a, l, i, Ab);
    load_block(bd.b, l, i, S);
    load_block(bd.c, l, i, Cb);
    load_vector(d, l, i, X + 2 * M, ld);
    for (int v = 0; v < M; ++v)
      for (int w = 0; w < M; ++w) X[v * ld + M + w] = Cb[v * M + w];
    if (i == 1) {
      for (int v = 0; v < M; ++v)
        for (int w = 0; w < M; ++w) X[v * ld + w] = Ab[v * M + w];
    } else {
      const T* ap = al + (i - 1) * MM;
      const T* gp = ga + (i - 1) * MM;
      for (int v = 0; v < M; ++v)
        for (int w = 0; w < M; ++w) X[v * ld + w] = T(0);
      mul_add(M, T(-1), Ab, gp, M, M, S, M);           // S = B_i - A_i gamma_{i-1}
      mul_add(M, T(-1), Ab, ap, M, M, X, ld);          // -A_i alpha_{i-1}
      mul_add(M, T(-1), Ab, dl, 1, 1, X + 2 * M, ld);  // d_i - A_i delta_{i-1}
    }
    if (!solve_block(M, S, X, ld, ld, tol)) return false;
    T* an = al + i * MM;
    T* gn = ga + i * MM;
    for (int v = 0; v < M; ++v) {
      for (int w = 0; w < M; ++w) {
        an[v * M + w] = X[v * ld + w];
        gn[v * M + w] = X[v * ld + M + w];
      }
      dl[v] = X[v * ld + 2 * M];
    }
    store_vector(u, l, i, dl);
    mul_add(M, T(1), Pi, dl, 1, 1, Pv, 1);
    mul_add(M, T(1), Pi, an, M, M, Q, M);
    std::fill(tmp, tmp + MM, T(0));
    mul_add(M, T(-1), Pi, gn, M, M, tmp, M);
    std::copy(tmp, tmp + MM, Pi);
  }
  // Row 0: A_0 u_prev + (B_0 - C_0 Q) u_0 + C_0 Pi u_{m-1} = d_0 - C_0 Pv.
  {
    load_block(bd.a, l, 0, Ab);
    load_block(bd.b, l, 0, Bb);
    load_block(bd.c, l, 0, Cb);
    T d0[8];
    load_vector(d, l, 0, d0, 1);
    mul_add(M, T(-1), Cb, Q, M, M, Bb, M);
    mul_add(M, T(-1), Cb, Pv, 1, 1, d0, 1);
    std::fill(tmp, tmp + MM, T(0));
    mul_add(M, T(1), Cb, Pi, M, M, tmp, M);
    put_row(rr, Ab, Bb, tmp, d0, first_open, false);
  }
  // Row m-1: -A alpha_{m-2} u_0 + (B - A gamma_{m-2}) u_{m-1} + C u_next = d - A delta_{m-2}.
  {
    const index_t i = m - 1;
    load_block(bd.a, l, i, Ab);
    load_block(bd.b, l, i, Bb);
    load_block(bd.c, l, i, Cb);
    T dn[8];
    load_vector(d, l, i, dn, 1);
    mul_add(M, T(-1), Ab, ga + (i - 1) * MM, M, M, Bb, M);
    mul_add(M, T(-1), Ab, dl, 1, 1, dn, 1);
    std::fill(tmp, tmp + MM, T(0));
    mul_add(M, T(-1), Ab, al + (i - 1) * MM, M, M, tmp, M);
    put_row(rr + R, tmp, Bb, Cb, dn, false, last_open);
  }
  return true;
}

template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::back_line(T* u, index_t l, T* s) const {
  const int MM = M * M;
  const T* u0 = solp + std::size_t(l) * 2 * M;
  const T* ul = u0 + M;
  store_vector(u, l, 0, u0);
  store_vector(u, l, m - 1, ul);
  const T* al = alpha.data() + std::size_t(l * m) * MM;
  const T* ga = gamma.data() + std::size_t(l * m) * MM;
  T* next = s;
  T* cur = s + 8;
  std::copy(ul, ul + M, next);
  for (index_t i = m - 2; i >= 1; --i) {
    load_vector(u, l, i, cur, 1);
    mul_add(M, T(-1), al + i * MM, u0, 1, 1, cur, 1);
    mul_add(M, T(-1), ga + i * MM, next, 1, 1, cur, 1);
    store_vector(u, l, i, cur);
    std::swap(cur, next);
  }
}

template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::exchange_and_solve() {
  const MPI_Datatype type = mpi_type<T>();
  const double w = double(sizeof(T));
  if (strategy == ReducedStrategy::allgather) {
    check_mpi(MPI_Allgather(redp, int(L * 2 * R), type, gather.data(), int(L * 2 * R), type, comm),
              "MPI_Allgather");
    bytes = double(P) * double(L * 2 * R) * w;
  } else {
    check_mpi(MPI_Alltoallv(redp, cnt_r.data(), dsp_r.data(), type, gather.data(), rcnt_r.data(),
                            rdsp_r.data(), type, comm),
              "MPI_Alltoallv");
  }
  // [source rank p][system q][row j][R] -> BlockContiguous {M, 2P, solved}: block row 2p + j.
  const int MM = M * M;
  const index_t n = 2 * P;
  for (int p = 0; p < P; ++p)
    for (index_t q = 0; q < solved; ++q)
      for (int j = 0; j < 2; ++j) {
        const T* src = gather.data() + ((std::size_t(p) * solved + q) * 2 + j) * R;
        const std::size_t k = std::size_t(q * n + 2 * p + j);
        std::copy(src, src + MM, ra.data() + k * MM);
        std::copy(src + MM, src + 2 * MM, rb.data() + k * MM);
        std::copy(src + 2 * MM, src + 3 * MM, rc.data() + k * MM);
        std::copy(src + 3 * MM, src + 3 * MM + M, rd.data() + k * M);
      }
  if (solved > 0) {
    try {
      reduced->solve(BlockBands<T>{ra.data(), rb.data(), rc.data()}, rd.data(), ru.data());
    } catch (const SingularSystem&) {
      // Only this rank knows (alltoall): NaN results reach every rank of the lines.
      std::fill(ru.begin(), ru.end(), std::numeric_limits<T>::quiet_NaN());
    }
  }
  if (strategy == ReducedStrategy::allgather) {
    for (index_t q = 0; q < L; ++q)
      std::copy(ru.data() + (q * n + 2 * r) * M, ru.data() + (q * n + 2 * r + 2) * M, solp + q * 2 * M);
  } else {
    for (int p = 0; p < P; ++p)
      for (index_t q = 0; q < solved; ++q)
        std::copy(ru.data() + (q * n + 2 * p) * M, ru.data() + (q * n + 2 * p + 2) * M,
                  back.data() + (std::size_t(p) * solved + q) * 2 * M);
    check_mpi(MPI_Alltoallv(back.data(), rcnt_s.data(), rdsp_s.data(), type, solp, cnt_s.data(),
                            dsp_s.data(), type, comm),
              "MPI_Alltoallv");
    bytes = 2.0 * double(P - 1) / double(P) * double(L) * double(2 * R + 2 * M) * w;
  }
}

template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::run(const BlockBands<T>& bd, const T* d, T* u) {
  const double t0 = now();
  bool ok = true;
#pragma omp parallel reduction(&& : ok) if (L * m * M * M > 16384)
  {
    T* s = scratch.data() + std::size_t(omp_get_thread_num()) * kScratch;
#pragma omp for schedule(static)
    for (index_t l = 0; l < L; ++l)
      if (!reduce_line(bd, d, u, l, s)) {
        ok = false;
        T* rr = redp + std::size_t(l) * 2 * R;
        std::fill(rr, rr + 2 * R, std::numeric_limits<T>::quiet_NaN());
      }
  }
  const double t1 = now();
  exchange_and_solve();
  const double t2 = now();
  check_solution();
#pragma omp parallel if (L * m * M * M > 16384)
  {
    T* s = scratch.data() + std::size_t(omp_get_thread_num()) * kScratch;
#pragma omp for schedule(static)
    for (index_t l = 0; l < L; ++l) back_line(u, l, s);
  }
  t_local = (t1 - t0) + (now() - t2);
  t_exchange = t2 - t1;
  (void)ok;
}

// Every rank holds NaN among its interface values when a pivot block was singular on any
// rank of the axis (the poisoned reduced rows went through the reduced solve).
template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::check_solution() const {
  for (std::size_t k = 0, n = std::size_t(L) * 2 * M; k < n; ++k)
    if (!std::isfinite(double(solp[k]))) {
      // The interface values are 2M per line, line after line: the line is known on every
      // rank, the block row (on whichever rank) is not.
      throw singular_error(index_t(k / (std::size_t(2) * std::size_t(M))));
    }
}

template <class T>
SingularBlock DistributedBlockTridiagonalPlan<T>::Impl::singular_error(index_t line) const {
  return SingularBlock(std::string("DistributedBlockTridiagonalPlan: a singular pivot block along ") +
                            axis_name(axis) + " in system " + detail::number(line) +
                            " (on this or another rank of the axis; the partition method needs block diagonally "
                            "dominant lines); u holds no solution",
                        line, -1);
}

// The NCCL transport (device passes): reduce on the GPU, the reduced rows exchanged by NCCL
// on the executor's stream, the reduced systems solved in place on the device by the device
// BlockTridiagonalPlan, back-substitution; nothing passes through the host. A singular pivot
// block (NaN rows from the reduction, or a singular reduced system) is agreed on with one
// MPI_Allreduce of the lowest failing line after the reduced solve (which synchronised the
// stream): every rank throws at the same point, no collective is left half entered.
template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::run_nccl(const BlockBands<T>& bd, const T* d, T* u) {
  namespace bp = cuda_backend::block_partition;
  namespace part = cuda_backend::partition;
  void* st = exec.stream();
  const cuda_backend::DeviceGuard device_guard(exec.device());  // the caller's device back on return
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  const std::size_t w = sizeof(T);
  const int MM = M * M;
  part::event_record(ev[0], st);
  bp::reduce<T>(ls, bd.a, bd.b, bd.c, d, u, dw, d_red.data(), tol, first_open, last_open, st);
  part::event_record(ev[1], st);
  T* g = d_gather.data();
  if (strategy == ReducedStrategy::allgather) {
    nccl::all_gather(*nccl_comm, d_red.data(), g, std::size_t(L) * 2 * std::size_t(R) * w, st);
  } else {
    for (int j = 0; j < 2; ++j)
      nccl::all_to_all_v(*nccl_comm, d_red.data(), a2a_cnt.data(), a2a_dsp[j].data(), g, a2a_rcnt.data(),
                         a2a_rdsp[j].data(), std::size_t(R) * w, st);
  }
  index_t bad = -1;
  if (solved > 0) {
    try {
      reduced->solve(BlockBands<T>{g, g + MM, g + 2 * MM}, g + 3 * MM, g + 3 * MM);  // in place: u == d
    } catch (const SingularSystem& e) {
      bad = chunk_lo + index_t(e.system());
    }
  }
  if (opt.check_pivots) {
    long long mine = bad < 0 ? LLONG_MAX : (long long)bad, low = LLONG_MAX;
    check_mpi(MPI_Allreduce(&mine, &low, 1, MPI_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce");
    if (low != LLONG_MAX) throw singular_error(index_t(low));
  }
  if (strategy == ReducedStrategy::alltoall) {
    bp::copy_rows(d_back.data(), std::size_t(M) * w, g + 3 * MM, std::size_t(R) * w, std::size_t(M) * w,
                  std::size_t(2 * P) * std::size_t(solved), st);
    for (int j = 0; j < 2; ++j)
      nccl::all_to_all_v(*nccl_comm, d_back.data(), a2a_rcnt.data(), a2a_rdsp[j].data(), d_usol.data(),
                         a2a_cnt.data(), a2a_dsp[j].data(), std::size_t(M) * w, st);
  }
  part::event_record(ev[2], st);
  bp::back_substitute<T>(ls, dw, d_solp, u, st);
  part::event_record(ev[3], st);
  cuda_backend::synchronize(st);
  t_local = part::event_seconds(ev[0], ev[1]) + part::event_seconds(ev[2], ev[3]);
  t_exchange = part::event_seconds(ev[1], ev[2]);
  t_staging = 0;
}

// The transport of a plan with device passes (collective over the axis; the options agree):
// every rank takes the same branch, and a choice this build or machine cannot run throws the
// same Unsupported on every rank.
template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::resolve_transport(const ProcessGrid& procs) {
  const Transport want = opt.transport;
  const std::string pre = std::string("DistributedBlockTridiagonalPlan: transport ") + transport_name(want) + ": ";
  std::string err;
  transport = Transport::host_staging;
  if (want == Transport::cuda_aware_mpi) {
    err = pre + "not offered for block lines; use nccl, host_staging or automatic";
  } else if (want == Transport::nccl && exec.is_host()) {
    err = pre + "needs device memory (Executor::cuda); host plans exchange host memory with plain MPI";
  } else if (want == Transport::nccl && !on_device) {
    err = pre + "needs DistributedBlockOptions::device_passes = true (the host-mirror path exchanges host memory)";
  } else if (on_device && want != Transport::host_staging) {
    if (!nccl::built()) {
      if (want == Transport::nccl)
        err = pre + "adi::mpi was built without NCCL (configure with -DADI_WITH_NCCL=ON where nccl.h and libnccl "
                    "are found); use host_staging or automatic";
    } else {
      const std::string shared = nccl::shared_gpu_report(comm, exec.device());  // collective: every rank or none
      if (shared.empty())
        transport = Transport::nccl;
      else if (want == Transport::nccl)
        err = pre + shared;
    }
  }
  agree_supported(comm, err.empty(), err);
  if (transport == Transport::nccl) nccl_comm = nccl::axis_communicator(procs, axis, exec.device());
}

// The NCCL path's buffers, layouts and device reduced plan (after the strategy is known).
template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::setup_nccl() {
  const int MM = M * M;
  dw.red_line = R;
  dw.red_row = L * R;
  const index_t n = 2 * P;
  d_gather = Array<T>(n * solved * R, exec);
  if (strategy == ReducedStrategy::allgather) {
    d_solp = d_gather.data() + index_t(2 * r) * L * R + 3 * MM;  // rows 2r, 2r+1 of every line, solved in place
    dw.sol_line = R;
    dw.sol_row = L * R;
  } else {
    d_back = Array<T>(n * solved * M, exec);
    d_usol = Array<T>(2 * L * M, exec);
    d_solp = d_usol.data();
    dw.sol_line = M;
    dw.sol_row = L * M;
    auto lo = [&](int j) { return L * j / P; };
    for (int q = 0; q < P; ++q) {
      a2a_cnt.push_back(int(lo(q + 1) - lo(q)));
      a2a_rcnt.push_back(int(solved));
      for (int j = 0; j < 2; ++j) {
        a2a_dsp[j].push_back(int(j * L + lo(q)));
        a2a_rdsp[j].push_back(int((2 * q + j) * solved));
      }
    }
  }
  if (solved > 0) {
    BlockLineSet rl;
    rl.m = M;
    rl.n = n;
    rl.count0 = solved;
    rl.count1 = 1;
    rl.vectors = BlockStrides{solved * R, R, 1, 1};
    rl.blocks = rl.vectors;
    BlockTridiagonalOptions o = local_options(opt);
    o.kernel = BlockKernel::automatic;
    reduced.emplace(exec, rl, o);
  }
  const double w = double(sizeof(T));
  bytes = strategy == ReducedStrategy::allgather
              ? double(P) * double(L) * 2 * R * w
              : 2.0 * double(P - 1) / double(P) * double(L) * double(2 * R + 2 * M) * w;
}

// The device passes: reduce on the GPU, reduced rows to page-locked memory, the host's
// exchange and reduced solve, the interface values back, back-substitution on the GPU.
template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::run_device(const BlockBands<T>& bd, const T* d, T* u) {
  namespace bp = cuda_backend::block_partition;
  namespace part = cuda_backend::partition;
  const bool gpu = !exec.is_host();
  void* st = exec.stream();
  cuda_backend::DeviceGuard device_guard(exec.device(), gpu);  // the caller's device back on return
  auto mark = [&](int k) {
    if (gpu) part::event_record(ev[k], st);
  };
  auto copy = [&](void* dst, const void* src, std::size_t n) {
    if (gpu)
      part::copy_async(dst, src, n, st);
    else
      std::copy_n(static_cast<const char*>(src), n, static_cast<char*>(dst));
  };
  auto sync = [&] {
    if (gpu) cuda_backend::synchronize(st);
  };
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  const std::size_t red_bytes = std::size_t(L) * 2 * R * sizeof(T), sol_bytes = std::size_t(L) * 2 * M * sizeof(T);
  const double h0 = now();
  mark(0);
  bp::reduce<T>(ls, bd.a, bd.b, bd.c, d, u, dw, d_red.data(), tol, first_open, last_open, st);
  mark(1);
  copy(h_red, d_red.data(), red_bytes);
  mark(2);
  sync();  // MPI reads h_red
  const double h1 = now();
  exchange_and_solve();
  const double h2 = now();
  t_exchange = h2 - h1;
  check_solution();  // the same verdict on every rank of the axis; nothing left enqueued
  mark(3);
  copy(d_sol.data(), h_sol, sol_bytes);
  mark(4);
  bp::back_substitute<T>(ls, dw, d_sol.data(), u, st);
  mark(5);
  sync();
  if (gpu) {
    t_local = part::event_seconds(ev[0], ev[1]) + part::event_seconds(ev[4], ev[5]);
    t_staging = part::event_seconds(ev[1], ev[2]) + part::event_seconds(ev[3], ev[4]);
  } else {
    t_local = (h1 - h0) + (now() - h2);
    t_staging = 0;
  }
}

template <class T>
DistributedBlockTridiagonalPlan<T>::DistributedBlockTridiagonalPlan(const ProcessGrid& procs, Axis axis,
                                                                    const Executor& exec, const BlockLineSet& local,
                                                                    DistributedBlockOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.axis = axis;
  p.opt = options;
  p.comm = procs.axis_comm(axis);
  MPI_Comm_size(p.comm, &p.P);
  MPI_Comm_rank(p.comm, &p.r);
  std::string err;
  bool unsupported = false;
  try {
    p.ls = to_block_lines(local);
    detail::check_pivot_tolerance(options.pivot_tolerance, "DistributedBlockOptions");
  } catch (const Error& e) {
    err = std::string("DistributedBlockTridiagonalPlan: ") + e.what();
  }
  // The distributed passes read blocks row-major (load_block, the device LineAccess): refuse
  // column-major blocks rather than misread them (same on every rank: the layout is everyone's).
  if (err.empty() && p.ls.order != BlockOrder::row_major) {
    err = "DistributedBlockTridiagonalPlan: column-major blocks (BlockOrder::column_major) are not supported "
          "by the distributed solver yet; store the blocks row-major or solve on one rank";
    unsupported = true;
  }
  p.M = err.empty() ? p.ls.m : 0;
  p.m = err.empty() ? p.ls.n : 0;
  p.L = err.empty() ? p.ls.systems() : 0;
  long long mine[7] = {p.M, p.L, options.periodic, int(options.strategy), int(options.transport),
                       options.device_passes, exec.is_host()},
            mn[7], mx[7];
  check_mpi(MPI_Allreduce(mine, mn, 7, MPI_LONG_LONG, MPI_MIN, p.comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(mine, mx, 7, MPI_LONG_LONG, MPI_MAX, p.comm), "MPI_Allreduce");
  const std::string an = axis_name(axis);
  if (err.empty() && (mn[0] != mx[0] || mn[1] != mx[1]))
    err = "DistributedBlockTridiagonalPlan: mismatched systems across the ranks along " + an + ": block sizes " +
          detail::number(mn[0]) + ".." + detail::number(mx[0]) + ", system counts " + detail::number(mn[1]) + ".." +
          detail::number(mx[1]) + " (every rank along the axis must hold the same systems)";
  if (err.empty() && (mn[2] != mx[2] || mn[3] != mx[3] || mn[4] != mx[4] || mn[5] != mx[5] || mn[6] != mx[6]))
    err = "DistributedBlockTridiagonalPlan: the options (periodic, strategy, transport, device_passes) or the "
          "executors' memory (host or device) differ between the ranks along " + an;
  if (err.empty() && p.P > 1 && p.m < 2)
    err = "DistributedBlockTridiagonalPlan: " + detail::number(p.m) + " block row(s) along " + an +
          " on this rank; a split axis (" + detail::number(p.P) + " ranks) needs >= 2 per rank: use fewer ranks along " +
          an;
  if (err.empty() && p.P > 1 && options.strategy == ReducedStrategy::pcr) {
    err = "DistributedBlockTridiagonalPlan: strategy pcr is not offered for block lines; use allgather, alltoall or "
          "automatic";
    unsupported = true;
  }
  const int R = 3 * p.M * p.M + p.M;
  if (err.empty() && p.P > 1 && double(p.L) * 2 * R * p.P > 2147483647.0)
    err = "DistributedBlockTridiagonalPlan: " + detail::number(p.L) + " systems are too many for one exchange";
  {
    int u = unsupported, any = 0;
    check_mpi(MPI_Allreduce(&u, &any, 1, MPI_INT, MPI_MAX, p.comm), "MPI_Allreduce");
    if (any) {
      // Every rank throws Unsupported with the lowest failing rank's message.
      try {
        agree(p.comm, !unsupported, err);
      } catch (const InvalidArgument& e) {
        throw Unsupported(e.what());
      }
    }
  }
  agree(p.comm, err.empty(), err);
  if (p.P == 1) {
    try {
      p.local.emplace(exec, p.ls, local_options(options));
      p.solve_path = &Impl::run_local;
    } catch (const Error& e) {
      err = e.what();
    }
    agree(p.comm, err.empty(), err);
    return;
  }
  p.R = R;
  p.exec = exec;
  p.on_device = !exec.is_host() && options.device_passes;
  p.solve_path = exec.is_host() ? &Impl::run : p.on_device ? &Impl::run_device : &Impl::run_mirrored;
  if (!exec.is_host() && !p.on_device) {
    p.ha.assign(std::size_t(block_span(p.ls)), T(0));
    p.hb.assign(p.ha.size(), T(0));
    p.hc.assign(p.ha.size(), T(0));
    p.hd.assign(std::size_t(vector_span(p.ls)), T(0));
    p.hu.assign(p.hd.size(), T(0));
  }
  p.tol = options.pivot_tolerance > 0 ? T(options.pivot_tolerance) : T(16) * std::numeric_limits<T>::epsilon();
  p.resolve_transport(procs);  // collective; Unsupported on every rank for a transport that cannot run
  if (p.transport == Transport::nccl && options.strategy == ReducedStrategy::automatic) {
    // One all-gather over NVLink and the redundant reduced solve (a few microseconds on a
    // GPU) beat alltoall's two rounds of grouped sends at the rank counts of one node.
    p.strategy = ReducedStrategy::allgather;
  } else if (options.strategy == ReducedStrategy::automatic) {
    // Bytes and messages of each strategy, with the axis's measured latency and bandwidth,
    // plus the reduced solve (~ 2 M^3 flops per block row, counted at 1 ns per M^2 entry).
    const NetworkModel& net = procs.network(axis);
    const double w = double(sizeof(T)), L = double(p.L), P = double(p.P), M = double(p.M);
    const double row = 1e-9 * M * M;
    const double ag = net.latency * std::ceil(std::log2(P)) + (P - 1) * L * 2 * R * w / net.bandwidth + 2 * P * L * row;
    const double at = 2 * (P - 1) * net.p2p_latency + 2 * (P - 1) / P * L * (2 * R + 2 * M) * w / net.bandwidth +
                      2 * L * row;
    int s = int(at < ag ? ReducedStrategy::alltoall : ReducedStrategy::allgather);
    check_mpi(MPI_Bcast(&s, 1, MPI_INT, 0, p.comm), "MPI_Bcast");
    p.strategy = ReducedStrategy(s);
  } else {
    p.strategy = options.strategy;
  }
  const int MM = p.M * p.M;
  if (p.on_device) {
    namespace part = cuda_backend::partition;
    // pinned memory of this GPU's context; the caller's device back at the end of the block
    cuda_backend::DeviceGuard device_guard(exec.device(), !exec.is_host());
    p.d_alpha = Array<T>(p.L * p.m * MM, exec);
    p.d_gamma = Array<T>(p.L * p.m * MM, exec);
    p.d_red = Array<T>(p.L * 2 * R, exec);
    p.d_sol = Array<T>(p.L * 2 * p.M, exec);
    // Sub-segments: the kernels hold whole blocks per thread (~255 registers for M >= 4,
    // 256 threads per SM), so ~64K threads fill an H100/H200 when the lines alone do not.
    int S = options.device_subsegments > 0
                ? options.device_subsegments
                : int(std::min<index_t>(64, (65536 + p.L - 1) / std::max<index_t>(p.L, 1)));
    S = int(std::max<index_t>(1, std::min<index_t>(S, p.m / 2)));
    p.dw.alpha = p.d_alpha.data();
    p.dw.gamma = p.d_gamma.data();
    p.dw.S = S;
    if (S > 1) {
      p.d_red1 = Array<T>(p.L * 2 * R * S, exec);
      p.d_alpha2 = Array<T>(p.L * 2 * S * MM, exec);
      p.d_gamma2 = Array<T>(p.L * 2 * S * MM, exec);
      p.d_x2 = Array<T>(p.L * 2 * S * p.M, exec);
      p.dw.red1 = p.d_red1.data();
      p.dw.alpha2 = p.d_alpha2.data();
      p.dw.gamma2 = p.d_gamma2.data();
      p.dw.x2 = p.d_x2.data();
    }
    if (p.transport != Transport::nccl) {
      p.h_red = static_cast<T*>(part::pinned_alloc(std::size_t(p.L) * 2 * R * sizeof(T)));
      p.h_sol = static_cast<T*>(part::pinned_alloc(std::size_t(p.L) * 2 * p.M * sizeof(T)));
    }
    if (!exec.is_host())
      for (void*& e : p.ev) e = part::event_create();
    p.redp = p.h_red;
    p.solp = p.h_sol;
  } else {
    p.alpha.assign(std::size_t(p.L * p.m) * MM, T(0));
    p.gamma.assign(std::size_t(p.L * p.m) * MM, T(0));
    p.red.assign(std::size_t(p.L) * 2 * R, T(0));
    p.sol.assign(std::size_t(p.L) * 2 * p.M, T(0));
    p.scratch.assign(std::size_t(std::max(1, omp_get_max_threads())) * Impl::kScratch, T(0));
    p.redp = p.red.data();
    p.solp = p.sol.data();
  }
  if (p.strategy == ReducedStrategy::allgather) {
    p.solved = p.L;
  } else {
    auto lo = [&](int j) { return p.L * j / p.P; };
    p.chunk_lo = lo(p.r);
    p.solved = lo(p.r + 1) - lo(p.r);
  }
  if (p.transport == Transport::nccl) {
    cuda_backend::DeviceGuard device_guard(exec.device());
    p.setup_nccl();
    p.solve_path = &Impl::run_nccl;
    return;
  }
  if (p.strategy == ReducedStrategy::alltoall) {
    auto lo = [&](int j) { return p.L * j / p.P; };
    for (int j = 0; j < p.P; ++j) {
      const index_t cn = lo(j + 1) - lo(j);
      p.cnt_r.push_back(int(cn * 2 * R));
      p.dsp_r.push_back(int(lo(j) * 2 * R));
      p.rcnt_r.push_back(int(p.solved * 2 * R));
      p.rdsp_r.push_back(int(j * p.solved * 2 * R));
      p.cnt_s.push_back(int(cn * 2 * p.M));
      p.dsp_s.push_back(int(lo(j) * 2 * p.M));
      p.rcnt_s.push_back(int(p.solved * 2 * p.M));
      p.rdsp_s.push_back(int(j * p.solved * 2 * p.M));
    }
    p.back.assign(std::size_t(p.P * p.solved) * 2 * p.M, T(0));
  }
  p.gather.assign(std::size_t(p.P * p.solved) * 2 * R, T(0));
  const index_t n = 2 * p.P;
  p.ra.assign(std::size_t(p.solved * n) * MM, T(0));
  p.rb.assign(std::size_t(p.solved * n) * MM, T(0));
  p.rc.assign(std::size_t(p.solved * n) * MM, T(0));
  p.rd.assign(std::size_t(p.solved * n) * p.M, T(0));
  p.ru.assign(std::size_t(p.solved * n) * p.M, T(0));
  if (p.solved > 0) {
    BlockTridiagonalOptions o = local_options(options);
    o.kernel = BlockKernel::automatic;
    p.reduced.emplace(Executor::host(), BlockContiguous{p.M, n, p.solved}, o);
  }
}

template <class T>
DistributedBlockTridiagonalPlan<T>::~DistributedBlockTridiagonalPlan() = default;
template <class T>
DistributedBlockTridiagonalPlan<T>::DistributedBlockTridiagonalPlan(DistributedBlockTridiagonalPlan&&) noexcept =
    default;
template <class T>
DistributedBlockTridiagonalPlan<T>& DistributedBlockTridiagonalPlan<T>::operator=(
    DistributedBlockTridiagonalPlan&&) noexcept = default;

template <class T>
void DistributedBlockTridiagonalPlan<T>::solve(const BlockBands<T>& bands, const T* d, T* u) {
  Impl& p = *impl_;
  detail::require(bands.a && bands.b && bands.c && d && u, "DistributedBlockTridiagonalPlan::solve: null pointer");
  (p.*p.solve_path)(bands, d, u);
}

// Device memory with device_passes = false: through the host mirrors (u's mirror keeps whatever lies between the
// layout's values, so the copy back writes nothing the layout does not own differently).
template <class T>
void DistributedBlockTridiagonalPlan<T>::Impl::run_mirrored(const BlockBands<T>& bands, const T* d, T* u) {
  Impl& p = *this;
  cuda_backend::DeviceGuard device_guard(p.exec.device());
  const std::size_t bb = p.ha.size() * sizeof(T), vb = p.hd.size() * sizeof(T);
  const double t0 = now();
  detail::copy_bytes(p.ha.data(), MemorySpace::host, bands.a, MemorySpace::device, bb, p.exec.stream());
  detail::copy_bytes(p.hb.data(), MemorySpace::host, bands.b, MemorySpace::device, bb, p.exec.stream());
  detail::copy_bytes(p.hc.data(), MemorySpace::host, bands.c, MemorySpace::device, bb, p.exec.stream());
  detail::copy_bytes(p.hd.data(), MemorySpace::host, d, MemorySpace::device, vb, p.exec.stream());
  if (u != d) detail::copy_bytes(p.hu.data(), MemorySpace::host, u, MemorySpace::device, vb, p.exec.stream());
  T* hu = u == d ? p.hd.data() : p.hu.data();
  const double t1 = now();
  p.run(BlockBands<T>{p.ha.data(), p.hb.data(), p.hc.data()}, p.hd.data(), hu);
  const double t2 = now();
  detail::copy_bytes(u, MemorySpace::device, hu, MemorySpace::host, vb, p.exec.stream());
  p.t_staging = (t1 - t0) + (now() - t2);
}

template <class T>
bool DistributedBlockTridiagonalPlan<T>::split() const { return !impl_->local.has_value(); }
template <class T>
ReducedStrategy DistributedBlockTridiagonalPlan<T>::strategy() const { return impl_->strategy; }
template <class T>
double DistributedBlockTridiagonalPlan<T>::last_local_seconds() const { return impl_->t_local; }
template <class T>
double DistributedBlockTridiagonalPlan<T>::last_exchange_seconds() const { return impl_->t_exchange; }
template <class T>
int DistributedBlockTridiagonalPlan<T>::device_subsegments() const { return impl_->on_device ? impl_->dw.S : 1; }
template <class T>
double DistributedBlockTridiagonalPlan<T>::last_staging_seconds() const { return impl_->t_staging; }
template <class T>
double DistributedBlockTridiagonalPlan<T>::exchanged_bytes() const { return impl_->bytes; }
template <class T>
Transport DistributedBlockTridiagonalPlan<T>::transport() const { return impl_->transport; }

template class DistributedBlockTridiagonalPlan<float>;
template class DistributedBlockTridiagonalPlan<double>;

}  // namespace adi::mpi
