// DistributedTridiagonalPlan on device memory: the passes on the GPU, the transports of the
// reduced rows (host staging, CUDA-aware MPI, NCCL) and their choice (see the impl header).
#include "adi/mpi/detail/distributed_tridiagonal_impl.hpp"

#include "adi/detail/tridiagonal_stage.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace adi::mpi {

template <class T>
void DistributedTridiagonalPlan<T>::Impl::run_device(const T* a, const T* b, const T* c, bool shared, const T* d,
                                                     T* u, const cuda_backend::partition::StageRhs<T>* rhs,
                                                     const adi::detail::TridiagonalStage<T>* fused) {
  namespace part = cuda_backend::partition;
  // This rank's GPU (ranks of a node pick different ones); the caller's device back on return.
  const cuda_backend::DeviceGuard device_guard(exec.device());
  void* st = exec.stream();
  settle_device();  // (a deferred solve's end first: its flag and events are reused below)
  last_bands = {a, b, c, shared};
  n_ev = 0;
  t_wait = 0;
  mark(kStart);
  if (!flag_clear) part::clear_flag_async(d_flag.data(), st);
  flag_clear = false;  // (until this solve's verdict is read as 0)
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  // A zero pivot writes NaN into the line's reduced rows; the reduced solve carries the NaN
  // to every rank of the line, whose back-substitution raises d_flag: all ranks throw
  // below, after the collectives they were in anyway.
  if (spike_local && shared && !rhs) {  // the SPIKE form
    T* sp = d_spike.data();
    T *a_cut = sp, *c_cut = sp + m, *W = sp + 2 * m, *Z = sp + 3 * m, *ends = sp + 9 * m;
    // (the caller's bands key unchanged at the same addresses: the spikes are those of these bands)
    const bool same = key != 0 && key == prepared_key && a == prepared[0] && b == prepared[1] && c == prepared[2];
    if (!same)
      part::spike_prepare<T>(m, a, b, c, a_cut, c_cut, W, Z, sp + 4 * m, sp + 6 * m, d_reach.data(), spike_pcr,
                              spike_tol, st);
    prepared_key = key;
    prepared[0] = a, prepared[1] = b, prepared[2] = c;
    if (fused) {  // y by the fused stage on the cut segments (solve_stage; cut_stage)
      const index_t need = ghost_size(*fused);
      if (d_ghost.size() < 2 * need) d_ghost = Array<T>(2 * need, exec);
      T* const ghost[2] = {d_ghost.data(), d_ghost.data() + need};
      part::spike_ghost_terms<T>(ls, fused->v, fused->a, fused->c, fused->face_base, fused->face_n1,
                                 first_open ? nullptr : ghost[0], last_open ? nullptr : ghost[1], st);
      spike_local->solve_stage(cut_stage(*fused, u, ghost), d_flag.data());
    } else {
      spike_local->solve(SharedBands<T>{a_cut, b, c_cut}, d, u);  // y, on the same stream
    }
    if (spike_compact) {  // the compact tail: y's ends and the scalars, one allgather, one back launch
      if (spike_half)  // this rank's block into its slot, the other rank's half into the buffer's start
        part::spike_compact_pack<T>(ls, a, c, W, Z, u, d_cpt.data() + (1 + r) * cpt_k, d_cpt.data(), r == 0 ? 1 : 0,
                                    st);
      else
        part::spike_compact_pack<T>(ls, a, c, W, Z, u, d_cpt.data(), nullptr, 0, st);
      mark(kLocal);
      exchange_compact_device();
      part::spike_compact_back<T>(ls, int(P), r, opt.periodic, d_cpt.data() + cpt_k, W, Z, d_reach.data(),
                                  d_sol.data(), ends, u, d_flag.data(),
                                  spike_back_spread ? 2 : spike_back_batched ? 1 : 0, st);
      mark(kLocal);
      finish_device();
      return;
    }
    part::spike_reduce<T>(ls, a, c, W, Z, u, d_red.data(), first_open, last_open, st);
    mark(kLocal);
    exchange_device();
    part::spike_back<T>(ls, W, Z, d_reach.data(), d_sol.data(), ends, u, d_flag.data(), first_open, last_open, st);
    mark(kLocal);
    finish_device();
    return;
  }
  if (rhs)
    part::reduce_stage<T>(ls, a, b, c, *rhs, u, dw, d_red.data(), first_open, last_open, st);
  else
    part::reduce<T>(ls, a, b, c, shared, d, u, dw, d_red.data(), first_open, last_open, st);
  mark(kLocal);
  exchange_device();  // d_red -> d_sol by the plan's transport
  part::back_substitute<T>(ls, dw, shared, d_sol.data(), u, d_flag.data(), st);
  mark(kLocal);
  finish_device();
}

// The SPIKE form of per-line bands (stop 35; see DistributedOptions::spike_lines): each line's
// spike windows and their check first, the verdict read on the host (one round trip, hidden
// behind y where u != d), y by the single-device plan (5 arrays), the reduced rows, the
// exchange, and the correction of the rows the spikes reach. false: a line's spikes had not
// decayed within their window (or were not finite); the caller runs the partition passes on
// this rank (u may hold y by then; they overwrite it).
template <class T>
bool DistributedTridiagonalPlan<T>::Impl::run_spike_lines_device(const T* a, const T* b, const T* c, const T* d,
                                                                 T* u) {
  namespace part = cuda_backend::partition;
  const cuda_backend::DeviceGuard device_guard(exec.device());
  void* st = exec.stream();
  const index_t R = lines_R;
  T *W = d_lines.data(), *Z = W + R * L, *cs = Z + R * L, *ends = cs + 2 * R * L;
  const bool first_open = r == 0 && !opt.periodic, last_open = r == P - 1 && !opt.periodic;
  settle_device();
  last_bands = {a, b, c, false};
  n_ev = 0;
  t_wait = 0;
  mark(kStart);
  if (!flag_clear) part::clear_flag_async(d_flag.data(), st);
  flag_clear = false;
  part::clear_flag_async(d_lines_bad.data(), st);
  // The windows on the plan's stream, or (spike_windows_side) on the side stream beside y.
  void* wst = st;
  if (lines_side) {
    if (!side_st) {
      side_st = cuda_backend::side_stream_create(exec.device());
      side_fork = cuda_backend::side_event_create(exec.device());
      side_join = cuda_backend::side_event_create(exec.device());
    }
    cuda_backend::side_event_record(side_fork, st);  // (after the flags' memsets)
    cuda_backend::side_stream_wait(side_st, side_fork);
    wst = side_st;
  }
  part::spike_lines_prepare<T>(ls, a, b, c, R, W, Z, cs, d_lines_reach.data(), d_lines_bad.data(), wst);
  if (lines_y && u != d) {  // y by truncated sweeps (spike_y_stream): its verdict and the windows' read after it
    if (!lines_side) mark(kLocal);
    part::spike_lines_y<T>(ls, a, b, c, d, u, lines_y, d_lines_bad.data(), st);  // (both only ever write 1)
    if (lines_side) {
      cuda_backend::side_event_record(side_join, side_st);
      cuda_backend::side_stream_wait(st, side_join);
    }
    part::copy_async(h_lines_bad.data(), d_lines_bad.data(), sizeof(int), st);
    mark(kLocalY);
    void* verdict = ev[std::size_t(n_ev - 1)];
    // the reduced rows queued before the host waits (the GPU busy during the round trip; a
    // fall-back overwrites them)
    part::spike_lines_reduce<T>(ls, a, c, R, W, Z, u, d_red.data(), first_open, last_open, st);
    mark(kLocal);
    part::event_synchronize(verdict);
    if (h_lines_bad[0] != 0) {  // u holds a partial y: the partition passes overwrite it (d intact)
      ++fallbacks;
      return false;
    }
    form = "spike";
  } else {
    part::copy_async(h_lines_bad.data(), d_lines_bad.data(), sizeof(int), wst);
    void* verdict = nullptr;
    if (lines_side) {
      cuda_backend::side_event_record(side_join, side_st);
      verdict = side_join;
    } else {
      mark(kLocal);
      verdict = ev[std::size_t(n_ev - 1)];
    }
    if (!run_spike_lines_y_device(a, b, c, d, u, verdict)) return false;
    if (lines_side) cuda_backend::side_stream_wait(st, side_join);  // W, Z before the reduced rows
    part::spike_lines_reduce<T>(ls, a, c, R, W, Z, u, d_red.data(), first_open, last_open, st);
    mark(kLocal);
  }
  exchange_device();
  part::spike_lines_back<T>(ls, R, W, Z, d_lines_reach.data(), d_sol.data(), ends, u, d_flag.data(), first_open,
                            last_open, st);
  mark(kLocal);
  finish_device();
  return true;
}

// y by the single-device plan (the form of stop 35), after the windows and their verdict's copy
// (`verdict`: the event after it): false where the verdict says a window failed.
template <class T>
bool DistributedTridiagonalPlan<T>::Impl::run_spike_lines_y_device(const T* a, const T* b, const T* c, const T* d,
                                                                   T* u, void* verdict) {
  namespace part = cuda_backend::partition;
  // y, on the same stream (a[0], c[m-1] of the lines not read). With u != d it is queued before
  // the host waits for the windows' verdict, so the GPU does not idle during the round trip; a
  // fall-back then overwrites it (the partition passes read d, still intact). In place (u == d)
  // the verdict comes first.
  const bool ahead = u != d;
  if (ahead) {
    lines_solver().solve(Bands<T>{a, b, c}, d, u);
    mark(kLocalY);
  }
  part::event_synchronize(verdict);
  if (h_lines_bad[0] != 0) {
    ++fallbacks;
    return false;
  }
  form = "spike";
  if (!ahead) {
    lines_solver().solve(Bands<T>{a, b, c}, d, u);
    mark(kLocalY);
  }
  return true;
}

// The end of a device solve: the pivot verdict to the host, then (now, or with `defer` in
// settle_device) the phase times from the events, SingularSystem.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::finish_device() {
  namespace part = cuda_backend::partition;
  void* st = exec.stream();
  part::copy_async(h_flag.data(), d_flag.data(), sizeof(int), st);
  if (defer) {  // the host goes on queueing the step's next work; settle() reads the verdict
    part::event_record(ev.back(), st);
    unsettled = true;
    return;
  }
  cuda_backend::synchronize(st);
  conclude_device();
}

// A deferred solve's end (the caller's settle(), or the plan's next solve): waits for the
// event after its flag's copy, not for the stream (the GPU may be running later stages by then).
template <class T>
void DistributedTridiagonalPlan<T>::Impl::settle_device() {
  if (!unsettled) return;
  unsettled = false;
  const cuda_backend::DeviceGuard device_guard(exec.device());
  cuda_backend::partition::event_synchronize(ev.back());
  conclude_device();
}

// The verdict and the times of a solve whose work has passed (h_flag and the events written).
template <class T>
void DistributedTridiagonalPlan<T>::Impl::conclude_device() {
  namespace part = cuda_backend::partition;
  double t[5] = {0, 0, 0, 0, 0};
  for (int k = 1; k < n_ev; ++k)
    t[ev_kind[std::size_t(k)]] += part::event_seconds(ev[std::size_t(k - 1)], ev[std::size_t(k)]);
  t_local = t[kLocal] + t[kLocalY];
  t_y = t[kLocalY];
  t_staging = t[kStaging];
  t_exchange = t[kExchange];
  flag_clear = key != 0 && h_flag[0] == 0;  // (with a caller's bands key: ADI_SPLIT_LEAN)
  if (opt.check_pivots && h_flag[0] != 0) diagnose_device();
}

// A failed device solve, named on the host: the interface values show the line, this
// rank's bands (copied back once) the row of a bad pivot of the forward pass, if it is here.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::diagnose_device() const {
  auto to_host = [&](const T* p, index_t n) {
    std::vector<T> h(static_cast<std::size_t>(n));
    if (n > 0) detail::copy_bytes(h.data(), MemorySpace::host, p, exec.memory_space(), std::size_t(n) * sizeof(T),
                                  exec.stream());
    return h;
  };
  const std::vector<T> ends = to_host(d_sol.data(), 2 * L);
  std::pair<index_t, index_t> bad{-1, -1};
  if (last_bands.a) {
    const index_t n = last_bands.shared ? m : ls.span();
    const std::vector<T> a = to_host(last_bands.a, n), b = to_host(last_bands.b, n), c = to_host(last_bands.c, n);
    bad = last_bands.shared ? first_bad_pivot(SharedBand<T>{a.data(), b.data(), c.data()})
                            : first_bad_pivot(FullBand<T>{a.data(), b.data(), c.data()});
  }
  throw_singular(bad, ends.data());
}

// Phase 2 of a device plan: d_red (this rank's rows) -> d_sol (this rank's two unknowns
// per line), enqueued on the stream or, around MPI calls, waited for.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::exchange_device() {
  namespace part = cuda_backend::partition;
  void* st = exec.stream();
  const std::size_t w = sizeof(T);
  const MPI_Datatype type = mpi_type<T>();
  const int n = int(2 * P);
  const bool gather_all = strategy == ReducedStrategy::allgather;
  // The device solve of the gathered rows (the same layouts as the host's solve_lines).
  auto solve_gathered = [&] {
    if (gather_all)
      part::solve_reduced<T>(L, n, opt.periodic, d_gather.data(), 8, L * 8, d_scratch.data(), r, d_sol.data(), 0, 0,
                             st);
    else
      part::solve_reduced<T>(chunk_n, n, opt.periodic, d_gather.data(), 8, chunk_n * 8, d_scratch.data(), -1,
                             d_back.data(), chunk_n * 2, 2, st);
  };
  bytes = strategy_bytes();
  if (opt.timing_barrier) {  // benchmarks: waiting for slower ranks timed apart
    cuda_backend::synchronize(st);
    timing_barrier();
    mark(kIdle);
  }
  switch (transport) {
    case Transport::nccl: {
      if (gather_all) {
        nccl::all_gather(*nccl_comm, d_red.data(), d_gather.data(), std::size_t(L * 8) * w, st);
        solve_gathered();
      } else {
        nccl::all_to_all_v(*nccl_comm, d_red.data(), cnt8.data(), dsp8.data(), d_gather.data(), rcnt8.data(),
                           rdsp8.data(), w, st);
        solve_gathered();
        nccl::all_to_all_v(*nccl_comm, d_back.data(), rcnt2.data(), rdsp2.data(), d_sol.data(), cnt2.data(),
                           dsp2.data(), w, st);
      }
      mark(kExchange);
      return;
    }
    case Transport::cuda_aware_mpi: {
      cuda_backend::synchronize(st);  // MPI reads d_red
      if (gather_all) {
        check_mpi(MPI_Allgather(d_red.data(), int(L * 8), type, d_gather.data(), int(L * 8), type, comm),
                  "MPI_Allgather");
        solve_gathered();
      } else {
        check_mpi(MPI_Alltoallv(d_red.data(), cnt8.data(), dsp8.data(), type, d_gather.data(), rcnt8.data(),
                                rdsp8.data(), type, comm),
                  "MPI_Alltoallv");
        solve_gathered();
        cuda_backend::synchronize(st);
        check_mpi(MPI_Alltoallv(d_back.data(), rcnt2.data(), rdsp2.data(), type, d_sol.data(), cnt2.data(),
                                dsp2.data(), type, comm),
                  "MPI_Alltoallv");
      }
      mark(kExchange);
      return;
    }
    case Transport::host_staging:
    case Transport::automatic: break;
  }
  part::copy_async(red.data(), d_red.data(), red.size() * w, st);
  mark(kStaging);
  cuda_backend::synchronize(st);  // MPI reads red
  if (!device_solve) {
    exchange_and_solve();  // MPI and the reduced solve on the host (pcr: its exchanges and eliminations)
    mark(kExchange);
    part::copy_async(d_sol.data(), sol.data(), sol.size() * w, st);
    mark(kStaging);
    return;
  }
  if (gather_all) {
    check_mpi(MPI_Allgather(red.data(), int(L * 8), type, gather.data(), int(L * 8), type, comm), "MPI_Allgather");
    mark(kExchange);
    part::copy_async(d_gather.data(), gather.data(), gather.size() * w, st);
    mark(kStaging);
    solve_gathered();
    mark(kExchange);
    return;
  }
  check_mpi(MPI_Alltoallv(red.data(), cnt8.data(), dsp8.data(), type, gather.data(), rcnt8.data(), rdsp8.data(), type,
                          comm),
            "MPI_Alltoallv");
  mark(kExchange);
  part::copy_async(d_gather.data(), gather.data(), gather.size() * w, st);
  mark(kStaging);
  solve_gathered();
  mark(kExchange);
  part::copy_async(back.data(), d_back.data(), back.size() * w, st);
  mark(kStaging);
  cuda_backend::synchronize(st);  // MPI reads back
  check_mpi(MPI_Alltoallv(back.data(), rcnt2.data(), rdsp2.data(), type, sol.data(), cnt2.data(), dsp2.data(), type,
                          comm),
            "MPI_Alltoallv");
  mark(kExchange);
  part::copy_async(d_sol.data(), sol.data(), sol.size() * w, st);
  mark(kStaging);
}

// The compact SPIKE tail's exchange (spike_compact): this rank's block (d_cpt, cpt_k values)
// gathered from every rank of the axis into d_cpt + cpt_k by the plan's transport.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::exchange_compact_device() {
  namespace part = cuda_backend::partition;
  void* st = exec.stream();
  const std::size_t w = sizeof(T), k = std::size_t(cpt_k);
  bytes = double(P) * double(k * w);
  if (opt.timing_barrier) {
    cuda_backend::synchronize(st);
    timing_barrier();
    mark(kIdle);
  }
  T* mine = d_cpt.data();
  T* all = mine + k;
  if (spike_half) {  // P = 2: the halves swapped (DistributedOptions::spike_half_exchange)
    const std::size_t k2 = std::size_t(part::kSpikeHeader + L);
    const int q = 1 - r;
    T* const recv = all + half_offset();
    bytes = 2.0 * double(k2 * w);
    switch (transport) {
      case Transport::nccl: nccl::send_recv(*nccl_comm, mine, q, recv, q, k2 * w, st); break;
      case Transport::cuda_aware_mpi:
        cuda_backend::synchronize(st);  // MPI reads the half
        check_mpi(MPI_Sendrecv(mine, int(k2), mpi_type<T>(), q, 31, recv, int(k2), mpi_type<T>(), q, 31, comm,
                               MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
        break;
      case Transport::host_staging:
      case Transport::automatic:
        part::copy_async(h_cpt.data(), mine, k2 * w, st);
        mark(kStaging);
        cuda_backend::synchronize(st);  // MPI reads the staged half
        check_mpi(MPI_Sendrecv(h_cpt.data(), int(k2), mpi_type<T>(), q, 31, h_cpt.data() + k2, int(k2),
                               mpi_type<T>(), q, 31, comm, MPI_STATUS_IGNORE),
                  "MPI_Sendrecv");
        mark(kExchange);
        part::copy_async(recv, h_cpt.data() + k2, k2 * w, st);
        break;
    }
    if (q == 0) part::copy_async(all, recv, part::kSpikeHeader * w, st);  // rank 0's scalars to its slot's start
    mark(transport == Transport::host_staging || transport == Transport::automatic ? kStaging : kExchange);
    return;
  }
  switch (transport) {
    case Transport::nccl:
      nccl::all_gather(*nccl_comm, mine, all, k * w, st);
      mark(kExchange);
      return;
    case Transport::cuda_aware_mpi:
      cuda_backend::synchronize(st);  // MPI reads the block
      check_mpi(MPI_Allgather(mine, int(k), mpi_type<T>(), all, int(k), mpi_type<T>(), comm), "MPI_Allgather");
      mark(kExchange);
      return;
    case Transport::host_staging:
    case Transport::automatic: break;
  }
  part::copy_async(h_cpt.data(), mine, k * w, st);
  mark(kStaging);
  cuda_backend::synchronize(st);  // MPI reads the staged block
  check_mpi(MPI_Allgather(h_cpt.data(), int(k), mpi_type<T>(), h_cpt.data() + k, int(k), mpi_type<T>(), comm),
            "MPI_Allgather");
  mark(kExchange);
  part::copy_async(all, h_cpt.data() + k, P * k * w, st);
  mark(kStaging);
}

// Picks the transport of a split axis (collective over the axis; the options already
// agree): every rank takes the same branch, and an explicit choice this build or machine
// cannot run throws the same Unsupported on every rank, naming what is missing.
template <class T>
void DistributedTridiagonalPlan<T>::Impl::resolve_transport(const ProcessGrid& procs) {
  const Transport want = opt.transport;
  const std::string pre = std::string("DistributedTridiagonalPlan: transport ") + transport_name(want) + ": ";
  std::string err;
  if (exec.is_host()) {
    // Host memory goes to MPI as it is.
    if (want == Transport::cuda_aware_mpi || want == Transport::nccl)
      err = pre + "needs device memory (Executor::cuda); host plans exchange host memory with plain MPI";
    transport = Transport::host_staging;
    agree_supported(comm, err.empty(), err);
    return;
  }
  const bool pcr = opt.strategy == ReducedStrategy::pcr;
  const bool device_transport_ok = !pcr && opt.reduced_solve != ReducedSolveSite::host;
  std::string shared;
  if (nccl::built() && (want == Transport::nccl || (want == Transport::automatic && device_transport_ok)))
    shared = nccl::shared_gpu_report(comm, exec.device());  // collective: every rank or none
  const int aware_here = cuda_aware() ? 1 : 0;
  int aware = 0;
  check_mpi(MPI_Allreduce(&aware_here, &aware, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  switch (want) {
    case Transport::automatic:
      transport = !device_transport_ok                 ? Transport::host_staging
                  : nccl::built() && shared.empty()    ? Transport::nccl
                  : aware                              ? Transport::cuda_aware_mpi
                                                       : Transport::host_staging;
      break;
    case Transport::host_staging: transport = want; break;
    case Transport::cuda_aware_mpi:
      transport = want;
      if (!aware_here)
        err = pre + "this MPI library does not take device pointers (" + cuda_aware_report() +
              "); use host_staging, nccl or automatic";
      break;
    case Transport::nccl:
      transport = want;
      if (!nccl::built())
        err = pre + "adi::mpi was built without NCCL (configure with -DADI_WITH_NCCL=ON where nccl.h and libnccl are "
                    "found); use host_staging or automatic";
      else if (!shared.empty())
        err = pre + shared;
      break;
  }
  if (err.empty() && transport != Transport::host_staging && pcr)
    err = pre + "strategy pcr exchanges and eliminates on the host; use allgather or alltoall, or host_staging";
  if (err.empty() && transport != Transport::host_staging && opt.reduced_solve == ReducedSolveSite::host)
    err = pre + "reduced_solve = host needs host_staging (the rows never reach the host otherwise)";
  if (err.empty() && pcr && opt.reduced_solve == ReducedSolveSite::device)
    err = "DistributedTridiagonalPlan: reduced_solve = device does not apply to strategy pcr (solved between "
          "neighbours on the host); use allgather or alltoall";
  agree_supported(comm, err.empty(), err);
  if (transport == Transport::nccl) nccl_comm = nccl::axis_communicator(procs, axis, exec.device());
}

template struct DistributedTridiagonalPlan<float>::Impl;
template struct DistributedTridiagonalPlan<double>::Impl;

}  // namespace adi::mpi
