// heat3d: u_t = kx u_xx + ky u_yy + kz u_zz on the unit box, stepped by an ADI
// scheme and checked against the exact solution
//   u = exp(-(kx a^2 + ky b^2 + kz c^2) t) sin(a x + p) sin(b y + q) sin(c z + r),
// a = b = c = pi, (p, q, r) = (0.3, 0.5, 0.7): the phases make the Dirichlet
// boundary values non-zero and time-dependent, so the boundary handling is tested too.
// --nz 1 (or --ny 1) runs the 2D (1D) problem on the plane z = 0, where the z factor
// is the constant sin(r) and kz drops out of the decay rate.
// Writes DIR/heat3d.pvd + DIR/heat3d_NNNNN.vti (solution and pointwise error).
#include <omp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "common/cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
  long n = 64, nx = 0, ny = 0, nz = 0;
  long steps = 0;
  double dt = 0, cfl = 0, t_end = 0;
  double kx = 1, ky = 1, kz = 1;
  std::string scheme = "douglas";
  double theta = -1;  // < 0: the scheme's default
  int rannacher = 0;
  std::string precision = "double";
  std::string backend = "cpu";
  int threads = 0;
  std::string output = "heat3d_out";
  long every = 10;
  bool no_output = false;
  bool progress = false;
  double max_error = 0;  // > 0: exit 1 when the max error exceeds it
};

// The exact solution and its (time-dependent) boundary values.
struct Exact {
  double kx, ky, kz;  // zero along an axis of one node (no diffusion there)
  static constexpr double a = std::numbers::pi, b = std::numbers::pi, c = std::numbers::pi;
  static constexpr double p = 0.3, q = 0.5, r = 0.7;
  double decay() const { return kx * a * a + ky * b * b + kz * c * c; }
  double operator()(double t, double x, double y, double z) const {
    return std::exp(-decay() * t) * std::sin(a * x + p) * std::sin(b * y + q) * std::sin(c * z + r);
  }
};

// u(t) on the grid is exp(-decay t) times a product of 1D factors: tabulating them
// makes the error check cost a multiply per node instead of three sines.
struct ExactOnGrid {
  ExactOnGrid(const Exact& e, const adi::Grid& g) : ex(e) {
    const double w[3] = {Exact::a, Exact::b, Exact::c}, ph[3] = {Exact::p, Exact::q, Exact::r};
    for (int d = 0; d < 3; ++d)
      for (double x : g.axis(adi::Axis(d)).nodes()) f[d].push_back(std::sin(w[d] * x + ph[d]));
  }
  double operator()(double t, adi::index_t i, adi::index_t j, adi::index_t k) const {
    return std::exp(-ex.decay() * t) * f[0][std::size_t(i)] * f[1][std::size_t(j)] * f[2][std::size_t(k)];
  }
  Exact ex;
  std::vector<double> f[3];
};

// "[#####.....]  25/50 steps  0.8 s  ETA 0.8 s" on stderr, redrawn at most 10 times a second.
class Progress {
 public:
  Progress(long total, bool enabled) : total_(total), enabled_(enabled), t0_(Clock::now()) {}
  void update(long done) {
    if (!enabled_) return;
    const double el = seconds_since(t0_);
    if (done < total_ && el - last_ < 0.1) return;
    last_ = el;
    constexpr int width = 30;
    const int filled = total_ > 0 ? int(width * done / total_) : width;
    const double eta = done > 0 ? el * double(total_ - done) / double(done) : 0.0;
    std::fprintf(stderr, "\r[%s%s] %ld/%ld steps  %.1f s  ETA %.1f s ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total_, el, eta);
    if (done >= total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  long total_;
  bool enabled_;
  Clock::time_point t0_;
  double last_ = -1;
};

// max_d k_d / h_d^2 over the axes with more than one node: dt times it is the
// diffusion number (explicit Euler would need it <= 1/(2 dims); ADI does not).
double max_rate(const Options& o, const adi::Grid& g) {
  const double k[3] = {o.kx, o.ky, o.kz};
  double m = 0;
  for (int d = 0; d < 3; ++d) {
    const adi::AxisGrid& ax = g.axis(adi::Axis(d));
    if (ax.size() > 1) m = std::max(m, k[d] / (ax.spacing(0) * ax.spacing(0)));
  }
  return m;
}

// --steps / --dt (or --cfl) / --t-end: any two fix the third; defaults 50 steps to t = 0.05.
void resolve_time(Options& o, const adi::Grid& g) {
  const double dt = o.cfl > 0 ? o.cfl / max_rate(o, g) : o.dt;
  const example::TimeSteps r = example::resolve_time("heat3d", o.steps, dt, o.cfl > 0 ? "--cfl" : "--dt", o.t_end,
                                                     0.05, 50);
  o.steps = r.steps;
  o.dt = r.dt;
  o.t_end = r.t_end;
}

struct ErrorNorms {
  double l2 = 0, max = 0;
  long non_finite = 0;  // NaN/Inf values of u (std::max would drop them from max)
};

// err = u - exact(t) on every node; returns its RMS (the discrete L2 norm on the
// unit box) and max norm. u must be a host field.
template <class T>
ErrorNorms error_field(const ExactOnGrid& ex, double t, const adi::Field<T>& u, adi::Field<T>& err) {
  const double decay = std::exp(-ex.ex.decay() * t);
  double sum = 0, mx = 0;
  long bad = 0;
#pragma omp parallel for collapse(2) reduction(+ : sum, bad) reduction(max : mx)
  for (adi::index_t k = 0; k < u.nz(); ++k)
    for (adi::index_t j = 0; j < u.ny(); ++j) {
      const double fjk = decay * ex.f[1][std::size_t(j)] * ex.f[2][std::size_t(k)];
      for (adi::index_t i = 0; i < u.nx(); ++i) {
        const double e = double(u(i, j, k)) - fjk * ex.f[0][std::size_t(i)];
        err(i, j, k) = T(e);
        sum += e * e;
        mx = std::max(mx, std::abs(e));
        bad += std::isfinite(double(u(i, j, k))) ? 0 : 1;
      }
    }
  return {std::sqrt(sum / double(u.size())), bad ? std::numeric_limits<double>::quiet_NaN() : mx, bad};
}

// A NaN or Inf in u is an error (exit 1), named with the step where it was seen.
void require_finite(const ErrorNorms& n, std::size_t nodes, long step, double t) {
  if (n.non_finite > 0)
    throw example::RunFailure("u has " + std::to_string(n.non_finite) + " NaN/Inf values of " + std::to_string(nodes) +
                              " at step " + std::to_string(step) + " (t = " + example::num(t) +
                              "): the run overflowed; try a smaller --dt or --t-end");
}

template <class T>
int run(Options o) {
  const auto t_start = Clock::now();
  if (o.threads > 0) omp_set_num_threads(o.threads);  // heat3d's own loops (setup, error)
  const adi::Grid grid = adi::Grid::uniform({o.nx, o.ny, o.nz}, {0, 0, 0}, {1, 1, 1});
  resolve_time(o, grid);
  const Exact exact{grid.nx() > 1 ? o.kx : 0.0, grid.ny() > 1 ? o.ky : 0.0, grid.nz() > 1 ? o.kz : 0.0};
  const ExactOnGrid exact_on_grid(exact, grid);
  const adi::Executor exec =
      o.backend == "cuda" ? example::cuda_executor("--backend cpu") : adi::Executor::host(o.threads);
  if (!o.no_output && !adi::io::vtk_available()) {
    // The GPU machines have no VTK: still run and report, just write nothing.
    std::fprintf(stderr, "heat3d: note: adi was built without VTK, writing no files (as with --no-output)\n");
    o.no_output = true;
  }
  if (!o.no_output) example::prepare_output(o.output);

  adi::Scheme scheme = adi::Scheme::from_name(o.scheme);
  if (o.theta > 0) scheme.with_theta(o.theta);
  scheme.with_damping(o.rannacher);
  // Boundary data on the host, evaluated once per face and time: through the tabulated
  // factors (a node's coordinates map back to its index on the uniform unit box), so
  // that on the GPU, where a step takes about a millisecond at 256^3, the host does not
  // spend longer on three sines per face node than the device on the step.
  const auto bc = adi::BoundaryConditions::all(adi::Boundary::dirichlet(
      [exact, tab = exact_on_grid, nx = grid.nx(), ny = grid.ny(), nz = grid.nz(), t_cached = -1.0,
       decay = 0.0](double t, double x, double y, double z) mutable {
        auto index = [](double c, adi::index_t n) {
          const double f = c * double(n - 1);
          const long i = std::lround(f);
          return (n > 1 && std::abs(f - double(i)) < 1e-6 && i >= 0 && i < n) ? i : (n == 1 ? 0L : -1L);
        };
        const long i = index(x, nx), j = index(y, ny), k = index(z, nz);
        if (i < 0 || j < 0 || k < 0) return exact(t, x, y, z);
        if (t != t_cached) {
          t_cached = t;
          decay = std::exp(-exact.decay() * t);
        }
        return decay * tab.f[0][std::size_t(i)] * tab.f[1][std::size_t(j)] * tab.f[2][std::size_t(k)];
      }));
  adi::AdiSolver<T> solver(grid, adi::Pde::heat(o.kx, o.ky, o.kz), bc, scheme, exec);

  // Initial values on the host, then into the executor's memory.
  adi::Field<T> host(grid), err(grid);
#pragma omp parallel for collapse(2)
  for (adi::index_t k = 0; k < grid.nz(); ++k)
    for (adi::index_t j = 0; j < grid.ny(); ++j)
      for (adi::index_t i = 0; i < grid.nx(); ++i) host(i, j, k) = T(exact_on_grid(0.0, i, j, k));
  adi::Field<T> u(grid, exec);
  u.copy_from(host);

  std::unique_ptr<adi::io::PvdWriter> pvd;
  double output_seconds = 0;
  auto write_frame = [&](long step, double t) {
    const auto t0 = Clock::now();
    const adi::Field<T> h = u.to_host();
    const ErrorNorms n = error_field(exact_on_grid, t, h, err);
    pvd->write(grid, {{"u", h}, {"error", err}}, t, step);
    output_seconds += seconds_since(t0);
    require_finite(n, grid.size(), step, t);  // after writing: the frame shows where
  };
  if (!o.no_output) {
    pvd = std::make_unique<adi::io::PvdWriter>(o.output, "heat3d");
    if (o.every > 0) write_frame(0, 0.0);
  }

  Progress bar(o.steps, o.progress || ::isatty(2));
  const double setup_output_seconds = output_seconds;  // the frame at t = 0
  const auto t_loop = Clock::now();
  double t = 0;
  for (long s = 1; s <= o.steps; ++s) {
    try {
      solver.step(u, double(s - 1) * o.dt, o.dt);
    } catch (const adi::SingularSystem&) {  // the library's message names its kernel and lines
      throw example::RunFailure("the implicit system of step " + std::to_string(s) + " is singular (dt = " +
                                example::num(o.dt) + "): try a smaller --dt or --t-end");
    }
    t = double(s) * o.dt;
    if (pvd && (s == o.steps || (o.every > 0 && s % o.every == 0))) write_frame(s, t);
    bar.update(s);
  }
  exec.synchronize();
  const double loop_seconds = seconds_since(t_loop) - (output_seconds - setup_output_seconds);

  const adi::Field<T> final_host = u.to_host();
  const ErrorNorms norms = error_field(exact_on_grid, t, final_host, err);
  const adi::StepTimings& tm = solver.timings();
  std::string spacing;
  for (int d = 0; d < 3; ++d) {
    const adi::AxisGrid& ax = grid.axis(adi::Axis(d));
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.4g", d ? " x " : "", ax.size() > 1 ? ax.spacing(0) : 0.0);
    spacing += buf;
  }
  std::printf("grid       %s nodes on the unit box, h = %s, %s, %s\n", grid.describe().c_str(),
              spacing.c_str(), o.precision.c_str(), exec.name().c_str());
  std::printf("scheme     %s", scheme.name());
  if (scheme.kind != adi::SchemeKind::peaceman_rachford) std::printf(", theta = %.4g", scheme.theta);
  if (scheme.damping_steps > 0) std::printf(", Rannacher damping %d steps", scheme.damping_steps);
  std::printf("; Dirichlet data from the exact solution\n");
  std::printf("steps      %ld, dt = %.6g, t_end = %.6g, max k*dt/h^2 = %.3g\n", o.steps, o.dt, t,
              o.dt * max_rate(o, grid));
  std::printf("error      L2 (RMS over nodes) = %.3e, max = %.3e  (exact |u| <= %.3e at t_end)\n", norms.l2,
              norms.max, std::exp(-exact.decay() * t));
  std::printf("time       total %.3f s: stepping %.3f s (%.3f ms/step), output %.3f s\n",
              seconds_since(t_start), loop_seconds, 1e3 * loop_seconds / double(o.steps), output_seconds);
  std::printf(
      "per part   X %.3f s, Y %.3f s, Z %.3f s (implicit sweeps), explicit %.3f s, boundary/copies %.3f s\n",
      tm.implicit[0], tm.implicit[1], tm.implicit[2], tm.explicit_part, tm.boundary);
  const double per = 1e3 / double(std::max(1L, tm.steps));
  std::printf("per step   X %.4f ms, Y %.4f ms, Z %.4f ms, explicit %.4f ms, boundary %.4f ms\n",
              per * tm.implicit[0], per * tm.implicit[1], per * tm.implicit[2], per * tm.explicit_part,
              per * tm.boundary);
  if (pvd) std::printf("output     %s (%zu frames)\n", pvd->pvd_path().c_str(), pvd->frames());
  require_finite(norms, grid.size(), o.steps, t);
  if (o.max_error > 0 && example::exceeds(norms.max, o.max_error))
    throw example::RunFailure("max error " + example::num(norms.max) + " exceeds --max-error " +
                              example::num(o.max_error));
  return example::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"heat3d: 3D heat equation on the unit box by ADI, checked against an exact solution"};
  app.add_option("--n", o.n, "Nodes per axis (all three)")->check(example::integer(3, 1L << 20));
  app.add_option("--nx", o.nx, "Nodes along x (default --n)")->check(example::integer(3, 1L << 20));
  app.add_option("--ny", o.ny, "Nodes along y (default --n; 1 with --nz 1: the 1D problem)")
      ->check(example::integer(1, 1L << 20));
  app.add_option("--nz", o.nz, "Nodes along z (default --n; 1: the 2D problem)")->check(example::integer(1, 1L << 20));
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
  app.add_option("--scheme", o.scheme, "ADI scheme (peaceman-rachford is 2D only: add --nz 1)")
      ->check(CLI::IsMember(
          {"douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer", "peaceman-rachford"}))
      ->capture_default_str();
  auto* otheta = app.add_option("--theta", o.theta, "Implicitness theta in (0, 1] (default: the scheme's)")
                     ->check(example::range(0.0, 1.0, true));
  app.add_option("--rannacher", o.rannacher, "Damping: this many implicit-Euler half steps first")
      ->check(example::integer(0, 1000));
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  app.add_option("--backend", o.backend, "Where to run")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads (0: all)")->check(example::integer(0, 4096));
  auto* oout = app.add_option("--output", o.output, "Output directory")->capture_default_str();
  auto* oevery = app.add_option("--every", o.every, "Write a frame every K steps (0: only the final one)")
                     ->check(example::integer(0, 1L << 40))
                     ->capture_default_str();
  auto* ono = app.add_flag("--no-output", o.no_output, "Write no files");
  ono->excludes(oout)->excludes(oevery);
  app.add_option("--max-error", o.max_error, "Exit with status 1 when the max error exceeds this (tests)")
      ->check(example::positive());
  app.add_flag("--progress", o.progress, "Show the progress bar even when stderr is not a terminal");
  if (const auto rc = example::parse(app, "heat3d", argc, argv)) return *rc;

  if (o.nx == 0) o.nx = o.n;
  if (o.ny == 0) o.ny = o.n;
  if (o.nz == 0) o.nz = o.n;
  return example::guarded("heat3d", [&] {
    for (const auto& [name, n] : {std::pair{"--ny", o.ny}, std::pair{"--nz", o.nz}})
      example::require(n != 2, std::string(name) + " 2: an axis has 1 node (no derivative along it) or at least 3 "
                                                   "(two Dirichlet ends and an unknown)");
    example::require(!(o.scheme == "peaceman-rachford" && otheta->count() > 0),
                     "--theta does not apply to --scheme peaceman-rachford (theta is 1/2 there)");
    example::require(!(o.scheme == "peaceman-rachford" && o.nz > 1 && o.ny > 1),
                     "--scheme peaceman-rachford is for 2D problems: add --nz 1");
    // u, the error, a host copy and the scheme's stage fields: about ten values per node.
    example::require_memory(10.0 * (o.precision == "float" ? 4 : 8) * double(o.nx) * double(o.ny) * double(o.nz),
                            "a grid of " + std::to_string(o.nx) + " x " + std::to_string(o.ny) + " x " +
                                std::to_string(o.nz) + " nodes");
    return o.precision == "float" ? run<float>(o) : run<double>(o);
  });
}
