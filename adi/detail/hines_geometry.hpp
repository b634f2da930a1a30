#pragma once
// Small geometry helpers shared by the Hines morphology, discretisation and population files
// (adi/hines_*.cpp). Private to the library.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/hines.hpp"

namespace adi::detail::hines {

constexpr double kPi = 3.14159265358979323846;

inline std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

inline std::string section_name(const Morphology& m, int s) {
  const Section& sec = m.sections()[static_cast<std::size_t>(s)];
  std::string r = "section " + std::to_string(s);
  if (!sec.name.empty()) r += " (" + sec.name + ")";
  if (sec.swc_line > 0) r += " (SWC line " + std::to_string(sec.swc_line) + ")";
  if (!m.name().empty()) r += " of '" + m.name() + "'";
  return r;
}

inline double distance(const MorphologyPoint& a, const MorphologyPoint& b) {
  const double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// Arc length at every point of a polyline (NEURON's arc3d: summed in double, point by point).
inline std::vector<double> arcs(const std::vector<MorphologyPoint>& pts) {
  std::vector<double> a(pts.size(), 0.0);
  for (std::size_t k = 1; k < pts.size(); ++k) a[k] = a[k - 1] + distance(pts[k - 1], pts[k]);
  return a;
}

inline void require_positive(const char* who, const char* name, double v) {
  require(std::isfinite(v) && v > 0, std::string(who) + ": " + name + " = " + num(v) + " must be finite and > 0");
}

// Populations on the host: the layout (and so the kernel) the automatic choice takes. Below
// this many neurons the size-sorted 32-lane chunks are mostly padding (assembly and solve
// walk whole chunks) and the compact layout with the scalar kernel is faster
// (bench_hines_neuron, docs/hines.md).
constexpr index_t kHostCompactBelow = 4;

// Populations on a GPU (PassiveNeurons, ActiveNeurons; kernel automatic): true for the compact
// layout (one block per neuron, cuda_branch), false for size-sorted chunks (one thread per
// neuron, cuda_paper or cuda_stack). adi/hines.cpp has the measurements behind it.
bool gpu_population_compact(int max_size, index_t neurons, std::size_t value_size, int device);

}  // namespace adi::detail::hines
