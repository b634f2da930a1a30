// The partition method for tridiagonal lines split over the ranks of one axis.
//
// Local rows 0..m-1 of a line on one rank. Rows 1..m-2 are eliminated by the modified
// Thomas of the Thomas-PCR hybrid (paper section 2.3, algorithm 3), keeping the
// dependence on u_0 as a parameter:
//     u_i = delta_i - alpha_i u_0 - gamma_i u_{i+1},         i = 1..m-2
// (delta in u, alpha and gamma in the plan's workspace). The same forward pass also
// accumulates u_1 in terms of the two ends,
//     u_1 = P - Q u_0 - S u_{m-1},   P = sum pi_i delta_i, Q = sum pi_i alpha_i, S = -pi_{m-1},
//     pi_1 = 1, pi_{i+1} = -pi_i gamma_i,
// so no backward pass over the segment is needed before the exchange (the paper's
// algorithm 3 runs one; here it would cost three more reads of the segment). Rows 0 and
// m-1 with u_1 and u_{m-2} eliminated are the rank's two rows of the reduced system
//     [u_0^0, u_{m-1}^0, u_0^1, u_{m-1}^1, ...]   (2P unknowns per line, tridiagonal,
// cyclic for periodic lines). After the reduced solve every rank back-substitutes
// u_i = delta_i - alpha_i u_0 - gamma_i u_{i+1} from i = m-2 down to 1.
#include "adi/mpi/detail/distributed_tridiagonal_impl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>

#include "adi/base/env_switch.hpp"
#include "adi/detail/tridiagonal_stage.hpp"
#include "solvers/common/partition_core.hpp"
#include "solvers/common/spike_y.hpp"

namespace adi::mpi {

using detail::env_switch;  // a timing switch of the environment over its option (strict: 1 / 0)

StrategyCosts model_costs(const NetworkModel& net, std::size_t value_size, index_t lines, int ranks, bool periodic) {
  // Bytes and messages of each strategy for `lines` lines, with the axis's measured
  // latency and bandwidth; reduced-system arithmetic at ~48 bytes of memory traffic per
  // row at the copy bandwidth.
  StrategyCosts c;
  const double w = double(value_size), L = double(lines), P = double(ranks);
  const double row_cost = 48.0 / net.copy_bandwidth;
  const double steps = std::ceil(std::log2(2.0 * P));
  c.allgather = net.latency * std::ceil(std::log2(P)) + (P - 1) * L * 8 * w / net.bandwidth + 2 * P * L * row_cost;
  c.alltoall = 2 * (P - 1) * net.p2p_latency + 2 * (P - 1) / P * L * 10 * w / net.bandwidth + 2 * L * row_cost;
  c.pcr = steps * (net.p2p_latency + 2 * L * 8 * w / net.bandwidth + 2 * L * row_cost);
  if (periodic && !power_of_two(ranks)) c.pcr = std::numeric_limits<double>::infinity();
  return c;
}

const char* strategy_name(ReducedStrategy s) {
  switch (s) {
    case ReducedStrategy::automatic: return "automatic";
    case ReducedStrategy::allgather: return "allgather";
    case ReducedStrategy::alltoall: return "alltoall";
    case ReducedStrategy::pcr: return "pcr";
  }
  return "unknown";
}

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::automatic: return "automatic";
    case Transport::host_staging: return "host_staging";
    case Transport::cuda_aware_mpi: return "cuda_aware_mpi";
    case Transport::nccl: return "nccl";
  }
  return "unknown";
}

Transport transport_from_name(const std::string& name) {
  for (auto t : {Transport::automatic, Transport::host_staging, Transport::cuda_aware_mpi, Transport::nccl})
    if (name == transport_name(t)) return t;
  throw InvalidArgument("unknown transport '" + name +
                        "'; expected one of: automatic, host_staging, cuda_aware_mpi, nccl");
}

ReducedStrategy strategy_from_name(const std::string& name) {
  for (auto s : {ReducedStrategy::automatic, ReducedStrategy::allgather, ReducedStrategy::alltoall,
                 ReducedStrategy::pcr})
    if (name == strategy_name(s)) return s;
  throw InvalidArgument("unknown reduced-system strategy '" + name +
                        "'; expected one of: automatic, allgather, alltoall, pcr");
}

// Phase 1: every line's two reduced rows into red; delta into u, alpha/gamma into the
// workspace. Returns false when a pivot was zero or non-finite.
template <class T>
template <class Band>
bool DistributedTridiagonalPlan<T>::Impl::reduce(const Band& bd, const T* d, T* u) {
  const index_t st = ls.stride, so = ls.stride0;
  const int G = group_size();
  const index_t groups0 = (ls.count0 + G - 1) / G;
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (L * m > 32768)
  for (index_t gi = 0; gi < groups0 * ls.count1; ++gi) {
    const index_t l1 = gi / groups0, l0b = (gi % groups0) * G;
    const int g = int(std::min<index_t>(G, ls.count0 - l0b));
    const index_t lfirst = l1 * ls.count0 + l0b;
    const index_t base = l1 * ls.stride1 + l0b * so;
    T* al = alpha.data() + lfirst * m;
    T* ga = gamma.data() + lfirst * m;
    T pP[kGroup], pQ[kGroup], pi[kGroup], ap[kGroup], gp[kGroup], dp[kGroup];
    if (m == 2) {
      for (int j = 0; j < g; ++j) {
        const index_t o = base + j * so;
        T* rr = red.data() + (lfirst + j) * 8;
        rr[0] = first_open ? T(0) : bd.A(o, 0);
        rr[1] = bd.B(o, 0);
        rr[2] = bd.C(o, 0);
        rr[3] = d[o];
        rr[4] = bd.A(o + st, 1);
        rr[5] = bd.B(o + st, 1);
        rr[6] = last_open ? T(0) : bd.C(o + st, 1);
        rr[7] = d[o + st];
      }
      continue;
    }
    for (int j = 0; j < g; ++j) {  // row 1
      const index_t o = base + j * so + st;
      const T rinv = T(1) / bd.B(o, 1);
      bad |= !std::isfinite(double(rinv));
      ap[j] = bd.A(o, 1) * rinv;
      gp[j] = bd.C(o, 1) * rinv;
      dp[j] = d[o] * rinv;
      al[1 * g + j] = ap[j];
      ga[1 * g + j] = gp[j];
      u[o] = dp[j];
      pP[j] = dp[j];
      pQ[j] = ap[j];
      pi[j] = -gp[j];
    }
    int gbad = 0;
    for (index_t i = 2; i <= m - 2; ++i) {
#pragma omp simd reduction(| : gbad)
      for (int j = 0; j < g; ++j) {
        const index_t o = base + j * so + i * st;
        const T a = bd.A(o, i);
        const T rinv = T(1) / common::thomas_pivot(a, bd.B(o, i), gp[j]);
        gbad |= !std::isfinite(double(rinv));
        common::partition_row(a, bd.C(o, i), d[o], rinv, gp[j], dp[j], ap[j]);
        al[i * g + j] = ap[j];
        ga[i * g + j] = gp[j];
        u[o] = dp[j];
        common::partition_accumulate(gp[j], dp[j], ap[j], pP[j], pQ[j], pi[j]);
      }
    }
    bad |= gbad;
    for (int j = 0; j < g; ++j) {
      const index_t o0 = base + j * so, ol = o0 + (m - 1) * st;
      T* rr = red.data() + (lfirst + j) * 8;
      const T c0 = bd.C(o0, 0), al_ = bd.A(ol, m - 1);
      rr[0] = first_open ? T(0) : bd.A(o0, 0);
      // rr[2] = c0 pi = -c0 S, S = -pi_{m-1}
      common::partition_first_row(bd.B(o0, 0), c0, d[o0], pP[j], pQ[j], pi[j], rr[1], rr[2], rr[3]);
      common::partition_last_row(al_, bd.B(ol, m - 1), d[ol], gp[j], dp[j], ap[j], rr[4], rr[5], rr[7]);
      rr[6] = last_open ? T(0) : bd.C(ol, m - 1);
    }
  }
  return bad == 0;
}

// Phase 3: u_0, u_{m-1} from sol, then the interior. False on a non-finite end value.
template <class T>
bool DistributedTridiagonalPlan<T>::Impl::back_substitute(T* u) {
  const index_t st = ls.stride, so = ls.stride0;
  const int G = group_size();
  const index_t groups0 = (ls.count0 + G - 1) / G;
  int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad) if (L * m > 32768)
  for (index_t gi = 0; gi < groups0 * ls.count1; ++gi) {
    const index_t l1 = gi / groups0, l0b = (gi % groups0) * G;
    const int g = int(std::min<index_t>(G, ls.count0 - l0b));
    const index_t lfirst = l1 * ls.count0 + l0b;
    const index_t base = l1 * ls.stride1 + l0b * so;
    const T* al = alpha.data() + lfirst * m;
    const T* ga = gamma.data() + lfirst * m;
    T u0[kGroup], nx[kGroup];
    for (int j = 0; j < g; ++j) {
      const index_t o0 = base + j * so;
      u0[j] = sol[std::size_t(lfirst + j) * 2];
      nx[j] = sol[std::size_t(lfirst + j) * 2 + 1];
      bad |= !std::isfinite(double(u0[j])) || !std::isfinite(double(nx[j]));
      u[o0] = u0[j];
      u[o0 + (m - 1) * st] = nx[j];
    }
    for (index_t i = m - 2; i >= 1; --i) {
#pragma omp simd
      for (int j = 0; j < g; ++j) {
        const index_t o = base + j * so + i * st;
        const T v = common::partition_fill(u[o], al[i * g + j], u0[j], ga[i * g + j], nx[j]);
        u[o] = v;
        nx[j] = v;
      }
    }
  }
  return bad == 0;
}

// The forward pass's pivots again, line after line (reduce() keeps no trace of where one
// failed: its loops stay as they are for the solves that succeed).
template <class T>
template <class Band>
std::pair<index_t, index_t> DistributedTridiagonalPlan<T>::Impl::first_bad_pivot(const Band& bd) const {
  const index_t st = ls.stride;
  for (index_t l = 0; l < L && m > 2; ++l) {
    const index_t o = ls.offset(l);
    T r = T(1) / bd.B(o + st, 1);
    if (!std::isfinite(double(r))) return {l, row0 + 1};
    T cp = bd.C(o + st, 1) * r;
    for (index_t i = 2; i <= m - 2; ++i) {
      const index_t oi = o + i * st;
      r = T(1) / common::thomas_pivot(bd.A(oi, i), bd.B(oi, i), cp);
      if (!std::isfinite(double(r))) return {l, row0 + i};
      cp = bd.C(oi, i) * r;
    }
  }
  return {-1, -1};
}

// Collective over the axis, like the failure itself: a bad pivot poisons its line's reduced
// rows with NaN, and the reduced solve carries the NaN to that line's interface values on
// every rank of the axis, so every rank arrives here (and the message is the same on all).
template <class T>
void DistributedTridiagonalPlan<T>::Impl::throw_singular(std::pair<index_t, index_t> bad, const T* ends) const {
  constexpr long long kNone = std::numeric_limits<long long>::max();
  long long mine[2] = {bad.first >= 0 ? bad.first : kNone, kNone}, all[2];
  for (index_t l = 0; l < L && mine[1] == kNone; ++l)
    if (!std::isfinite(double(ends[2 * l])) || !std::isfinite(double(ends[2 * l + 1]))) mine[1] = l;
  check_mpi(MPI_Allreduce(mine, all, 2, MPI_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce");
  long long row = bad.first >= 0 && bad.first == all[0] ? bad.second : kNone, first_row = kNone;
  check_mpi(MPI_Allreduce(&row, &first_row, 1, MPI_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce");
  const index_t line = all[0] != kNone ? index_t(all[0]) : all[1] != kNone ? index_t(all[1]) : -1;
  const index_t at = first_row != kNone ? index_t(first_row) : -1;
  std::string where = line < 0 ? std::string() : " in system " + detail::number(line);
  if (at >= 0) where += " at row " + detail::number(at) + " of the axis";
  throw SingularSystem(std::string("DistributedTridiagonalPlan: a zero or non-finite pivot along ") + axis_name(axis) +
                           where +
                           " (the partition method needs diagonally dominant lines); u holds no solution",
                       line, at);
}

// The host plans' exchange and reduced solve (t1, t2: its start and end), then the pivot
// verdict: non-finite interface values throw on every rank (bad: where this rank's forward
// pass failed, looked for unless ok_reduce).
template <class T>
template <class Band>
void DistributedTridiagonalPlan<T>::Impl::exchange_host(const Band& bd, bool ok_reduce, double& t1, double& t2) {
  t_wait = 0;
  timing_barrier();
  t1 = now();
  exchange_and_solve();
  t2 = now();
  bool ok = true;
  if (opt.check_pivots)
    for (T v : sol) ok = ok && std::isfinite(double(v));
  if (!ok) throw_singular(ok_reduce ? std::pair<index_t, index_t>{-1, -1} : first_bad_pivot(bd), sol.data());
}

template <class T>
template <class Band>
void DistributedTridiagonalPlan<T>::Impl::run(const Band& bd, const T* d, T* u) {
  const double t0 = now();
  const bool ok_reduce = reduce(bd, d, u);
  // A failed pivot poisons this rank's reduced rows, so the reduced solve of every line
  // it touches returns NaN on every rank of the axis: all of them throw below without
  // another collective.
  if (!ok_reduce && opt.check_pivots)
    for (T& v : red) v = std::numeric_limits<T>::quiet_NaN();
  double t1 = 0, t2 = 0;
  exchange_host(bd, ok_reduce, t1, t2);
  back_substitute(u);
  const double t3 = now();
  t_local = (t1 - t0) + (t3 - t2);
  t_exchange = t2 - t1;
}

template <class T>
index_t DistributedTridiagonalPlan<T>::Impl::ghost_size(const adi::detail::TridiagonalStage<T>& fused) const {
  return ls.lines() == 0 ? 1 : fused.face_base + (ls.count0 - 1) + (ls.count1 - 1) * fused.face_n1 + 1;
}

template <class T>
adi::detail::TridiagonalStage<T> DistributedTridiagonalPlan<T>::Impl::cut_stage(
    const adi::detail::TridiagonalStage<T>& fused, T* u, T* const ghost[2]) const {
  adi::detail::TridiagonalStage<T> s = fused;
  s.lines = ls;
  s.periodic = false;
  s.u = u;
  const bool cut[2] = {r != 0 || opt.periodic, r != P - 1 || opt.periodic};
  for (std::size_t k = 0; k < 2; ++k)
    if (cut[k]) {
      s.end[k] = s.v_end[k] = s.neu_sub[k] = nullptr;
      s.neu_add[k] = fused.v ? ghost[k] : nullptr;
    }
  return s;
}

// The SPIKE form on host memory: the device path's steps (distributed_tridiagonal_device.cpp,
// run_device) as loops over the same functions (solvers/common/partition_core.hpp).
template <class T>
void DistributedTridiagonalPlan<T>::Impl::run_spike_host(const T* a, const T* b, const T* c, const T* d, T* u,
                                                        const adi::detail::TridiagonalStage<T>* fused) {
  const double t0 = now();
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  T *W = h_spike.data(), *Z = W + m, *cp = W + 2 * m, *a_cut = W + 4 * m, *c_cut = W + 5 * m;
  common::spike_vector(m, a, b, c, true, W, cp);
  common::spike_vector(m, a, b, c, false, Z, cp);
  index_t reach_lo = 0, reach_hi = 0;
  common::spike_reach(m, W, Z, common::kSpikeTol<T>, reach_lo, reach_hi);
  const index_t st = ls.stride;
  if (fused) {
    const index_t need = ghost_size(*fused);
    h_ghost.assign(std::size_t(2 * need), T(0));
    T* const ghost[2] = {h_ghost.data(), h_ghost.data() + need};
    if (fused->v)
      for (index_t l = 0; l < L; ++l) {
        const index_t o = line_offset(l), fi = fused->face_base + l % ls.count0 + (l / ls.count0) * fused->face_n1;
        if (!first_open) ghost[0][fi] = fused->a[0] * fused->v[o - st];
        if (!last_open) ghost[1][fi] = fused->c[m - 1] * fused->v[o + m * st];
      }
    spike_local->solve_stage(cut_stage(*fused, u, ghost));
  } else {
    for (index_t i = 0; i < m; ++i) {
      a_cut[i] = i == 0 ? T(0) : a[i];
      c_cut[i] = i == m - 1 ? T(0) : c[i];
    }
    spike_local->solve(SharedBands<T>{a_cut, b, c_cut}, d, u);
  }
  double t1 = 0, t2 = 0;
  if (spike_compact) {  // the compact tail: y's ends and the scalars gathered, each line's system formed here
    namespace part = cuda_backend::partition;
    T* const all = h_cpt.data() + cpt_k;
    T* const mine = spike_half ? all + r * cpt_k : h_cpt.data();  // (half: straight into this rank's slot)
    T* const half = h_cpt.data();
    part::spike_compact_header<T>(m, a, c, W, Z, mine);
    if (spike_half) std::copy(mine, mine + part::kSpikeHeader, half);
    for (index_t l = 0; l < L; ++l) {
      const index_t o = line_offset(l);
      mine[part::kSpikeHeader + l] = u[o];
      mine[part::kSpikeHeader + L + l] = u[o + (m - 1) * st];
      if (spike_half) half[part::kSpikeHeader + l] = u[o + (r == 0 ? m - 1 : 0) * st];
    }
    t_wait = 0;
    timing_barrier();
    t1 = now();
    if (spike_half) {
      const int k2 = int(part::kSpikeHeader + L), q = 1 - r;
      T* const recv = h_cpt.data() + cpt_k + half_offset();
      check_mpi(MPI_Sendrecv(half, k2, mpi_type<T>(), q, 31, recv, k2, mpi_type<T>(), q, 31, comm,
                             MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
      if (q == 0) std::copy(recv, recv + part::kSpikeHeader, all);  // (rank 0's scalars to its slot's start)
      bytes = 2.0 * double(k2) * double(sizeof(T));
    } else {
      check_mpi(MPI_Allgather(mine, int(cpt_k), mpi_type<T>(), all, int(cpt_k), mpi_type<T>(), comm),
                "MPI_Allgather");
      bytes = double(P * cpt_k) * double(sizeof(T));
    }
    t2 = now();
    std::vector<T> scr(std::size_t(14 * P));
    bool ok = true;
    for (index_t l = 0; l < L; ++l)  // this rank's unknowns into sol (as the exchange leaves them), A, C into red
      ok = part::spike_compact_couplings<T>(P, r, opt.periodic, all, cpt_k, L, l, scr.data(), scr.data() + 8 * P,
                                            sol[std::size_t(2 * l)], sol[std::size_t(2 * l + 1)],
                                            red[std::size_t(2 * l)], red[std::size_t(2 * l + 1)]) &&
           ok;
    if (!ok && opt.check_pivots) throw_singular(first_bad_pivot(SharedBand<T>{a, b, c}), sol.data());
  } else {
    for (index_t l = 0; l < L; ++l) {
      const index_t o = line_offset(l);
      common::spike_rows(W[0], W[m - 1], Z[0], Z[m - 1], a[0], c[m - 1], u[o], u[o + (m - 1) * st], first_open,
                         last_open, red.data() + 8 * l);
    }
    exchange_host(SharedBand<T>{a, b, c}, false, t1, t2);
  }
  index_t top = 0, bottom = m;
  common::spike_corrected_rows(m, reach_lo, reach_hi, first_open, last_open, top, bottom);
  for (index_t l = 0; l < L; ++l) {
    const index_t o = line_offset(l);
    T A = T(0), C = T(0);
    if (spike_compact) {  // (the couplings, above)
      A = red[std::size_t(2 * l)];
      C = red[std::size_t(2 * l + 1)];
    } else {
      common::spike_couplings(W[0], W[m - 1], Z[0], Z[m - 1], u[o] - sol[std::size_t(2 * l)],
                              u[o + (m - 1) * st] - sol[std::size_t(2 * l + 1)], first_open, last_open, A, C);
    }
    for (index_t i = 0; i < m; ++i)
      if (i < top || i >= bottom) u[o + i * st] = common::partition_fill(u[o + i * st], W[i], A, Z[i], C);
  }
  const double t3 = now();
  t_local = (t1 - t0) + (t3 - t2);
  t_exchange = t2 - t1;
}

// The SPIKE form of per-line bands (stop 35), set up once: the single-device plan of the cut
// segments (spike_local where the shared form made one) and the windows' buffers.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::setup_spike_lines(const DistributedOptions& options) {
  if (options.spike_lines_rows < 0)
    throw InvalidArgument("DistributedOptions::spike_lines_rows = " + std::to_string(options.spike_lines_rows) +
                          ": use 0 (the SPIKE form of per-line bands only with spike_lines) or a segment length "
                          "in rows from which device plans take it (the default 1024)");
  if (options.spike_y_stream < -1 || options.spike_y_stream > 4)
    throw InvalidArgument("DistributedOptions::spike_y_stream = " + std::to_string(options.spike_y_stream) +
                          ": use -1 (automatic), 0 (off), 1 (y by truncated sweeps), 2 (and rows requested into L2 "
                          "ahead), 3 (loads double-buffered) or 4 (2 and 3)");
  if (local) return;
  // Measured (stop 41) on lines along z, a warp's 32 neighbouring lines read as one run a row: the
  // automatic choices hold for lines along y and z, not along x (each line's rows contiguous).
  const bool adjacent = axis != Axis::x;
  const bool by_length =
      !exec.is_host() && adjacent && options.spike_lines_rows > 0 && m >= options.spike_lines_rows;
  if (!env_switch("ADI_SPIKE_LINES", by_length || (options.spike_lines && (!exec.is_host() || options.host_spike))))
    return;
  lines_on = true;
  lines_R = std::max<index_t>(2, std::min<index_t>(m, options.spike_window));  // (m >= 2 on a split axis)
  const int y_default = options.spike_y_stream >= 0 ? options.spike_y_stream : adjacent ? 3 : 0;
  lines_y = detail::env_int("ADI_SPIKE_Y_STREAM", 0, 4, y_default);
  lines_side = !exec.is_host() && env_switch("ADI_SPIKE_WINDOWS_SIDE", options.spike_windows_side);
  const bool own = options.spike_kernel != Kernel::automatic || options.spike_measure;
  if (spike_local && !own) {
    lines_local = &*spike_local;
  } else {
    TridiagonalOptions lo;
    lo.kernel = own ? options.spike_kernel : options.kernel;
    lo.measure = options.spike_measure && lo.kernel == Kernel::automatic;
    lo.check_pivots = false;  // a bad pivot shows as non-finite end values (SingularSystem below)
    lo.pivoting = Pivoting::none;
    lines_opts = lo;
    if (lines_y == 0) lines_solver();  // (y by truncated sweeps: made at the first solve in place)
  }
  const index_t n = 4 * lines_R * L + 2 * L;  // W, Z, cs (2), ends
  if (exec.is_host()) {
    h_lines.assign(std::size_t(n), T(0));
    h_lines_reach.assign(std::size_t(2 * L), 0);
  } else {
    d_lines = Array<T>(n, exec);
    d_lines_reach = Array<index_t>(2 * L, exec);
    d_lines_bad = Array<int>(1, exec);
    h_lines_bad = StagingVector<int>(StagingAllocator<int>(true));
    h_lines_bad.assign(1, 0);
  }
}

// The SPIKE form of per-line bands on host memory: the device's steps as loops over the same
// functions (common::spike_window, spike_rows, spike_couplings, spike_corrected_rows).
template <class T>
bool DistributedTridiagonalPlan<T>::Impl::run_spike_lines_host(const T* a, const T* b, const T* c, const T* d, T* u) {
  const double t0 = now();
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  const index_t R = lines_R, st = ls.stride, guard = common::spike_guard(R);
  T *W = h_lines.data(), *Z = W + R * L, *cs = Z + R * L;
  using Band = common::Strided<const T, index_t>;
  using Out = common::Strided<T, index_t>;
  bool ok = true;
  for (index_t l = 0; l < L && ok; ++l) {
    const index_t o = line_offset(l);
    const Band A{a + o, st}, B{b + o, st}, C{c + o, st};
    ok = common::spike_window(m, R, guard, true, A, B, C, Out{W + l, L}, Out{cs + l, L},
                              h_lines_reach[std::size_t(2 * l)]) &&
         common::spike_window(m, R, guard, false, A, B, C, Out{Z + l, L}, Out{cs + l, L},
                              h_lines_reach[std::size_t(2 * l + 1)]);
  }
  if (!ok) {
    ++fallbacks;
    return false;
  }
  if (lines_y && u != d) {  // y by truncated sweeps (spike_y_stream): the device's parts as loops
    using Shape = common::SpikeYShape<T>;
    const index_t S = common::spike_y_parts<index_t>(m, L, 2 * L, Shape::G);
    std::vector<T> ring(std::size_t(2 * Shape::K));
    struct Ring {
      T* p;
      void put(index_t s, T cs, T ys) const { p[2 * s] = cs, p[2 * s + 1] = ys; }
      void get(index_t s, T& cs, T& ys) const { cs = p[2 * s], ys = p[2 * s + 1]; }
    };
    auto part_of = [&](auto pipe, index_t o, index_t q) {
      return common::spike_y_part<8, decltype(pipe)::value>(
          m, m * q / S, m * (q + 1) / S, index_t(Shape::G), index_t(Shape::C), index_t(Shape::K), Band{a + o, st},
          Band{b + o, st}, Band{c + o, st}, Band{d + o, st}, Out{u + o, st}, Ring{ring.data()}, [](index_t) {});
    };
    for (index_t l = 0; l < L && ok; ++l)
      for (index_t q = 0; q < S && ok; ++q)
        ok = lines_y >= 3 ? part_of(std::true_type{}, line_offset(l), q)
                          : part_of(std::false_type{}, line_offset(l), q);
    if (!ok) {  // a line's sweeps did not decay within G rows: the partition passes (d intact)
      ++fallbacks;
      return false;
    }
  } else {
    lines_solver().solve(Bands<T>{a, b, c}, d, u);  // y: a[0], c[m-1] of the lines not read
  }
  form = "spike";
  auto spikes = [&](index_t l, index_t i, T& w, T& z) {
    common::spike_at(m, R, Out{W + l, L}, Out{Z + l, L}, i, w, z);
  };
  for (index_t l = 0; l < L; ++l) {
    const index_t o = line_offset(l);
    T W0, W1, Z0, Z1;
    spikes(l, 0, W0, Z0);
    spikes(l, m - 1, W1, Z1);
    common::spike_rows(W0, W1, Z0, Z1, a[o], c[o + (m - 1) * st], u[o], u[o + (m - 1) * st], first_open, last_open,
                       red.data() + 8 * l);
  }
  double t1 = 0, t2 = 0;
  exchange_host(FullBand<T>{a, b, c}, false, t1, t2);
  for (index_t l = 0; l < L; ++l) {
    const index_t o = line_offset(l);
    T W0, W1, Z0, Z1, A = T(0), C = T(0);
    spikes(l, 0, W0, Z0);
    spikes(l, m - 1, W1, Z1);
    common::spike_couplings(W0, W1, Z0, Z1, u[o] - sol[std::size_t(2 * l)],
                            u[o + (m - 1) * st] - sol[std::size_t(2 * l + 1)], first_open, last_open, A, C);
    index_t top = 0, bottom = m;
    common::spike_corrected_rows(m, h_lines_reach[std::size_t(2 * l)], h_lines_reach[std::size_t(2 * l + 1)],
                                 first_open, last_open, top, bottom);
    for (index_t i = 0; i < m; ++i)
      if (i < top || i >= bottom) {
        T w, z;
        spikes(l, i, w, z);
        u[o + i * st] = common::partition_fill(u[o + i * st], w, A, z, C);
      }
  }
  const double t3 = now();
  t_local = (t1 - t0) + (t3 - t2);
  t_exchange = t2 - t1;
  return true;
}

template <class T>
DistributedTridiagonalPlan<T>::DistributedTridiagonalPlan(const ProcessGrid& procs, Axis axis, const Executor& exec,
                                                          const Box3& local, DistributedOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.axis = axis;
  p.exec = exec;
  p.box = local;
  p.opt = options;
  p.comm = procs.axis_comm(axis);
  MPI_Comm_size(p.comm, &p.P);
  MPI_Comm_rank(p.comm, &p.r);

  // Validate locally, then agree over the axis before any exchange.
  std::string err;
  try {
    p.ls = to_lines(BoxLines{local, axis});
  } catch (const Error& e) {
    err = std::string("DistributedTridiagonalPlan: ") + e.what();
  }
  p.m = err.empty() ? p.ls.n : 0;
  p.L = err.empty() ? p.ls.lines() : 0;
  long long ext[6] = {0, 0, 0, 0, 0, 0};
  {
    int k = 0;
    for (int a = 0; a < 3; ++a)
      if (a != int(axis)) ext[k++] = local.extent(Axis(a));
    ext[2] = options.periodic;
    ext[3] = int(options.strategy);
    ext[4] = int(options.transport);
    ext[5] = int(options.reduced_solve);
  }
  long long mn[6], mx[6];
  check_mpi(MPI_Allreduce(ext, mn, 6, MPI_LONG_LONG, MPI_MIN, p.comm), "MPI_Allreduce");
  check_mpi(MPI_Allreduce(ext, mx, 6, MPI_LONG_LONG, MPI_MAX, p.comm), "MPI_Allreduce");
  const std::string an = axis_name(axis);
  if (err.empty() && (mn[0] != mx[0] || mn[1] != mx[1]))
    err = "DistributedTridiagonalPlan: mismatched extents across the ranks along " + an +
          ": the two other extents range over " + detail::number(mn[0]) + ".." + detail::number(mx[0]) + " and " +
          detail::number(mn[1]) + ".." + detail::number(mx[1]) +
          " (every rank along the axis must hold the same lines)";
  if (err.empty() && (mn[2] != mx[2] || mn[3] != mx[3] || mn[4] != mx[4] || mn[5] != mx[5]))
    err = "DistributedTridiagonalPlan: the options (periodic, strategy, transport, reduced_solve) differ between the "
          "ranks along " + an;
  if (err.empty() && options.device_subsegments < 0)
    err = "DistributedTridiagonalPlan: device_subsegments = " + detail::number(options.device_subsegments) +
          " must be >= 0 (0: automatic)";
  if (err.empty() && p.P > 1 && p.m < 2)
    err = "DistributedTridiagonalPlan: " + detail::number(p.m) + " row(s) along " + an + " on this rank; a split axis (" +
          detail::number(p.P) + " ranks) needs >= 2 rows per rank: use fewer ranks along " + an;
  if (err.empty() && p.P > 1 && options.periodic && options.strategy == ReducedStrategy::pcr && !power_of_two(p.P))
    err = "DistributedTridiagonalPlan: strategy pcr on periodic lines needs a power-of-two number of ranks along " +
          an + " (here " + detail::number(p.P) + "); use allgather or alltoall";
  if (err.empty() && p.P > 1 && p.L * 8 * std::max(1, p.P) > index_t(2147483647))
    err = "DistributedTridiagonalPlan: " + detail::number(p.L) + " lines are too many for one exchange; split the box";
  agree(p.comm, err.empty(), err);
  {  // the first row of this rank along the axis (SingularSystem::row)
    long long rows = p.m, before = 0;
    check_mpi(MPI_Exscan(&rows, &before, 1, MPI_LONG_LONG, MPI_SUM, p.comm), "MPI_Exscan");
    p.row0 = p.r == 0 ? 0 : index_t(before);
  }

  if (p.P == 1) {
    try {
      p.local.emplace(exec, BoxLines{local, axis},
                      TridiagonalOptions{options.periodic, options.kernel, options.check_pivots});
      p.solve_full = &Impl::template solve_local<Bands<T>>;
      p.solve_shared = &Impl::template solve_local<SharedBands<T>>;
    } catch (const Error& e) {
      err = e.what();
    }
    agree(p.comm, err.empty(), err);
    return;
  }

  p.solve_full = exec.is_host() ? &Impl::solve_host : &Impl::solve_device;
  p.solve_shared = exec.is_host() ? &Impl::solve_host_shared : &Impl::solve_device_shared;
  // Everything below that allocates or launches runs on the plan's GPU; the caller's
  // current device is given back when the constructor returns (or throws).
  const cuda_backend::DeviceGuard device_guard(exec.device(), !exec.is_host());
  // The model: bytes and messages of each strategy for L lines, with the axis's
  // measured latency and bandwidth; reduced-system arithmetic at ~48 bytes of memory
  // traffic per row at the copy bandwidth.
  // The transport (device plans): what this build and machine offer, agreed over the axis.
  p.resolve_transport(procs);
  if (options.strategy == ReducedStrategy::automatic) {
    const NetworkModel& net = procs.network(axis);  // measured once per grid axis, only when needed
    p.costs = model_costs(net, sizeof(T), p.L, p.P, options.periodic);
  }
  if (options.strategy == ReducedStrategy::automatic && p.transport == Transport::nccl && p.P == 2) {
    // Two ranks over NCCL: the all-gather moves fewer bytes than alltoall's two rounds (8 values a
    // line against 5 each way) in one collective instead of two, and the redundant reduced solve runs
    // on the device, whatever the line count. The model below prices that solve at the host's copy
    // rate and picked alltoall; measured on the public case (docs/mpi.md, stop 43, 2 x H200):
    // allgather 0.556-0.576 ms against alltoall 0.575-0.615. (More ranks: alltoall moves fewer
    // bytes, the model decides as before.) predicted() still holds the model's costs.
    p.strategy = ReducedStrategy::allgather;
  } else if (options.strategy == ReducedStrategy::automatic) {
    p.strategy = ReducedStrategy::allgather;
    double best = p.costs.allgather;
    if (p.costs.alltoall < best) best = p.costs.alltoall, p.strategy = ReducedStrategy::alltoall;
    // pcr's exchanges and eliminations run on the host: not with a device transport.
    if (p.costs.pcr < best && p.pcr_allowed())
      best = p.costs.pcr, p.strategy = ReducedStrategy::pcr;
    // Measurements agree on every rank (network() takes maxima), but make sure.
    int s = int(p.strategy);
    check_mpi(MPI_Bcast(&s, 1, MPI_INT, 0, p.comm), "MPI_Bcast");
    p.strategy = ReducedStrategy(s);
  } else {
    p.strategy = options.strategy;
  }

  const std::size_t seg = std::size_t(p.L * p.m);
  p.red = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  p.sol = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  p.gather = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  p.back = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
  // Host solve or pcr with a device plan; host staging of the device solve's rows.
  const bool host_buffers = exec.is_host() || p.transport == Transport::host_staging;
  // With host staging, automatic solves allgather's rows on the device (one copy of the
  // gathered rows beats the host solve of every line: 3.53 vs 3.76 ms on the public case)
  // and alltoall's on the host (the device solve would add a second round trip between
  // device and host: 3.45-3.67 vs 3.68-3.72 ms); see docs/mpi.md, "Transport".
  const bool site_device = options.reduced_solve == ReducedSolveSite::device ||
                           (options.reduced_solve == ReducedSolveSite::automatic &&
                            p.strategy == ReducedStrategy::allgather);
  p.device_solve = !exec.is_host() && (p.transport != Transport::host_staging ||
                                       (p.strategy != ReducedStrategy::pcr && site_device));
  if (exec.is_host()) {  // a device plan keeps them on the device (below)
    p.alpha.assign(seg, T(0));
    p.gamma.assign(seg, T(0));
  }
  p.red.assign(std::size_t(p.L * 8), T(0));
  p.sol.assign(std::size_t(p.L * 2), T(0));
  const int threads = std::max(1, omp_get_max_threads());
  p.scratch.assign(std::size_t(threads) * std::size_t(10 * p.P), T(0));
  switch (p.strategy) {
    case ReducedStrategy::allgather:
      if (host_buffers) p.gather.assign(std::size_t(p.P * p.L * 8), T(0));
      break;
    case ReducedStrategy::alltoall: {
      auto lo = [&](int j) { return p.L * j / p.P; };
      p.chunk_lo = lo(p.r);
      p.chunk_n = lo(p.r + 1) - lo(p.r);
      for (int j = 0; j < p.P; ++j) {
        const index_t cn = lo(j + 1) - lo(j);
        p.cnt8.push_back(int(cn * 8));
        p.dsp8.push_back(int(lo(j) * 8));
        p.cnt2.push_back(int(cn * 2));
        p.dsp2.push_back(int(lo(j) * 2));
        p.rcnt8.push_back(int(p.chunk_n * 8));
        p.rdsp8.push_back(int(j * p.chunk_n * 8));
        p.rcnt2.push_back(int(p.chunk_n * 2));
        p.rdsp2.push_back(int(j * p.chunk_n * 2));
      }
      if (host_buffers) {
        p.gather.assign(std::size_t(p.P * p.chunk_n * 8), T(0));
        p.back.assign(std::size_t(p.P * p.chunk_n * 2), T(0));
      }
      break;
    }
    case ReducedStrategy::pcr: {
      p.gather.assign(std::size_t(2 * p.L * 8), T(0));
      p.back.assign(std::size_t(p.L * 8), T(0));
      p.sendbuf.assign(std::size_t(p.L * 8), T(0));
      p.ident.assign(std::size_t(p.L * 8), T(0));
      for (index_t l = 0; l < 2 * p.L; ++l) p.ident[std::size_t(l * 4 + 1)] = T(1);
      break;
    }
    case ReducedStrategy::automatic: break;
  }
  if (!exec.is_host()) {
    p.d_alpha = Array<T>(p.L * p.m, exec);
    p.d_gamma = Array<T>(p.L * p.m, exec);
    p.d_red = Array<T>(p.L * 8, exec);
    p.d_sol = Array<T>(p.L * 2, exec);
    p.d_flag = Array<int>(1, exec);
    p.h_flag = StagingVector<int>(StagingAllocator<int>(true));
    p.h_flag.assign(1, 0);
    p.ev.assign(17, nullptr);  // a solve records at most 12; the last: a deferred solve's end (settle)
    p.ev_kind.assign(p.ev.size(), 0);
    for (void*& e : p.ev) e = cuda_backend::partition::event_create();
    if (p.device_solve) {
      const bool all = p.strategy == ReducedStrategy::allgather;
      const index_t solved = all ? p.L : p.chunk_n;  // lines this rank solves
      p.d_gather = Array<T>(p.P * solved * 8, exec);
      p.d_scratch = Array<T>(3 * 2 * p.P * solved, exec);
      if (!all) p.d_back = Array<T>(p.P * solved * 2, exec);
    }
    // Sub-segments: enough threads to fill a GPU (~256K: an H100/H200 holds 2048 per SM)
    // when the lines alone do not.
    int S = options.device_subsegments > 0 ? options.device_subsegments
                                           : int(std::min<index_t>(64, (262144 + p.L - 1) / std::max<index_t>(p.L, 1)));
    S = int(std::max<index_t>(1, std::min<index_t>(S, p.m / 2)));
    p.dw.alpha = p.d_alpha.data();
    p.dw.gamma = p.d_gamma.data();
    p.dw.S = S;
    p.dw.prefetch = options.device_prefetch;
    p.dw.l2_prefetch = options.device_l2_prefetch;
    p.dw.l2_everywhere = options.device_l2_prefetch_everywhere;
    if (S > 1) {
      p.d_red1 = Array<T>(p.L * 8 * S, exec);
      p.d_w2 = Array<T>(p.L * 6 * S, exec);
      p.d_sol1 = Array<T>(p.L * 2 * S, exec);
      p.dw.red1 = p.d_red1.data();
      p.dw.w2 = p.d_w2.data();
      p.dw.sol1 = p.d_sol1.data();
    }
  }
  {  // the SPIKE form (device_spike; host plans with host_spike)
    if (env_switch("ADI_PARTITION_SPIKE", exec.is_host() ? options.host_spike : options.device_spike)) {
      TridiagonalOptions lo;
      lo.kernel = options.kernel;
      lo.check_pivots = false;
      lo.pivoting = Pivoting::none;
      lo.stages = true;  // (the fused stage's launch prepared here, for solve_stage)
      p.spike_local.emplace(exec, p.ls, lo);
      const Kernel sk = p.spike_local->stage_kernel();
      int fused = (exec.is_host() ? sk != Kernel::automatic : sk == Kernel::cuda_thomas_pcr_fused_stage) ? 1 : 0;
      int all = 0;
      check_mpi(MPI_Allreduce(&fused, &all, 1, MPI_INT, MPI_MIN, p.comm), "MPI_Allreduce");
      p.spike_stages = all != 0;
      if (exec.is_host()) {
        p.h_spike.assign(std::size_t(6 * p.m), T(0));
      } else {
        p.d_spike = Array<T>(9 * p.m + 2 * p.L, exec);
        p.d_reach = Array<index_t>(3, exec);
        const index_t none[3] = {0, 0, 0};  // (no spikes yet)
        p.d_reach.copy_from_host(none);
        p.spike_pcr = env_switch("ADI_SPIKE_PREPARE_PCR", options.spike_prepare_pcr);
        p.spike_back_batched = env_switch("ADI_SPIKE_BACK_BATCHED", options.spike_back_batched);
        p.spike_back_spread = env_switch("ADI_SPIKE_BACK_SPREAD", options.spike_back_spread);
        p.spike_tol = env_switch("ADI_SPIKE_REACH_COARSE", options.spike_reach_coarse)
                          ? std::numeric_limits<T>::epsilon() / T(8)
                          : common::kSpikeTol<T>;
      }
      // The compact tail (spike_compact): this rank's block, then the P gathered blocks.
      namespace part = cuda_backend::partition;
      if (env_switch("ADI_SPIKE_COMPACT", options.spike_compact) && p.P <= part::kSpikeCompactMaxRanks) {
        p.spike_compact = true;
        p.cpt_k = part::kSpikeHeader + 2 * p.L;
        const index_t n = (1 + p.P) * p.cpt_k;
        const bool staged = exec.is_host() || p.transport == Transport::host_staging;
        if (!exec.is_host()) p.d_cpt = Array<T>(n, exec);
        if (staged) {
          p.h_cpt = StagingVector<T>(StagingAllocator<T>(!exec.is_host()));
          p.h_cpt.assign(std::size_t(n), T(0));
        }
        {  // (every rank of the axis the same exchange, whatever each one's environment says)
          int half = env_switch("ADI_SPIKE_HALF", options.spike_half_exchange) && p.P == 2 && !options.periodic &&
                             p.L >= part::kSpikeHeader
                         ? 1
                         : 0,
              all_half = 0;
          check_mpi(MPI_Allreduce(&half, &all_half, 1, MPI_INT, MPI_MIN, p.comm), "MPI_Allreduce");
          p.spike_half = all_half != 0;
        }
        if (p.spike_half && !exec.is_host()) {  // (the slots' never-written halves: finite placeholders)
          const std::vector<T> zeros(std::size_t(n), T(0));
          p.d_cpt.copy_from_host(zeros.data());
        }
      }
    }
  }
  p.setup_spike_lines(options);  // the SPIKE form of per-line bands (stop 35)
}

template <class T>
DistributedTridiagonalPlan<T>::~DistributedTridiagonalPlan() = default;
template <class T>
DistributedTridiagonalPlan<T>::DistributedTridiagonalPlan(DistributedTridiagonalPlan&&) noexcept = default;
template <class T>
DistributedTridiagonalPlan<T>& DistributedTridiagonalPlan<T>::operator=(DistributedTridiagonalPlan&&) noexcept =
    default;

template <class T>
void DistributedTridiagonalPlan<T>::solve(const Bands<T>& bands, const T* d, T* u) {
  Impl& p = *impl_;
  detail::require(bands.a && bands.b && bands.c && d && u, "DistributedTridiagonalPlan::solve: null pointer");
  if (p.local) p.form = "local";
  p.solve_full(p, bands, d, u);
}

template <class T>
void DistributedTridiagonalPlan<T>::solve(const SharedBands<T>& bands, const T* d, T* u) {
  Impl& p = *impl_;
  detail::require(bands.a && bands.b && bands.c && d && u, "DistributedTridiagonalPlan::solve: null pointer");
  p.form = p.local ? "local" : p.spike_local ? (p.spike_compact ? "spike compact" : "spike") : "partition";
  p.solve_shared(p, bands, d, u);
}

template <class T>
bool DistributedTridiagonalPlan<T>::takes_stage(bool u_is_v) const {
  const Impl& p = *impl_;
  return !p.local && p.exec.is_cuda() && p.solve_shared == &Impl::solve_device_shared && !p.spike_local &&
         cuda_backend::partition::stage_supported(p.ls, p.dw.S, u_is_v);
}

template <class T>
bool DistributedTridiagonalPlan<T>::solve_stage(const SharedBands<T>& bands,
                                                const cuda_backend::partition::StageRhs<T>& rhs, T* u) {
  Impl& p = *impl_;
  detail::require(bands.a && bands.b && bands.c && rhs.base && rhs.a && rhs.d && rhs.c && u,
                  "DistributedTridiagonalPlan::solve_stage: null pointer");
  if (!takes_stage(rhs.v == u)) return false;
  p.run_device(bands.a, bands.b, bands.c, true, nullptr, u, &rhs);
  return true;
}

template <class T>
bool DistributedTridiagonalPlan<T>::solve_stage(const SharedBands<T>& bands, const adi::detail::TridiagonalStage<T>& st,
                                                T* u) {
  Impl& p = *impl_;
  if (!p.spike_stages || st.fold.count > 0) return false;
  detail::require(bands.a && bands.b && bands.c && st.base && st.a && st.d && st.c && u,
                  "DistributedTridiagonalPlan::solve_stage: null pointer");
  if (p.exec.is_host())
    p.run_spike_host(bands.a, bands.b, bands.c, nullptr, u, &st);
  else
    p.run_device(bands.a, bands.b, bands.c, true, nullptr, u, nullptr, &st);
  return true;
}

template <class T>
void DistributedTridiagonalPlan<T>::defer_settle(bool on) {
  impl_->defer = on && impl_->exec.is_cuda() && !impl_->local;
}
template <class T>
bool DistributedTridiagonalPlan<T>::unsettled() const { return impl_->unsettled; }
template <class T>
void DistributedTridiagonalPlan<T>::bands_key(std::uint64_t key) { impl_->key = key; }
template <class T>
void DistributedTridiagonalPlan<T>::settle() { impl_->settle_device(); }

template <class T>
bool DistributedTridiagonalPlan<T>::split() const { return !impl_->local.has_value(); }
template <class T>
ReducedStrategy DistributedTridiagonalPlan<T>::strategy() const { return impl_->strategy; }
template <class T>
const StrategyCosts& DistributedTridiagonalPlan<T>::predicted() const { return impl_->costs; }
template <class T>
Transport DistributedTridiagonalPlan<T>::transport() const { return impl_->transport; }
template <class T>
bool DistributedTridiagonalPlan<T>::reduced_solve_on_device() const { return impl_->device_solve; }
template <class T>
Axis DistributedTridiagonalPlan<T>::axis() const { return impl_->axis; }
template <class T>
const Box3& DistributedTridiagonalPlan<T>::box() const { return impl_->box; }
template <class T>
double DistributedTridiagonalPlan<T>::last_local_seconds() const { return impl_->t_local; }
template <class T>
double DistributedTridiagonalPlan<T>::last_exchange_seconds() const { return impl_->t_exchange; }
template <class T>
double DistributedTridiagonalPlan<T>::last_staging_seconds() const { return impl_->t_staging; }
template <class T>
double DistributedTridiagonalPlan<T>::last_wait_seconds() const { return impl_->t_wait; }
template <class T>
double DistributedTridiagonalPlan<T>::last_spike_y_seconds() const {
  return std::string(impl_->form) == "spike" && !impl_->exec.is_host() ? impl_->t_y : 0.0;
}
template <class T>
double DistributedTridiagonalPlan<T>::exchanged_bytes() const { return impl_->bytes; }
template <class T>
int DistributedTridiagonalPlan<T>::device_subsegments() const { return impl_->dw.S; }
template <class T>
const char* DistributedTridiagonalPlan<T>::last_form() const { return impl_->form; }
template <class T>
long long DistributedTridiagonalPlan<T>::spike_fallbacks() const { return impl_->fallbacks; }
template <class T>
index_t DistributedTridiagonalPlan<T>::spike_window() const { return impl_->lines_on ? impl_->lines_R : 0; }
template <class T>
Kernel DistributedTridiagonalPlan<T>::spike_kernel() const {
  return impl_->lines_local ? impl_->lines_local->kernel() : Kernel::automatic;
}
template <class T>
int DistributedTridiagonalPlan<T>::spike_y_stream() const {
  return impl_->lines_on ? impl_->lines_y : 0;
}

// The device plans' diagnosis (distributed_tridiagonal_device.cpp) scans host copies.
#define ADI_FIRST_BAD_PIVOT(T, Band) \
  template std::pair<index_t, index_t> DistributedTridiagonalPlan<T>::Impl::first_bad_pivot(const Band<T>&) const;
ADI_FIRST_BAD_PIVOT(float, FullBand)
ADI_FIRST_BAD_PIVOT(float, SharedBand)
ADI_FIRST_BAD_PIVOT(double, FullBand)
ADI_FIRST_BAD_PIVOT(double, SharedBand)
#undef ADI_FIRST_BAD_PIVOT
template struct DistributedTridiagonalPlan<float>::Impl;
template struct DistributedTridiagonalPlan<double>::Impl;
template class DistributedTridiagonalPlan<float>;
template class DistributedTridiagonalPlan<double>;

}  // namespace adi::mpi
