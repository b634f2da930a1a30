// euler_vortex: the isentropic vortex advected through a periodic box by the
// compressible Euler equations, stepped implicitly by Beam-Warming approximate
// factorisation (one periodic block-tridiagonal sweep per axis and step, M = 4 in 2D,
// 5 in 3D) and checked against the exact solution, the initial vortex shifted by the
// free stream. Writes density, velocity and pressure as DIR/euler_vortex.pvd + .vti
// frames. See docs/cfd.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "adi/adi.hpp"
#include "common/cli.hpp"
#include "euler_backends.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  int dims = 2;
  long n = 64, nx = 0, ny = 0, nz = 0;
  double length = 10;
  double t_end = 0, dt = 0, cfl = 0;
  long steps = 0;
  double eps_e = 0.02, eps_i = -1, theta = 0.5;
  double beta = 5, u0 = 1, v0 = 1, w0 = 0;
  std::string vortex_axis = "z";
  std::string precision = "double", backend = "cpu", layout = "aos";
  int threads = 0;
  std::string output = "euler_vortex_out";
  long every = 0;
  bool no_output = false, progress = false, verify_cpu = false;
  double max_error = 0;
  int refine = 1;        // grids: n, 2n, ... (--refine)
  double min_order = 0;  // with --refine: fail when the last observed L2 order is below this
};

// What one run reports to --refine's table.
struct RunSummary {
  long n = 0, steps = 0;
  double dt = 0, ms_per_step = 0;
  cfd::ErrorNorms error;
};

// "[########......] 40/100 steps 1.2 s" on stderr, at most ten redraws a second.
class ProgressBar {
 public:
  ProgressBar(long total, bool on) : total_(total), on_(on), t0_(Clock::now()) {}
  void show(long done) {
    if (!on_) return;
    const double t = since(t0_);
    if (done < total_ && t - shown_ < 0.1) return;
    shown_ = t;
    const int w = 32, k = int(w * done / std::max(total_, 1L));
    std::fprintf(stderr, "\r[%s%s] %ld/%ld steps %.1f s", std::string(std::size_t(k), '#').c_str(),
                 std::string(std::size_t(w - k), '.').c_str(), done, total_, t);
    if (done == total_) std::fputc('\n', stderr);
  }

 private:
  long total_;
  bool on_;
  Clock::time_point t0_;
  double shown_ = -1;
};

// dt from --dt or --cfl (default 2), then --steps / --t-end (default 10): any two of
// --steps, --dt/--cfl, --t-end fix the third; steps * dt = t_end exactly.
void resolve_time(Options& o, double dt_of_cfl) {
  const example::TimeSteps r =
      example::resolve_time("euler_vortex", o.steps, o.dt > 0 ? o.dt : dt_of_cfl,
                            o.dt > 0 ? "--dt" : o.cfl > 0 ? "--cfl" : "", o.t_end, 10.0, 0);
  o.steps = r.steps;
  o.dt = r.dt;
  o.t_end = r.t_end;
}

// A NaN or Inf in the state is an error (exit 1), named with the step where it was seen.
template <class T>
void require_finite_state(const std::vector<T>& q, long step) {
  std::size_t bad = 0;
  for (const T& v : q) bad += std::isfinite(double(v)) ? 0 : 1;
  if (bad > 0)
    throw example::RunFailure("the state Q (density, momentum, energy) has " + std::to_string(bad) +
                              " NaN/Inf values at step " + std::to_string(step) +
                              ": the run diverged; try a smaller --cfl or --dt");
}

// Conservation: the scheme is conservative and the periodic solves exact, so the totals
// of Q change only by round-off. Relative to the total of |Q_c|, or, for a component whose
// values are all ~0 (a velocity component that is zero everywhere), absolute per point.
std::string conservation_drift(const std::vector<double>& before, const std::vector<double>& after,
                               const std::vector<double>& magnitude, double points) {
  static const char* names2[4] = {"rho", "rho*u", "rho*v", "E"};
  static const char* names3[5] = {"rho", "rho*u", "rho*v", "rho*w", "E"};
  const std::size_t m = before.size();
  double rel = 0;
  std::string absolute;
  for (std::size_t c = 0; c < m; ++c) {
    const double d = std::abs(after[c] - before[c]);
    if (magnitude[c] > 1e-12 * magnitude[0]) {
      rel = std::max(rel, d / magnitude[c]);
    } else {
      char buf[96];
      std::snprintf(buf, sizeof buf, "; %s: total ~0, absolute drift per point %.2e", (m == 4 ? names2 : names3)[c],
                    d / points);
      absolute += buf;
    }
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "max relative drift of the totals of Q = %.2e", rel);
  return buf + absolute;
}

template <class T>
void write_frame(adi::io::PvdWriter& pvd, const cfd::EulerSetup& s, const cfd::Vortex& v, const std::vector<T>& q,
                 double t, long step) {
  adi::Grid grid(adi::periodic_axis(s.n[0], 0, s.length[0]), adi::periodic_axis(s.n[1], 0, s.length[1]),
                 s.dims == 3 ? adi::periodic_axis(s.n[2], 0, s.length[2]) : adi::AxisGrid());
  const int m = s.dims + 2;
  adi::Field<T> rho(grid), u(grid), vv(grid), w(grid), p(grid), err(grid);
  for (adi::index_t k = 0; k < s.n[2]; ++k)
    for (adi::index_t j = 0; j < s.n[1]; ++j)
      for (adi::index_t i = 0; i < s.n[0]; ++i) {
        const adi::index_t pt = i + s.n[0] * (j + s.n[1] * k);
        const T* qp = q.data() + pt * m;
        rho(i, j, k) = qp[0];
        u(i, j, k) = qp[1] / qp[0];
        vv(i, j, k) = qp[2] / qp[0];
        w(i, j, k) = s.dims == 3 ? qp[3] / qp[0] : T(0);
        p(i, j, k) = s.dims == 2 ? cfd::pressure<T, 2>(qp, T(s.gamma)) : cfd::pressure<T, 3>(qp, T(s.gamma));
        double x[3], er, eu[3], ep;
        cfd::coordinates(s, pt, x);
        v.primitive(t, x, &er, eu, &ep);
        err(i, j, k) = T(double(qp[0]) - er);
      }
  pvd.write(grid,
            {{"density", rho}, {"u", u}, {"v", vv}, {"w", w}, {"pressure", p}, {"density_error", err}}, t, step);
}

template <class T>
int run(Options o, RunSummary* summary = nullptr) {
  const auto t_start = Clock::now();
  cfd::EulerSetup s;
  s.dims = o.dims;
  const long ext[3] = {o.nx ? o.nx : o.n, o.ny ? o.ny : o.n, o.dims == 3 ? (o.nz ? o.nz : o.n) : 1};
  for (int a = 0; a < 3; ++a) {
    s.n[a] = ext[a];
    s.length[a] = o.length;
  }
  s.theta = o.theta;
  s.eps_e = o.eps_e;
  s.eps_i = o.eps_i >= 0 ? o.eps_i : 2.5 * o.eps_e;
  s.layout = o.layout == "soa" ? cfd::Layout::soa : cfd::Layout::aos;
  s.threads = o.threads;

  cfd::Vortex vortex;
  vortex.gamma = s.gamma;
  vortex.beta = o.beta;
  vortex.axis = o.dims == 2 ? 2 : (o.vortex_axis == "x" ? 0 : o.vortex_axis == "y" ? 1 : 2);
  const double uinf[3] = {o.u0, o.v0, o.dims == 3 ? o.w0 : 0.0};
  for (int a = 0; a < 3; ++a) {
    vortex.u_inf[a] = uinf[a];
    vortex.center[a] = 0.5 * o.length;
    vortex.length[a] = o.length;
  }

  const std::vector<T> q0 = cfd::vortex_state<T>(s, vortex, 0.0);
  resolve_time(o, cfd::stable_dt(s, q0, o.cfl > 0 ? o.cfl : 2.0));
  s.dt = o.dt;
  const double cfl = o.dt / cfd::stable_dt(s, q0, 1.0);

  adi::Executor exec = adi::Executor::host(o.threads);
  std::unique_ptr<cfd::EulerSolverBase<T>> solver;
  if (o.backend == "cuda") {
    exec = example::cuda_executor("--backend cpu");
    solver = cfd::make_cuda_solver<T>(s, exec);
  } else {
    solver = cfd::make_host_solver<T>(s);
  }
  solver->set_state(q0);

  std::unique_ptr<adi::io::PvdWriter> pvd;
  double output_seconds = 0;
  auto output = [&](long step, double t) {
    const auto t0 = Clock::now();
    const std::vector<T> q = solver->state();
    write_frame(*pvd, s, vortex, q, t, step);
    output_seconds += since(t0);
    require_finite_state(q, step);  // after writing: the frame shows where
  };
  if (!o.no_output) {
    pvd = std::make_unique<adi::io::PvdWriter>(o.output, "euler_vortex");
    output(0, 0.0);
  }

  ProgressBar bar(o.steps, o.progress || ::isatty(2));
  const auto t_loop = Clock::now();
  const double out0 = output_seconds;
  for (long k = 1; k <= o.steps; ++k) {
    try {
      solver->step();
    } catch (const adi::SingularSystem&) {  // the library's message names its kernel and pivot blocks
      throw example::RunFailure("the implicit block system became singular at step " + std::to_string(k) +
                                " (the flow left the range Beam-Warming handles here): try a smaller --cfl or --beta");
    }
    if (pvd && (k == o.steps || (o.every > 0 && k % o.every == 0))) output(k, double(k) * o.dt);
    bar.show(k);
  }
  const double loop = since(t_loop) - (output_seconds - out0);

  const std::vector<T> q = solver->state();
  const cfd::ErrorNorms e = cfd::density_error(s, vortex, o.t_end, q);
  // Conservation: the scheme is conservative and the periodic solves exact, so the
  // totals of Q change only by round-off.
  const int m = s.dims + 2;
  std::vector<double> before(std::size_t(m), 0.0), after(before), magnitude(before);
  for (std::size_t p = 0; p < q.size() / std::size_t(m); ++p)
    for (std::size_t c = 0; c < std::size_t(m); ++c) {
      before[c] += double(q0[p * std::size_t(m) + c]);
      after[c] += double(q[p * std::size_t(m) + c]);
      magnitude[c] += std::abs(double(q0[p * std::size_t(m) + c]));
    }
  const std::string drift = conservation_drift(before, after, magnitude, double(q.size() / std::size_t(m)));

  const cfd::EulerTimings& tm = solver->timings();
  std::printf("grid       %ld x %ld%s periodic points on a box of edge %g (h = %.4g), %dD Euler (M = %d)\n", ext[0],
              ext[1], s.dims == 3 ? (" x " + std::to_string(ext[2])).c_str() : "", o.length,
              o.length / double(ext[0]), s.dims, m);
  std::printf("backend    %s, %s, %s layout, block kernel %s\n", exec.name().c_str(), o.precision.c_str(),
              cfd::layout_name(s.layout), solver->kernel_name().c_str());
  std::printf("scheme     Beam-Warming factorisation, theta = %g, eps_e = %g (explicit 4th diff), eps_i = %g "
              "(implicit 2nd diff)\n",
              s.theta, s.eps_e, s.eps_i);
  std::printf("vortex     beta = %g, axis %c, free stream (%g, %g, %g)\n", o.beta, "xyz"[vortex.axis], uinf[0],
              uinf[1], uinf[2]);
  std::printf("steps      %ld, dt = %.6g, t_end = %.6g, CFL = %.3g\n", o.steps, o.dt, o.t_end, cfl);
  std::printf("density error  L1 = %.4e  L2 = %.4e  max = %.4e\n", e.l1, e.l2, e.max);
  std::printf("conservation   %s\n", drift.c_str());
  std::printf("time       total %.3f s, stepping %.3f s (%.3f ms/step), output %.3f s\n", since(t_start), loop,
              1e3 * loop / double(o.steps), output_seconds);
  const double per = 1e3 / double(std::max(tm.steps, 1L));
  std::printf("per step   rhs %.3f ms, update %.3f ms", tm.rhs * per, tm.update * per);
  for (int a = 0; a < s.dims; ++a)
    std::printf(", %c sweep %.3f ms (blocks %.3f + solve %.3f)", "xyz"[a], (tm.assemble[a] + tm.solve[a]) * per,
                tm.assemble[a] * per, tm.solve[a] * per);
  std::printf("\n");
  if (pvd) std::printf("output     %s (%zu frames)\n", pvd->pvd_path().c_str(), pvd->frames());

  require_finite_state(q, o.steps);
  if (summary) *summary = {ext[0], o.steps, o.dt, 1e3 * loop / double(o.steps), e};
  int rc = 0;
  if (o.verify_cpu) {    auto host = cfd::make_host_solver<T>(s);
    host->set_state(q0);
    for (long k = 0; k < o.steps; ++k) host->step();
    const std::vector<T> hq = host->state();
    double diff = 0;
    for (std::size_t i = 0; i < q.size(); ++i) diff = std::max(diff, std::abs(double(q[i]) - double(hq[i])));
    const double tol = sizeof(T) == 8 ? 1e-9 : 1e-3;
    std::printf("verify     max |Q_cuda - Q_cpu| = %.3e (tolerance %.0e)\n", diff, tol);
    if (example::exceeds(diff, tol)) {
      std::fprintf(stderr, "euler_vortex: error: CUDA and CPU states differ by %g > %g\n", diff, tol);
      rc = example::exit_failure;
    }
  }
  if (o.max_error > 0 && example::exceeds(e.max, o.max_error)) {
    std::fprintf(stderr, "euler_vortex: error: max density error %g exceeds --max-error %g\n", e.max, o.max_error);
    rc = example::exit_failure;
  }
  return rc;
}

// --refine K: the same case on K grids, each with twice the points per axis of the one
// before and half its time step (a fixed CFL number, or a given --dt / --steps scaled),
// then the density errors against the exact solution and the observed orders
// log2(e(h) / e(h/2)). Only the finest grid writes files and is held to --max-error.
template <class T>
int refine(const Options& base) {
  std::vector<RunSummary> levels;
  int rc = 0;
  for (int l = 0; l < base.refine; ++l) {
    Options o = base;
    const long f = 1L << l;
    o.n *= f;
    for (long* n : {&o.nx, &o.ny, &o.nz})
      if (*n > 0) *n *= f;
    if (o.dt > 0) o.dt /= double(f);
    if (o.steps > 0) o.steps *= f;
    const bool finest = l + 1 == base.refine;
    if (!finest) {
      o.no_output = true;
      o.max_error = 0;
    }
    std::printf("== grid %d of %d\n", l + 1, base.refine);
    RunSummary r;
    rc |= run<T>(o, &r);
    levels.push_back(r);
    std::printf("\n");
  }
  std::printf("convergence: density error at t = %.6g against the exact solution, order = log2(e(2h) / e(h))\n",
              levels.back().dt * double(levels.back().steps));
  std::printf("%8s %7s %11s %11s %6s %11s %6s %11s %6s %9s\n", "n", "steps", "dt", "L1", "order", "L2", "order",
              "max", "order", "ms/step");
  double last_order = 0;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const RunSummary& r = levels[l];
    std::printf("%8ld %7ld %11.4e %11.4e", r.n, r.steps, r.dt, r.error.l1);
    const auto order = [&](double cur, double prev) {
      if (l == 0) {
        std::printf(" %6s", "");
        return 0.0;
      }
      const double p = std::log2(prev / cur);
      std::printf(" %6.2f", p);
      return p;
    };
    const RunSummary& prev = levels[l == 0 ? 0 : l - 1];
    order(r.error.l1, prev.error.l1);
    std::printf(" %11.4e", r.error.l2);
    const double p2 = order(r.error.l2, prev.error.l2);
    std::printf(" %11.4e", r.error.max);
    order(r.error.max, prev.error.max);
    std::printf(" %9.3f\n", r.ms_per_step);
    if (l > 0) last_order = p2;
  }
  if (base.min_order > 0 && !(last_order >= base.min_order)) {
    std::fprintf(stderr, "euler_vortex: error: observed L2 order %.3g on the finest pair is below --min-order %g\n",
                 last_order, base.min_order);
    rc = example::exit_failure;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  using example::integer;
  using example::positive;
  using example::range;
  CLI::App app{"euler_vortex: isentropic vortex in a periodic box, compressible Euler equations stepped by "
               "Beam-Warming approximate factorisation (block-tridiagonal sweeps), checked against the exact "
               "solution"};
  app.add_option("--dims", o.dims, "2 (M = 4 unknowns per point) or 3 (M = 5)")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  app.add_option("--n", o.n, "Points per axis")->check(integer(5, 1L << 20))->capture_default_str();
  app.add_option("--nx", o.nx, "Points along x (default --n)")->check(integer(5, 1L << 20));
  app.add_option("--ny", o.ny, "Points along y (default --n)")->check(integer(5, 1L << 20));
  auto* onz = app.add_option("--nz", o.nz, "Points along z (3D, default --n)")->check(integer(5, 1L << 20));
  app.add_option("--length", o.length, "Edge of the periodic box (vortex core radius 1)")
      ->check(range(0, 1e6, true))
      ->capture_default_str();
  app.add_option("--t-end", o.t_end, "Final time (default 10: one period of the default flow)")->check(positive());
  app.add_option("--steps", o.steps, "Time steps (default: t-end / dt)")->check(integer(1, 1L << 40));
  auto* odt = app.add_option("--dt", o.dt, "Time step (shortened, with a note, so that steps * dt = t-end)")
                  ->check(positive());
  auto* ocfl =
      app.add_option("--cfl", o.cfl, "Time step as CFL number max (|u_a| + c) dt / h_a (default 2)")->check(positive());
  odt->excludes(ocfl);
  app.add_option("--eps-e", o.eps_e, "Explicit fourth-difference dissipation coefficient")
      ->check(range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--eps-i", o.eps_i, "Implicit second-difference dissipation coefficient (default 2.5 eps-e)")
      ->check(range(0.0, 10.0));
  app.add_option("--theta", o.theta, "Time discretisation: 0.5 trapezoidal (2nd order), 1 implicit Euler")
      ->check(range(0.5, 1.0))
      ->capture_default_str();
  app.add_option("--beta", o.beta, "Vortex strength")->check(range(0.0, 8.0))->capture_default_str();
  app.add_option("--u0", o.u0, "Free stream velocity along x")->check(range(-100, 100))->capture_default_str();
  app.add_option("--v0", o.v0, "Free stream velocity along y")->check(range(-100, 100))->capture_default_str();
  auto* ow0 =
      app.add_option("--w0", o.w0, "Free stream velocity along z (3D)")->check(range(-100, 100))->capture_default_str();
  auto* oaxis = app.add_option("--vortex-axis", o.vortex_axis, "Axis of the vortex tube (3D)")
                    ->check(CLI::IsMember({"x", "y", "z"}))
                    ->capture_default_str();
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  app.add_option("--backend", o.backend, "Where to run")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--layout", o.layout, "Field layout handed to the block solver: array of structures or "
                                       "structure of arrays")
      ->check(CLI::IsMember({"aos", "soa"}))
      ->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads (0: all)")->check(integer(0, 4096));
  auto* oout = app.add_option("--output", o.output, "Output directory")->capture_default_str();
  auto* oevery = app.add_option("--every", o.every, "Write a frame every K steps (0: first and last only)")
                     ->check(integer(0, 1L << 40))
                     ->capture_default_str();
  app.add_flag("--no-output", o.no_output, "Write no files")->excludes(oout)->excludes(oevery);
  app.add_option("--max-error", o.max_error, "Exit with status 1 when the max density error exceeds this (tests)")
      ->check(positive());
  auto* orefine = app.add_option("--refine", o.refine,
                                 "Run K grids (n, 2n, 4n, ...; time step halved each time) and print the error table "
                                 "with the observed orders")
                      ->check(integer(1, 6))
                      ->capture_default_str();
  app.add_option("--min-order", o.min_order,
                 "With --refine: exit with status 1 when the observed L2 order of the two finest grids is below this "
                 "(tests)")
      ->check(positive())
      ->needs(orefine);
  auto* overify =
      app.add_flag("--verify-cpu", o.verify_cpu, "With --backend cuda: rerun on the CPU and compare the states");
  app.add_flag("--progress", o.progress, "Show the progress bar even when stderr is not a terminal");
  if (const auto rc = example::parse(app, "euler_vortex", argc, argv)) return *rc;
  return example::guarded("euler_vortex", [&] {
    // Every combination is checked before any work.
    if (o.dims == 2) {
      for (const CLI::Option* opt : {onz, ow0, oaxis})
        example::require(opt->count() == 0, opt->get_name() + " needs --dims 3");
    }
    example::require(overify->count() == 0 || o.backend == "cuda",
                     "--verify-cpu compares a --backend cuda run with the CPU: add --backend cuda");
    example::require(o.min_order <= 0 || o.refine >= 2, "--min-order needs --refine 2 or more");
    {  // Q, the right-hand side and three M x M blocks per point (and more, on the finest of --refine)
      const double m = o.dims + 2, f = double(1L << (o.refine - 1));
      const double points = double(o.nx ? o.nx : o.n) * f * double(o.ny ? o.ny : o.n) * f *
                            (o.dims == 3 ? double(o.nz ? o.nz : o.n) * f : 1.0);
      example::require_memory((3 * m * m + 4 * m) * (o.precision == "float" ? 4 : 8) * points,
                              "a grid of " + example::num(points) + " points");
    }
    if (o.backend == "cuda") example::cuda_executor("--backend cpu");  // exit 77 without a GPU
    if (!o.no_output && !adi::io::vtk_available()) {
      std::fprintf(stderr, "euler_vortex: note: adi was built without VTK, writing no files (as with --no-output)\n");
      o.no_output = true;
    }
    if (!o.no_output) example::prepare_output(o.output);
    if (o.refine > 1) return o.precision == "float" ? refine<float>(o) : refine<double>(o);
    return o.precision == "float" ? run<float>(o) : run<double>(o);
  });
}
