#include "adi/detail/operator_impl.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <cmath>
#include <type_traits>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "adi/base/env_switch.hpp"
#include "adi/base/stencil.hpp"
#include "adi/error.hpp"
#include "adi/tridiagonal.hpp"
#include "solvers/cpu/stencil_apply.hpp"
#include "solvers/cpu/stencil_diagonal.hpp"
#include "solvers/cpu/stencil_face.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

Coefficient Coefficient::along(Axis a, std::function<double(double)> f) {
  detail::require(static_cast<bool>(f), "Coefficient::along: the function is empty");
  Coefficient c;
  c.fn1_ = std::move(f);
  c.axis_ = a;
  return c;
}

Pde Pde::heat(double kx, double ky, double kz) {
  for (double k : {kx, ky, kz})
    detail::require(std::isfinite(k) && k >= 0.0, "Pde::heat: diffusivity " + detail::number(k) +
                                                       " must be finite and >= 0");
  Pde p;
  p.diffusion = {Coefficient(kx), Coefficient(ky), Coefficient(kz)};
  return p;
}


template <class T>
Operator<T>::Operator(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, const Executor& exec)
    : Operator(grid, pde, bc, exec, nullptr) {}

template <class T>
Operator<T>::Operator(const Grid& grid, const Pde& pde, const BoundaryConditions& bc, const Executor& exec,
                      std::shared_ptr<Subdomain> subdomain)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.grid = grid;
  p.bc = bc;
  p.exec = exec;
  p.source = pde.source;
  p.sub = std::move(subdomain);
  // Checks of the global description first: every rank of a subdomain sees the same
  // grid, conditions and PDE, so they throw alike without agreeing.
  if (grid.size() < 2)
    throw InvalidArgument("Operator: grid " + grid.describe() + " has a single node; give at least one axis n >= 2");
  bc.validate(grid);
  for (int a = 0; a < 3; ++a) {
    p.active[a] = grid.extent(static_cast<Axis>(a)) > 1;
    p.k += p.active[a];
    p.N[a] = grid.extent(static_cast<Axis>(a));
  }
  if (p.sub) p.place();
  for (int a = 0; a < 3; ++a) {
    p.lo[a] = p.ghost[a][0] + (p.dirichlet(a, false) ? 1 : 0);
    p.hi[a] = p.N[a] - 1 - p.ghost[a][1] - (p.dirichlet(a, true) ? 1 : 0);
  }
  p.static_data = !pde.source;
  for (int f = 0; f < 6; ++f) p.static_data = p.static_data && bc[static_cast<Face>(f)].is_constant();
  for (const Coefficient* c : {&pde.diffusion[0], &pde.diffusion[1], &pde.diffusion[2], &pde.convection[0],
                               &pde.convection[1], &pde.convection[2], &pde.reaction, &pde.mixed_xy,
                               &pde.mixed_xz, &pde.mixed_yz})
    detail::require(!c->is_constant() || std::isfinite(c->constant()),
                    "Operator: a constant PDE coefficient is " + detail::number(c->constant()) +
                        "; coefficients must be finite");
  const index_t sy = Field<T>::padded_row(p.N[0]);
  p.view.box = Box3{p.N[0], p.N[1], p.N[2], sy, sy * p.N[1]};
  p.view.lo = p.lo;
  p.view.hi = p.hi;
  // The local work: coefficients are evaluated on this rank's nodes, so a bad value (or
  // a failed allocation) may show on some ranks only; with a subdomain they agree before
  // the collective plan set-up.
  std::string invalid, unsupported;
  try {
    if (exec.is_cuda()) p.pivot_flag = detail::Storage(3 * sizeof(int), exec);
    index_t face_max = 0;  // the stages' face values: no allocation in a step
    for (int a = 0; a < 3; ++a) face_max = std::max(face_max, p.N[others(a)[0]] * p.N[others(a)[1]]);
    for (auto& e : p.end_scratch) e = Array<T>(face_max, exec);
    for (int a = 0; a < 3; ++a)
      if (p.active[a]) p.build_axis(a, pde);
    p.build_mixed(pde);
  } catch (const Unsupported& e) {
    if (!p.sub) throw;
    unsupported = e.what();
  } catch (const Error& e) {
    if (!p.sub) throw;
    invalid = e.what();
  }
  if (p.sub) p.sub->agree(invalid, unsupported);
  for (int a = 0; a < 3; ++a)
    if (p.active[a]) p.build_plan(a);
  p.decide_fused();
  p.tune_teams();
  // CUDA: the explicit part in the first stage's stencil pass (10 transfers per 3D Douglas
  // step instead of 11); the host keeps its separate passes.
  if (exec.is_cuda()) p.fold_mode = ExplicitFold::stencil;
}

// This rank's piece: N, off and the ghost planes per axis from the subdomain; the
// process grid must wrap exactly along the periodic axes it splits.
template <class T>
void Operator<T>::Impl::place() {
  std::string invalid;
  const auto g = sub->global(), l = sub->lo(), e = sub->extent();
  for (int a = 0; a < 3 && invalid.empty(); ++a) {
    const Axis ax = static_cast<Axis>(a);
    const index_t n = grid.extent(ax);
    if (g[a] != n) {
      invalid = std::string("Operator: the grid has ") + detail::number(n) + " nodes along " + axis_name(ax) +
                " but the decomposition " + detail::number(g[a]) + "; decompose the grid's extents";
      break;
    }
    split[a] = active[a] && sub->ranks(ax) > 1;
    if (!split[a]) {
      if (sub->ranks(ax) > 1)
        invalid = std::string("Operator: axis ") + axis_name(ax) + " has a single node and cannot be split over " +
                  detail::number(sub->ranks(ax)) + " ranks";
      continue;
    }
    const bool nlo = sub->neighbour(ax, false), nhi = sub->neighbour(ax, true);
    if (bc.periodic(ax) && !(nlo && nhi))
      invalid = std::string("Operator: axis ") + axis_name(ax) +
                " is periodic and split over ranks: make the process grid periodic along it";
    if (!bc.periodic(ax) && ((l[a] == 0 && nlo) || (l[a] + e[a] == n && nhi)))
      invalid = std::string("Operator: the process grid is periodic along ") + axis_name(ax) +
                " but the boundary conditions are not";
    ghost[a] = {nlo ? 1 : 0, nhi ? 1 : 0};
    off[a] = l[a] - ghost[a][0];
    N[a] = e[a] + ghost[a][0] + ghost[a][1];
  }
  sub->agree(invalid, "");
}

// Axis a's line solver over the sweep box: the whole axis (Dirichlet ends as identity
// rows) within this rank, or this rank's segments of lines that cross ranks (collective
// over the ranks of the axis), times the unknown ranges of the other two axes.
template <class T>
Box3 Operator<T>::Impl::sweep_lines(int a) const {
  std::array<index_t, 3> ext{};
  for (int d = 0; d < 3; ++d) ext[d] = hi[d] - lo[d] + 1;
  ext[a] = N[a] - ghost[a][0] - ghost[a][1];
  return Box3{ext[0], ext[1], ext[2], view.box.sy, view.box.sz};
}

template <class T>
void Operator<T>::Impl::ensure_quiet(int a) {
  AxisData& A = ax[a];
  if (A.quiet || !exec.is_cuda() || !A.plan) return;
  TridiagonalOptions opt;
  opt.periodic = A.periodic;
  opt.check_pivots = false;
  A.quiet.emplace(exec, BoxLines{sweep_lines(a), static_cast<Axis>(a)}, opt);
}

template <class T>
void Operator<T>::Impl::build_plan(int a) {
  AxisData& A = ax[a];
  std::array<index_t, 3> org = lo;
  org[a] = ghost[a][0];
  const Box3& fb = view.box;
  A.sweep_offset = org[0] + org[1] * fb.sy + org[2] * fb.sz;
  A.band_offset = org[a];
  const Box3 lines = sweep_lines(a);
  if (split[a]) {
    if constexpr (std::is_same_v<T, float>)
      A.dplan = sub->line_solver_f(static_cast<Axis>(a), exec, lines, A.periodic);
    else
      A.dplan = sub->line_solver_d(static_cast<Axis>(a), exec, lines, A.periodic);
    return;
  }
  TridiagonalOptions opt;
  opt.periodic = A.periodic;
  opt.stages = exec.is_cuda() && A.shared;  // the fused stage: decide_fused
  A.plan.emplace(exec, BoxLines{lines, static_cast<Axis>(a)}, opt);
  // The first active axis: the one whose stage carries the stencil fold in the default order
  // (another order's first axis gets its quiet plan at its first folded stage).
  bool first = true;
  for (int b = 0; b < a; ++b) first = first && !active[b];
  if (first) ensure_quiet(a);
}

template <class T>
void Operator<T>::Impl::exchange(Field<T>& f, bool force) {
  if (!sub) return;
  bool any = false;
  for (int a = 0; a < 3; ++a) any = any || split[a];
  if (!any) return;
  if (!force && reuse_ghosts)
    for (const void* q : fresh)
      if (q == f.data()) return;
  const auto t0 = std::chrono::steady_clock::now();
  sub->exchange(f, ghost, exec);
  halo_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (reuse_ghosts) {
    for (std::size_t i = fresh.size() - 1; i > 0; --i) fresh[i] = fresh[i - 1];
    fresh[0] = f.data();
  }
}

template <class T>
Operator<T>::~Operator() = default;
template <class T>
Operator<T>::Operator(Operator&&) noexcept = default;
template <class T>
Operator<T>& Operator<T>::operator=(Operator&&) noexcept = default;

template <class T>
const Grid& Operator<T>::grid() const {
  return impl_->grid;
}
template <class T>
const BoundaryConditions& Operator<T>::boundary() const {
  return impl_->bc;
}
template <class T>
const Executor& Operator<T>::executor() const {
  return impl_->exec;
}
template <class T>
int Operator<T>::implicit_axes() const {
  return impl_->k;
}
template <class T>
bool Operator<T>::active(Axis a) const {
  return impl_->active[static_cast<int>(a)];
}
template <class T>
bool Operator<T>::has_mixed() const {
  return impl_->any_mixed;
}
template <class T>
bool Operator<T>::shared_bands(Axis a) const {
  return impl_->active[static_cast<int>(a)] && impl_->ax[static_cast<int>(a)].shared;
}
template <class T>
std::array<index_t, 3> Operator<T>::unknown_lo() const {
  return impl_->lo;
}
template <class T>
std::array<index_t, 3> Operator<T>::unknown_hi() const {
  return impl_->hi;
}

template <class T>
std::array<index_t, 3> Operator<T>::extents() const {
  return impl_->N;
}
template <class T>
std::array<index_t, 3> Operator<T>::origin() const {
  return impl_->off;
}
template <class T>
std::array<index_t, 3> Operator<T>::owned_lo() const {
  return {impl_->ghost[0][0], impl_->ghost[1][0], impl_->ghost[2][0]};
}
template <class T>
std::array<index_t, 3> Operator<T>::owned_hi() const {
  const Impl& p = *impl_;
  return {p.N[0] - 1 - p.ghost[0][1], p.N[1] - 1 - p.ghost[1][1], p.N[2] - 1 - p.ghost[2][1]};
}
template <class T>
Field<T> Operator<T>::make_field() const {
  return Field<T>(impl_->N[0], impl_->N[1], impl_->N[2], impl_->exec);
}
template <class T>
const Subdomain* Operator<T>::subdomain() const {
  return impl_->sub.get();
}
template <class T>
void Operator<T>::exchange(Field<T>& f) {
  check_field(f, "f");
  impl_->exchange(f, true);
}
template <class T>
const char* Operator<T>::line_strategy(Axis a) const {
  const auto& A = impl_->ax[static_cast<int>(a)];
  return A.dplan ? A.dplan->name() : "local";
}
template <class T>
void Operator<T>::reuse_ghosts(bool on) {
  impl_->reuse_ghosts = on;
  impl_->in_step = on;
  if (impl_->split_defer)  // (a solve deferred before `off` is settled by settle() or the axis's next solve)
    for (auto& A : impl_->ax)
      if (A.dplan) A.dplan->defer_settle(on);
  impl_->fresh = {};
  impl_->bounded = nullptr;
}
template <class T>
double Operator<T>::halo_seconds() const {
  return impl_->halo_seconds;
}
template <class T>
std::array<double, 3> Operator<T>::line_exchange_seconds() const {
  return impl_->line_exchange;
}

template <class T>
void Operator<T>::check_field(const Field<T>& f, const char* name) const {
  const Grid& g = impl_->grid;
  const auto& N = impl_->N;
  if (f.empty() || f.nx() != N[0] || f.ny() != N[1] || f.nz() != N[2]) {
    if (!impl_->sub)
      throw InvalidArgument(std::string("Operator: field ") + name + " has extents " + detail::number(f.nx()) +
                            " x " + detail::number(f.ny()) + " x " + detail::number(f.nz()) + " but the grid is " +
                            g.describe() + "; allocate it as Field<T>(grid, executor)");
    throw InvalidArgument(std::string("Operator: field ") + name + " has extents " + detail::number(f.nx()) +
                          " x " + detail::number(f.ny()) + " x " + detail::number(f.nz()) +
                          " but this rank's piece (ghosts included) is " + detail::number(N[0]) + " x " +
                          detail::number(N[1]) + " x " + detail::number(N[2]) + "; allocate it with make_field()");
  }
  if (f.memory_space() != impl_->exec.memory_space())
    throw InvalidArgument(std::string("Operator: field ") + name + " lives in " +
                          (f.memory_space() == MemorySpace::host ? "host" : "device") +
                          " memory but the operator runs on " + impl_->exec.name() +
                          "; allocate it with the operator's executor");
}

template <class T>
void Operator<T>::set_boundary(double t, Field<T>& V) {
  detail::require(std::isfinite(t), "Operator::set_boundary: time t = " + detail::number(t) + " must be finite");
  check_field(V, "V");
  detail::TeamScope team(impl_->team[Impl::boundary_entry]);
  impl_->set_boundary(t, V);
}

template <class T>
void Operator<T>::apply(double t, Field<T>& V, const std::array<T, 4>& w, T alpha, const Field<T>* base,
                        Field<T>& out) {
  Impl& p = *impl_;
  detail::require(std::isfinite(t), "Operator::apply: time t = " + detail::number(t) + " must be finite");
  check_field(V, "V");
  check_field(out, "out");
  detail::TeamScope team(p.team[Impl::apply_entry]);
  if (base) check_field(*base, "base");
  detail::require(&V != &out && V.data() != out.data(),
                  "Operator::apply: out must not be V (the stencil reads V's neighbours)");
  p.set_boundary(t, V);
  p.exchange(V, false);
  p.forget(out);  // out may be base, never V
  detail::ApplyArgs<T> args;
  args.v = V.data();
  args.base = base ? base->data() : nullptr;
  args.alpha = alpha;
  args.w = w;
  args.out = out.data();
  if (p.source) {
    T ws = 0;
    for (int a = 0; a < 3; ++a)
      if (p.active[a]) ws += w[a + 1];
    if (ws != T(0)) {
      args.src[0] = p.source_at(t);
      args.src_scale[0] = ws / T(p.k);
    }
  }
  Stencils<T>::apply(p.exec, p.view, args);
  for (int a = 0; a < 3; ++a) {
    if (!p.active[a] || w[a + 1] == T(0)) continue;
    for (bool side : {false, true})
      if (p.neumann(a, side)) {
        const int f = 2 * a + (side ? 1 : 0);
        p.face_write(out, f, true, p.face_values(f, t), w[a + 1], true);
      }
  }
}

template <class T>
void Operator<T>::evaluate(int part, double t, Field<T>& V, Field<T>& out) {
  detail::require(part >= 0 && part <= 3, "Operator::evaluate: part = " + detail::number(part) +
                                              " must be 0 (mixed) or 1..3 (x, y, z)");
  std::array<T, 4> w{};
  w[part] = T(1);
  apply(t, V, w, T(0), nullptr, out);
}

template <class T>
void Operator<T>::solve(Axis axis, T s, double t_new, const Field<T>& base, Field<T>& Y, double t_old,
                        Field<T>* V_old, std::array<bool, 3> later, Field<T>* result) {
  Impl& p = *impl_;
  const int a = static_cast<int>(axis);
  detail::require(p.active[a], std::string("Operator::solve: axis ") + axis_name(axis) +
                                   " has a single node; there is nothing to solve along it");
  detail::require(std::isfinite(double(s)) && s > T(0),
                  "Operator::solve: s = " + detail::number(double(s)) + " must be finite and > 0 (theta*dt)");
  detail::require(std::isfinite(t_new) && std::isfinite(t_old), "Operator::solve: times must be finite");
  check_field(base, "base");
  check_field(Y, "Y");
  if (result) check_field(*result, "result");
  if (V_old) {
    check_field(*V_old, "V_old");
    detail::require(V_old->data() != Y.data(), "Operator::solve: Y must not be V_old");
  }
  // Y and result are written below: their ghosts are no longer current (after the
  // exchange of V_old, which may be result).
  struct Forget {
    Impl& p;
    Field<T>& Y;
    Field<T>* result;
    ~Forget() {
      p.forget(Y);
      if (result) p.forget(*result);
    }
  } forget{p, Y, result};
  if (p.fused(a)) {
    try {
      p.solve_fused(a, s, t_new, &base, Y, t_old, V_old, later, result);
    } catch (const SingularSystem& e) {
      if (!p.sub) throw;
      p.fail_later('S', e.what());  // lines within this rank: agreed in settle()
    }
    return;
  }
  detail::TeamScope team(p.team[Impl::solve_entry + a]);
  if (V_old) {
    p.set_boundary(t_old, *V_old);
    if (p.split[a]) p.exchange(*V_old, false);  // - A_a V_old reads the ghosts along a
  }
  typename Impl::AxisData& A = p.ax[a];
  // Right-hand side divided by s (the bands are those of I/s - A_a):
  //   base/s - F_a(t_old, V_old) + g_a(t_new) = base/s - A_a V_old + g_a(t_new) - g_a(t_old).
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  if (A.dplan) {  // a deferred solve of the axis ends before its bands change (its diagnosis reads them)
    try {
      p.settle_split(a);
    } catch (const SingularSystem&) {
      settle();  // as below: a kept error is the better message
      throw;
    }
  }
  p.form_diagonal(A, s);
  // A split axis with shared bands on the device: the line solver forms the right-hand side
  // inside its reduce pass (the fused stage's terms: adi/mpi's partition passes), Y is not
  // written. Where it cannot (solve_stage returns false) the passes below form it.
  if (A.dplan && A.shared && p.exec.is_cuda()) {
    const index_t o = A.sweep_offset, bo = A.band_offset;
    detail::TridiagonalStage<T> st;
    st.base = base.data() + o;
    st.v = V_old ? V_old->data() + o : nullptr;
    st.inv_s = T(1) / s;
    st.a = A.a.data() + bo;
    st.d = A.d.data() + bo;
    st.c = A.c.data() + bo;
    p.stage_ends(a, s, t_new, t_old, V_old, later, st);
    if (p.source && !cancel) {
      st.src[0] = p.source_at(t_new) + o;
      st.src_scale[0] = T(1) / T(p.k);
      if (V_old) {
        st.src[1] = p.source_at(t_old) + o;
        st.src_scale[1] = T(-1) / T(p.k);
        st.src[0] = p.source_at(t_new) + o;  // the second lookup may have refreshed the cache
      }
    }
    bool done = false;
    try {
      p.split_key(a);
      done = A.dplan->solve_stage(SharedBands<T>{A.a.data() + bo, A.b.data() + bo, A.c.data() + bo}, st,
                                  (result ? result->data() : Y.data()) + o);
    } catch (const SingularSystem&) {
      settle();  // as below: a kept error is the better message
      throw;
    }
    if (done) {
      p.split_done(a);
      return;
    }
  }
  detail::ApplyArgs<T> args;
  args.v = V_old ? V_old->data() : base.data();
  args.base = base.data();
  args.alpha = T(1) / s;
  if (V_old) args.w[a + 1] = T(-1);
  args.out = Y.data();
  if (p.source && !cancel) {
    args.src[0] = p.source_at(t_new);
    args.src_scale[0] = T(1) / T(p.k);
    if (V_old) {
      args.src[1] = p.source_at(t_old);
      args.src_scale[1] = T(-1) / T(p.k);
    }
  }
  Stencils<T>::apply(p.exec, p.view, args);
  for (bool side : {false, true}) {
    if (!p.has_face(a, side)) continue;
    const int f = 2 * a + (side ? 1 : 0);
    const BoundaryKind kind = p.face(a, side).kind();
    if (kind == BoundaryKind::neumann && !cancel) {
      p.face_write(Y, f, true, p.face_values(f, t_new), T(1), true);
      if (V_old) p.face_write(Y, f, true, p.face_values(f, t_old), T(-1), true);
    } else if (kind == BoundaryKind::dirichlet) {
      // Identity rows: the solve returns the boundary value of the stage there.
      p.face_write(Y, f, true, p.stage_face_values(f, s, t_new, t_old, V_old != nullptr, later), T(1) / s, false);
    }
  }
  const index_t o = A.sweep_offset;
  T* y = Y.data() + o;
  T* x = result ? result->data() + o : y;
  if (A.dplan) {
    try {
      p.split_solve(a, y, x);
    } catch (const SingularSystem&) {
      // Thrown on every rank of the lines (agreed by the plan): a kept error (e.g. the
      // non-finite data that made the pivot non-finite) is the better message.
      settle();
      throw;
    }
    return;
  }
  p.local_solve(a, *A.plan, y, x);
}

template <class T>
void Operator<T>::set_explicit_fold(ExplicitFold f) {
  impl_->fold_mode = f;
}
template <class T>
typename Operator<T>::ExplicitFold Operator<T>::explicit_fold() const {
  return impl_->fold_mode;
}

template <class T>
bool Operator<T>::folds(Axis a) const {
  return impl_->folds(static_cast<int>(a));
}

template <class T>
void Operator<T>::solve_folded(Axis axis, T s, double t_new, T alpha, const std::array<ExplicitTerm, 2>& terms,
                               Field<T>& Y, double t_old, Field<T>* V_old, std::array<bool, 3> later,
                               Field<T>* result) {
  Impl& p = *impl_;
  const int a = static_cast<int>(axis);
  detail::require(terms[0].field != nullptr, "Operator::solve_folded: terms[0].field is null; give the first term");
  for (const ExplicitTerm& term : terms) {
    if (!term.field) continue;
    check_field(*term.field, "terms[q].field");
    detail::require(std::isfinite(term.t), "Operator::solve_folded: term time t = " + detail::number(term.t) +
                                               " must be finite");
    detail::require(term.field->data() != Y.data(),
                    "Operator::solve_folded: Y must not be a term's field (the stage reads its neighbours)");
  }
  check_field(Y, "Y");
  typename Impl::Fold fold{alpha, terms};
  // What both folded paths need of the stage (the separate path's solve() checks its own).
  auto check_stage = [&] {
    detail::require(std::isfinite(double(s)) && s > T(0), "Operator::solve_folded: s = " +
                                                              detail::number(double(s)) +
                                                              " must be finite and > 0 (theta*dt)");
    detail::require(std::isfinite(t_new) && std::isfinite(t_old), "Operator::solve_folded: times must be finite");
    if (result) check_field(*result, "result");
    if (V_old) {
      check_field(*V_old, "V_old");
      detail::require(V_old->data() != Y.data(), "Operator::solve_folded: Y must not be V_old");
    }
  };
  // The kernel fold where the fused stage takes it; elsewhere (another axis, mixed terms, ...)
  // the stencil fold, then the separate passes.
  // ADI_FOLD_X_RING=1 (issue 16, a same-run A/B switch, default off; scripts/gpu_heat_ab.sh --ring):
  // a chain's first stage (one term, V_old its field) takes the kernel fold where the fused stage
  // folds, which runs the x ring kernel where it applies (cuda_backend::fused_stage_run;
  // solvers/cuda/thomas_pcr_fused_x_ring.cuh); the corrected schemes' two-term stage keeps the stencil fold.
  // Only where the ring kernel can run (fused_x_ring_applies: lines along x of at most 256, the
  // sweep interior along y and z, i.e. Dirichlet faces there): elsewhere the default path stays
  // (the folded X kernel it would fall back to is 2-3x slower: 512^3 1.99 -> 6.7 ms, H100 run s38/14).
  // (the kernel's 32-bit offsets: a field of fewer than 2^31 values, as fused_x_ring_applies)
  bool ring_fits = a == 0 && p.N[0] <= 256 &&
                   double(Field<T>::padded_row(p.N[0])) * double(p.N[1]) * double(p.N[2]) < 2147483648.0;
  for (int b = 1; b < 3; ++b)
    ring_fits = ring_fits && (!p.active[b] || (p.lo[b] >= 1 && p.hi[b] <= p.N[b] - 2));
  const bool ring = p.fold_mode == ExplicitFold::stencil && cuda_backend::fold_x_ring_mode() != 0 && ring_fits &&
                    !terms[1].field && (!V_old || V_old == terms[0].field);
  // ADI_FOLD_STRIDED=1 / 2 (its lean form) / 3 (the lean form staged) (issue 16, stop 39, the z-first order; an A/B switch, default off;
  // scripts/gpu_heat_ab.sh --zfirst): a chain's first stage along y or z (AdiSolver::set_stage_order)
  // takes the kernel fold too, in the fused Y/Z kernel (solvers/cuda/thomas_pcr_fused_strided_fold.cuh;
  // only in a build with ADI_FOLD_STRIDED_KERNELS and where its launch applies: fused_strided_fold_applies).
  const bool strided = p.fold_mode == ExplicitFold::stencil && a != 0 &&
                       detail::env_int("ADI_FOLD_STRIDED", 0, 3, 0) != 0 && p.exec.is_cuda() &&
                       p.fused(a) &&
                       cuda_backend::fused_strided_fold_applies(p.ax[a].plan->lines(), int(sizeof(T))) &&
                       !terms[1].field && V_old && V_old == terms[0].field;
  const bool in_kernel = (p.fold_mode == ExplicitFold::kernel || ring || strided) &&
                         p.can_fold(a, t_new, t_old, V_old != nullptr, fold, result, ring || strided, strided);
  if (p.fold_mode != ExplicitFold::separate && !in_kernel) {
    check_stage();
    try {
      if (p.solve_stencil_folded(a, s, t_new, fold, Y, t_old, V_old, later, result)) return;
    } catch (const SingularSystem&) {
      if (p.sub) settle();  // a split axis's plan agreed on it: a kept error is the better message
      throw;
    }
  }
  if (!in_kernel) {
    // The explicit pass into Y, then the stage in place.
    apply(terms[0].t, *terms[0].field, terms[0].w, alpha, terms[0].field, Y);
    if (terms[1].field) apply(terms[1].t, *terms[1].field, terms[1].w, T(1), &Y, Y);
    solve(axis, s, t_new, Y, Y, t_old, V_old, later, result);
    return;
  }
  check_stage();
  // The stencil reads the terms' Dirichlet nodes: g(t_q) there, as apply() writes them.
  for (const ExplicitTerm& term : terms)
    if (term.field) p.set_boundary(term.t, *term.field);
  p.solve_fused(a, s, t_new, nullptr, Y, t_old, V_old, later, result, &fold);
  // Y and result were written: their exchanged ghosts and bounded faces are stale (after the
  // stage, as in solve(): V_old, which may be result, was exchanged for it).
  p.forget(Y);
  if (result) p.forget(*result);
}

template <class T>
void Operator<T>::Impl::write_diagonal(AxisData& A, T inv_s) {
  ++A.band_key;  // (the split plans' bands key: the bands change)
  if (A.shared)
    Stencils<T>::diagonal(exec, A.d.data(), inv_s, A.b.data(), A.d.size());
  else
    Stencils<T>::diagonal(exec, A.fd.data(), inv_s, A.fb.data(), A.fd.box().sz * A.fd.nz());
}

template <class T>
void Operator<T>::Impl::form_diagonal(AxisData& A, T s) {
  if (A.s_formed == s) return;
  write_diagonal(A, T(1) / s);
  A.s_formed = s;
}

template <class T>
void Operator<T>::Impl::split_solve(int a, T* y, T* x) {
  AxisData& A = ax[a];
  const index_t o = A.sweep_offset, bo = A.band_offset;
  settle_split(a);
  split_key(a);
  if (A.shared)
    A.dplan->solve(SharedBands<T>{A.a.data() + bo, A.b.data() + bo, A.c.data() + bo}, y, x);
  else
    A.dplan->solve(Bands<T>{A.fa.data() + o, A.fb.data() + o, A.fc.data() + o}, y, x);
  split_done(a);
}

template <class T>
bool Operator<T>::Impl::local_solve(int a, TridiagonalPlan<T>& plan, T* y, T* x) {
  const AxisData& A = ax[a];
  const index_t o = A.sweep_offset;
  try {
    if (A.shared)
      plan.solve(SharedBands<T>{A.a.data(), A.b.data(), A.c.data()}, y, x);
    else
      plan.solve(Bands<T>{A.fa.data() + o, A.fb.data() + o, A.fc.data() + o}, y, x);
  } catch (const SingularSystem& e) {
    if (!sub) throw;
    fail_later('S', e.what());  // lines within this rank: agreed in settle()
    return false;
  }
  return true;
}

// ExplicitFold::stencil: Y = (alpha P_0 + sum_q w_q . F(t_q, P_q)) / s - F_a(t_old, V_old)
// + g_a(t_new) at the unknowns, one stencil pass per term (V_old is a term's field: its
// -A_a part rides on that term's pass), then Neumann and Dirichlet face data, then the plan's
// line solve (what solve() does after its right-hand side).
template <class T>
bool Operator<T>::Impl::solve_stencil_folded(int a, T s, double t_new, const Fold& f, Field<T>& Y, double t_old,
                                             Field<T>* V_old, const std::array<bool, 3>& later, Field<T>* result) {
  if (!f.terms[0].field) return false;
  int v_term = -1;
  for (int q = 0; q < 2; ++q)
    if (V_old && f.terms[q].field && f.terms[q].field->data() == V_old->data()) v_term = q;
  if (V_old && v_term < 0) return false;
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
  const T inv_s = T(1) / s;
  // Sources as (time, scale) pairs, merged by time; at most two (both ride on the first pass).
  std::array<double, 2> src_t{};
  std::array<T, 2> src_scale{};
  int n_src = 0;
  bool too_many = false;
  auto add_source = [&](double t, T scale) {
    for (int i = 0; i < n_src; ++i)
      if (src_t[i] == t) {
        src_scale[i] += scale;
        return;
      }
    if (n_src == 2) {
      too_many = true;
      return;
    }
    src_t[n_src] = t;
    src_scale[n_src++] = scale;
  };
  if (source) {
    if (!cancel) {
      add_source(t_new, T(1) / T(k));
      if (V_old) add_source(t_old, T(-1) / T(k));
    }
    for (const auto& term : f.terms) {
      if (!term.field) continue;
      T ws = 0;
      for (int b = 0; b < 3; ++b)
        if (active[b]) ws += term.w[b + 1];
      if (ws != T(0)) add_source(term.t, inv_s * (ws / T(k)));
    }
  }
  if (too_many) return false;
  detail::TeamScope team(this->team[solve_entry + a]);
  for (const auto& term : f.terms)
    if (term.field) set_boundary(term.t, *term.field);
  // With a subdomain the stencil reads the terms' ghost planes along the split axes (as apply()).
  for (const auto& term : f.terms)
    if (term.field) exchange(*term.field, false);
  forget(Y);
  if (result) forget(*result);
  for (int q = 0; q < 2; ++q) {
    const auto& term = f.terms[q];
    if (!term.field) continue;
    detail::ApplyArgs<T> args;
    args.v = term.field->data();
    args.base = q == 0 ? term.field->data() : Y.data();
    args.alpha = q == 0 ? f.alpha * inv_s : T(1);
    for (int p = 0; p < 4; ++p) args.w[p] = term.w[p] * inv_s;
    if (q == v_term) args.w[a + 1] -= T(1);
    if (q == 0)
      for (int i = 0; i < n_src; ++i) {
        args.src[i] = source_at(src_t[i]);
        args.src_scale[i] = src_scale[i];
      }
    args.out = Y.data();
    Stencils<T>::apply(exec, view, args);
  }
  // Neumann data: the terms' (times w / s) on every active axis, the stage's own along a.
  for (const auto& term : f.terms) {
    if (!term.field) continue;
    for (int b = 0; b < 3; ++b) {
      if (!active[b] || term.w[b + 1] == T(0)) continue;
      for (bool side : {false, true})
        if (neumann(b, side)) {
          const int fc = 2 * b + (side ? 1 : 0);
          face_write(Y, fc, true, face_values(fc, term.t), term.w[b + 1] * inv_s, true);
        }
    }
  }
  for (bool side : {false, true}) {
    if (!has_face(a, side)) continue;
    const int fc = 2 * a + (side ? 1 : 0);
    const BoundaryKind kind = face(a, side).kind();
    if (kind == BoundaryKind::neumann && !cancel) {
      face_write(Y, fc, true, face_values(fc, t_new), T(1), true);
      if (V_old) face_write(Y, fc, true, face_values(fc, t_old), T(-1), true);
    } else if (kind == BoundaryKind::dirichlet) {
      face_write(Y, fc, true, stage_face_values(fc, s, t_new, t_old, V_old != nullptr, later), inv_s, false);
    }
  }
  // The line solve, as solve(): the plan's kernels, in place or into result.
  AxisData& A = ax[a];
  T* y = Y.data() + A.sweep_offset;
  T* x = result ? result->data() + A.sweep_offset : y;
  if (A.dplan) {  // a split axis: the distributed plan
    settle_split(a);  // (a deferred solve's end before its bands change)
    form_diagonal(A, s);
    split_solve(a, y, x);
    return true;
  }
  ensure_quiet(a);
  T& formed = fused(a) ? A.b_formed : A.s_formed;  // the fused kernel does not form b
  // Pivots depend on s only: checked (one synchronisation) when s changes, as the fused stage.
  const bool check = formed != s || !A.quiet;
  if (formed != s) {
    write_diagonal(A, inv_s);
    formed = T(0);  // until the checked solve below succeeds
  }
  TridiagonalPlan<T>& plan = check ? *A.plan : *A.quiet;
  if (local_solve(a, plan, y, x)) formed = s;
  return true;
}

// The fused stages' pivot flags (solve_fused), read once for every axis with a check
// pending: one synchronisation, at the end of a step (settle) rather than one per stage.
template <class T>
void Operator<T>::Impl::check_stages() {
  bool any = false;
  for (T s : checking) any = any || s != T(0);
  if (!any) return;
  cuda_backend::copy_on_stream(flags_read.data(), pivot_flag.get(), sizeof(flags_read),
                               cuda_backend::Copy::device_to_host, exec.stream());
  std::string first;
  for (int a = 0; a < 3; ++a) {
    if (checking[a] == T(0)) continue;
    if (flags_read[a] != 0) {
      ax[a].s_formed = T(0);  // checked again at the next stage
      if (first.empty())
        first = std::string("Operator::solve: the implicit stage along ") + axis_name(static_cast<Axis>(a)) +
                " failed the pivot check for s = " + detail::number(double(checking[a])) +
                " (a zero or non-finite pivot, or pivot growth that makes Thomas without pivoting "
                "inaccurate): I/s - A is not diagonally dominant enough; take a smaller time step "
                "(s = theta * dt) or run the operator on the host";
    }
    checking[a] = T(0);
  }
  if (first.empty()) return;
  // The fused stage's flag does not tell a zero pivot from a failed stability check: either way
  // Thomas without pivoting is unsafe, UnstableSystem (a SingularSystem).
  if (!sub) throw UnstableSystem(first);
  fail_later('U', first);  // lines within this rank: agreed in settle()
}

template <class T>
void Operator<T>::settle() {
  Impl& p = *impl_;
  // Deferred split solves (ADI_SPLIT_DEFER) end here: a failed one throws on every rank of its
  // axis, after the agreement below (whose kept error, if any, is the better message, as in
  // solve()); every rank reaches that agreement once either way.
  std::exception_ptr split_error;
  for (int a = 0; a < 3; ++a) {
    try {
      p.settle_split(a);
    } catch (const SingularSystem&) {
      if (!split_error) split_error = std::current_exception();
    }
  }
  p.check_stages();
  if (!p.sub) {
    if (split_error) std::rethrow_exception(split_error);
    return;
  }
  const std::string m = p.sub->first_error(p.pending);
  p.pending.clear();
  if (m.empty() && split_error) std::rethrow_exception(split_error);
  if (m.empty()) return;
  if (m[0] == 'S') throw SingularSystem(m.substr(1));
  if (m[0] == 'U') throw UnstableSystem(m.substr(1));
  throw InvalidArgument(m.substr(1));
}

template class Operator<float>;
template class Operator<double>;

}  // namespace adi
