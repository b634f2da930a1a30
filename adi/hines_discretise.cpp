// NEURON's discretisation of a morphology into compartments: nseg rules (d_lambda with
// lambda_f over the 3-d points), per-segment area and axial resistance integrated over the
// frustums between 3-d points (treeset.cpp's diam_from_list) or from one cylinder of the mean
// diameter, and the fixed-step matrix.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "adi/detail/hines_geometry.hpp"
#include "adi/error.hpp"
#include "adi/hines.hpp"

namespace adi {

using namespace detail::hines;

namespace {
// Integral of the piecewise linear radius over arc length [s0, s1].
double radius_integral(const std::vector<MorphologyPoint>& pts, const std::vector<double>& arc, double s0, double s1) {
  double sum = 0;
  for (std::size_t k = 1; k < pts.size(); ++k) {
    const double a = arc[k - 1], b = arc[k];
    const double lo = std::max(a, s0), hi = std::min(b, s1);
    if (hi <= lo || b <= a) continue;
    auto r = [&](double s) { return pts[k - 1].radius + (pts[k].radius - pts[k - 1].radius) * (s - a) / (b - a); };
    sum += 0.5 * (r(lo) + r(hi)) * (hi - lo);
  }
  return sum;
}

// The point at arc length s (clamped to the polyline).
MorphologyPoint point_at(const std::vector<MorphologyPoint>& pts, const std::vector<double>& arc, double s) {
  for (std::size_t k = 1; k < pts.size(); ++k) {
    if (s <= arc[k] || k + 1 == pts.size()) {
      const double len = arc[k] - arc[k - 1];
      const double t = len > 0 ? std::clamp((s - arc[k - 1]) / len, 0.0, 1.0) : 1.0;
      const MorphologyPoint &a = pts[k - 1], &b = pts[k];
      return {a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z),
              a.radius + t * (b.radius - a.radius)};
    }
  }
  return pts.front();
}

}  // namespace


int Compartments::at(int s, double x) const {
  detail::require(s >= 0 && s < static_cast<int>(nseg.size()),
                  "Compartments::at: section " + std::to_string(s) + " out of range [0, " +
                      std::to_string(nseg.size()) + ")");
  detail::require(x >= 0 && x <= 1, "Compartments::at: x = " + num(x) + " must lie in [0, 1]");
  const int first_node = first[static_cast<std::size_t>(s)], ns = nseg[static_cast<std::size_t>(s)];
  if (x == 0) return parent[static_cast<std::size_t>(first_node)];
  if (x == 1) return first_node + ns;
  // NEURON's node_index: the segment holding x, the last one for x on its right edge.
  return first_node + std::min(static_cast<int>(x * ns), ns - 1);
}

namespace {

std::vector<int> nseg_of(const Morphology& m, const CableParameters& p) {
  const auto& secs = m.sections();
  std::vector<int> n(secs.size(), 1);
  if (!p.nseg_per_section.empty()) {
    detail::require(p.nseg_per_section.size() == secs.size(),
                    "discretise: nseg_per_section has " + std::to_string(p.nseg_per_section.size()) +
                        " entries but the morphology has " + std::to_string(secs.size()) + " sections");
    for (std::size_t s = 0; s < secs.size(); ++s) {
      detail::require(p.nseg_per_section[s] >= 1, "discretise: nseg_per_section[" + std::to_string(s) +
                                                      "] = " + std::to_string(p.nseg_per_section[s]) +
                                                      " must be >= 1");
      n[s] = p.nseg_per_section[s];
    }
    return n;
  }
  for (std::size_t s = 0; s < secs.size(); ++s) {
    const double L = secs[s].length();
    switch (p.rule) {
      case NsegRule::fixed: n[s] = p.nseg; break;
      case NsegRule::max_length: {
        const double c = std::ceil(L / p.max_length);
        int k = static_cast<int>(std::clamp(c, 1.0, 1e6));
        if (k % 2 == 0) ++k;
        n[s] = k;
        break;
      }
      case NsegRule::per_point: n[s] = static_cast<int>(secs[s].points.size()) - 1; break;
      case NsegRule::d_lambda: {
        const std::vector<MorphologyPoint>& pts = secs[s].points;
        const std::vector<double> arc = arcs(pts);
        double lambda = 0;
        if (p.geometry == Geometry::frustums) {
          // NEURON's lambda_f (stdlib.hoc) over the 3-d points: the section's length in units
          // of lambda, sum of (arc_i - arc_{i-1}) / sqrt(d_{i-1} + d_i), then L / that.
          double lam = 0;
          for (std::size_t k = 1; k < pts.size(); ++k)
            lam += (arc[k] - arc[k - 1]) / std::sqrt(2 * pts[k - 1].radius + 2 * pts[k].radius);
          lam *= std::sqrt(2.0) * 1e-5 * std::sqrt(4 * kPi * p.frequency * p.ra * p.cm);
          lambda = lam > 0 ? L / lam : 0;
        } else {
          const double diam = L > 0 ? 2 * radius_integral(pts, arc, 0, L) / L : 0;
          lambda = 1e5 * std::sqrt(diam / (4 * kPi * p.frequency * p.ra * p.cm));
        }
        const double q = lambda > 0 ? L / (p.d_lambda * lambda) : 0;
        n[s] = static_cast<int>(std::min((q + 0.9) / 2, 1e6)) * 2 + 1;
        break;
      }
    }
  }
  return n;
}


// NEURON's integration over the 3-d points of one section (treeset.cpp, diam_from_list), called
// for its segments in order: each half segment is integrated over the frustums it covers
// (diameters interpolated linearly in arc length, extrapolated past the last point), giving
// the segment's mean diameter, its lateral area with slant, and the axial resistance of each
// half, Ra * 4e-2 / pi * sum(delta / (d1 d2)) (MOhm).
struct FrustumWalk {
  const std::vector<MorphologyPoint>& pts;
  const std::vector<double>& arc;
  double ra, ds;
  std::size_t j = 0;
  double x1, y1;
  FrustumWalk(const std::vector<MorphologyPoint>& p, const std::vector<double>& a, double ra_, int nseg)
      : pts(p), arc(a), ra(ra_), ds(a.back() / nseg), x1(a[0]), y1(2 * p[0].radius) {}
  struct Segment {
    double diam, area, r_left, r_right;
  };
  Segment next(int inode) {
    const std::size_t npt = pts.size();
    double si = inode * ds, diam = 0, area = 0, r[2] = {0, 0};
    for (int half = 0; half < 2; ++half) {
      double ri = 0;
      const double sip = si + ds / 2;
      for (;;) {
        const std::size_t jp = j + 1;
        const double xj = arc[j], xjp = arc[jp];
        const double dj = 2 * pts[j].radius, djp = 2 * pts[jp].radius;
        double x2, y2;
        std::size_t jnext;
        if (xjp > sip || jp == npt - 1) {
          const double frac = std::fabs(xjp - xj) < 1e-10 ? 1 : (sip - xj) / (xjp - xj);
          x2 = sip;
          y2 = (1 - frac) * dj + frac * djp;
          jnext = j;
        } else {
          x2 = xjp;
          y2 = djp;
          jnext = jp;
        }
        double delta = x2 - x1;
        diam += (y2 + y1) * delta;
        if (delta < 1e-15) delta = 1e-15;
        double t = y2 * y1 / delta;
        if (t == 0) t = 1e-15;
        ri += 1 / t;
        t = 0.5 * (y2 - y1);
        area += (y2 + y1) * std::sqrt(delta * delta + t * t);
        x1 = x2;
        y1 = y2;
        if (j == jnext) break;
        j = jnext;
      }
      r[half] = ri * ra / kPi * (4 * .01);
      si = sip;
    }
    return {diam * .5 / ds, area * .5 * kPi, r[0], r[1]};
  }
};

}  // namespace

Compartments discretise(const Morphology& m, const CableParameters& p) {
  const char* who = "discretise";
  require_positive(who, "cm", p.cm);
  require_positive(who, "Ra", p.ra);
  require_positive(who, "g_leak", p.g_leak);
  detail::require(std::isfinite(p.e_leak), std::string(who) + ": e_leak = " + num(p.e_leak) + " must be finite");
  if (p.nseg_per_section.empty()) {
    if (p.rule == NsegRule::fixed)
      detail::require(p.nseg >= 1, std::string(who) + ": nseg = " + std::to_string(p.nseg) + " must be >= 1");
    if (p.rule == NsegRule::max_length) require_positive(who, "max_length", p.max_length);
    if (p.rule == NsegRule::d_lambda) {
      require_positive(who, "d_lambda", p.d_lambda);
      require_positive(who, "frequency", p.frequency);
    }
  }
  const auto& secs = m.sections();
  detail::require(!secs.empty(), std::string(who) + ": the morphology has no sections");
  Compartments c;
  c.e_leak = p.e_leak;
  c.nseg = nseg_of(m, p);
  std::size_t total = 1;
  c.first.resize(secs.size());
  for (std::size_t s = 0; s < secs.size(); ++s) {
    c.first[s] = static_cast<int>(total);
    total += static_cast<std::size_t>(c.nseg[s]) + 1;
  }
  detail::require(total < (1u << 30), std::string(who) + ": too many compartments");
  for (auto* v : {&c.area, &c.capacitance, &c.leak, &c.axial, &c.x, &c.y, &c.z, &c.radius, &c.location})
    v->assign(total, 0.0);
  c.parent.assign(total, -1);
  c.section.assign(total, 0);

  const MorphologyPoint& r0 = secs[0].points.front();
  c.x[0] = r0.x, c.y[0] = r0.y, c.z[0] = r0.z, c.radius[0] = r0.radius;
  c.section[0] = 0, c.location[0] = 0;
  for (std::size_t s = 0; s < secs.size(); ++s) {
    const Section& sec = secs[s];
    const std::vector<double> arc = arcs(sec.points);
    const double L = arc.back();
    if (!(L > 0))
      throw InvalidArgument(std::string(who) + ": " + section_name(m, static_cast<int>(s)) +
                            " has zero length; merge or drop its duplicate points");
    const int ns = c.nseg[s];
    const double dx = L / ns;
    const int first_node = c.first[s];
    const int attach = sec.parent < 0 ? 0 : c.at(sec.parent, sec.parent_x);
    double h_prev = 0;  // right half resistance of the previous segment (MOhm)
    FrustumWalk walk(sec.points, arc, p.ra, ns);
    for (int j = 0; j < ns; ++j) {
      double diam, area, h_left, h_right;
      if (p.geometry == Geometry::frustums) {
        const FrustumWalk::Segment g = walk.next(j);
        diam = g.diam, area = g.area, h_left = g.r_left, h_right = g.r_right;
      } else {
        diam = 2 * radius_integral(sec.points, arc, j * dx, (j + 1) * dx) / dx;
        area = kPi * diam * dx;                                 // um^2
        h_left = h_right = 1e-2 * p.ra * (dx / 2) / (kPi * diam * diam / 4);  // MOhm, half segment
      }
      if (!(diam > 0))
        throw InvalidArgument(std::string(who) + ": segment " + std::to_string(j) + " of " +
                              section_name(m, static_cast<int>(s)) +
                              " has zero diameter (its SWC radii are 0); a cable needs radii > 0");
      const std::size_t i = static_cast<std::size_t>(first_node + j);
      c.parent[i] = j == 0 ? attach : first_node + j - 1;
      c.axial[i] = 1 / (h_left + h_prev);  // uS
      c.area[i] = area;
      c.capacitance[i] = p.cm * area * 1e-5;  // uF/cm^2 * um^2 -> nF
      c.leak[i] = p.g_leak * area * 1e-2;     // S/cm^2 * um^2 -> uS
      const MorphologyPoint q = point_at(sec.points, arc, (j + 0.5) * dx);
      c.x[i] = q.x, c.y[i] = q.y, c.z[i] = q.z, c.radius[i] = diam / 2;
      c.section[i] = static_cast<int>(s);
      c.location[i] = (j + 0.5) / ns;
      h_prev = h_right;
    }
    const std::size_t e = static_cast<std::size_t>(first_node + ns);
    c.parent[e] = first_node + ns - 1;
    c.axial[e] = 1 / h_prev;
    const MorphologyPoint& q = sec.points.back();
    c.x[e] = q.x, c.y[e] = q.y, c.z[e] = q.z, c.radius[e] = q.radius;
    c.section[e] = static_cast<int>(s);
    c.location[e] = 1;
  }
  return c;
}

HinesMatrix implicit_euler_matrix(const Compartments& c, double dt) {
  detail::require(std::isfinite(dt) && dt > 0, "implicit_euler_matrix: dt = " + num(dt) + " ms must be > 0");
  const std::size_t n = c.parent.size();
  detail::require(n >= 1 && c.capacitance.size() == n && c.leak.size() == n && c.axial.size() == n,
                  "implicit_euler_matrix: inconsistent Compartments (arrays of different lengths)");
  HinesMatrix m;
  m.offdiag.assign(n, 0.0);
  m.diag.resize(n);
  for (std::size_t i = 0; i < n; ++i) m.diag[i] = c.capacitance[i] / dt + c.leak[i];
  for (std::size_t i = 1; i < n; ++i) {
    m.offdiag[i] = -c.axial[i];
    m.diag[i] += c.axial[i];
    m.diag[static_cast<std::size_t>(c.parent[i])] += c.axial[i];
  }
  return m;
}

}  // namespace adi
