#pragma once
// ADI time stepping (in 't Hout & Welfert; in 't Hout & Foulon):
//   Douglas (Do), Craig-Sneyd (CS), Modified Craig-Sneyd (MCS),
//   Hundsdorfer-Verwer (HV), Peaceman-Rachford (PR, 1D/2D only),
// with optional Rannacher damping: the first k steps are replaced by 2k
// Douglas theta = 1 half steps.
//
//   adi::Grid grid = adi::Grid::uniform({65, 65, 65}, {0, 0, 0}, {1, 1, 1});
//   adi::Operator<double> op(grid, adi::Pde::heat(1, 1, 1), adi::BoundaryConditions{});
//   adi::AdiSolver<double> solver(std::move(op), adi::Scheme::douglas());
//   adi::Field<double> u(grid);              // fill with the initial values
//   solver.advance(u, 0.0, 0.1, 100);        // 100 steps from t = 0 to t = 0.1
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "adi/field.hpp"
#include "adi/operator.hpp"

namespace adi {

enum class SchemeKind { douglas, craig_sneyd, modified_craig_sneyd, hundsdorfer_verwer, peaceman_rachford };

// Which scheme, its parameters, and damping. A plain value.
struct Scheme {
  SchemeKind kind = SchemeKind::douglas;
  double theta = 0.5;     // weight of the implicit stages
  double sigma = 0.5;     // Craig-Sneyd's weight of the mixed-term correction
  int damping_steps = 0;  // Rannacher: first k steps as 2k Douglas theta=1 half steps (0: off)

  static Scheme douglas(double theta = 0.5);
  static Scheme craig_sneyd(double theta = 0.5, double sigma = 0.5);
  static Scheme modified_craig_sneyd(double theta = 1.0 / 3.0);
  static Scheme hundsdorfer_verwer(double theta = 0.5 + 0.28867513459481288225);  // 1/2 + sqrt(3)/6
  static Scheme peaceman_rachford();
  // "douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer",
  // "peaceman-rachford" (standard parameters); throws InvalidArgument listing them.
  static Scheme from_name(const std::string& name);

  Scheme& with_theta(double t) { theta = t; return *this; }
  Scheme& with_damping(int k) { damping_steps = k; return *this; }
  const char* name() const;
};

const char* scheme_name(SchemeKind k);

// Wall time spent per part of the step, in seconds, since the last reset.
struct StepTimings {
  std::array<double, 3> implicit{};  // per axis x, y, z: right-hand side + tridiagonal solve
  double explicit_part = 0.0;         // explicit evaluations of F (all parts)
  double boundary = 0.0;              // copies and Dirichlet writes of whole fields
  // With a subdomain (host clock, of which): halo exchanges (inside explicit_part and the
  // implicit parts) and, per axis, the reduced-system exchange of a split axis's solves.
  double halo = 0.0;
  std::array<double, 3> line_exchange{};
  long steps = 0;
  double total() const { return implicit[0] + implicit[1] + implicit[2] + explicit_part + boundary; }
};

// Called after every step of advance(): step number (1-based), time, solution.
template <class T>
using ProgressCallback = std::function<void(long step, double t, const Field<T>& u)>;

// Owns the operator and the stage fields (allocated once); steps a field in place.
template <class T>
class AdiSolver {
 public:
  // Throws InvalidArgument for a bad scheme parameter (theta outside (0, 1], damping < 0,
  // Peaceman-Rachford on a 3D grid) and Unsupported for Peaceman-Rachford with mixed terms.
  AdiSolver(Operator<T> op, Scheme scheme);
  AdiSolver(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, Scheme scheme,
            const Executor& exec = Executor::host())
      : AdiSolver(Operator<T>(grid, pde, bc, exec), scheme) {}
  // On this rank's piece of `grid` under a decomposition (adi/subdomain.hpp): collective,
  // u is a field of op().make_field()'s shape, and every call below is collective.
  AdiSolver(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, Scheme scheme, const Executor& exec,
            std::shared_ptr<Subdomain> subdomain)
      : AdiSolver(Operator<T>(grid, pde, bc, exec, std::move(subdomain)), scheme) {}
  ~AdiSolver();
  AdiSolver(AdiSolver&&) noexcept;
  AdiSolver& operator=(AdiSolver&&) noexcept;

  // One step from t to t + dt. Rannacher damping applies to the first
  // scheme().damping_steps calls since construction or restart().
  void step(Field<T>& u, double t, double dt);
  // One step from t0 to t1 (boundary data and sources at the grid's own time levels) whose
  // weights take the nominal length dt: for uniform steps on levels t_k = k T / N, pass the
  // same dt = T / N every step, so the implicit bands (s = theta dt) are formed once, not at
  // every step as t1 - t0 would (it differs from T / N in its last bits from step to step).
  // t1 - t0 must equal dt to within 1e-6 relative.
  void step(Field<T>& u, double t0, double t1, double dt);
  // `steps` equal steps from t0 to t1, calling `progress` after each. Checks u for non-finite
  // values before the first step (InvalidArgument: initialise every node) and after the last
  // (UnstableSystem: finite values in, NaN or Inf out, e.g. dt so large that dt A u overflows),
  // each a read of u (device fields: a copy to the host; with a subdomain: this rank's own nodes,
  // agreed). step() checks neither.
  void advance(Field<T>& u, double t0, double t1, long steps, const ProgressCallback<T>& progress = {});
  // Forgets the steps taken: the next step is damped again (a new initial value).
  void restart();

  // The order of the implicit stages in every scheme's chain (Douglas, the corrected
  // schemes' two chains, Peaceman-Rachford's halves): a permutation of the active axes (the
  // axes with more than one node), e.g. {z, y, x} or, on a 2D grid, {y, x}. Any order gives a
  // valid scheme of the same order and stability; results differ at the splitting-error
  // level (O(dt^2) per step for the second-order schemes). Default x, y, z. The first stage
  // carries the folded explicit operator on CUDA (Operator::solve_folded), so the order sets
  // which axis that is. The environment variable ADI_STAGE_ORDER (e.g. "zyx"; the letters of
  // the inactive axes are skipped) sets the order at construction, for measurement; this call
  // overrides it. Throws InvalidArgument, naming the order given, unless it is a permutation
  // of the active axes.
  void set_stage_order(const std::vector<Axis>& order);
  const std::vector<Axis>& stage_order() const;

  const Scheme& scheme() const;
  Operator<T>& op();
  const StepTimings& timings() const;
  void reset_timings();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class AdiSolver<float>;
extern template class AdiSolver<double>;

}  // namespace adi
