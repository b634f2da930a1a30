#include "adi/detail/operator_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

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
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.grid = grid;
  p.bc = bc;
  p.exec = exec;
  p.source = pde.source;
  if (grid.size() < 2)
    throw InvalidArgument("Operator: grid " + grid.describe() + " has a single node; give at least one axis n >= 2");
  bc.validate(grid);
  for (int a = 0; a < 3; ++a) {
    p.active[a] = grid.extent(static_cast<Axis>(a)) > 1;
    p.k += p.active[a];
  }
  for (int a = 0; a < 3; ++a) {
    const index_t n = grid.extent(static_cast<Axis>(a));
    p.lo[a] = p.dirichlet(a, false) ? 1 : 0;
    p.hi[a] = n - 1 - (p.dirichlet(a, true) ? 1 : 0);
  }
  p.static_data = !pde.source;
  for (int f = 0; f < 6; ++f) p.static_data = p.static_data && bc[static_cast<Face>(f)].is_constant();
  if (exec.is_cuda()) p.pivot_flag = detail::Storage(sizeof(int), exec);
  for (const Coefficient* c : {&pde.diffusion[0], &pde.diffusion[1], &pde.diffusion[2], &pde.convection[0],
                               &pde.convection[1], &pde.convection[2], &pde.reaction, &pde.mixed_xy,
                               &pde.mixed_xz, &pde.mixed_yz})
    detail::require(!c->is_constant() || std::isfinite(c->constant()),
                    "Operator: a constant PDE coefficient is " + detail::number(c->constant()) +
                        "; coefficients must be finite");
  const index_t sy = Field<T>::padded_row(grid.nx());
  p.view.box = Box3{grid.nx(), grid.ny(), grid.nz(), sy, sy * grid.ny()};
  p.view.lo = p.lo;
  p.view.hi = p.hi;
  for (int a = 0; a < 3; ++a)
    if (p.active[a]) p.build_axis(a, pde);
  p.build_mixed(pde);
  p.decide_fused();
  p.tune_teams();
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
void Operator<T>::check_field(const Field<T>& f, const char* name) const {
  const Grid& g = impl_->grid;
  if (f.empty() || f.nx() != g.nx() || f.ny() != g.ny() || f.nz() != g.nz())
    throw InvalidArgument(std::string("Operator: field ") + name + " has extents " + detail::number(f.nx()) +
                          " x " + detail::number(f.ny()) + " x " + detail::number(f.nz()) + " but the grid is " +
                          g.describe() + "; allocate it as Field<T>(grid, executor)");
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
      if (p.face(a, side).kind() == BoundaryKind::neumann) {
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
  if (p.fused(a)) {
    p.solve_fused(a, s, t_new, base, Y, t_old, V_old, later, result);
    return;
  }
  detail::TeamScope team(p.team[Impl::solve_entry + a]);
  if (V_old) p.set_boundary(t_old, *V_old);
  typename Impl::AxisData& A = p.ax[a];
  // Right-hand side divided by s (the bands are those of I/s - A_a):
  //   base/s - F_a(t_old, V_old) + g_a(t_new) = base/s - A_a V_old + g_a(t_new) - g_a(t_old).
  const bool cancel = V_old && t_old == t_new;  // g_a(t_new) - g_a(t_old) = 0
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
      args.src[0] = p.source_at(t_new);  // the second lookup may have refreshed the cache
    }
  }
  Stencils<T>::apply(p.exec, p.view, args);
  for (bool side : {false, true}) {
    const int f = 2 * a + (side ? 1 : 0);
    const BoundaryKind kind = p.face(a, side).kind();
    if (kind == BoundaryKind::neumann && !cancel) {
      p.face_write(Y, f, true, p.face_values(f, t_new), T(1), true);
      if (V_old) p.face_write(Y, f, true, p.face_values(f, t_old), T(-1), true);
    } else if (kind == BoundaryKind::dirichlet) {
      // Identity rows: the solve returns the boundary value of the stage there.
      const T* g_new = p.face_values(f, t_new);
      const bool correct = V_old && !cancel && p.stage_correction(a, later);
      if (correct) {
        p.face_write(Y, f, false, g_new, T(1), false);  // A_i reads g(t_new) along the face
        p.stage_face_correction(f, s, t_new, Y, t_old, *V_old, later);
      }
      p.face_write(Y, f, true, g_new, T(1) / s, false);
      if (correct) p.face_write(Y, f, true, p.face_scratch.data(), T(1) / s, true);
    }
  }
  if (A.s_formed != s) {
    if (A.shared)
      Stencils<T>::diagonal(p.exec, A.d.data(), T(1) / s, A.b.data(), A.d.size());
    else
      Stencils<T>::diagonal(p.exec, A.fd.data(), T(1) / s, A.fb.data(), A.fd.box().sz * A.fd.nz());
    A.s_formed = s;
  }
  T* y = Y.data() + A.sweep_offset;
  T* x = result ? result->data() + A.sweep_offset : y;
  if (A.shared) {
    A.plan->solve(SharedBands<T>{A.a.data(), A.b.data(), A.c.data()}, y, x);
  } else {
    const index_t o = A.sweep_offset;
    A.plan->solve(Bands<T>{A.fa.data() + o, A.fb.data() + o, A.fc.data() + o}, y, x);
  }
}

template class Operator<float>;
template class Operator<double>;

}  // namespace adi
