// heat3d_mpi: heat3d distributed over MPI ranks.
//
//   mpirun -np 4 heat3d_mpi --procs 2x2x1 --n 65 --steps 50
//   mpirun -np 2 heat3d_mpi --procs 1x1x2 --n 257 --memory device   # one GPU per rank
//
// Solves u_t = kx u_xx + ky u_yy + kz u_zz on the unit box against the exact solution
//   u = exp(-(kx a^2 + ky b^2 + kz c^2) t) sin(a x + p) sin(b y + q) sin(c z + r)
// (a = b = c = pi, p, q, r = 0.3, 0.5, 0.7: the heat3d problem), each rank owning a box
// of the grid (adi::mpi::Decomposition) and stepping it with the one adi::AdiSolver on that
// decomposition (adi::mpi::subdomain), and prints the same report as heat3d: on any
// process grid the errors equal those of one rank (and of heat3d) to rounding. Writes
// DIR/heat3d.pvd over DIR/heat3d_NNNNN.pvti, one .vti piece per rank.
//
// --memory device: each rank runs the step on GPU (node-local rank) % (GPUs on the node),
// u living on the device (frames and the final error copy it to the host first); without
// a GPU every rank fails with the same message.
//
// Errors: bad options or an impossible decomposition make every rank print nothing but
// rank 0 the one-line message, and exit with the code of examples/common/cli.hpp (2, or
// 77 for --memory device without a GPU). An exception that escaped agreement (a bug)
// ends the run with MPI_Abort after printing it, so no rank waits forever.
#include <mpi.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "adi/mpi/subdomain.hpp"
#include "adi/mpi/vtk_series.hpp"
#include "common/mpi_cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  long n = 64, nx = 0, ny = 0, nz = 0;
  long steps = 0;
  double dt = 0, cfl = 0, t_end = 0;
  double kx = 1, ky = 1, kz = 1;
  std::string scheme = "douglas";
  double theta = -1;
  int rannacher = 0;
  std::string precision = "double";
  std::string procs;  // empty: MPI_Dims_create
  std::string strategy = "automatic";
  std::string memory = "host";
  int threads = 0;
  std::string output = "heat3d_out";
  long every = 10;
  bool no_output = false;
  double max_error = 0;
};

struct Exact {
  double kx, ky, kz;
  static constexpr double a = std::numbers::pi, b = std::numbers::pi, c = std::numbers::pi;
  static constexpr double p = 0.3, q = 0.5, r = 0.7;
  double decay() const { return kx * a * a + ky * b * b + kz * c * c; }
  double operator()(double t, double x, double y, double z) const {
    return std::exp(-decay() * t) * std::sin(a * x + p) * std::sin(b * y + q) * std::sin(c * z + r);
  }
};

double max_rate(const Options& o, const adi::Grid& g) {
  const double k[3] = {o.kx, o.ky, o.kz};
  double m = 0;
  for (int d = 0; d < 3; ++d) {
    const adi::AxisGrid& ax = g.axis(adi::Axis(d));
    if (ax.size() > 1) m = std::max(m, k[d] / (ax.spacing(0) * ax.spacing(0)));
  }
  return m;
}

// heat3d's rule: any two of --steps / --dt (--cfl) / --t-end fix the third; defaults 50 steps to t = 0.05.
void resolve_time(Options& o, const adi::Grid& g, bool speak) {
  const double dt = o.cfl > 0 ? o.cfl / max_rate(o, g) : o.dt;
  const example::TimeSteps r = example::resolve_time(speak ? "heat3d_mpi" : nullptr, o.steps, dt,
                                                     o.cfl > 0 ? "--cfl" : "--dt", o.t_end, 0.05, 50);
  o.steps = r.steps;
  o.dt = r.dt;
  o.t_end = r.t_end;
}

// This rank's nodes of the operator's field f (a host field), with the neighbours' planes
// where the piece has them, into a LocalField of one ghost layer (the VTK pieces).
template <class T>
void to_local(const adi::Operator<T>& op, const adi::Field<T>& f, adi::mpi::LocalField<T>& out) {
  const auto lo = op.owned_lo(), e = op.extents();
  const std::array<int, 3> g = out.ghosts();
  auto range = [&](int a, adi::index_t& from, adi::index_t& to) {
    from = std::max<adi::index_t>(-g[a], -lo[a]);
    to = std::min<adi::index_t>(out.extent(adi::Axis(a)) + g[a], e[a] - lo[a]);
  };
  adi::index_t i0, i1, j0, j1, k0, k1;
  range(0, i0, i1);
  range(1, j0, j1);
  range(2, k0, k1);
  for (adi::index_t k = k0; k < k1; ++k)
    for (adi::index_t j = j0; j < j1; ++j)
      for (adi::index_t i = i0; i < i1; ++i) out(i, j, k) = f(lo[0] + i, lo[1] + j, lo[2] + k);
}

// err = u - exact(t) over the piece this rank writes (its nodes + the shared hi layer);
// returns the sums over its own nodes (squares, max, NaN/Inf values of u) for the global norms.
template <class T>
std::array<double, 3> error_field(const Exact& ex, const adi::Grid& g, const adi::mpi::Decomposition& dec,
                                      double t, const adi::mpi::LocalField<T>& u, adi::mpi::LocalField<T>& err) {
  double sum = 0, mx = 0, bad = 0;
  const auto lo = dec.lo();
  std::array<adi::index_t, 3> end{};
  for (int a = 0; a < 3; ++a)
    end[a] = u.extent(adi::Axis(a)) + (lo[a] + u.extent(adi::Axis(a)) < dec.global()[a] ? 1 : 0);
  for (adi::index_t k = 0; k < end[2]; ++k)
    for (adi::index_t j = 0; j < end[1]; ++j)
      for (adi::index_t i = 0; i < end[0]; ++i) {
        const double e = double(u(i, j, k)) - ex(t, g.axis(adi::Axis::x)[lo[0] + i],
                                                 g.axis(adi::Axis::y)[lo[1] + j], g.axis(adi::Axis::z)[lo[2] + k]);
        err(i, j, k) = T(e);
        if (i < u.extent(adi::Axis::x) && j < u.extent(adi::Axis::y) && k < u.extent(adi::Axis::z)) {
          sum += e * e;
          mx = std::max(mx, std::abs(e));
          bad += std::isfinite(double(u(i, j, k))) ? 0 : 1;
        }
      }
  return {sum, mx, bad};
}

// This rank's GPU for --memory device (adi::mpi::rank_gpu: the node-local rank modulo the
// node's GPUs). Every rank throws the same error when any rank has none.
adi::Executor pick_executor(const Options& o) {
  if (o.memory != "device") return adi::Executor::host();
  try {
    return adi::mpi::rank_gpu();
  } catch (const adi::Unsupported& e) {
    throw example::NoGpu(std::string("--memory device: ") + e.what() + "; use --memory host");
  }
}

template <class T>
int run(Options o, int rank, int size) {
  const auto t_start = Clock::now();
  if (o.threads > 0) omp_set_num_threads(o.threads);
  const adi::Grid grid = adi::Grid::uniform({o.nx, o.ny, o.nz}, {0, 0, 0}, {1, 1, 1});
  resolve_time(o, grid, rank == 0);
  const Exact exact{grid.nx() > 1 ? o.kx : 0.0, grid.ny() > 1 ? o.ky : 0.0, grid.nz() > 1 ? o.kz : 0.0};
  const std::array<int, 3> dims = o.procs.empty()
                                      ? adi::mpi::default_procs(size, {grid.nx(), grid.ny(), grid.nz()})
                                      : adi::mpi::parse_procs(o.procs);
  adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, dims);
  adi::mpi::Decomposition dec(procs, {grid.nx(), grid.ny(), grid.nz()});
  adi::Scheme scheme = adi::Scheme::from_name(o.scheme);
  if (o.theta > 0) scheme.with_theta(o.theta);
  scheme.with_damping(o.rannacher);
  const auto bc = adi::BoundaryConditions::all(
      adi::Boundary::dirichlet([exact](double t, double x, double y, double z) { return exact(t, x, y, z); }));
  const adi::Executor exec = pick_executor(o);
  if (!o.no_output && !adi::io::vtk_available()) {
    if (rank == 0) std::fprintf(stderr, "heat3d_mpi: note: adi was built without VTK, writing no files\n");
    o.no_output = true;
  }
  if (!o.no_output) example::prepare_output_everywhere(o.output);  // before any work
  adi::mpi::DistributedOptions lines;
  lines.strategy = adi::mpi::strategy_from_name(o.strategy);
  adi::AdiSolver<T> solver(grid, adi::Pde::heat(o.kx, o.ky, o.kz), bc, scheme, exec,
                           adi::mpi::subdomain(procs, dec, lines));
  adi::Operator<T>& op = solver.op();
  // u: this rank's piece of the grid (its nodes + ghost planes), in the executor's memory.
  adi::Field<T> field = op.make_field();
  {
    const auto e = op.extents(), org = op.origin();
    adi::Field<T> h(e[0], e[1], e[2]);
    for (adi::index_t k = 0; k < e[2]; ++k)
      for (adi::index_t j = 0; j < e[1]; ++j)
        for (adi::index_t i = 0; i < e[0]; ++i)
          h(i, j, k) = T(exact(0.0, grid.axis(adi::Axis::x)[org[0] + i], grid.axis(adi::Axis::y)[org[1] + j],
                               grid.axis(adi::Axis::z)[org[2] + k]));
    field.copy_from(h);
  }
  // u on the host for output and errors, with one ghost layer where the axis has nodes.
  const std::array<int, 3> ghosts{1, grid.ny() > 1 ? 1 : 0, grid.nz() > 1 ? 1 : 0};
  adi::mpi::LocalField<T> u(dec, ghosts);
  auto host_u = [&]() -> const adi::mpi::LocalField<T>& {
    to_local(op, field.memory_space() == adi::MemorySpace::host ? field : field.to_host(), u);
    return u;
  };
  adi::mpi::LocalField<T> err(dec, u.ghosts());

  std::unique_ptr<adi::mpi::PvtiSeries> out;
  double output_seconds = 0;
  auto write_frame = [&](long step, double t) {
    const auto t0 = Clock::now();
    op.exchange(field);  // the pieces share their hi layer with the next rank
    const adi::mpi::LocalField<T>& uh = host_u();
    error_field(exact, grid, dec, t, uh, err);
    out->write<T>({{"u", &uh}, {"error", &err}}, t, step);
    output_seconds += seconds_since(t0);
  };
  if (!o.no_output) {
    out = std::make_unique<adi::mpi::PvtiSeries>(procs, dec, grid, o.output, "heat3d");
    if (o.every > 0) write_frame(0, 0.0);
  }
  const double setup_output = output_seconds;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t_loop = Clock::now();
  double t = 0;
  for (long s = 1; s <= o.steps; ++s) {
    try {
      solver.step(field, double(s - 1) * o.dt, o.dt);
    } catch (const adi::SingularSystem&) {  // agreed over the ranks; the message names kernels and lines
      throw example::RunFailure("the implicit system of step " + std::to_string(s) + " is singular (dt = " +
                                example::num(o.dt) + "): try a smaller --dt or --t-end");
    }
    t = double(s) * o.dt;
    if (out && (s == o.steps || (o.every > 0 && s % o.every == 0))) write_frame(s, t);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double loop_seconds = seconds_since(t_loop) - (output_seconds - setup_output);

  const auto [sum, mx, bad] = error_field(exact, grid, dec, t, host_u(), err);
  double gsum = 0, gmax = 0, gbad = 0;
  MPI_Allreduce(&sum, &gsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&mx, &gmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&bad, &gbad, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (gbad > 0) gmax = std::numeric_limits<double>::quiet_NaN();  // std::max dropped the NaNs
  const double l2 = std::sqrt(gsum / double(grid.size()));
  // Per-part times: the slowest rank's (explicit without the halo exchanges in it).
  const adi::StepTimings& tm = solver.timings();
  double parts[9] = {tm.implicit[0], tm.implicit[1], tm.implicit[2], std::max(0.0, tm.explicit_part - tm.halo),
                     tm.halo, tm.boundary, tm.line_exchange[0], tm.line_exchange[1], tm.line_exchange[2]},
         pmax[9];
  MPI_Reduce(parts, pmax, 9, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::string spacing;
    for (int d = 0; d < 3; ++d) {
      const adi::AxisGrid& ax = grid.axis(adi::Axis(d));
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.4g", d ? " x " : "", ax.size() > 1 ? ax.spacing(0) : 0.0);
      spacing += buf;
    }
    std::printf("grid       %s nodes on the unit box, h = %s, %s, %d MPI rank(s) as %s, %s memory%s\n",
                grid.describe().c_str(), spacing.c_str(), o.precision.c_str(), size, procs.describe().c_str(),
                o.memory.c_str(), exec.is_cuda() ? (" (rank 0 on " + exec.name() + ")").c_str() : "");
    std::printf("scheme     %s, theta = %.4g", scheme.name(), scheme.theta);
    if (scheme.damping_steps > 0) std::printf(", Rannacher damping %d steps", scheme.damping_steps);
    std::printf("; Dirichlet data from the exact solution\n");
    std::printf("lines      x: %s, y: %s, z: %s\n", op.line_strategy(adi::Axis::x), op.line_strategy(adi::Axis::y),
                op.line_strategy(adi::Axis::z));
    std::printf("steps      %ld, dt = %.6g, t_end = %.6g, max k*dt/h^2 = %.3g\n", o.steps, o.dt, t,
                o.dt * max_rate(o, grid));
    std::printf("error      L2 (RMS over nodes) = %.3e, max = %.3e  (exact |u| <= %.3e at t_end)\n", l2, gmax,
                std::exp(-exact.decay() * t));
    std::printf("time       total %.3f s: stepping %.3f s (%.3f ms/step), output %.3f s\n", seconds_since(t_start),
                loop_seconds, 1e3 * loop_seconds / double(o.steps), output_seconds);
    std::printf("per part   X %.3f s, Y %.3f s, Z %.3f s (implicit; of which reduced-system exchange %.3f, %.3f, "
                "%.3f s), explicit %.3f s, halo %.3f s, boundary %.3f s (slowest rank each)\n",
                pmax[0], pmax[1], pmax[2], pmax[6], pmax[7], pmax[8], pmax[3], pmax[4], pmax[5]);
    if (out) std::printf("output     %s (%zu frames)\n", out->pvd_path().c_str(), out->frames());
  }
  if (gbad > 0)  // the same global count on every rank
    throw example::RunFailure("u has " + example::num(gbad) + " NaN/Inf values of " + std::to_string(grid.size()) +
                              " at step " + std::to_string(o.steps) + " (t = " + example::num(t) +
                              "): the run overflowed; try a smaller --dt or --t-end");
  if (o.max_error > 0 && example::exceeds(gmax, o.max_error))
    throw example::RunFailure("max error " + example::num(gmax) + " exceeds --max-error " + example::num(o.max_error));
  return example::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Options o;
  CLI::App app{"heat3d_mpi: the heat3d problem by ADI on a grid decomposed over MPI ranks"};
  app.add_option("--n", o.n, "Nodes per axis (all three)")->check(example::integer(3, 1L << 20));
  app.add_option("--nx", o.nx, "Nodes along x (default --n)")->check(example::integer(3, 1L << 20));
  app.add_option("--ny", o.ny, "Nodes along y (default --n; 1 with --nz 1: 1D)")->check(example::integer(1, 1L << 20));
  app.add_option("--nz", o.nz, "Nodes along z (default --n; 1: the 2D problem)")->check(example::integer(1, 1L << 20));
  app.add_option("--procs", o.procs, "Process grid PXxPYxPZ, e.g. 2x2x1 (default: MPI_Dims_create)");
  app.add_option("--strategy", o.strategy, "Reduced-system strategy of split axes")
      ->check(CLI::IsMember({"automatic", "allgather", "alltoall", "pcr"}))
      ->capture_default_str();
  app.add_option("--steps", o.steps, "Time steps (default 50)")->check(example::integer(1, 1L << 40));
  auto* odt = app.add_option("--dt", o.dt, "Time step (shortened, with a note, so that steps*dt = t-end)")
                  ->check(example::positive());
  auto* ocfl = app.add_option("--cfl", o.cfl, "Time step as max k*dt/h^2 instead of --dt")->check(example::positive());
  odt->excludes(ocfl);
  app.add_option("--t-end", o.t_end, "Final time (default 0.05; any two of --steps, --dt, --t-end fix the third)")
      ->check(example::positive());
  app.add_option("--kx", o.kx, "Diffusivity along x")->check(example::positive())->capture_default_str();
  app.add_option("--ky", o.ky, "Diffusivity along y")->check(example::positive())->capture_default_str();
  app.add_option("--kz", o.kz, "Diffusivity along z")->check(example::positive())->capture_default_str();
  app.add_option("--scheme", o.scheme, "ADI scheme (peaceman-rachford: 2D only)")
      ->check(CLI::IsMember({"douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer",
                             "peaceman-rachford"}))
      ->capture_default_str();
  app.add_option("--theta", o.theta, "Implicitness theta in (0, 1]")->check(example::range(0.0, 1.0, true));
  app.add_option("--rannacher", o.rannacher, "Damping: this many implicit-Euler half steps first")
      ->check(example::integer(0, 1000));
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  app.add_option("--memory", o.memory, "Where u lives and the step runs: host, or device (one GPU per rank)")
      ->check(CLI::IsMember({"host", "device"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads per rank (0: all)")->check(example::integer(0, 4096));
  auto* oout = app.add_option("--output", o.output, "Output directory")->capture_default_str();
  auto* oevery = app.add_option("--every", o.every, "Write a frame every K steps (0: only the final one)")
                     ->check(example::integer(0, 1L << 40))
                     ->capture_default_str();
  app.add_flag("--no-output", o.no_output, "Write no files")->excludes(oout)->excludes(oevery);
  app.add_option("--max-error", o.max_error, "Exit with status 1 when the max error exceeds this (tests)")
      ->check(example::positive());
  // Every rank parses the same arguments, so every rank stops alike; only rank 0 speaks.
  if (const auto rc = example::parse(app, "heat3d_mpi", argc, argv, rank == 0)) {
    MPI_Finalize();
    return *rc;
  }
  if (o.nx == 0) o.nx = o.n;
  if (o.ny == 0) o.ny = o.n;
  if (o.nz == 0) o.nz = o.n;
  int rc = 0;
  try {
    for (const auto& [name, n] : {std::pair{"--ny", o.ny}, std::pair{"--nz", o.nz}})
      example::require(n != 2, std::string(name) + " 2: an axis has 1 node (no derivative along it) or at least 3 "
                                                   "(two Dirichlet ends and an unknown)");
    // heat3d's estimate (about ten values per node), for this rank's share of the grid.
    example::require_memory(10.0 * (o.precision == "float" ? 4 : 8) * double(o.nx) * double(o.ny) * double(o.nz) /
                                double(size),
                            "a grid of " + std::to_string(o.nx) + " x " + std::to_string(o.ny) + " x " +
                                std::to_string(o.nz) + " nodes over " + std::to_string(size) + " rank(s)");
    rc = o.precision == "float" ? run<float>(o, rank, size) : run<double>(o, rank, size);
  } catch (const std::exception& e) {
    if (!example::agreed(e)) {  // a bug: other ranks may wait forever
      std::fprintf(stderr, "heat3d_mpi: rank %d: unexpected error: %s (aborting all ranks)\n", rank, e.what());
      MPI_Abort(MPI_COMM_WORLD, example::exit_failure);
    }
    // adi::mpi agrees on errors before exchanging, so every rank is here with the same text.
    std::string message;
    rc = example::exit_code(e, message);
    if (rank == 0) std::fprintf(stderr, "heat3d_mpi: error: %s\n", message.c_str());
  }
  MPI_Finalize();
  return rc;
}
