#include "adi/boundary.hpp"

#include <cmath>
#include <string>

#include "adi/error.hpp"

namespace adi {

const char* face_name(Face f) {
  static const char* names[] = {"x-", "x+", "y-", "y+", "z-", "z+"};
  return names[static_cast<int>(f)];
}

const char* boundary_kind_name(BoundaryKind k) {
  switch (k) {
    case BoundaryKind::dirichlet: return "Dirichlet";
    case BoundaryKind::neumann: return "Neumann";
    case BoundaryKind::linear: return "linear";
    default: return "periodic";
  }
}

namespace {
void require_finite(double v, const char* what) {
  detail::require(std::isfinite(v), std::string(what) + ": value " + detail::number(v) + " must be finite");
}
}  // namespace

Boundary Boundary::dirichlet(double value) {
  require_finite(value, "Boundary::dirichlet");
  Boundary b;
  b.value_ = value;
  return b;
}

Boundary Boundary::dirichlet(BoundaryFunction g) {
  detail::require(static_cast<bool>(g), "Boundary::dirichlet: the function g is empty; pass a callable "
                                        "g(t, x, y, z) or a number");
  Boundary b;
  b.g_ = std::move(g);
  return b;
}

Boundary Boundary::neumann(double value) {
  require_finite(value, "Boundary::neumann");
  Boundary b;
  b.kind_ = BoundaryKind::neumann;
  b.value_ = value;
  return b;
}

Boundary Boundary::neumann(BoundaryFunction g) {
  detail::require(static_cast<bool>(g), "Boundary::neumann: the function g is empty; pass a callable "
                                        "g(t, x, y, z) or a number");
  Boundary b;
  b.kind_ = BoundaryKind::neumann;
  b.g_ = std::move(g);
  return b;
}

Boundary Boundary::periodic(double period) {
  detail::require(std::isfinite(period) && period >= 0.0,
                  "Boundary::periodic: period = " + detail::number(period) +
                      " must be finite and >= 0 (0: n*h of a uniform axis)");
  Boundary b;
  b.kind_ = BoundaryKind::periodic;
  b.period_ = period;
  return b;
}

Boundary Boundary::linear() {
  Boundary b;
  b.kind_ = BoundaryKind::linear;
  return b;
}

AxisGrid periodic_axis(index_t n, double lo, double period) {
  detail::require(n >= 3, "periodic_axis: n = " + detail::number(n) + " must be >= 3");
  detail::require(std::isfinite(period) && period > 0.0,
                  "periodic_axis: period = " + detail::number(period) + " must be finite and > 0");
  return AxisGrid::uniform(n, lo, lo + period * double(n - 1) / double(n));
}

BoundaryConditions BoundaryConditions::all(const Boundary& b) {
  BoundaryConditions bc;
  bc.faces_.fill(b);
  return bc;
}

BoundaryConditions& BoundaryConditions::set(Face f, Boundary b) {
  faces_[static_cast<int>(f)] = std::move(b);
  return *this;
}

BoundaryConditions& BoundaryConditions::set(Axis a, Boundary lo, Boundary hi) {
  set(face_of(a, false), std::move(lo));
  return set(face_of(a, true), std::move(hi));
}

BoundaryConditions& BoundaryConditions::set_periodic(Axis a, double period) {
  return set(a, Boundary::periodic(period), Boundary::periodic(period));
}

void BoundaryConditions::validate(const Grid& grid) const {
  for (int d = 0; d < 3; ++d) {
    const Axis a = static_cast<Axis>(d);
    const AxisGrid& ax = grid.axis(a);
    const index_t n = ax.size();
    if (n == 1) continue;
    const Boundary& lo = face(face_of(a, false));
    const Boundary& hi = face(face_of(a, true));
    const bool plo = lo.kind() == BoundaryKind::periodic, phi = hi.kind() == BoundaryKind::periodic;
    const std::string an = axis_name(a);
    if (plo != phi)
      throw InvalidArgument("BoundaryConditions: face " + std::string(face_name(face_of(a, plo))) +
                            " is periodic but face " + face_name(face_of(a, !plo)) + " is " +
                            boundary_kind_name(plo ? hi.kind() : lo.kind()) +
                            "; make both faces of axis " + an + " periodic (set_periodic) or neither");
    if (plo) {
      if (lo.period() != 0.0 && hi.period() != 0.0 && lo.period() != hi.period())
        throw InvalidArgument("BoundaryConditions: axis " + an + " has two different periods (" +
                              detail::number(lo.period()) + ", " + detail::number(hi.period()) + ")");
      const double period = lo.period() != 0.0 ? lo.period() : hi.period();
      detail::require(period != 0.0 || ax.is_uniform(),
                      "BoundaryConditions: periodic axis " + an +
                          " is not uniform; pass its period to set_periodic / Boundary::periodic");
      detail::require(period == 0.0 || period > ax.hi() - ax.lo(),
                      "BoundaryConditions: period " + detail::number(period) + " of axis " + an +
                          " must exceed the node span " + detail::number(ax.hi() - ax.lo()) +
                          " (the grid holds no duplicate end node)");
      detail::require(n >= 3, "BoundaryConditions: periodic axis " + an + " has n = " + detail::number(n) +
                                  " nodes; it needs n >= 3");
    } else {
      const bool dd = lo.kind() == BoundaryKind::dirichlet && hi.kind() == BoundaryKind::dirichlet;
      detail::require(!dd || n >= 3, "BoundaryConditions: axis " + an + " has n = " + detail::number(n) +
                                         " nodes and Dirichlet faces at both ends; it needs n >= 3 "
                                         "(at least one unknown)");
    }
  }
}

}  // namespace adi
