#pragma once
// Boundary conditions per face of a grid: Dirichlet, Neumann (outward normal
// derivative) or periodic, with constant data or data g(t, x, y, z).
//
//   auto bc = adi::BoundaryConditions::all(adi::Boundary::dirichlet(0.0));
//   bc.set(adi::Face::x_hi, adi::Boundary::neumann([](double t, double x, double y, double z) {
//     return std::exp(-t) * y;
//   }));
//   bc.set_periodic(adi::Axis::z);
//
// Dirichlet nodes are known values stored in every field (the operator writes
// g(t) into them); Neumann and periodic nodes are unknowns. Faces of an axis
// with extent 1 (2D and 1D problems) are ignored.
#include <array>
#include <functional>
#include <string>

#include "adi/grid.hpp"
#include "adi/layout.hpp"

namespace adi {

// The six faces of a box: lo is the face at the axis's first node, hi at its last.
enum class Face : int { x_lo = 0, x_hi = 1, y_lo = 2, y_hi = 3, z_lo = 4, z_hi = 5 };

inline Face face_of(Axis a, bool hi) { return static_cast<Face>(2 * static_cast<int>(a) + (hi ? 1 : 0)); }
inline Axis axis_of(Face f) { return static_cast<Axis>(static_cast<int>(f) / 2); }
inline bool is_hi(Face f) { return static_cast<int>(f) % 2 == 1; }
// "x-", "x+", "y-", "y+", "z-", "z+".
const char* face_name(Face f);

enum class BoundaryKind { dirichlet, neumann, periodic, linear };
const char* boundary_kind_name(BoundaryKind k);

// Boundary data g(t, x, y, z) (value for Dirichlet, outward normal derivative for Neumann).
using BoundaryFunction = std::function<double(double t, double x, double y, double z)>;

// The condition on one face. Functions are evaluated on boundary nodes only.
class Boundary {
 public:
  // Dirichlet u = 0.
  Boundary() = default;
  static Boundary dirichlet(double value);
  static Boundary dirichlet(BoundaryFunction g);
  // Neumann du/dn = value, n the OUTWARD normal (at x_lo: -du/dx, at x_hi: +du/dx).
  static Boundary neumann(double value);
  static Boundary neumann(BoundaryFunction g);
  // Periodic: put it on both faces of an axis (or use BoundaryConditions::set_periodic).
  // The axis's n nodes are all unknowns, x_{n-1} + h_wrap = x_0 + period: the grid
  // holds no duplicate end node. period = 0 means "uniform axis, period n*h"
  // (AxisGrid::uniform(n, lo, lo + (n-1)*L/n) has period L; see periodic_axis).
  static Boundary periodic(double period = 0.0);
  // Linear extrapolation (u_nn = 0, no data): the node is an unknown and the PDE holds
  // there, the ghost node continuing the line through the last two nodes, so the second
  // derivative across the face drops out and the first is one-sided. The far-field
  // condition of option pricing, and the degenerate Heston boundary v = 0 where the
  // diffusion vanishes. Mixed terms are dropped on the face's nodes (taken as 0 there).
  static Boundary linear();

  BoundaryKind kind() const { return kind_; }
  bool is_constant() const { return !g_; }
  // The data at (t, x, y, z): the constant or g(t, x, y, z).
  double value(double t, double x, double y, double z) const { return g_ ? g_(t, x, y, z) : value_; }
  double period() const { return period_; }

 private:
  BoundaryKind kind_ = BoundaryKind::dirichlet;
  double value_ = 0.0;
  double period_ = 0.0;
  BoundaryFunction g_;
};

// A uniform axis of n nodes for a periodic direction of length `period` starting at
// lo: nodes lo + i*period/n, i = 0..n-1 (no duplicate end node).
AxisGrid periodic_axis(index_t n, double lo, double period);

// One Boundary per face. Default: homogeneous Dirichlet everywhere.
class BoundaryConditions {
 public:
  BoundaryConditions() = default;
  static BoundaryConditions all(const Boundary& b);

  BoundaryConditions& set(Face f, Boundary b);
  BoundaryConditions& set(Axis a, Boundary lo, Boundary hi);
  // Both faces of axis a periodic (period 0: uniform axis, n*h).
  BoundaryConditions& set_periodic(Axis a, double period = 0.0);

  const Boundary& operator[](Face f) const { return faces_[static_cast<int>(f)]; }
  const Boundary& face(Face f) const { return (*this)[f]; }
  bool periodic(Axis a) const { return face(face_of(a, false)).kind() == BoundaryKind::periodic; }

  // Throws InvalidArgument when a periodic face has a non-periodic partner, a
  // non-uniform periodic axis has no period, the period does not exceed the axis
  // length, or an axis is too short for its conditions (Dirichlet-Dirichlet and
  // periodic: n >= 3; otherwise n >= 2; extent-1 axes are ignored).
  void validate(const Grid& grid) const;

 private:
  std::array<Boundary, 6> faces_{};
};

}  // namespace adi
