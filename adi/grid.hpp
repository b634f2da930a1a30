#pragma once
// Grids: three 1D axes (uniform or stretched), x fastest in memory.
// 1D and 2D problems are grids whose trailing extents are 1.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "adi/layout.hpp"

namespace adi {

// The nodes of one axis, strictly increasing. Uniform axes remember that they are.
class AxisGrid {
 public:
  AxisGrid() : nodes_{0.0}, uniform_(true) {}
  // n nodes from lo to hi inclusive (n == 1: the single node lo).
  static AxisGrid uniform(index_t n, double lo, double hi);
  // n nodes on [lo, hi] clustered around `center` by a sinh map; `intensity` > 0
  // is the ratio of the domain width to the clustering width (larger: finer near center).
  static AxisGrid stretched(index_t n, double lo, double hi, double center, double intensity);
  // Arbitrary strictly increasing nodes.
  static AxisGrid from_nodes(std::vector<double> nodes);

  index_t size() const { return static_cast<index_t>(nodes_.size()); }
  double operator[](index_t i) const { return nodes_[static_cast<std::size_t>(i)]; }
  const std::vector<double>& nodes() const { return nodes_; }
  double lo() const { return nodes_.front(); }
  double hi() const { return nodes_.back(); }
  bool is_uniform() const { return uniform_; }
  // h_i = x_{i+1} - x_i, for i in [0, n-2].
  double spacing(index_t i) const { return (*this)[i + 1] - (*this)[i]; }

 private:
  AxisGrid(std::vector<double> nodes, bool uniform) : nodes_(std::move(nodes)), uniform_(uniform) {}
  std::vector<double> nodes_;
  bool uniform_;
};

class Grid {
 public:
  Grid() = default;
  Grid(AxisGrid x, AxisGrid y = {}, AxisGrid z = {}) : axes_{std::move(x), std::move(y), std::move(z)} {}
  // Uniform grid with n[d] nodes from lo[d] to hi[d]; use n = {nx, 1, 1} for 1D.
  static Grid uniform(std::array<index_t, 3> n, std::array<double, 3> lo, std::array<double, 3> hi);

  const AxisGrid& axis(Axis a) const { return axes_[static_cast<int>(a)]; }
  index_t extent(Axis a) const { return axis(a).size(); }
  index_t nx() const { return axes_[0].size(); }
  index_t ny() const { return axes_[1].size(); }
  index_t nz() const { return axes_[2].size(); }
  index_t size() const { return nx() * ny() * nz(); }
  // Number of axes with more than one node (1, 2 or 3).
  int dims() const;
  std::string describe() const;

 private:
  std::array<AxisGrid, 3> axes_;
};

}  // namespace adi
