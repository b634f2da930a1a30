// euler_vortex_mpi: euler_vortex on a periodic box decomposed over MPI ranks.
//
//   mpirun -np 4 euler_vortex_mpi --procs 2x2x1 --n 64 --t-end 2
//   mpirun -np 2 euler_vortex_mpi --procs 2x1x1 --n 256 --backend cuda   # one GPU per rank
//
// The same problem, scheme and report as euler_vortex (the isentropic vortex, Beam-Warming
// factorisation, density error against the exact solution), each rank owning a box of
// points (examples/cfd/euler_mpi.hpp): ghost layers along split axes and the block
// partition method (adi::mpi::DistributedBlockTridiagonalPlan) for the periodic block
// lines that cross ranks. On any process grid the errors equal one rank's to rounding.
// Host memory, or with --backend cuda device memory on one GPU per rank (node-local rank
// modulo the node's GPUs): every operator on the GPU, ghost layers and block-line reduced
// rows through NCCL where every rank has a GPU of its own. With --output DIR: density, velocity, pressure and the density error as
// DIR/euler_vortex.pvd over DIR/euler_vortex_NNNNN.pvti, one .vti piece per rank.
//
// Errors: bad options or an impossible decomposition print rank 0's one-line message and
// exit with the code of examples/common/cli.hpp (2) on every rank; a NaN/Inf in the state
// or a failed --max-error exits 1; an exception that escaped agreement (a bug) ends the
// run with MPI_Abort after printing it, so no rank waits forever.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "adi/io/vtk.hpp"
#include "adi/mpi/halo.hpp"
#include "adi/mpi/process_grid.hpp"
#include "adi/mpi/vtk_series.hpp"
#include "common/mpi_cli.hpp"
#include "euler_mpi.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  int dims = 2;
  long n = 64, nx = 0, ny = 0, nz = 0;
  double length = 10, t_end = 2, cfl = 2, dt = 0;
  long steps = 0;
  double eps_e = 0.02, eps_i = -1, theta = 0.5;
  double beta = 5, u0 = 1, v0 = 1, w0 = 0;
  std::string procs, strategy = "automatic", precision = "double", backend = "cpu";
  int threads = 0;
  double max_error = 0;
  std::string output;  // empty: write no files
  long every = 0;
};

// The frames of --output: primitive variables of the rank's points (plus one ghost layer,
// filled from the neighbours, that joins the pieces) as a parallel VTK series.
template <class T, int D>
class Frames {
 public:
  Frames(const adi::mpi::ProcessGrid& procs, const adi::mpi::Decomposition& dec, const cfd::EulerSetup& s,
         const std::string& dir)
      : setup_(s), fields_(6, adi::mpi::LocalField<T>(dec, {1, 1, D == 3 ? 1 : 0})), halo_(procs, fields_[0]),
        series_(procs, dec,
                adi::Grid::uniform({s.n[0], s.n[1], s.n[2]}, {0, 0, 0},
                                   {s.length[0] * double(s.n[0] - 1) / double(s.n[0]),
                                    s.length[1] * double(s.n[1] - 1) / double(s.n[1]),
                                    s.length[2] * double(s.n[2] - 1) / double(s.n[2])}),
                dir, "euler_vortex") {}

  // Collective.
  void write(const cfd::DistributedEuler<T, D>& q, const cfd::Vortex& v, double t, long step) {
    const auto& ext = q.extents();
    const auto& lo = q.lo();
    for (adi::index_t k = 0; k < ext[2]; ++k)
      for (adi::index_t j = 0; j < ext[1]; ++j)
        for (adi::index_t i = 0; i < ext[0]; ++i) {
          const T* p = q.at(i, j, k);
          const adi::index_t g[3] = {lo[0] + i, lo[1] + j, lo[2] + k};
          double x[3], rho, u[3], pr;
          for (int a = 0; a < 3; ++a) x[a] = double(g[a]) * setup_.length[a] / double(setup_.n[a]);
          v.primitive(t, x, &rho, u, &pr);
          fields_[0](i, j, k) = p[0];
          fields_[1](i, j, k) = p[1] / p[0];
          fields_[2](i, j, k) = p[2] / p[0];
          fields_[3](i, j, k) = D == 3 ? p[3] / p[0] : T(0);
          fields_[4](i, j, k) = cfd::pressure<T, D>(p, T(setup_.gamma));
          fields_[5](i, j, k) = T(double(p[0]) - rho);
        }
    for (auto& f : fields_) halo_.exchange(f);
    series_.write<T>({{"density", &fields_[0]},
                      {"u", &fields_[1]},
                      {"v", &fields_[2]},
                      {"w", &fields_[3]},
                      {"pressure", &fields_[4]},
                      {"density_error", &fields_[5]}},
                     t, step);
  }
  const adi::mpi::PvtiSeries& series() const { return series_; }

 private:
  cfd::EulerSetup setup_;
  std::vector<adi::mpi::LocalField<T>> fields_;
  adi::mpi::HaloExchange<T> halo_;
  adi::mpi::PvtiSeries series_;
};

// This rank's GPU for --backend cuda (adi::mpi::rank_gpu); every rank throws the same error
// (exit 77) when any rank has none.
adi::Executor pick_executor(const Options& o) {
  if (o.backend != "cuda") return adi::Executor::host();
  try {
    return adi::mpi::rank_gpu();
  } catch (const adi::Unsupported& e) {
    throw example::NoGpu(std::string("--backend cuda: ") + e.what() + "; use --backend cpu");
  }
}

template <class T, int D>
int run(const Options& o, int rank, int size) {
  const auto t_start = Clock::now();
  cfd::EulerSetup s;
  s.dims = D;
  const long ext[3] = {o.nx > 0 ? o.nx : o.n, o.ny > 0 ? o.ny : o.n, D == 3 ? (o.nz > 0 ? o.nz : o.n) : 1};
  for (int a = 0; a < 3; ++a) {
    s.n[a] = ext[a];
    s.length[a] = o.length;
  }
  s.theta = o.theta;
  s.eps_e = o.eps_e;
  s.eps_i = o.eps_i >= 0 ? o.eps_i : 2.5 * o.eps_e;
  s.threads = o.threads;
  cfd::Vortex v;
  v.gamma = s.gamma;
  v.beta = o.beta;
  v.u_inf[0] = o.u0;
  v.u_inf[1] = o.v0;
  v.u_inf[2] = D == 3 ? o.w0 : 0;
  for (int a = 0; a < 3; ++a) {
    v.length[a] = o.length;
    v.center[a] = o.length / 2;
  }
  const std::array<adi::index_t, 3> n{s.n[0], s.n[1], s.n[2]};
  const std::array<int, 3> dims = o.procs.empty() ? adi::mpi::default_procs(size, n) : adi::mpi::parse_procs(o.procs);
  adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, dims, {true, true, true});
  adi::mpi::Decomposition dec(procs, n);
  const adi::Executor exec = pick_executor(o);
  // The time step from the CFL number on the initial state: built once with a provisional
  // dt, then the real one (the plans do not depend on dt).
  s.dt = 1;
  double dt_cfl = 0;
  {
    cfd::DistributedEuler<T, D> probe(procs, dec, s, adi::mpi::strategy_from_name(o.strategy), exec);
    probe.set_vortex(v, 0.0);
    dt_cfl = probe.stable_dt(o.cfl);
  }
  // --steps with --t-end, else the CFL step shortened to land on --t-end.
  const example::TimeSteps ts = example::resolve_time(rank == 0 ? "euler_vortex_mpi" : nullptr, o.steps,
                                                      o.steps > 0 ? 0.0 : dt_cfl, "", o.t_end, o.t_end, 1);
  const long steps = ts.steps;
  const double dt = ts.dt;
  s.dt = dt;
  cfd::DistributedEuler<T, D> solver(procs, dec, s, adi::mpi::strategy_from_name(o.strategy), exec);
  solver.set_vortex(v, 0.0);
  const auto q0 = solver.totals();
  std::unique_ptr<Frames<T, D>> frames;
  double output_seconds = 0;
  const auto write = [&](long k) {
    const auto t0 = Clock::now();
    frames->write(solver, v, double(k) * dt, k);
    output_seconds += since(t0);
  };
  if (!o.output.empty()) {
    frames = std::make_unique<Frames<T, D>>(procs, dec, s, o.output);
    write(0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t_loop = Clock::now();
  for (long k = 1; k <= steps; ++k) {
    solver.step();
    if (frames && (k == steps || (o.every > 0 && k % o.every == 0))) write(k);
  }
  double loop = since(t_loop) - output_seconds, loop_max = 0;
  MPI_Allreduce(&loop, &loop_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const cfd::ErrorNorms e = solver.density_error(v, o.t_end);
  const auto q1 = solver.totals();
  // Relative drift of each total, or absolute per point for a total that is ~0 (a momentum
  // component of a flow that has none: dividing by it would print noise over ~0).
  double drift = 0;
  std::string absolute;
  const char* names[5] = {"rho", "rho*u", "rho*v", D == 3 ? "rho*w" : "E", "E"};
  for (int c = 0; c < D + 2; ++c) {
    const double d = std::abs(q1[std::size_t(c)] - q0[std::size_t(c)]), total = std::abs(q0[std::size_t(c)]);
    if (total > 1e-12 * std::abs(q0[0])) {
      drift = std::max(drift, d / total);
    } else {
      char buf[96];
      std::snprintf(buf, sizeof buf, "; %s: total ~0, absolute drift per point %.2e", names[c],
                    d / double(s.n[0] * s.n[1] * s.n[2]));
      absolute += buf;
    }
  }
  const cfd::DistributedEulerTimings& tm = solver.timings();
  if (rank == 0) {
    std::printf("grid       %ld x %ld%s periodic points on a box of edge %g, %dD Euler (M = %d), %s\n", ext[0], ext[1],
                D == 3 ? (" x " + std::to_string(ext[2])).c_str() : "", o.length, D, D + 2, o.precision.c_str());
    std::printf("ranks      %d as %dx%dx%d; lines x: %s, y: %s%s%s\n", size, dims[0], dims[1], dims[2],
                solver.strategy(0).c_str(), solver.strategy(1).c_str(), D == 3 ? ", z: " : "",
                D == 3 ? solver.strategy(2).c_str() : "");
    std::printf("backend    %s; ghost layers x: %s, y: %s%s%s\n", exec.name().c_str(), solver.halo_transport(0),
                solver.halo_transport(1), D == 3 ? ", z: " : "", D == 3 ? solver.halo_transport(2) : "");
    std::printf("steps      %ld, dt = %.6g, t_end = %.6g\n", steps, dt, o.t_end);
    std::printf("density error  L1 = %.4e  L2 = %.4e  max = %.4e\n", e.l1, e.l2, e.max);
    std::printf("conservation   max relative drift of the totals of Q = %.2e%s\n", drift, absolute.c_str());
    const double per = 1e3 / double(std::max(tm.steps, 1L));
    std::printf("time       total %.3f s, stepping %.3f s (%.3f ms/step; rank 0: halo %.3f, rhs %.3f", since(t_start),
                loop_max, 1e3 * loop_max / double(steps), tm.halo * per, tm.rhs * per);
    for (int a = 0; a < D; ++a)
      std::printf(", %c blocks %.3f + solve %.3f (exchange %.3f)", "xyz"[a], tm.assemble[a] * per, tm.solve[a] * per,
                  tm.exchange[a] * per);
    std::printf(" ms)\n");
    if (frames)
      std::printf("output     %s (%zu frames, %.3f s)\n", frames->series().pvd_path().c_str(),
                  frames->series().frames(), output_seconds);
  }
  // The totals and the max error are global: every rank decides alike.
  for (int c = 0; c < D + 2; ++c)
    example::require_finite(q1[std::size_t(c)], "the total of Q (component " + std::to_string(c) + ")",
                            "at step " + std::to_string(steps));
  example::require_finite(e.max, "the max density error", "at step " + std::to_string(steps));
  if (o.max_error > 0 && example::exceeds(e.max, o.max_error))
    throw example::RunFailure("max density error " + example::num(e.max) + " exceeds --max-error " +
                              example::num(o.max_error));
  return example::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  using example::integer;
  using example::positive;
  using example::range;
  CLI::App app{"euler_vortex_mpi: the isentropic vortex (euler_vortex) on a periodic box decomposed over MPI ranks"};
  app.add_option("--procs", o.procs, "Process grid PXxPYxPZ, e.g. 2x2x1 (default: MPI_Dims_create)");
  app.add_option("--dims", o.dims, "2 (M = 4) or 3 (M = 5)")->check(CLI::IsMember({2, 3}))->capture_default_str();
  app.add_option("--n", o.n, "Points per axis")->check(integer(5, 1L << 20))->capture_default_str();
  app.add_option("--nx", o.nx, "Points along x (default --n)")->check(integer(5, 1L << 20));
  app.add_option("--ny", o.ny, "Points along y (default --n)")->check(integer(5, 1L << 20));
  auto* onz = app.add_option("--nz", o.nz, "Points along z (3D, default --n)")->check(integer(5, 1L << 20));
  app.add_option("--length", o.length, "Edge of the periodic box")->check(range(0, 1e6, true))->capture_default_str();
  app.add_option("--t-end", o.t_end, "Final time")->check(positive())->capture_default_str();
  app.add_option("--steps", o.steps, "Time steps (default: from --cfl)")->check(integer(1, 1L << 40));
  auto* ocfl = app.add_option("--cfl", o.cfl, "CFL number of the time step")->check(positive())->capture_default_str();
  app.add_option("--theta", o.theta, "0.5 trapezoidal, 1 implicit Euler")->check(range(0.5, 1.0));
  app.add_option("--beta", o.beta, "Vortex strength")->check(range(0.0, 8.0))->capture_default_str();
  app.add_option("--u0", o.u0, "Free stream along x")->check(range(-100, 100))->capture_default_str();
  app.add_option("--v0", o.v0, "Free stream along y")->check(range(-100, 100))->capture_default_str();
  auto* ow0 = app.add_option("--w0", o.w0, "Free stream along z (3D)")->check(range(-100, 100))->capture_default_str();
  app.add_option("--strategy", o.strategy, "Reduced-system strategy of split axes")
      ->check(CLI::IsMember({"automatic", "allgather", "alltoall"}))
      ->capture_default_str();
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads per rank (0: all)")->check(integer(0, 4096));
  app.add_option("--backend", o.backend, "Where the state lives and the step runs: cpu, or cuda (one GPU per rank)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--max-error", o.max_error, "Exit with status 1 when the max density error exceeds this (tests)")
      ->check(positive());
  auto* oout = app.add_option("--output", o.output, "Write DIR/euler_vortex.pvd over .pvti frames (default: no files)");
  app.add_option("--every", o.every, "With --output: a frame every K steps (0: first and last only)")
      ->check(integer(0, 1L << 40))
      ->needs(oout);
  if (const auto rc = example::parse(app, "euler_vortex_mpi", argc, argv, rank == 0)) {
    MPI_Finalize();
    return *rc;
  }
  int rc = 0;
  try {
    // Every combination is checked before any work (the same on every rank).
    if (o.dims == 2)
      for (const CLI::Option* opt : {onz, ow0})
        example::require(opt->count() == 0, opt->get_name() + " needs --dims 3");
    example::require(!(o.steps > 0 && ocfl->count() > 0), "give --steps or --cfl, not both (either fixes the step)");
    if (!o.output.empty()) {
      example::require(adi::io::vtk_available(), "--output: adi was built without VTK");
      example::prepare_output_everywhere(o.output);
    }
    if (o.dims == 2)
      rc = o.precision == "double" ? run<double, 2>(o, rank, size) : run<float, 2>(o, rank, size);
    else
      rc = o.precision == "double" ? run<double, 3>(o, rank, size) : run<float, 3>(o, rank, size);
  } catch (const std::exception& e) {
    if (!example::agreed(e)) {  // a bug: other ranks may wait forever
      std::fprintf(stderr, "euler_vortex_mpi: rank %d: unexpected error: %s (aborting all ranks)\n", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, example::exit_failure);
    }
    std::string message;  // raised on every rank alike (agreed before any exchange)
    rc = example::exit_code(e, message);
    if (rank == 0) std::fprintf(stderr, "euler_vortex_mpi: error: %s\n", message.c_str());
  }
  MPI_Finalize();
  return rc;
}
