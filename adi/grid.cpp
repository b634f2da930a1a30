#include "adi/grid.hpp"

#include <cmath>
#include <sstream>

#include "adi/error.hpp"

namespace adi {

AxisGrid AxisGrid::uniform(index_t n, double lo, double hi) {
  detail::require(n >= 1, "AxisGrid::uniform: n = " + detail::number(n) + " must be >= 1");
  detail::require(std::isfinite(lo) && std::isfinite(hi) && (n == 1 || hi > lo),
                  "AxisGrid::uniform: need finite lo < hi, got lo = " + detail::number(lo) +
                      ", hi = " + detail::number(hi));
  std::vector<double> x(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) x[i] = n == 1 ? lo : lo + (hi - lo) * double(i) / double(n - 1);
  if (n > 1) x.back() = hi;
  return AxisGrid(std::move(x), true);
}

AxisGrid AxisGrid::stretched(index_t n, double lo, double hi, double center, double intensity) {
  detail::require(n >= 2, "AxisGrid::stretched: n = " + detail::number(n) + " must be >= 2");
  detail::require(hi > lo, "AxisGrid::stretched: need lo < hi");
  detail::require(center >= lo && center <= hi,
                  "AxisGrid::stretched: center = " + detail::number(center) + " must lie in [lo, hi]");
  detail::require(intensity > 0, "AxisGrid::stretched: intensity = " + detail::number(intensity) +
                                     " must be > 0");
  // x(xi) = center + c*sinh(xi), xi uniform in [asinh((lo-center)/c), asinh((hi-center)/c)]
  // with c = (hi - lo) / intensity (in 't Hout & Foulon's map).
  const double c = (hi - lo) / intensity;
  const double x0 = std::asinh((lo - center) / c), x1 = std::asinh((hi - center) / c);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (index_t i = 0; i < n; ++i) x[i] = center + c * std::sinh(x0 + (x1 - x0) * double(i) / double(n - 1));
  x.front() = lo;
  x.back() = hi;
  return AxisGrid(std::move(x), false);
}

AxisGrid AxisGrid::from_nodes(std::vector<double> nodes) {
  detail::require(!nodes.empty(), "AxisGrid::from_nodes: need at least one node");
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    detail::require(std::isfinite(nodes[i]), "AxisGrid::from_nodes: node " + detail::number(i) +
                                                  " is not finite");
    if (i > 0)
      detail::require(nodes[i] > nodes[i - 1], "AxisGrid::from_nodes: nodes must increase strictly (node " +
                                                   detail::number(i) + ")");
  }
  return AxisGrid(std::move(nodes), false);
}

Grid Grid::uniform(std::array<index_t, 3> n, std::array<double, 3> lo, std::array<double, 3> hi) {
  return Grid(AxisGrid::uniform(n[0], lo[0], hi[0]), AxisGrid::uniform(n[1], lo[1], hi[1]),
              AxisGrid::uniform(n[2], lo[2], hi[2]));
}

int Grid::dims() const {
  int d = 0;
  for (const auto& a : axes_) d += a.size() > 1;
  return d;
}

std::string Grid::describe() const {
  std::ostringstream s;
  s << nx() << " x " << ny() << " x " << nz();
  return s.str();
}

}  // namespace adi
