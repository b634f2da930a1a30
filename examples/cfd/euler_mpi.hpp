#pragma once
// The Euler solver of euler.hpp on a periodic box decomposed over MPI ranks (adi::mpi):
// every rank owns a box of points (adi::mpi::Decomposition), keeps two ghost layers along
// every split axis (the fourth-difference dissipation reads i-2..i+2), refreshes them once
// per step (the blocks and the right-hand side only read Q^n), and solves each factor's
// periodic block-tridiagonal lines with adi::mpi::DistributedBlockTridiagonalPlan: the
// block partition method along split axes, the single-device block solver along the
// others. The per-point operators (RhsOp, BlocksOp, UpdateOp) are those of euler.hpp,
// run over the interior points of the ghosted local mesh, so a run on any process grid
// reproduces the single-domain EulerSolver to rounding. Host memory, array of structures.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_block_tridiagonal.hpp"
#include "euler.hpp"
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
  // only); dec must decompose s.n over procs. Bad setups throw on every rank.
  DistributedEuler(const adi::mpi::ProcessGrid& procs, const adi::mpi::Decomposition& dec, const EulerSetup& s,
                   adi::mpi::ReducedStrategy strategy = adi::mpi::ReducedStrategy::automatic)
      : procs_(&procs), setup_(s), launch_{s.threads} {
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
    q_.assign(std::size_t(M * np), T(0));
    d_.assign(std::size_t(M * np), T(0));
    a_.assign(std::size_t(M * M * np), T(0));
    b_.assign(a_.size(), T(0));
    c_.assign(a_.size(), T(0));
    for (index_t k = 0; k < ext_[2]; ++k)
      for (index_t j = 0; j < ext_[1]; ++j)
        for (index_t i = 0; i < ext_[0]; ++i) interior_.push_back(local_point(i, j, k));
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
    for (int a = 0; a < D; ++a)
      plans_.emplace_back(procs, adi::Axis(a), adi::Executor::host(),
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
  // The M values of local interior point (i, j, k).
  T* at(index_t i, index_t j, index_t k) { return q_.data() + local_point(i, j, k) * M; }
  const T* at(index_t i, index_t j, index_t k) const { return q_.data() + local_point(i, j, k) * M; }

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
    auto t = Clock::now();
    const auto lap = [&](double& acc) {
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

  const DistributedEulerTimings& timings() const { return timings_; }
  const char* strategy(int a) const {
    return plans_[std::size_t(a)].split() ? adi::mpi::strategy_name(plans_[std::size_t(a)].strategy()) : "local";
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
    const index_t* pts = interior_.data();
    launch_(index_t(interior_.size()), [op, pts](index_t i) { op(pts[i]); });
  }

  // Along each split axis in turn (over the full ghosted extents of the others, so the
  // ghosts of the axes done before travel too): the first / last G interior layers to
  // the lower / upper neighbour of the periodic ring of the axis.
  void exchange_ghosts() {
    const MPI_Datatype type = adi::mpi::mpi_type<T>();
    for (int a = 0; a < 3; ++a) {
      if (g_[a] == 0) continue;
      MPI_Comm comm = procs_->axis_comm(adi::Axis(a));
      int P = 1, r = 0;
      MPI_Comm_size(comm, &P);
      MPI_Comm_rank(comm, &r);
      const int lo = (r - 1 + P) % P, hi = (r + 1) % P;
      const index_t e = ext_[a];
      pack(a, G, send_lo_);          // my first layers -> lower neighbour's upper ghosts
      pack(a, e, send_hi_);          // my last layers -> upper neighbour's lower ghosts
      recv_lo_.resize(send_lo_.size());
      recv_hi_.resize(send_hi_.size());
      const int n = int(send_lo_.size());
      adi::mpi::check_mpi(MPI_Sendrecv(send_lo_.data(), n, type, lo, 10 + a, recv_hi_.data(), n, type, hi, 10 + a,
                                       comm, MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
      adi::mpi::check_mpi(MPI_Sendrecv(send_hi_.data(), n, type, hi, 20 + a, recv_lo_.data(), n, type, lo, 20 + a,
                                       comm, MPI_STATUS_IGNORE),
                          "MPI_Sendrecv");
      unpack(a, e + G, recv_hi_);
      unpack(a, 0, recv_lo_);
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
  void pack(int a, index_t from, std::vector<T>& buf) const {
    buf.clear();
    layers(a, from, [&](index_t p) {
      for (int v = 0; v < M; ++v) buf.push_back(q_[std::size_t(p * M + v)]);
    });
  }
  void unpack(int a, index_t from, const std::vector<T>& buf) {
    std::size_t k = 0;
    layers(a, from, [&](index_t p) {
      for (int v = 0; v < M; ++v) q_[std::size_t(p * M + v)] = buf[k++];
    });
  }

  const adi::mpi::ProcessGrid* procs_;
  EulerSetup setup_;
  HostLaunch launch_;
  Mesh mesh_;
  std::array<index_t, 3> ext_{}, lo_{}, g_{};
  index_t origin_ = 0;
  Coefficients<T> k_;
  std::vector<T> q_, d_, a_, b_, c_;
  std::vector<index_t> interior_;
  std::vector<adi::mpi::DistributedBlockTridiagonalPlan<T>> plans_;
  std::vector<T> send_lo_, send_hi_, recv_lo_, recv_hi_;
  DistributedEulerTimings timings_;
};

}  // namespace cfd
