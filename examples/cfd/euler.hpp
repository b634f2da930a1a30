#pragma once
// Compressible Euler equations on a periodic box, Beam-Warming approximate
// factorisation in delta form with Pulliam's artificial dissipation (docs/cfd.md):
//
//   prod_a [ I + theta dt delta_a A_a - eps_i dt/h_a nabla_a sigma_a Delta_a ] dQ
//       = -dt sum_a delta_a F_a(Q^n) - eps_e dt/h_a sum_a nabla_a sigma_a Delta_a nabla_a Delta_a Q^n,
//   Q^{n+1} = Q^n + dQ,
//
// Q = (rho, rho u_1..u_D, E), F_a the flux along axis a, A_a = dF_a/dQ its Jacobian,
// delta_a the central difference, nabla_a / Delta_a the backward / forward differences,
// sigma_a = |u_a| + c the spectral radius (averaged to the half points). Every factor is
// one sweep of periodic block-tridiagonal solves (M = D + 2) along its axis.
//
// The per-point work is written once as functors (CFD_HD: host and device); a launch
// policy runs them (HostLaunch here, a CUDA kernel in euler_cuda.cu). C++17.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "periodic_block_lines.hpp"

namespace cfd {

CFD_HD inline float square_root(float x) {
#if defined(__CUDA_ARCH__)
  return ::sqrtf(x);
#else
  return std::sqrt(x);
#endif
}
CFD_HD inline double square_root(double x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}

// ---- the physics of one point (q: the M = D + 2 conserved values) --------------------

template <class T, int D>
CFD_HD inline T pressure(const T* q, T gamma) {
  T m2 = 0;
  for (int k = 0; k < D; ++k) m2 += q[1 + k] * q[1 + k];
  return (gamma - 1) * (q[D + 1] - T(0.5) * m2 / q[0]);
}

// F_a(q): mass, momentum and energy flux through a face normal to axis a.
template <class T, int D>
CFD_HD inline void flux(const T* q, int a, T gamma, T* f) {
  const T p = pressure<T, D>(q, gamma), ua = q[1 + a] / q[0];
  f[0] = q[1 + a];
  for (int k = 0; k < D; ++k) f[1 + k] = q[1 + k] * ua + (k == a ? p : T(0));
  f[D + 1] = (q[D + 1] + p) * ua;
}

// A_a = dF_a/dQ, row-major M x M. With u the velocity, phi2 = (gamma-1)|u|^2/2 and
// H = (E + p)/rho (total enthalpy):
//   row 0:      e_a^T (mass flux = rho u_a)
//   row 1+j:    [-u_j u_a + d_ja phi2,  d_jl u_a + u_j d_al - d_ja (gamma-1) u_l,  d_ja (gamma-1)]
//   row D+1:    [u_a (phi2 - H),  H d_al - (gamma-1) u_l u_a,  gamma u_a]
template <class T, int D>
CFD_HD inline void jacobian(const T* q, int a, T gamma, T* jac) {
  constexpr int M = D + 2;
  const T rho = q[0], g1 = gamma - 1;
  T u[D], u2 = 0;
  for (int k = 0; k < D; ++k) {
    u[k] = q[1 + k] / rho;
    u2 += u[k] * u[k];
  }
  const T ua = q[1 + a] / rho;  // not u[a]: a is only known to be < D at run time
  const T phi2 = T(0.5) * g1 * u2, p = g1 * (q[D + 1] - T(0.5) * rho * u2), h = (q[D + 1] + p) / rho;
  for (int c = 0; c < M; ++c) jac[c] = c == 1 + a ? T(1) : T(0);
  for (int j = 0; j < D; ++j) {
    T* row = jac + (1 + j) * M;
    row[0] = -u[j] * ua + (j == a ? phi2 : T(0));
    for (int l = 0; l < D; ++l)
      row[1 + l] = (j == l ? ua : T(0)) + (a == l ? u[j] : T(0)) - (j == a ? g1 * u[l] : T(0));
    row[D + 1] = j == a ? g1 : T(0);
  }
  T* row = jac + (D + 1) * M;
  row[0] = ua * (phi2 - h);
  for (int l = 0; l < D; ++l) row[1 + l] = (a == l ? h : T(0)) - g1 * u[l] * ua;
  row[D + 1] = gamma * ua;
}

// |u_a| + c: the largest |eigenvalue| of A_a.
template <class T, int D>
CFD_HD inline T spectral_radius(const T* q, int a, T gamma) {
  const T ua = q[1 + a] / q[0], c2 = gamma * pressure<T, D>(q, gamma) / q[0];
  return magnitude(ua) + square_root(c2 > 0 ? c2 : T(0));
}

// ---- the scheme's per-point operators ---------------------------------------------

// Everything a step needs besides the fields. dt_h[a] = dt / h_a.
template <class T>
struct Coefficients {
  T gamma = T(1.4);
  T theta = T(0.5);  // 1: implicit Euler (first order in time); 1/2: trapezoidal (second)
  T eps_e = 0;       // explicit fourth-difference dissipation
  T eps_i = 0;       // implicit second-difference dissipation (>= 2 eps_e for unconditional stability)
  T dt_h[3] = {0, 0, 0};
};

template <class T, int D>
CFD_HD inline void load(const Points<const T>& q, index_t p, T* out) {
  for (int v = 0; v < D + 2; ++v) out[v] = q(p, v);
}

// d = -dt sum_a delta_a F_a - dissipation, the right-hand side of the first factor.
// The fourth difference is written as nabla(sigma Delta nabla Delta Q) with sigma at
// the half points, so it is conservative (the sums of Q over the box do not change).
template <class T, int D>
struct RhsOp {
  Mesh mesh;
  Coefficients<T> k;
  Points<const T> q;
  Points<T> d;
  CFD_HD void operator()(index_t p) const {
    constexpr int M = D + 2;
    T out[M] = {};
    for (int a = 0; a < D; ++a) {
      T s[5][M];  // points i-2..i+2
      const index_t i = mesh.coord(p, a);
      for (int o = -2; o <= 2; ++o) load<T, D>(q, mesh.shift(p, a, o, i), s[o + 2]);
      T fm[M], fp[M];
      flux<T, D>(s[1], a, k.gamma, fm);
      flux<T, D>(s[3], a, k.gamma, fp);
      const T sm = spectral_radius<T, D>(s[1], a, k.gamma), s0 = spectral_radius<T, D>(s[2], a, k.gamma),
              sp = spectral_radius<T, D>(s[3], a, k.gamma);
      const T half = T(0.5) * k.dt_h[a], cm = half * k.eps_e * (sm + s0), cp = half * k.eps_e * (s0 + sp);
      for (int v = 0; v < M; ++v) {
        const T third_p = s[4][v] - 3 * s[3][v] + 3 * s[2][v] - s[1][v];
        const T third_m = s[3][v] - 3 * s[2][v] + 3 * s[1][v] - s[0][v];
        out[v] -= half * (fp[v] - fm[v]) + (cp * third_p - cm * third_m);
      }
    }
    for (int v = 0; v < M; ++v) d(p, v) = out[v];
  }
};

// The blocks of factor a at point i (Jacobians of the neighbours: delta form):
//   A_i = -theta dt/(2h) A_a(Q_{i-1}) - eps_i dt/h sigma_{i-1/2} I
//   B_i = I + eps_i dt/h (sigma_{i-1/2} + sigma_{i+1/2}) I
//   C_i = +theta dt/(2h) A_a(Q_{i+1}) - eps_i dt/h sigma_{i+1/2} I
template <class T, int D>
struct BlocksOp {
  Mesh mesh;
  int axis;
  Coefficients<T> k;
  Points<const T> q;
  Points<T> a, b, c;
  CFD_HD void operator()(index_t p) const {
    constexpr int M = D + 2;
    T qm[M], q0[M], qp[M], jac[M * M];
    const index_t i = mesh.coord(p, axis);
    load<T, D>(q, mesh.shift(p, axis, -1, i), qm);
    load<T, D>(q, p, q0);
    load<T, D>(q, mesh.shift(p, axis, 1, i), qp);
    const T s0 = spectral_radius<T, D>(q0, axis, k.gamma);
    const T half = T(0.5) * k.dt_h[axis];
    const T dm = half * k.eps_i * (spectral_radius<T, D>(qm, axis, k.gamma) + s0);
    const T dp = half * k.eps_i * (s0 + spectral_radius<T, D>(qp, axis, k.gamma));
    const T adv = k.theta * half;
    jacobian<T, D>(qm, axis, k.gamma, jac);
    for (int e = 0; e < M * M; ++e) a(p, e) = -adv * jac[e] - (e % (M + 1) == 0 ? dm : T(0));
    jacobian<T, D>(qp, axis, k.gamma, jac);
    for (int e = 0; e < M * M; ++e) c(p, e) = adv * jac[e] - (e % (M + 1) == 0 ? dp : T(0));
    for (int e = 0; e < M * M; ++e) b(p, e) = e % (M + 1) == 0 ? 1 + dm + dp : T(0);
  }
};

template <class T, int D>
struct UpdateOp {
  Points<T> q;
  Points<const T> d;
  CFD_HD void operator()(index_t p) const {
    for (int v = 0; v < D + 2; ++v) q(p, v) += d(p, v);
  }
};

// ---- the solver ------------------------------------------------------------------

struct EulerSetup {
  int dims = 2;                     // 2 (M = 4) or 3 (M = 5)
  index_t n[3] = {64, 64, 1};       // points per axis (periodic, no duplicate end point)
  double length[3] = {10, 10, 10};  // box edge lengths; h = length / n
  double gamma = 1.4;
  double dt = 0.01;
  double theta = 0.5;
  double eps_e = 0.02;
  double eps_i = 0.05;
  Layout layout = Layout::aos;
  int threads = 0;  // host threads (0: all)
};

// Seconds spent per phase, summed over the steps.
struct EulerTimings {
  long steps = 0;
  double rhs = 0, update = 0;
  double assemble[3] = {0, 0, 0};  // blocks of the factor along each axis
  double solve[3] = {0, 0, 0};     // the periodic block solves of that factor
  double total() const {
    double s = rhs + update;
    for (int a = 0; a < 3; ++a) s += assemble[a] + solve[a];
    return s;
  }
};

// The backend-independent face of a solver; states are host arrays of M values per
// point (array of structures, points x fastest) whatever the solver's own layout.
template <class T>
class EulerSolverBase {
 public:
  virtual ~EulerSolverBase() = default;
  virtual void set_state(const std::vector<T>& q) = 0;
  virtual std::vector<T> state() const = 0;
  virtual void step() = 0;
  virtual const EulerTimings& timings() const = 0;
  virtual std::string kernel_name() const = 0;
};

inline void validate(const EulerSetup& s) {
  using adi::detail::require;
  const auto g = [](double v) {  // numbers in messages: %g
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  require(s.dims == 2 || s.dims == 3, "Euler solver: dims = " + std::to_string(s.dims) + " must be 2 or 3");
  for (int a = 0; a < 3; ++a) {
    if (a < s.dims) {
      require(s.n[a] >= 5, "Euler solver: " + std::to_string(s.n[a]) + " points along axis " + std::to_string(a) +
                               "; the dissipation stencil needs at least 5");
      require(s.length[a] > 0, "Euler solver: box length along axis " + std::to_string(a) + " must be > 0");
    } else {
      require(s.n[a] == 1, "Euler solver: a " + std::to_string(s.dims) + "D box has one point along axis " +
                               std::to_string(a));
    }
  }
  require(s.dt > 0 && std::isfinite(s.dt), "Euler solver: dt = " + g(s.dt) + " must be finite and > 0");
  require(s.theta > 0 && s.theta <= 1, "Euler solver: theta = " + g(s.theta) + " must be in (0, 1]");
  require(s.eps_e >= 0 && s.eps_i >= 0, "Euler solver: dissipation coefficients must be >= 0");
  require(s.gamma > 1, "Euler solver: gamma = " + g(s.gamma) + " must be > 1");
}

template <class T, int D, class Launch>
class EulerSolver final : public EulerSolverBase<T> {
  static constexpr int M = D + 2;
  using Clock = std::chrono::steady_clock;

 public:
  EulerSolver(const EulerSetup& s, const adi::Executor& exec, Launch launch)
      : setup_((validate(s), s)),
        mesh_{{s.n[0], s.n[1], s.n[2]}},
        exec_(exec),
        launch_(launch),
        q_(M * mesh_.points(), exec),
        d_(M * mesh_.points(), exec),
        a_(M * M * mesh_.points(), exec),
        b_(M * M * mesh_.points(), exec),
        c_(M * M * mesh_.points(), exec) {
    k_.gamma = T(s.gamma);
    k_.theta = T(s.theta);
    k_.eps_e = T(s.eps_e);
    k_.eps_i = T(s.eps_i);
    for (int a = 0; a < D; ++a) k_.dt_h[a] = T(s.dt * double(s.n[a]) / s.length[a]);
    lines_.reserve(D);
    for (int a = 0; a < D; ++a) lines_.emplace_back(mesh_, a, s.layout, exec, launch);
  }

  void set_state(const std::vector<T>& q) override {
    const index_t np = mesh_.points();
    adi::detail::require(index_t(q.size()) == M * np, "Euler solver: set_state needs " + std::to_string(M * np) +
                                                          " values (M per point)");
    std::vector<T> mine(q.size());
    const Points<T> v = points_view(mine.data(), setup_.layout, M, np);
    for (index_t p = 0; p < np; ++p)
      for (int c = 0; c < M; ++c) v(p, c) = q[std::size_t(p * M + c)];
    q_.copy_from_host(mine.data());
  }

  std::vector<T> state() const override {
    const index_t np = mesh_.points();
    std::vector<T> mine(std::size_t(M * np)), out(mine.size());
    q_.copy_to_host(mine.data());
    const Points<T> v = points_view(mine.data(), setup_.layout, M, np);
    for (index_t p = 0; p < np; ++p)
      for (int c = 0; c < M; ++c) out[std::size_t(p * M + c)] = v(p, c);
    return out;
  }

  void step() override {
    const index_t np = mesh_.points();
    const Layout lay = setup_.layout;
    const auto vec = [&](T* p) { return points_view(p, lay, M, np); };
    const auto blk = [&](T* p) { return points_view(p, lay, index_t(M) * M, np); };
    const auto cvec = [&](const T* p) { return points_view(p, lay, M, np); };
    auto t = Clock::now();
    const auto lap = [&](double& acc) {
      exec_.synchronize();
      const auto now = Clock::now();
      acc += std::chrono::duration<double>(now - t).count();
      t = now;
    };
    launch_(np, RhsOp<T, D>{mesh_, k_, cvec(q_.data()), vec(d_.data())});
    lap(timings_.rhs);
    for (int a = 0; a < D; ++a) {
      launch_(np, BlocksOp<T, D>{mesh_, a, k_, cvec(q_.data()), blk(a_.data()), blk(b_.data()), blk(c_.data())});
      lap(timings_.assemble[a]);
      lines_[std::size_t(a)].solve(a_.data(), b_.data(), c_.data(), d_.data());
      lap(timings_.solve[a]);
    }
    launch_(np, UpdateOp<T, D>{vec(q_.data()), cvec(d_.data())});
    lap(timings_.update);
    ++timings_.steps;
  }

  const EulerTimings& timings() const override { return timings_; }
  std::string kernel_name() const override {
    return adi::block_kernel_name(lines_.front().plan().kernel());
  }

 private:
  EulerSetup setup_;
  Mesh mesh_;
  adi::Executor exec_;
  Launch launch_;
  Coefficients<T> k_;
  adi::Array<T> q_, d_, a_, b_, c_;
  std::vector<PeriodicBlockLines<T, M, Launch>> lines_;
  EulerTimings timings_;
};

// ---- the isentropic vortex --------------------------------------------------------

// A vortex tube along `axis` in a free stream (rho, p, T = p/rho all 1 far away),
// Yee/Shu's isentropic vortex: in the plane (x1, x2) normal to the axis, at distance r
// from the centre,
//   du1 = -beta/(2 pi) exp((1 - r^2)/2) x2,  du2 = beta/(2 pi) exp((1 - r^2)/2) x1,
//   T = 1 - (gamma - 1) beta^2 / (8 gamma pi^2) exp(1 - r^2),  rho = T^(1/(gamma-1)),  p = rho T.
// It is a steady solution in the frame moving with the free stream, so the exact solution
// at time t is the initial one shifted by u_inf t (the nearest periodic image is used).
struct Vortex {
  double gamma = 1.4;
  double beta = 5;
  double u_inf[3] = {1, 1, 0};
  double center[3] = {5, 5, 5};
  double length[3] = {10, 10, 10};
  int axis = 2;

  // Primitive values (rho, u, v, w, p) at point x and time t.
  void primitive(double t, const double* x, double* rho, double* u, double* p) const {
    const double pi = 3.14159265358979323846;
    const int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
    double r[3];
    for (int k : {a1, a2}) {
      const double dx = x[k] - center[k] - u_inf[k] * t;
      r[k] = dx - length[k] * std::round(dx / length[k]);
    }
    const double r2 = r[a1] * r[a1] + r[a2] * r[a2], f = beta / (2 * pi) * std::exp(0.5 * (1 - r2));
    for (int k = 0; k < 3; ++k) u[k] = u_inf[k];
    u[a1] -= f * r[a2];
    u[a2] += f * r[a1];
    const double temp = 1 - (gamma - 1) * beta * beta / (8 * gamma * pi * pi) * std::exp(1 - r2);
    *rho = std::pow(temp, 1 / (gamma - 1));
    *p = *rho * temp;
  }

  // The M = dims + 2 conserved values at point x, time t.
  template <class T>
  void conserved(int dims, double t, const double* x, T* q) const {
    double rho, u[3], p;
    primitive(t, x, &rho, u, &p);
    double ke = 0;
    q[0] = T(rho);
    for (int k = 0; k < dims; ++k) {
      q[1 + k] = T(rho * u[k]);
      ke += 0.5 * rho * u[k] * u[k];
    }
    q[dims + 1] = T(p / (gamma - 1) + ke);
  }
};

// Coordinates of point p of the setup's box (x_i = i * h).
inline void coordinates(const EulerSetup& s, index_t p, double* x) {
  const Mesh m{{s.n[0], s.n[1], s.n[2]}};
  for (int a = 0; a < 3; ++a) x[a] = double(m.coord(p, a)) * s.length[a] / double(s.n[a]);
}

template <class T>
std::vector<T> vortex_state(const EulerSetup& s, const Vortex& v, double t) {
  const index_t np = s.n[0] * s.n[1] * s.n[2], m = s.dims + 2;
  std::vector<T> q(std::size_t(np * m));
  for (index_t p = 0; p < np; ++p) {
    double x[3];
    coordinates(s, p, x);
    v.conserved<T>(s.dims, t, x, q.data() + p * m);
  }
  return q;
}

struct ErrorNorms {
  double l1 = 0, l2 = 0, max = 0;  // mean |e|, RMS, max |e| over the points
};

// Density error of a state against the exact vortex at time t.
template <class T>
ErrorNorms density_error(const EulerSetup& s, const Vortex& v, double t, const std::vector<T>& q) {
  const index_t np = s.n[0] * s.n[1] * s.n[2], m = s.dims + 2;
  double sum1 = 0, sum2 = 0, mx = 0;
  for (index_t p = 0; p < np; ++p) {
    double x[3], rho, u[3], pr;
    coordinates(s, p, x);
    v.primitive(t, x, &rho, u, &pr);
    const double e = std::abs(double(q[std::size_t(p * m)]) - rho);
    sum1 += e;
    sum2 += e * e;
    mx = std::isnan(e) ? e : std::max(mx, e);
    if (std::isnan(e)) break;
  }
  return {sum1 / double(np), std::sqrt(sum2 / double(np)), mx};
}

// The time step for a CFL number: cfl * min over axes of h_a / max(|u_a| + c).
template <class T>
double stable_dt(const EulerSetup& s, const std::vector<T>& q, double cfl) {
  const index_t np = s.n[0] * s.n[1] * s.n[2], m = s.dims + 2;
  double rate = 0;
  for (index_t p = 0; p < np; ++p)
    for (int a = 0; a < s.dims; ++a) {
      const T* qp = q.data() + p * m;
      const double sr = s.dims == 2 ? double(spectral_radius<T, 2>(qp, a, T(s.gamma)))
                                    : double(spectral_radius<T, 3>(qp, a, T(s.gamma)));
      rate = std::max(rate, sr * double(s.n[a]) / s.length[a]);
    }
  return cfl / rate;
}

}  // namespace cfd
