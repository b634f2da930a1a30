// euler_vortex_mpi: euler_vortex on a periodic box decomposed over MPI ranks.
//
//   mpirun -np 4 euler_vortex_mpi --procs 2x2x1 --n 64 --t-end 2
//
// The same problem, scheme and report as euler_vortex (the isentropic vortex, Beam-Warming
// factorisation, density error against the exact solution), each rank owning a box of
// points (examples/cfd/euler_mpi.hpp): ghost layers along split axes and the block
// partition method (adi::mpi::DistributedBlockTridiagonalPlan) for the periodic block
// lines that cross ranks. On any process grid the errors equal one rank's to rounding.
// Host memory; writes no files.
//
// Errors: bad options or an impossible decomposition print rank 0's one-line message and
// exit 2 on every rank; an exception that escaped agreement (a bug) ends the run with
// MPI_Abort after printing it, so no rank waits forever.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "adi/mpi/process_grid.hpp"
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
  std::string procs, strategy = "automatic", precision = "double";
  int threads = 0;
  double max_error = 0;
};

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
  // The time step from the CFL number on the initial state: built once with a provisional
  // dt, then the real one (the plans do not depend on dt).
  s.dt = 1;
  double dt = o.dt;
  long steps = o.steps;
  {
    cfd::DistributedEuler<T, D> probe(procs, dec, s, adi::mpi::strategy_from_name(o.strategy));
    probe.set_vortex(v, 0.0);
    if (dt <= 0) dt = probe.stable_dt(o.cfl);
  }
  if (steps <= 0) steps = std::max(1L, long(std::ceil(o.t_end / dt - 1e-9)));
  dt = o.t_end / double(steps);
  s.dt = dt;
  cfd::DistributedEuler<T, D> solver(procs, dec, s, adi::mpi::strategy_from_name(o.strategy));
  solver.set_vortex(v, 0.0);
  const auto q0 = solver.totals();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t_loop = Clock::now();
  for (long k = 0; k < steps; ++k) solver.step();
  double loop = since(t_loop), loop_max = 0;
  MPI_Allreduce(&loop, &loop_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const cfd::ErrorNorms e = solver.density_error(v, o.t_end);
  const auto q1 = solver.totals();
  double drift = 0;
  for (int c = 0; c < D + 2; ++c)
    drift = std::max(drift, std::abs(q1[std::size_t(c)] - q0[std::size_t(c)]) / std::max(std::abs(q0[std::size_t(c)]), 1e-300));
  const cfd::DistributedEulerTimings& tm = solver.timings();
  if (rank == 0) {
    std::printf("grid       %ld x %ld%s periodic points on a box of edge %g, %dD Euler (M = %d), %s\n", ext[0], ext[1],
                D == 3 ? (" x " + std::to_string(ext[2])).c_str() : "", o.length, D, D + 2, o.precision.c_str());
    std::printf("ranks      %d as %dx%dx%d; lines x: %s, y: %s%s%s\n", size, dims[0], dims[1], dims[2],
                solver.strategy(0), solver.strategy(1), D == 3 ? ", z: " : "", D == 3 ? solver.strategy(2) : "");
    std::printf("steps      %ld, dt = %.6g, t_end = %.6g\n", steps, dt, o.t_end);
    std::printf("density error  L1 = %.4e  L2 = %.4e  max = %.4e\n", e.l1, e.l2, e.max);
    std::printf("conservation   max relative drift of the totals of Q = %.2e\n", drift);
    const double per = 1e3 / double(std::max(tm.steps, 1L));
    std::printf("time       total %.3f s, stepping %.3f s (%.3f ms/step; rank 0: halo %.3f, rhs %.3f", since(t_start),
                loop_max, 1e3 * loop_max / double(steps), tm.halo * per, tm.rhs * per);
    for (int a = 0; a < D; ++a)
      std::printf(", %c blocks %.3f + solve %.3f (exchange %.3f)", "xyz"[a], tm.assemble[a] * per, tm.solve[a] * per,
                  tm.exchange[a] * per);
    std::printf(" ms)\n");
  }
  if (o.max_error > 0 && !(e.max <= o.max_error)) {
    if (rank == 0)
      std::fprintf(stderr, "euler_vortex_mpi: max density error %.3e exceeds --max-error %.3e\n", e.max, o.max_error);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  CLI::App app{"euler_vortex_mpi: the isentropic vortex (euler_vortex) on a periodic box decomposed over MPI ranks"};
  app.add_option("--procs", o.procs, "Process grid PXxPYxPZ, e.g. 2x2x1 (default: MPI_Dims_create)");
  app.add_option("--dims", o.dims, "2 (M = 4) or 3 (M = 5)")->check(CLI::IsMember({2, 3}))->capture_default_str();
  app.add_option("--n", o.n, "Points per axis")->check(CLI::Range(5L, 1L << 20))->capture_default_str();
  app.add_option("--nx", o.nx, "Points along x (default --n)")->check(CLI::Range(5L, 1L << 20));
  app.add_option("--ny", o.ny, "Points along y (default --n)")->check(CLI::Range(5L, 1L << 20));
  app.add_option("--nz", o.nz, "Points along z (3D, default --n)")->check(CLI::Range(5L, 1L << 20));
  app.add_option("--length", o.length, "Edge of the periodic box")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--t-end", o.t_end, "Final time")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--steps", o.steps, "Time steps (default: from --cfl)")->check(CLI::Range(1L, 1L << 40));
  app.add_option("--cfl", o.cfl, "CFL number of the time step")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--theta", o.theta, "0.5 trapezoidal, 1 implicit Euler")->check(CLI::Range(0.01, 1.0));
  app.add_option("--beta", o.beta, "Vortex strength")->check(CLI::Range(0.0, 8.0))->capture_default_str();
  app.add_option("--u0", o.u0, "Free stream along x")->capture_default_str();
  app.add_option("--v0", o.v0, "Free stream along y")->capture_default_str();
  app.add_option("--w0", o.w0, "Free stream along z (3D)")->capture_default_str();
  app.add_option("--strategy", o.strategy, "Reduced-system strategy of split axes")
      ->check(CLI::IsMember({"automatic", "allgather", "alltoall"}))
      ->capture_default_str();
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"double", "float"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads per rank (0: all)")->check(CLI::Range(0, 4096));
  app.add_option("--max-error", o.max_error, "Exit with status 1 when the max density error exceeds this (tests)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
    MPI_Finalize();
    return rc == 0 ? 0 : 2;
  }
  int rc = 0;
  try {
    if (o.dims == 2)
      rc = o.precision == "double" ? run<double, 2>(o, rank, size) : run<float, 2>(o, rank, size);
    else
      rc = o.precision == "double" ? run<double, 3>(o, rank, size) : run<float, 3>(o, rank, size);
  } catch (const adi::InvalidArgument& e) {
    // Raised on every rank alike (agreed before any exchange).
    if (rank == 0) std::fprintf(stderr, "euler_vortex_mpi: error: %s\n", e.what());
    rc = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "euler_vortex_mpi: rank %d: unexpected error: %s (aborting all ranks)\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Finalize();
  return rc;
}
