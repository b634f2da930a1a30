#pragma once
// The Euler solver of euler.hpp on a periodic box decomposed over MPI ranks (adi::mpi):
// every rank owns a box of points (adi::mpi::Decomposition), keeps two ghost layers along
// every split axis (the fourth-difference dissipation reads i-2..i+2), refreshes them once
// per step (the blocks and the right-hand side only read Q^n), and solves each factor's
// periodic block-tridiagonal lines with adi::mpi::DistributedBlockTridiagonalPlan: the
// block partition method along split axes, the single-device block solver along the
// others. The per-point operators (RhsOp, BlocksOp, UpdateOp) are those of euler.hpp,
// run over the interior points of the ghosted local mesh, so a run on any process grid
// reproduces the single-domain EulerSolver to rounding. Array of structures, in host memory
// or (a CUDA executor, one GPU per rank: adi::mpi::rank_gpu()) device memory: then every
// operator runs on the GPU (euler_mpi_cuda.cu), the ghost layers are packed there and travel
// through NCCL on the executor's stream where every rank of the axis has a GPU of its own
// (else through host buffers and MPI), and the block lines take the distributed plan's
// device passes (NCCL end to end where it runs). The state crosses to the host only for
// set_vortex, at(), and the reductions (totals, errors, the CFL step).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "adi/field.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_block_tridiagonal.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "euler.hpp"
#include "euler_mpi_ops.hpp"
#include "host_launch.hpp"

namespace cfd {

// Seconds per phase, summed over the steps (this rank's).
struct DistributedEulerTimings {
  long steps = 0;
  double halo = 0, rhs = 0, update = 0;
  double assemble[3] = {0, 0, 0}, solve[3] = {0, 0, 0}, exchange[3] = {0, 0, 0};
};

template <class T, int D>
class DistributedEuler {
  static constexpr int M = D + 2;
  static constexpr int G = 2;  // ghost layers along split axes
  using Clock = std::chrono::steady_clock;

 public:
  // Collective over procs.comm(). `s` is the global setup (s.n the global points, AoS
  // only); dec must decompose s.n over procs. Bad setups throw on every rank. `exec`: host
  // memory (the default) or this rank's GPU (every rank alike).
  DistributedEuler(const adi::mpi::ProcessGrid& procs, const adi::mpi::Decomposition& dec, const EulerSetup& s,
                   adi::mpi::ReducedStrategy strategy = adi::mpi::ReducedStrategy::automatic,
                   const adi::Executor& exec = adi::Executor::host())
      : procs_(&procs), setup_(s), exec_(exec), launch_{s.threads} {
    std::string err;
    try {
      validate(s);
      adi::detail::require(s.layout == Layout::aos, "DistributedEuler: array-of-structures layout only");
      for (int a = 0; a < 3; ++a)
        adi::detail::require(dec.global()[std::size_t(a)] == s.n[a],
                             "DistributedEuler: the decomposition's extents differ from the setup's points");
    } catch (const adi::Error& e) {
      err = e.what();
    }
    adi::mpi::agree(procs.comm(), err.empty(), err);
    for (int a = 0; a < 3; ++a) {
      ext_[a] = dec.extent(adi::Axis(a));
      lo_[a] = dec.lo(adi::Axis(a));
      g_[a] = procs.dims(adi::Axis(a)) > 1 ? G : 0;
      mesh_.n[a] = ext_[a] + 2 * g_[a];
    }
    const index_t np = mesh_.points();
    hq_.assign(std::size_t(M * np), T(0));
    q_ = adi::Array<T>(M * np, exec_);
    q_.copy_from_host(hq_.data());
    d_ = adi::Array<T>(M * np, exec_);
    a_ = adi::Array<T>(M * M * np, exec_);
    b_ = adi::Array<T>(M * M * np, exec_);
    c_ = adi::Array<T>(M * M * np, exec_);
    std::vector<index_t> interior;
    for (index_t k = 0; k < ext_[2]; ++k)
      for (index_t j = 0; j < ext_[1]; ++j)
        for (index_t i = 0; i < ext_[0]; ++i) interior.push_back(local_point(i, j, k));
    interior_ = on_exec(interior);
    setup_ghosts();
    k_.gamma = T(s.gamma);
    k_.theta = T(s.theta);
    k_.eps_e = T(s.eps_e);
    k_.eps_i = T(s.eps_i);
    for (int a = 0; a < D; ++a) k_.dt_h[a] = T(s.dt * double(s.n[a]) / s.length[a]);
    const index_t n0 = mesh_.n[0], n1 = mesh_.n[1];
    const adi::PointArray vec{M, M * n0, M * n0 * n1, 1}, blk{M * M, M * M * n0, M * M * n0 * n1, 1};
    adi::mpi::DistributedBlockOptions o;
    o.periodic = true;
    o.strategy = strategy;
    o.device_passes = !exec_.is_host();  // device memory: the passes on the GPU, NCCL where it runs
    for (int a = 0; a < D; ++a)
      plans_.emplace_back(procs, adi::Axis(a), exec_,
                          adi::to_block_lines(adi::BlockGridLines{M, ext_[0], ext_[1], ext_[2], adi::Axis(a), vec, blk}),
                          o);
    origin_ = local_point(0, 0, 0);
  }

  // This rank's local interior point (i, j, k) in the ghosted mesh.
  index_t local_point(index_t i, index_t j, index_t k) const {
    return (i + g_[0]) + mesh_.n[0] * ((j + g_[1]) + mesh_.n[1] * (k + g_[2]));
  }
  const std::array<index_t, 3>& extents() const { return ext_; }
  const std::array<index_t, 3>& lo() const { return lo_; }
  // The M values of local interior point (i, j, k), in host memory (device state: a host
  // copy, fetched when the device has moved on; writes through the non-const one reach the
  // device before the next step).
  T* at(index_t i, index_t j, index_t k) {
    T* p = host_state() + local_point(i, j, k) * M;
    device_stale_ = !exec_.is_host();
    return p;
  }
  const T* at(index_t i, index_t j, index_t k) const { return host_state() + local_point(i, j, k) * M; }
  const adi::Executor& executor() const { return exec_; }
  // The transport of the ghost layers along a split axis: "nccl", "MPI (host memory)" or
  // "MPI (host staging)"; "-" along an axis that is not split.
  const char* halo_transport(int a) const {
    return g_[a] == 0 ? "-" : halo_[a].nccl ? "nccl" : exec_.is_host() ? "MPI (host memory)" : "MPI (host staging)";
  }

  // The vortex (or any state given by global coordinates) on this rank's points.
  void set_vortex(const Vortex& v, double t) {
    for_interior([&](index_t i, index_t j, index_t k) {
      double x[3];
      coords(i, j, k, x);
      v.conserved<T>(D, t, x, at(i, j, k));
    });
  }

  // Collective: density error against the vortex at t over all ranks.
  ErrorNorms density_error(const Vortex& v, double t) const {
    double s[2] = {0, 0}, mx = 0;
    for_interior([&](index_t i, index_t j, index_t k) {
      double x[3], rho, u[3], p;
      coords(i, j, k, x);
      v.primitive(t, x, &rho, u, &p);
      const double e = std::abs(double(at(i, j, k)[0]) - rho);
      s[0] += e;
      s[1] += e * e;
      mx = std::isfinite(e) && std::isfinite(mx) ? std::max(mx, e) : std::numeric_limits<double>::infinity();
    });
    double sg[2], mg;
    MPI_Allreduce(s, sg, 2, MPI_DOUBLE, MPI_SUM, procs_->comm());
    MPI_Allreduce(&mx, &mg, 1, MPI_DOUBLE, MPI_MAX, procs_->comm());
    const double np = double(setup_.n[0] * setup_.n[1] * setup_.n[2]);
    return {sg[0] / np, std::sqrt(sg[1] / np), mg};
  }

  // Collective: totals of the M conserved values over the box.
  std::array<double, M> totals() const {
    std::array<double, M> mine{}, all{};
    for_interior([&](index_t i, index_t j, index_t k) {
      for (int c = 0; c < M; ++c) mine[std::size_t(c)] += double(at(i, j, k)[c]);
    });
    MPI_Allreduce(mine.data(), all.data(), M, MPI_DOUBLE, MPI_SUM, procs_->comm());
    return all;
  }

  // Collective: the time step of a CFL number (the same on every rank).
  double stable_dt(double cfl) const {
    double rate = 0;
    for_interior([&](index_t i, index_t j, index_t k) {
      for (int a = 0; a < D; ++a)
        rate = std::max(rate, double(spectral_radius<T, D>(at(i, j, k), a, T(setup_.gamma))) * double(setup_.n[a]) /
                                  setup_.length[a]);
    });
    double all = 0;
    MPI_Allreduce(&rate, &all, 1, MPI_DOUBLE, MPI_MAX, procs_->comm());
    return cfl / all;
  }

  // Collective: one Beam-Warming step.
  void step() {
    const index_t np = mesh_.points();
    const auto vec = [&](T* p) { return points_view(p, Layout::aos, M, np); };
    const auto blk = [&](T* p) { return points_view(p, Layout::aos, index_t(M) * M, np); };
    const auto cvec = [&](const T* p) { return points_view(p, Layout::aos, M, np); };
    if (device_stale_) {  // the host copy was written (set_vortex, at())
      q_.copy_from_host(hq_.data());
      device_stale_ = false;
    }
    host_fresh_ = exec_.is_host();
    auto t = Clock::now();
    const auto lap = [&](double& acc) {
      exec_.synchronize();
      const auto now = Clock::now();
      acc += std::chrono::duration<double>(now - t).count();
      t = now;
    };
    exchange_ghosts();
    lap(timings_.halo);
    run(RhsOp<T, D>{mesh_, k_, cvec(q_.data()), vec(d_.data())});
    lap(timings_.rhs);
    for (int a = 0; a < D; ++a) {
      run(BlocksOp<T, D>{mesh_, a, k_, cvec(q_.data()), blk(a_.data()), blk(b_.data()), blk(c_.data())});
      lap(timings_.assemble[a]);
      const index_t ob = origin_ * M * M, ov = origin_ * M;
      auto& plan = plans_[std::size_t(a)];
      plan.solve(adi::BlockBands<T>{a_.data() + ob, b_.data() + ob, c_.data() + ob}, d_.data() + ov, d_.data() + ov);
      if (plan.split()) timings_.exchange[a] += plan.last_exchange_seconds();
      lap(timings_.solve[a]);
    }
    run(UpdateOp<T, D>{vec(q_.data()), cvec(d_.data())});
    lap(timings_.update);
    ++timings_.steps;
  }

  // The state in host memory (device: copied back when the device has moved on).
  T* host_state() const {
    if (exec_.is_host()) return const_cast<T*>(q_.data());
    if (!host_fresh_) {
      q_.copy_to_host(hq_.data());
      host_fresh_ = true;
    }
    return hq_.data();
  }

  const DistributedEulerTimings& timings() const { return timings_; }
  // The reduced-system strategy of axis a's block lines ("local" when not split), and with
  // device memory its transport ("allgather, nccl").
  std::string strategy(int a) const {
    const auto& p = plans_[std::size_t(a)];
    if (!p.split()) return "local";
    return std::string(adi::mpi::strategy_name(p.strategy())) +
           (exec_.is_host() ? "" : std::string(", ") + adi::mpi::transport_name(p.transport()));
  }

 private:
  template <class F>
  void for_interior(F&& f) const {
    for (index_t k = 0; k < ext_[2]; ++k)
      for (index_t j = 0; j < ext_[1]; ++j)
        for (index_t i = 0; i < ext_[0]; ++i) f(i, j, k);
  }
  void coords(index_t i, index_t j, index_t k, double* x) const {
    const index_t g[3] = {lo_[0] + i, lo_[1] + j, lo_[2] + k};
    for (int a = 0; a < 3; ++a) x[a] = double(g[a]) * setup_.length[a] / double(setup_.n[a]);
  }
  template <class Op>
  void run(const Op& op) const {
    each(OnInterior<Op>{op, interior_.data()}, interior_.size());
  }
  // op(i) for i in [0, count): OpenMP threads, or a kernel on the executor's stream.
  template <class Op>
  void each(const Op& op, index_t count) const {
    if (exec_.is_host())
      launch_(count, op);
    else
      cuda_each(op, count, exec_.stream());
  }
  adi::Array<index_t> on_exec(const std::vector<index_t>& v) const {
    adi::Array<index_t> a(index_t(v.size()), exec_);
    if (!v.empty()) a.copy_from_host(v.data());
    return a;
  }

  // The ghost exchange of each split axis: the points of the four layer sets (first / last
  // G interior layers sent, lower / upper G ghost layers received, all over the full ghosted
  // extents of the other axes), their buffers in the executor's memory, and the transport.
  struct Halo {
    adi::Array<index_t> send_lo, send_hi, recv_lo, recv_hi;
    adi::Array<T> buf[4];          // send_lo, send_hi, recv_hi, recv_lo
    std::vector<T> host[4];        // host staging (device memory without NCCL)
    std::shared_ptr<adi::mpi::nccl::Communicator> comm;
    bool nccl = false;
    int lo = 0, hi = 0;
    index_t count = 0;             // points per layer set
  };
  void setup_ghosts() {
    for (int a = 0; a < 3; ++a) {
      if (g_[a] == 0) continue;
      Halo& h = halo_[a];
      MPI_Comm comm = procs_->axis_comm(adi::Axis(a));
      int P = 1, r = 0;
      MPI_Comm_size(comm, &P);
      MPI_Comm_rank(comm, &r);
      h.lo = (r - 1 + P) % P;
      h.hi = (r + 1) % P;
      const index_t e = ext_[a];
      auto points = [&](index_t from) {
        std::vector<index_t> p;
        layers(a, from, [&](index_t q) { p.push_back(q); });
        return p;
      };
      const std::vector<index_t> sl = points(G);  // my first layers -> lower neighbour's upper ghosts
      h.count = index_t(sl.size());
      h.send_lo = on_exec(sl);
      h.send_hi = on_exec(points(e));        // my last layers -> upper neighbour's lower ghosts
      h.recv_hi = on_exec(points(e + G));
      h.recv_lo = on_exec(points(0));
      for (auto& b : h.buf) b = adi::Array<T>(h.count * M, exec_);
      if (!exec_.is_host()) {
        // NCCL where this build has it and every rank of the axis has a GPU of its own
        // (collective, the same answer everywhere), else host staging.
        h.nccl = adi::mpi::nccl::built() && adi::mpi::nccl::shared_gpu_report(comm, exec_.device()).empty();
        if (h.nccl)
          h.comm = adi::mpi::nccl::axis_communicator(*procs_, adi::Axis(a), exec_.device());
        else
          for (auto& b : h.host) b.assign(std::size_t(h.count * M), T(0));
      }
    }
  }

  // Along each split axis in turn (over the full ghosted extents of the others, so the
  // ghosts of the axes done before travel too): the first / last G interior layers to
  // the lower / upper neighbour of the periodic ring of the axis.
  void exchange_ghosts() {
    const MPI_Datatype type = adi::mpi::mpi_type<T>();
    for (int a = 0; a < 3; ++a) {
      if (g_[a] == 0) continue;
      Halo& h = halo_[a];
      MPI_Comm comm = procs_->axis_comm(adi::Axis(a));
      T* q = q_.data();
      each(GatherPoints<T, M>{q, h.send_lo.data(), h.buf[0].data()}, h.count);
      each(GatherPoints<T, M>{q, h.send_hi.data(), h.buf[1].data()}, h.count);
      const std::size_t bytes = std::size_t(h.count * M) * sizeof(T);
      const int n = int(h.count * M);
      if (h.nccl) {  // on the executor's stream, after the packing
        adi::mpi::nccl::send_recv(*h.comm, h.buf[0].data(), h.lo, h.buf[2].data(), h.hi, bytes, exec_.stream());
        adi::mpi::nccl::send_recv(*h.comm, h.buf[1].data(), h.hi, h.buf[3].data(), h.lo, bytes, exec_.stream());
      } else {
        const bool staged = !exec_.is_host();
        if (staged) {
          h.buf[0].copy_to_host(h.host[0].data());  // after the packing (the executor's stream)
          h.buf[1].copy_to_host(h.host[1].data());
        }
        T* s_lo = staged ? h.host[0].data() : h.buf[0].data();
        T* s_hi = staged ? h.host[1].data() : h.buf[1].data();
        T* r_hi = staged ? h.host[2].data() : h.buf[2].data();
        T* r_lo = staged ? h.host[3].data() : h.buf[3].data();
        adi::mpi::check_mpi(MPI_Sendrecv(s_lo, n, type, h.lo, 10 + a, r_hi, n, type, h.hi, 10 + a, comm,
                                         MPI_STATUS_IGNORE),
                            "MPI_Sendrecv");
        adi::mpi::check_mpi(MPI_Sendrecv(s_hi, n, type, h.hi, 20 + a, r_lo, n, type, h.lo, 20 + a, comm,
                                         MPI_STATUS_IGNORE),
                            "MPI_Sendrecv");
        if (staged) {
          h.buf[2].copy_from_host(h.host[2].data());
          h.buf[3].copy_from_host(h.host[3].data());
        }
      }
      each(ScatterPoints<T, M>{q, h.recv_hi.data(), h.buf[2].data()}, h.count);
      each(ScatterPoints<T, M>{q, h.recv_lo.data(), h.buf[3].data()}, h.count);
    }
  }
  // The G layers of the ghosted mesh starting at coordinate `from` along a, all values.
  template <class F>
  void layers(int a, index_t from, F&& f) const {
    index_t c[3];
    for (c[2] = 0; c[2] < mesh_.n[2]; ++c[2])
      for (c[1] = 0; c[1] < mesh_.n[1]; ++c[1])
        for (c[0] = 0; c[0] < mesh_.n[0]; ++c[0]) {
          if (c[a] < from || c[a] >= from + G) continue;
          f(c[0] + mesh_.n[0] * (c[1] + mesh_.n[1] * c[2]));
        }
  }
  const adi::mpi::ProcessGrid* procs_;
  EulerSetup setup_;
  adi::Executor exec_;
  HostLaunch launch_;
  Mesh mesh_;
  std::array<index_t, 3> ext_{}, lo_{}, g_{};
  index_t origin_ = 0;
  Coefficients<T> k_;
  adi::Array<T> q_, d_, a_, b_, c_;
  mutable std::vector<T> hq_;       // device state: its host copy
  mutable bool host_fresh_ = true;  // hq_ holds the device state
  bool device_stale_ = false;       // hq_ was written since the device state was
  adi::Array<index_t> interior_;
  std::vector<adi::mpi::DistributedBlockTridiagonalPlan<T>> plans_;
  std::array<Halo, 3> halo_;
  DistributedEulerTimings timings_;
};

}  // namespace cfd
