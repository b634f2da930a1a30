// The CFD example's pieces (examples/cfd/): the flux Jacobians against finite
// differences, the periodic block-tridiagonal solve (bordering around
// adi::BlockTridiagonalPlan) against a dense LU of the assembled cyclic matrix, and
// the Euler solver: free stream kept, conservation, 3D = 2D on a vortex tube, and the
// error against the exact vortex falling at second order as the grid is refined.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "../../examples/cfd/euler_backends.hpp"

namespace {

using cfd::index_t;

// ---- flux Jacobians ---------------------------------------------------------------

template <int D>
void check_jacobian(unsigned seed) {
  constexpr int M = D + 2;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5), pos(0.5, 2.0);
  const double gamma = 1.4;
  for (int trial = 0; trial < 20; ++trial) {
    double q[M];
    q[0] = pos(rng);
    double ke = 0;
    for (int k = 0; k < D; ++k) {
      const double vel = u(rng);
      q[1 + k] = q[0] * vel;
      ke += 0.5 * q[0] * vel * vel;
    }
    q[M - 1] = pos(rng) / (gamma - 1) + ke;
    for (int a = 0; a < D; ++a) {
      double jac[M * M];
      cfd::jacobian<double, D>(q, a, gamma, jac);
      for (int c = 0; c < M; ++c) {
        double qp[M], qm[M], fp[M], fm[M];
        const double h = 1e-6 * std::max(1.0, std::abs(q[c]));
        for (int v = 0; v < M; ++v) qp[v] = qm[v] = q[v];
        qp[c] += h;
        qm[c] -= h;
        cfd::flux<double, D>(qp, a, gamma, fp);
        cfd::flux<double, D>(qm, a, gamma, fm);
        for (int r = 0; r < M; ++r)
          EXPECT_NEAR(jac[r * M + c], (fp[r] - fm[r]) / (2 * h), 1e-6 * (1 + std::abs(jac[r * M + c])))
              << "D = " << D << " axis " << a << " entry (" << r << ", " << c << ")";
      }
      // The spectral radius bounds the eigenvalues of the Jacobian.
      Eigen::Matrix<double, M, M, Eigen::RowMajor> jm = Eigen::Map<Eigen::Matrix<double, M, M, Eigen::RowMajor>>(jac);
      const double rho = jm.eigenvalues().cwiseAbs().maxCoeff();
      const double sr = cfd::spectral_radius<double, D>(q, a, gamma);
      EXPECT_NEAR(rho, sr, 1e-9);
    }
  }
}

TEST(EulerPhysics, JacobianMatchesFiniteDifferences2D) { check_jacobian<2>(11); }
TEST(EulerPhysics, JacobianMatchesFiniteDifferences3D) { check_jacobian<3>(12); }

// ---- periodic block-tridiagonal lines ---------------------------------------------

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-4 : 1e-11;
}

// Random block-diagonally-dominant periodic systems on a mesh; solves along `axis` and
// compares every line with a dense LU of its assembled cyclic matrix (in double).
template <class T, int M>
void check_periodic_lines(cfd::Mesh mesh, int axis, cfd::Layout layout, unsigned seed) {
  const index_t np = mesh.points(), n = mesh.n[axis], mm = index_t(M) * M;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> a(std::size_t(np * mm)), b(a.size()), c(a.size()), d(std::size_t(np * M));
  const auto blk = [&](std::vector<T>& v) { return cfd::points_view(v.data(), layout, mm, np); };
  const auto av = blk(a), bv = blk(b), cv = blk(c);
  const auto dv = cfd::points_view(d.data(), layout, M, np);
  for (index_t p = 0; p < np; ++p) {
    for (int e = 0; e < M * M; ++e) {
      av(p, e) = T(u(rng));
      cv(p, e) = T(u(rng));
      bv(p, e) = T(u(rng) + (e % (M + 1) == 0 ? 3.0 * M : 0.0));
    }
    for (int v = 0; v < M; ++v) dv(p, v) = T(u(rng));
  }
  const std::vector<T> d0 = d;
  // One thread: the systems are tiny, and CI machines are small and shared.
  cfd::PeriodicBlockLines<T, M, cfd::HostLaunch> lines(mesh, axis, layout, adi::Executor::host(1), cfd::HostLaunch{1});
  lines.solve(a.data(), b.data(), c.data(), d.data());

  const auto d0v = cfd::points_view(const_cast<T*>(d0.data()), layout, M, np);
  double worst = 0;
  for (index_t l = 0; l < mesh.lines(axis); ++l) {
    const index_t p0 = mesh.line_start(axis, l), s = mesh.stride(axis);
    Eigen::MatrixXd big = Eigen::MatrixXd::Zero(n * M, n * M);
    Eigen::VectorXd rhs(n * M);
    for (index_t i = 0; i < n; ++i) {
      const index_t p = p0 + i * s, im = (i + n - 1) % n, ip = (i + 1) % n;
      for (int r = 0; r < M; ++r) {
        rhs(i * M + r) = double(d0v(p, r));
        for (int k = 0; k < M; ++k) {
          big(i * M + r, im * M + k) += double(av(p, r * M + k));
          big(i * M + r, i * M + k) += double(bv(p, r * M + k));
          big(i * M + r, ip * M + k) += double(cv(p, r * M + k));
        }
      }
    }
    Eigen::setNbThreads(1);  // Eigen's threaded GEMM only spins on these small matrices
    const Eigen::VectorXd x = big.partialPivLu().solve(rhs);
    for (index_t i = 0; i < n; ++i)
      for (int r = 0; r < M; ++r)
        worst = std::max(worst, std::abs(double(dv(p0 + i * s, r)) - x(i * M + r)) / (1 + std::abs(x(i * M + r))));
  }
  EXPECT_LE(worst, tolerance<T>()) << "M = " << M << " axis " << axis << " n = " << n << " layout "
                                   << cfd::layout_name(layout);
}

template <class T, int M>
void check_periodic_all() {
  unsigned seed = 100;
  for (index_t n : {3, 4, 5, 17, 33})
    for (int axis = 0; axis < 3; ++axis)
      for (cfd::Layout lay : {cfd::Layout::aos, cfd::Layout::soa}) {
        cfd::Mesh mesh{{3, 2, 5}};  // odd, small cross-sections
        mesh.n[axis] = n;
        check_periodic_lines<T, M>(mesh, axis, lay, ++seed);
      }
}

TEST(PeriodicBlockLines, MatchesDenseLuM2) {
  check_periodic_all<double, 2>();
  check_periodic_all<float, 2>();
}
TEST(PeriodicBlockLines, MatchesDenseLuM4) {
  check_periodic_all<double, 4>();
  check_periodic_all<float, 4>();
}
TEST(PeriodicBlockLines, MatchesDenseLuM5) {
  check_periodic_all<double, 5>();
  check_periodic_all<float, 5>();
}
TEST(PeriodicBlockLines, MatchesDenseLuM8) { check_periodic_all<double, 8>(); }

// The periodic Laplacian (A = C = -I, B = 2I) is singular (constants), although its
// non-periodic part is not: the closing Schur block must report it.
TEST(PeriodicBlockLines, SingularPeriodicSystemIsReported) {
  constexpr int M = 4;
  const cfd::Mesh mesh{{9, 3, 1}};
  const index_t np = mesh.points();
  std::vector<double> a(std::size_t(np * M * M), 0.0), b(a), c(a), d(std::size_t(np * M), 1.0);
  for (index_t p = 0; p < np; ++p)
    for (int r = 0; r < M; ++r) {
      a[std::size_t(p * M * M + r * (M + 1))] = -1;
      c[std::size_t(p * M * M + r * (M + 1))] = -1;
      b[std::size_t(p * M * M + r * (M + 1))] = 2;
    }
  cfd::PeriodicBlockLines<double, M, cfd::HostLaunch> lines(mesh, 0, cfd::Layout::aos, adi::Executor::host(),
                                                            cfd::HostLaunch{});
  EXPECT_THROW(lines.solve(a.data(), b.data(), c.data(), d.data()), adi::SingularSystem);
}

TEST(PeriodicBlockLines, RejectsShortLines) {
  const cfd::Mesh mesh{{2, 4, 1}};
  using Lines = cfd::PeriodicBlockLines<double, 4, cfd::HostLaunch>;
  EXPECT_THROW(Lines(mesh, 0, cfd::Layout::aos, adi::Executor::host(), cfd::HostLaunch{}), adi::InvalidArgument);
}

// ---- the Euler solver -------------------------------------------------------------

cfd::EulerSetup setup(int dims, index_t n, double dt) {
  cfd::EulerSetup s;
  s.dims = dims;
  for (int a = 0; a < 3; ++a) s.n[a] = a < dims ? n : 1;
  s.dt = dt;
  s.threads = 1;  // small grids: threads would only wait for each other on a shared CI machine
  return s;
}

TEST(EulerSolver, RejectsBadSetups) {
  cfd::EulerSetup s = setup(2, 16, 0.1);
  s.dims = 4;
  EXPECT_THROW(cfd::make_host_solver<double>(s), adi::InvalidArgument);
  s = setup(2, 4, 0.1);  // too few points for the dissipation stencil
  EXPECT_THROW(cfd::make_host_solver<double>(s), adi::InvalidArgument);
  s = setup(2, 16, -1);
  EXPECT_THROW(cfd::make_host_solver<double>(s), adi::InvalidArgument);
  s = setup(2, 16, 0.1);
  s.n[2] = 3;  // a 2D setup with a z extent
  EXPECT_THROW(cfd::make_host_solver<double>(s), adi::InvalidArgument);
}

// A uniform flow is a steady solution of the discrete scheme (the differences vanish).
TEST(EulerSolver, KeepsFreeStream) {
  for (int dims : {2, 3})
    for (cfd::Layout lay : {cfd::Layout::aos, cfd::Layout::soa}) {
      cfd::EulerSetup s = setup(dims, dims == 2 ? 17 : 9, 0.3);
      s.layout = lay;
      cfd::Vortex v;
      v.beta = 0;  // no vortex
      v.u_inf[2] = 0.4;
      const std::vector<double> q0 = cfd::vortex_state<double>(s, v, 0.0);
      auto solver = cfd::make_host_solver<double>(s);
      solver->set_state(q0);
      for (int k = 0; k < 5; ++k) solver->step();
      const std::vector<double> q = solver->state();
      double diff = 0;
      for (std::size_t i = 0; i < q.size(); ++i) diff = std::max(diff, std::abs(q[i] - q0[i]));
      EXPECT_LE(diff, 1e-13) << dims << "D " << cfd::layout_name(lay);
    }
}

// Central fluxes, conservative dissipation, and exact periodic solves (the implicit
// operator sums to the identity over a line): the totals of Q stay put.
TEST(EulerSolver, ConservesMassMomentumEnergy) {
  for (int dims : {2, 3}) {
    cfd::EulerSetup s = setup(dims, dims == 2 ? 24 : 12, 0.25);
    s.length[0] = s.length[1] = s.length[2] = 10;
    cfd::Vortex v;
    v.u_inf[2] = 0.3;
    v.axis = 1;  // 3D: the tube along y varies along x and z
    if (dims == 2) v.axis = 2;
    const std::vector<double> q0 = cfd::vortex_state<double>(s, v, 0.0);
    auto solver = cfd::make_host_solver<double>(s);
    solver->set_state(q0);
    for (int k = 0; k < 6; ++k) solver->step();
    const std::vector<double> q = solver->state();
    const int m = dims + 2;
    double changed = 0;
    for (int c = 0; c < m; ++c) {
      double before = 0, after = 0, scale = 0, moved = 0;
      for (std::size_t p = 0; p < q.size() / std::size_t(m); ++p) {
        before += q0[p * std::size_t(m) + std::size_t(c)];
        after += q[p * std::size_t(m) + std::size_t(c)];
        scale += std::abs(q0[p * std::size_t(m) + std::size_t(c)]);
        moved = std::max(moved, std::abs(q[p * std::size_t(m) + std::size_t(c)] - q0[p * std::size_t(m) + std::size_t(c)]));
      }
      EXPECT_GT(moved, 1e-3) << "the vortex should move (component " << c << ")";
      changed = std::max(changed, std::abs(after - before) / scale);
    }
    EXPECT_LE(changed, 1e-13) << dims << "D";
  }
}

// A vortex tube along x (or z) in 3D is the 2D vortex in the (y, z) (or (x, y)) planes
// with a passive velocity along the tube; the sweep along the tube is then the identity
// and the other two are the 2D sweeps in the same order, so the states agree to round-off.
TEST(EulerSolver, TubeIn3DMatches2D) {
  const index_t n = 20;
  const double dt = 0.2;
  cfd::EulerSetup s2 = setup(2, n, dt);
  cfd::Vortex v2;
  v2.u_inf[0] = 0.8;
  v2.u_inf[1] = -0.6;
  auto solver2 = cfd::make_host_solver<double>(s2);
  solver2->set_state(cfd::vortex_state<double>(s2, v2, 0.0));
  for (int k = 0; k < 5; ++k) solver2->step();
  const std::vector<double> q2 = solver2->state();

  for (int tube : {0, 2}) {
    const int a1 = (tube + 1) % 3, a2 = (tube + 2) % 3;
    cfd::EulerSetup s3 = setup(3, n, dt);
    s3.n[tube] = 6;
    s3.layout = cfd::Layout::soa;
    cfd::Vortex v3;
    v3.axis = tube;
    v3.u_inf[a1] = v2.u_inf[0];
    v3.u_inf[a2] = v2.u_inf[1];
    v3.u_inf[tube] = 0.5;
    auto solver3 = cfd::make_host_solver<double>(s3);
    solver3->set_state(cfd::vortex_state<double>(s3, v3, 0.0));
    for (int k = 0; k < 5; ++k) solver3->step();
    const std::vector<double> q3 = solver3->state();
    const cfd::Mesh m3{{s3.n[0], s3.n[1], s3.n[2]}};
    double diff = 0;
    for (index_t p = 0; p < m3.points(); ++p) {
      const index_t p2 = m3.coord(p, a1) + n * m3.coord(p, a2);
      const double* x3 = q3.data() + p * 5;
      const double* x2 = q2.data() + p2 * 4;
      diff = std::max({diff, std::abs(x3[0] - x2[0]), std::abs(x3[1 + a1] - x2[1]), std::abs(x3[1 + a2] - x2[2])});
    }
    EXPECT_LE(diff, 1e-12) << "tube along axis " << tube;
  }
}

// The density error against the exact solution on three grids at a fixed CFL number:
// second order in space and time, the dissipation adding O(h^3). Observed (t = 2,
// CFL ~1.9): 32 -> 64 -> 128 points, L2 order ~1.9 and ~1.95.
TEST(EulerSolver, ConvergesAtSecondOrder) {
  const index_t sizes[] = {32, 64, 128};
  double err_l2[3], err_max[3];
  for (int r = 0; r < 3; ++r) {
    const index_t n = sizes[r];
    cfd::EulerSetup s = setup(2, n, 0.2 * 32.0 / double(n));
    cfd::Vortex v;
    auto solver = cfd::make_host_solver<double>(s);
    solver->set_state(cfd::vortex_state<double>(s, v, 0.0));
    const double t_end = 2.0;
    const long steps = std::lround(t_end / s.dt);
    for (long k = 0; k < steps; ++k) solver->step();
    const cfd::ErrorNorms e = cfd::density_error(s, v, t_end, solver->state());
    err_l2[r] = e.l2;
    err_max[r] = e.max;
    std::printf("  n = %3ld  dt = %.4f  L1 = %.3e  L2 = %.3e  max = %.3e\n", long(n), s.dt, e.l1, e.l2, e.max);
  }
  for (int r = 1; r < 3; ++r) {
    const double order_l2 = std::log2(err_l2[r - 1] / err_l2[r]), order_max = std::log2(err_max[r - 1] / err_max[r]);
    std::printf("  %ld -> %ld: observed order L2 %.2f, max %.2f\n", long(sizes[r - 1]), long(sizes[r]), order_l2,
                order_max);
    EXPECT_GT(order_l2, 1.7);
    EXPECT_GT(order_max, 1.5);
  }
  EXPECT_LT(err_max[2], 7e-3);
}

// Float runs the same scheme to the same accuracy on a coarse grid (errors >> float eps).
TEST(EulerSolver, FloatMatchesDouble) {
  cfd::EulerSetup s = setup(2, 32, 0.2);
  cfd::Vortex v;
  auto sd = cfd::make_host_solver<double>(s);
  auto sf = cfd::make_host_solver<float>(s);
  sd->set_state(cfd::vortex_state<double>(s, v, 0.0));
  sf->set_state(cfd::vortex_state<float>(s, v, 0.0));
  for (int k = 0; k < 10; ++k) {
    sd->step();
    sf->step();
  }
  const std::vector<double> qd = sd->state();
  const std::vector<float> qf = sf->state();
  double diff = 0;
  for (std::size_t i = 0; i < qd.size(); ++i) diff = std::max(diff, std::abs(qd[i] - double(qf[i])));
  EXPECT_LE(diff, 1e-4);
}

}  // namespace
