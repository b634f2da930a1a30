// The README's two code examples, kept compiling and checked: if one of these
// changes, change README.md in the same commit.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "adi/adi.hpp"
#include "adi/tridiagonal.hpp"

TEST(ReadmeExamples, BatchedSolverAlongY) {
  const adi::Box3 box = adi::Box3::dense(37, 29, 11);
  std::vector<double> a(box.size()), b(box.size()), c(box.size()), d(box.size());
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> r(-1.0, 1.0);
  for (adi::index_t i = 0; i < box.size(); ++i) {
    a[i] = r(rng), c[i] = r(rng), b[i] = 2.5 + r(rng), d[i] = r(rng);
  }
  const std::vector<double> rhs = d;
  adi::TridiagonalPlan<double> plan(adi::Executor::host(), adi::BoxLines{box, adi::Axis::y});
  plan.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), d.data());

  // Residual of every row of every y line.
  double worst = 0;
  for (adi::index_t k = 0; k < box.nz; ++k)
    for (adi::index_t j = 0; j < box.ny; ++j)
      for (adi::index_t i = 0; i < box.nx; ++i) {
        const adi::index_t p = i + j * box.sy + k * box.sz;
        double row = b[p] * d[p] - rhs[p];
        if (j > 0) row += a[p] * d[p - box.sy];
        if (j + 1 < box.ny) row += c[p] * d[p + box.sy];
        worst = std::max(worst, std::abs(row));
      }
  EXPECT_LT(worst, 1e-12);
}

TEST(ReadmeExamples, HeatStep) {
  constexpr double pi = std::numbers::pi;
  const adi::Grid grid = adi::Grid::uniform({33, 33, 33}, {0, 0, 0}, {1, 1, 1});
  const auto bc = adi::BoundaryConditions::all(adi::Boundary::dirichlet(0.0));
  adi::AdiSolver<double> solver(grid, adi::Pde::heat(1.0, 1.0, 1.0), bc, adi::Scheme::from_name("douglas"));
  adi::Field<double> u(grid);
  auto mode = [&](adi::index_t i, adi::index_t j, adi::index_t k) {
    return std::sin(pi * grid.axis(adi::Axis::x)[i]) * std::sin(pi * grid.axis(adi::Axis::y)[j]) *
           std::sin(pi * grid.axis(adi::Axis::z)[k]);
  };
  for (adi::index_t k = 0; k < grid.nz(); ++k)
    for (adi::index_t j = 0; j < grid.ny(); ++j)
      for (adi::index_t i = 0; i < grid.nx(); ++i) u(i, j, k) = mode(i, j, k);
  solver.advance(u, 0.0, 0.05, 50);

  const double decay = std::exp(-3 * pi * pi * 0.05);
  double worst = 0;
  for (adi::index_t k = 0; k < grid.nz(); ++k)
    for (adi::index_t j = 0; j < grid.ny(); ++j)
      for (adi::index_t i = 0; i < grid.nx(); ++i)
        worst = std::max(worst, std::abs(u(i, j, k) - decay * mode(i, j, k)));
  EXPECT_LT(worst, 2e-3 * decay);  // second order: h = 1/32, dt = 1e-3
  EXPECT_GT(solver.timings().implicit[0], 0.0);
}
