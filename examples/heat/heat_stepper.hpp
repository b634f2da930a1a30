#pragma once
// TODO(heat3d): interim stepper, to be replaced by adi/scheme.hpp once the framework
// (grids, boundaries, operators, schemes) is committed. Douglas only, built directly
// on the public tridiagonal plan so that heat3d's CLI, output and picture can be
// developed meanwhile.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/field.hpp"
#include "adi/grid.hpp"
#include "adi/tridiagonal.hpp"

namespace heat {

struct StepperConfig {
  double kx = 1, ky = 1, kz = 1;
  std::string scheme = "douglas";
  double theta = -1;
  int rannacher = 0;
};

struct Timings {
  double sweep[3] = {0, 0, 0};
  double explicit_part = 0;
};

template <class T>
class Stepper {
 public:
  using Boundary = std::function<double(double t, double x, double y, double z)>;

  Stepper(const adi::Grid& g, const adi::Executor& exec, StepperConfig cfg, Boundary bc)
      : g_(g), cfg_(cfg), bc_(std::move(bc)) {
    if (cfg_.scheme != "douglas" || cfg_.rannacher != 0)
      throw adi::Unsupported("heat3d: only --scheme douglas without --rannacher until adi/scheme.hpp lands");
    if (!exec.is_host()) throw adi::Unsupported("heat3d: --backend cuda needs adi/scheme.hpp (not yet)");
    if (cfg_.theta < 0) cfg_.theta = 0.5;
    y_ = adi::Field<T>(g);
    au_ = adi::Field<T>(g);
  }

  std::string describe() const { return "douglas, theta = " + std::to_string(cfg_.theta) + " (interim)"; }
  const Timings& timings() const { return tm_; }

  // One Douglas step t -> t + dt (host fields):
  //   Y0 = U + dt A U;  (I - theta dt A_d) Y_d = Y_{d-1} - theta dt A_d U,  d = x, y, z.
  void step(adi::Field<T>& u, double t, double dt) {
    using clk = std::chrono::steady_clock;
    const double k[3] = {cfg_.kx, cfg_.ky, cfg_.kz};
    const adi::Box3& b = u.box();
    auto t0 = clk::now();
    set_boundary(y_, t + dt);
    for (adi::index_t kk = 1; kk + 1 < b.nz; ++kk)
      for (adi::index_t j = 1; j + 1 < b.ny; ++j)
        for (adi::index_t i = 1; i + 1 < b.nx; ++i) {
          double s = 0;
          for (int d = 0; d < 3; ++d) s += apply(u, d, k[d], i, j, kk);
          y_(i, j, kk) = T(u(i, j, kk) + dt * s);
        }
    tm_.explicit_part += std::chrono::duration<double>(clk::now() - t0).count();
    for (int d = 0; d < 3; ++d) {
      t0 = clk::now();
      for (adi::index_t kk = 1; kk + 1 < b.nz; ++kk)
        for (adi::index_t j = 1; j + 1 < b.ny; ++j)
          for (adi::index_t i = 1; i + 1 < b.nx; ++i)
            y_(i, j, kk) = T(y_(i, j, kk) - cfg_.theta * dt * apply(u, d, k[d], i, j, kk));
      const adi::Axis ax = adi::Axis(d);
      const adi::index_t n = b.extent(ax);
      const double h = g_.axis(ax).spacing(0), r = cfg_.theta * dt * k[d] / (h * h);
      std::vector<T> a(n, T(-r)), bb(n, T(1 + 2 * r)), c(n, T(-r));
      a[0] = c[0] = a[n - 1] = c[n - 1] = 0;  // Dirichlet rows: identity
      bb[0] = bb[n - 1] = 1;
      // Interior lines only: the sub-box without the two faces normal to the other axes.
      adi::Box3 sub = b;
      adi::index_t off = 0;
      if (d != 0) sub.nx -= 2, off += 1;
      if (d != 1) sub.ny -= 2, off += b.sy;
      if (d != 2) sub.nz -= 2, off += b.sz;
      if (plans_[d] == nullptr)
        plans_[d] = std::make_unique<adi::TridiagonalPlan<T>>(adi::Executor::host(), adi::BoxLines{sub, ax});
      plans_[d]->solve(adi::SharedBands<T>{a.data(), bb.data(), c.data()}, y_.data() + off, y_.data() + off);
      tm_.sweep[d] += std::chrono::duration<double>(clk::now() - t0).count();
    }
    u.copy_from(y_);
  }

 private:
  double apply(const adi::Field<T>& u, int d, double k, adi::index_t i, adi::index_t j, adi::index_t kk) const {
    const adi::index_t s = u.box().stride(adi::Axis(d));
    const double h = g_.axis(adi::Axis(d)).spacing(0);
    const T* p = &u(i, j, kk);
    return k * (double(p[-s]) - 2 * double(p[0]) + double(p[s])) / (h * h);
  }
  void set_boundary(adi::Field<T>& f, double t) const {
    const auto& X = g_.axis(adi::Axis::x);
    const auto& Y = g_.axis(adi::Axis::y);
    const auto& Z = g_.axis(adi::Axis::z);
    for (adi::index_t kk = 0; kk < f.nz(); ++kk)
      for (adi::index_t j = 0; j < f.ny(); ++j)
        for (adi::index_t i = 0; i < f.nx(); ++i)
          if (i == 0 || j == 0 || kk == 0 || i == f.nx() - 1 || j == f.ny() - 1 || kk == f.nz() - 1)
            f(i, j, kk) = T(bc_(t, X[i], Y[j], Z[kk]));
  }

  adi::Grid g_;
  StepperConfig cfg_;
  Boundary bc_;
  adi::Field<T> y_, au_;
  std::unique_ptr<adi::TridiagonalPlan<T>> plans_[3];
  Timings tm_;
};

}  // namespace heat
