#pragma once
// The semi-discrete operator of in 't Hout's ADI framework:
//
//   U'(t) = F(t, U) = F0 + F1 + F2 + F3,   Fj(t, U) = Aj U + gj(t)
//
// for the PDE class
//
//   u_t = sum_i D_i u_{x_i x_i} + sum_i V_i u_{x_i} + sum_{i<j} M_ij u_{x_i x_j} + R u + f(t, x)
//
// discretised by second-order central differences on uniform or stretched axes.
// A0 holds the mixed terms (treated explicitly); Aj (j = 1..3, axis x, y, z) is
// tridiagonal along axis j and holds D_j, V_j, R/k (R split equally over the k axes
// with more than one node). gj(t) holds the Neumann boundary data of axis j and f/k
// (the source is split over the implicit parts too: Douglas stays second order with
// a time-dependent source). Dirichlet nodes are known values stored in the fields:
// every evaluation at time t first writes g(t) into them.
//
// Parts are numbered like the papers: 0 = mixed (A0), 1 = x, 2 = y, 3 = z.
#include <array>
#include <functional>
#include <memory>
#include <type_traits>

#include "adi/boundary.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/grid.hpp"
#include "adi/layout.hpp"
#include "adi/subdomain.hpp"

namespace adi {

// A PDE coefficient: a constant, a function of one coordinate, or a function of
// (x, y, z). Functions are evaluated once, on the grid's nodes, when an Operator
// is built.
class Coefficient {
 public:
  Coefficient(double value = 0.0) : value_(value) {}  // NOLINT: implicit from a number
  template <class F, std::enable_if_t<std::is_invocable_r_v<double, F, double, double, double>, int> = 0>
  Coefficient(F f) : fn_(std::move(f)) {}  // NOLINT: implicit from a callable (x, y, z)
  // A function of the coordinate along `a` only (lets the operator keep shared bands
  // without evaluating it on the whole grid).
  static Coefficient along(Axis a, std::function<double(double)> f);

  bool is_constant() const { return !fn_ && !fn1_; }
  // Constant 0: the term is absent.
  bool is_zero() const { return is_constant() && value_ == 0.0; }
  bool is_function_of_one_axis() const { return static_cast<bool>(fn1_); }
  Axis axis() const { return axis_; }
  double operator()(double x, double y, double z) const {
    if (fn1_) return fn1_(axis_ == Axis::x ? x : axis_ == Axis::y ? y : z);
    return fn_ ? fn_(x, y, z) : value_;
  }
  double constant() const { return value_; }

 private:
  double value_ = 0.0;
  std::function<double(double, double, double)> fn_;
  std::function<double(double)> fn1_;
  Axis axis_ = Axis::x;
};

// Source term f(t, x, y, z).
using SourceFunction = std::function<double(double t, double x, double y, double z)>;

// The terms of the PDE. Absent terms stay zero; terms along an axis with a single
// node (1D/2D grids) are ignored. M_xy multiplies u_xy once (no factor 2).
struct Pde {
  std::array<Coefficient, 3> diffusion{};   // D_x, D_y, D_z   (u_xx, u_yy, u_zz)
  std::array<Coefficient, 3> convection{};  // V_x, V_y, V_z   (u_x, u_y, u_z)
  Coefficient mixed_xy, mixed_xz, mixed_yz; // M_xy, M_xz, M_yz (u_xy, u_xz, u_yz)
  Coefficient reaction;                     // R               (u)
  SourceFunction source;                    // f(t, x, y, z); empty: none

  // u_t = kx u_xx + ky u_yy + kz u_zz.
  static Pde heat(double kx, double ky = 0.0, double kz = 0.0);
  bool has_mixed() const { return !mixed_xy.is_zero() || !mixed_xz.is_zero() || !mixed_yz.is_zero(); }
};

// Holds per-axis stencils, bands and tridiagonal plans, and caches of boundary and
// source values: not thread-safe, one operator per concurrent caller.
template <class T>
class Operator {
 public:
  // Evaluates the coefficients on the grid and builds, per axis with more than one
  // node, the 1D stencils and a TridiagonalPlan over the lines of unknowns. Throws
  // InvalidArgument for bad grids/conditions/non-finite coefficients, Unsupported for
  // a mixed term next to a Neumann face or an executor without stencil kernels.
  Operator(const Grid& grid, const Pde& pde, const BoundaryConditions& bc,
           const Executor& exec = Executor::host());
  // The same operator on this rank's piece of `grid` (the global grid) under a decomposition
  // (adi/subdomain.hpp; adi::mpi::subdomain makes one). Collective over the subdomain's ranks:
  // every rank throws the same InvalidArgument / Unsupported when any rank's check fails.
  // Fields then have the local shape (extents(): the rank's nodes plus its ghost layers) and
  // every function below is collective; results equal the single-domain operator's to rounding.
  // A null subdomain is the single-domain operator.
  Operator(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, const Executor& exec,
           std::shared_ptr<Subdomain> subdomain);
  ~Operator();
  Operator(Operator&&) noexcept;
  Operator& operator=(Operator&&) noexcept;

  const Grid& grid() const;
  const BoundaryConditions& boundary() const;
  const Executor& executor() const;
  // Number of axes with more than one node (the implicit parts), and whether A0 != 0.
  int implicit_axes() const;
  bool active(Axis a) const;
  bool has_mixed() const;
  // True when axis a's tridiagonal bands are length-n arrays shared by every line
  // (its coefficients depend on its own coordinate only): solved with SharedBands.
  bool shared_bands(Axis a) const;
  // The box of unknowns (non-Dirichlet nodes) as [lo, hi] index ranges per axis.
  std::array<index_t, 3> unknown_lo() const;
  std::array<index_t, 3> unknown_hi() const;

  // The shape of the fields this operator takes: the grid's extents, or (with a subdomain)
  // this rank's nodes plus one ghost layer on each side of a split axis that has a
  // neighbouring rank. Field node (i, j, k) is global node origin() + (i, j, k) (periodic
  // axes wrap); this rank's own nodes are owned_lo() .. owned_hi() (inclusive).
  std::array<index_t, 3> extents() const;
  std::array<index_t, 3> origin() const;
  std::array<index_t, 3> owned_lo() const;
  std::array<index_t, 3> owned_hi() const;
  // A zero-filled field of extents() in the executor's memory.
  Field<T> make_field() const;
  // The subdomain (null for a single-domain operator).
  const Subdomain* subdomain() const;
  // Collective: fills f's ghost layers from the neighbouring ranks (nothing without a
  // subdomain). apply() and solve() do it themselves; call it before reading ghosts.
  void exchange(Field<T>& f);
  // How the lines along a are solved: "local" (single-domain plan) or the distributed
  // plan's strategy when a is split.
  const char* line_strategy(Axis a) const;
  // Seconds spent in halo exchanges and (per axis) in the reduced-system exchange of the
  // distributed line solves, since construction.
  double halo_seconds() const;
  std::array<double, 3> line_exchange_seconds() const;
  // Collective with a subdomain (nothing without): errors some ranks met inside apply() /
  // solve() (non-finite boundary data or sources, a zero pivot along an axis that is not
  // split) are kept there, so that no rank leaves the others waiting; settle() throws the
  // lowest such rank's error (InvalidArgument / SingularSystem) on every rank. AdiSolver calls
  // it after every step; call it after your own sequence of apply() / solve().
  void settle();
  // While on (AdiSolver, during a step): a field whose ghosts this operator exchanged and
  // that it has not written since is not exchanged again, and a set_boundary(t, V) that repeats
  // the last one (the same field and t, nothing written through the operator between them) is
  // skipped (ADI_BOUNDARY_REUSE=0: written again). Switching it forgets them all.
  void reuse_ghosts(bool on);

  // Writes g(t) into V's Dirichlet nodes.
  void set_boundary(double t, Field<T>& V);

  // At V's unknown nodes (after set_boundary(t, V)):
  //   out = alpha * base + sum_p w[p] * F_p(t, V),     p = 0 (mixed), 1..3 (x, y, z).
  // base may be null (alpha ignored) and may alias out; out must not alias V.
  // Dirichlet nodes of out are not written.
  void apply(double t, Field<T>& V, const std::array<T, 4>& w, T alpha, const Field<T>* base, Field<T>& out);
  // out = F_p(t, V) at unknown nodes (tests, diagnostics).
  void evaluate(int part, double t, Field<T>& V, Field<T>& out);

  // The implicit stage along axis a: solves for Y
  //   Y - s F_a(t_new, Y) = base - s F_a(t_old, V_old)        (V_old given)
  //   Y - s F_a(t_new, Y) = base                              (V_old == nullptr)
  // with Y's Dirichlet nodes along a taking g(t_new). Y may alias base (in place),
  // not V_old. Bands for a new s are formed once and kept until s changes.
  // `later` names the axes whose stages follow in the same Douglas-type chain
  // (Y_j = Y_{j-1} + s (F_j(t_new, Y_j) - F_j(t_old, V_old))): an intermediate Y_j
  // then approximates u(t_new) - s sum_{i later} (F_i(t_new) - F_i(t_old)), and its
  // Dirichlet nodes get exactly that, from the boundary data (without it the 3D
  // schemes lose an order near edges where Dirichlet faces meet).
  // With `result`, Y only holds the right-hand side and the solution goes to *result
  // (its sweep box and Dirichlet ends along a); result may be V_old or base, both are
  // read before it is written. Saves the copy after a scheme's last stage.
  void solve(Axis a, T s, double t_new, const Field<T>& base, Field<T>& Y, double t_old = 0.0,
             Field<T>* V_old = nullptr, std::array<bool, 3> later = {}, Field<T>* result = nullptr);

  // How solve_folded forms the explicit part of its right-hand side:
  //   separate  apply() into Y, then the stage (11 field transfers per 3D Douglas step; the
  //             host's default: its path is unchanged)
  //   stencil   one stencil pass writes the stage's whole right-hand side from the terms' fields
  //             (base, explicit part, -F_a(V_old), sources, boundary data), then the line solve
  //             in place: 10 transfers per 3D Douglas step (CUDA's default)
  //   kernel    the fused stage kernel forms it at each node (8 transfers; CUDA, see folds();
  //             on the H100 it measured slower than both: latency-bound, opt-in)
  enum class ExplicitFold { separate, stencil, kernel };
  void set_explicit_fold(ExplicitFold f);
  ExplicitFold explicit_fold() const;

  // One explicit term of a folded stage: weights w[p] of F_p(t, *field), p = 0 (mixed), 1..3.
  struct ExplicitTerm {
    double t = 0.0;
    Field<T>* field = nullptr;  // null: no term
    std::array<T, 4> w{};
  };
  // The stage along a with the explicit operator folded into its right-hand side:
  //   base = alpha * P_0 + sum_q sum_p terms[q].w[p] F_p(terms[q].t, P_q),   P_q = *terms[q].field,
  // then solve(a, s, t_new, base, Y, t_old, V_old, later, result). Equal to round-off to
  // apply() into Y followed by that solve() in place, which is what it does with
  // ExplicitFold::separate or where it cannot fold. With ExplicitFold::stencil one stencil
  // pass per term writes the whole right-hand side into Y (then the line solve); with
  // ExplicitFold::kernel, where folds(a), base is formed inside the stage's fused kernel from
  // the P_q and their neighbours along every axis and never stored (docs/design.md, "The
  // fused stage"); where it cannot fold, as with ExplicitFold::stencil. Writes g(t_q) into
  // each P_q's Dirichlet nodes. Y must not be a P_q or V_old; terms[0].field must be given.
  void solve_folded(Axis a, T s, double t_new, T alpha, const std::array<ExplicitTerm, 2>& terms, Field<T>& Y,
                    double t_old = 0.0, Field<T>* V_old = nullptr, std::array<bool, 3> later = {},
                    Field<T>* result = nullptr);
  // Whether solve_folded along a folds the explicit part into the stage kernel
  // (ExplicitFold::kernel, CUDA, fused stage along x, every axis with shared bands, no mixed
  // terms, no subdomain).
  bool folds(Axis a) const;

  // Throws InvalidArgument unless f has the grid's extents and the executor's memory space.
  void check_field(const Field<T>& f, const char* name) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class Operator<float>;
extern template class Operator<double>;

}  // namespace adi
