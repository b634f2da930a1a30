#include "adi/hines.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "adi/error.hpp"
#include "adi/field.hpp"
#include "adi/io/swc.hpp"
#include "solvers/cpu/hines.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace {

constexpr double kPi = 3.14159265358979323846;

std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::string section_name(const Morphology& m, int s) {
  std::string r = "section " + std::to_string(s);
  if (m.sections()[static_cast<std::size_t>(s)].swc_line > 0)
    r += " (SWC line " + std::to_string(m.sections()[static_cast<std::size_t>(s)].swc_line) + ")";
  if (!m.name().empty()) r += " of '" + m.name() + "'";
  return r;
}

double distance(const MorphologyPoint& a, const MorphologyPoint& b) {
  const double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

// Arc length at every point of a polyline.
std::vector<double> arcs(const std::vector<MorphologyPoint>& pts) {
  std::vector<double> a(pts.size(), 0.0);
  for (std::size_t k = 1; k < pts.size(); ++k) a[k] = a[k - 1] + distance(pts[k - 1], pts[k]);
  return a;
}

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

void require_positive(const char* who, const char* name, double v) {
  detail::require(std::isfinite(v) && v > 0,
                  std::string(who) + ": " + name + " = " + num(v) + " must be finite and > 0");
}

}  // namespace

// --- Morphology ------------------------------------------------------------------------

double Section::length() const {
  double L = 0;
  for (std::size_t k = 1; k < points.size(); ++k) L += distance(points[k - 1], points[k]);
  return L;
}

Morphology::Morphology(std::vector<Section> sections, std::string name)
    : sections_(std::move(sections)), name_(std::move(name)) {
  const std::string who = "Morphology" + (name_.empty() ? std::string() : " '" + name_ + "'");
  detail::require(!sections_.empty(), who + ": no sections");
  for (std::size_t s = 0; s < sections_.size(); ++s) {
    const Section& sec = sections_[s];
    const std::string where = who + ": section " + std::to_string(s);
    if (s == 0)
      detail::require(sec.parent == -1, where + " is the root section and must have parent -1, not " +
                                            std::to_string(sec.parent));
    else
      detail::require(sec.parent >= 0 && sec.parent < static_cast<int>(s),
                      where + " has parent " + std::to_string(sec.parent) +
                          "; parents must precede their children (0 <= parent < " + std::to_string(s) + ")");
    detail::require(sec.parent_x >= 0 && sec.parent_x <= 1,
                    where + " attaches at x = " + num(sec.parent_x) + "; x must lie in [0, 1]");
    detail::require(sec.points.size() >= 2,
                    where + " has " + std::to_string(sec.points.size()) + " points; a section needs at least 2");
    for (const MorphologyPoint& p : sec.points) {
      detail::require(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z),
                      where + " has a point with a non-finite coordinate");
      detail::require(std::isfinite(p.radius) && p.radius >= 0,
                      where + " has radius " + num(p.radius) + "; radii must be finite and >= 0");
    }
  }
}

Morphology Morphology::from_swc(const io::SwcTree& tree) {
  const int n = static_cast<int>(tree.samples.size());
  detail::require(n >= 1 && tree.parent.size() == tree.samples.size(),
                  "Morphology::from_swc: '" + tree.source + "' has no samples");
  std::vector<int> children(static_cast<std::size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    const int p = tree.parent[static_cast<std::size_t>(i)];
    detail::require(p >= 0 && p < i, "Morphology::from_swc: '" + tree.source +
                                         "' is not in Hines order (use io::read_swc / parse_swc)");
    ++children[static_cast<std::size_t>(p)];
  }
  const io::SwcSample& root = tree.samples[0];
  bool point_soma = root.type == 1;
  for (int i = 1; i < n && point_soma; ++i)
    if (tree.parent[static_cast<std::size_t>(i)] == 0 && tree.samples[static_cast<std::size_t>(i)].type == 1)
      point_soma = false;
  auto point = [&](const io::SwcSample& s) { return MorphologyPoint{s.x, s.y, s.z, s.radius}; };

  std::vector<Section> sections;
  std::vector<int> section_of(static_cast<std::size_t>(n), -1);
  int root_section = -1;
  if (point_soma) {
    Section soma;
    soma.parent = -1;
    soma.type = 1;
    soma.swc_line = root.line;
    soma.points = {{root.x, root.y - root.radius, root.z, root.radius}, {root.x, root.y + root.radius, root.z, root.radius}};
    sections.push_back(soma);
    root_section = 0;
  }
  for (int i = 1; i < n; ++i) {
    const int p = tree.parent[static_cast<std::size_t>(i)];
    const io::SwcSample& s = tree.samples[static_cast<std::size_t>(i)];
    if (p != 0 && children[static_cast<std::size_t>(p)] == 1) {
      const int sec = section_of[static_cast<std::size_t>(p)];
      sections[static_cast<std::size_t>(sec)].points.push_back(point(s));
      section_of[static_cast<std::size_t>(i)] = sec;
      continue;
    }
    const io::SwcSample& ps = tree.samples[static_cast<std::size_t>(p)];
    Section sec;
    sec.type = s.type;
    sec.swc_line = s.line;
    // A section leaving the soma starts at the soma sample with its own radius, so that a
    // thin dendrite does not inherit the soma's radius over its first segment.
    const double r0 = (ps.type == 1 && s.type != 1) ? s.radius : ps.radius;
    sec.points = {{ps.x, ps.y, ps.z, r0}, point(s)};
    if (p == 0) {
      if (point_soma) {
        sec.parent = 0;
        sec.parent_x = 0.5;
      } else if (root_section < 0) {
        sec.parent = -1;
        sec.parent_x = 0;
        root_section = static_cast<int>(sections.size());
      } else {
        sec.parent = root_section;
        sec.parent_x = 0;
      }
    } else {
      sec.parent = section_of[static_cast<std::size_t>(p)];
      sec.parent_x = 1;
    }
    section_of[static_cast<std::size_t>(i)] = static_cast<int>(sections.size());
    sections.push_back(std::move(sec));
  }
  detail::require(!sections.empty(), "Morphology::from_swc: '" + tree.source +
                                         "' has a single sample that is not a soma; a neuron needs a "
                                         "soma sample (type 1) or at least two samples");
  Morphology m(std::move(sections), tree.source);
  m.samples_ = n;
  return m;
}

Morphology Morphology::read_swc(const std::string& path) { return from_swc(io::read_swc(path)); }

// --- discretisation ----------------------------------------------------------------------

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
        const std::vector<double> arc = arcs(secs[s].points);
        const double diam = L > 0 ? 2 * radius_integral(secs[s].points, arc, 0, L) / L : 0;
        const double lambda = 1e5 * std::sqrt(diam / (4 * kPi * p.frequency * p.ra * p.cm));
        const double q = lambda > 0 ? L / (p.d_lambda * lambda) : 0;
        n[s] = static_cast<int>(std::min((q + 0.9) / 2, 1e6)) * 2 + 1;
        break;
      }
    }
  }
  return n;
}

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
    double h_prev = 0;
    for (int j = 0; j < ns; ++j) {
      const double diam = 2 * radius_integral(sec.points, arc, j * dx, (j + 1) * dx) / dx;
      if (!(diam > 0))
        throw InvalidArgument(std::string(who) + ": segment " + std::to_string(j) + " of " +
                              section_name(m, static_cast<int>(s)) +
                              " has zero diameter (its SWC radii are 0); a cable needs radii > 0");
      const double area = kPi * diam * dx;                                  // um^2
      const double h = 1e-2 * p.ra * (dx / 2) / (kPi * diam * diam / 4);    // MOhm, half segment
      const std::size_t i = static_cast<std::size_t>(first_node + j);
      c.parent[i] = j == 0 ? attach : first_node + j - 1;
      c.axial[i] = 1 / (h + h_prev);  // uS
      c.area[i] = area;
      c.capacitance[i] = p.cm * area * 1e-5;  // uF/cm^2 * um^2 -> nF
      c.leak[i] = p.g_leak * area * 1e-2;     // S/cm^2 * um^2 -> uS
      const MorphologyPoint q = point_at(sec.points, arc, (j + 0.5) * dx);
      c.x[i] = q.x, c.y[i] = q.y, c.z[i] = q.z, c.radius[i] = diam / 2;
      c.section[i] = static_cast<int>(s);
      c.location[i] = (j + 0.5) / ns;
      h_prev = h;
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

// --- synthetic morphologies ----------------------------------------------------------------

std::vector<SyntheticSpec> paper_classes() {
  return {{"small-low", 76, 7, 11},    {"small-high", 76, 29, 12}, {"medium-low", 305, 30, 13},
          {"medium-high", 319, 157, 14}, {"big-low", 695, 66, 15},  {"big-high", 691, 341, 16}};
}

SyntheticSpec paper_class(const std::string& name) {
  std::string names;
  for (const SyntheticSpec& s : paper_classes()) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  throw InvalidArgument("paper_class: unknown class '" + name + "'; known: " + names);
}

CableParameters SyntheticNeuron::parameters(CableParameters base) const {
  base.nseg_per_section = nseg;
  return base;
}

namespace {
// splitmix64: a small deterministic generator, the same numbers on every platform.
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
};
}  // namespace

SyntheticNeuron generate_morphology(const SyntheticSpec& spec) {
  const std::string who = "generate_morphology('" + spec.name + "')";
  detail::require(spec.branches >= 1, who + ": branches = " + std::to_string(spec.branches) + " must be >= 1");
  detail::require(spec.compartments >= 2 * spec.branches + 1,
                  who + ": compartments = " + std::to_string(spec.compartments) + " must be >= 2 * branches + 1 = " +
                      std::to_string(2 * spec.branches + 1) + " (one segment and one end node per section, plus the root)");
  Random rng{spec.seed * 0x2545F4914F6CDD1Dull + 7};
  const int B = spec.branches;
  // Topology: a root section (two when B is even), then binary splits of random leaves.
  std::vector<int> parent{-1};
  std::vector<double> parent_x{0};
  if (B % 2 == 0) {
    parent.push_back(0);
    parent_x.push_back(0);
  }
  std::vector<int> leaves;
  for (int s = 0; s < static_cast<int>(parent.size()); ++s) leaves.push_back(s);
  while (static_cast<int>(parent.size()) < B) {
    const int k = rng.below(static_cast<int>(leaves.size()));
    const int leaf = leaves[static_cast<std::size_t>(k)];
    leaves.erase(leaves.begin() + k);
    for (int c = 0; c < 2; ++c) {
      leaves.push_back(static_cast<int>(parent.size()));
      parent.push_back(leaf);
      parent_x.push_back(1);
    }
  }
  // Geometry: each section leaves its parent's end in a direction perturbed from the parent's.
  std::vector<Section> secs(static_cast<std::size_t>(B));
  std::vector<std::array<double, 3>> dir(static_cast<std::size_t>(B));
  for (int s = 0; s < B; ++s) {
    Section& sec = secs[static_cast<std::size_t>(s)];
    sec.parent = parent[static_cast<std::size_t>(s)];
    sec.parent_x = parent_x[static_cast<std::size_t>(s)];
    sec.type = s == 0 ? 1 : 3;
    MorphologyPoint start{0, 0, 0, 1.5};
    std::array<double, 3> d{0, 1, 0};
    if (sec.parent >= 0) {
      const Section& ps = secs[static_cast<std::size_t>(sec.parent)];
      start = sec.parent_x == 0 ? ps.points.front() : ps.points.back();
      start.radius = std::max(0.2, start.radius * 0.8);
      d = dir[static_cast<std::size_t>(sec.parent)];
      if (sec.parent_x == 0) d = {-d[0], -d[1], -d[2]};
    }
    for (double& v : d) v += 0.9 * (2 * rng.uniform() - 1);
    const double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (double& v : d) v /= norm > 0 ? norm : 1;
    dir[static_cast<std::size_t>(s)] = d;
    const double L = 20 + 180 * rng.uniform();
    const int pieces = std::max(2, static_cast<int>(std::ceil(L / 10)));
    sec.points.push_back(start);
    for (int k = 1; k <= pieces; ++k) {
      const double t = L * k / pieces;
      sec.points.push_back({start.x + t * d[0], start.y + t * d[1], start.z + t * d[2],
                            start.radius * (1 - 0.1 * k / pieces)});
    }
  }
  // nseg: one per section, the rest in proportion to length (largest remainders).
  SyntheticNeuron out;
  out.morphology = Morphology(std::move(secs), spec.name);
  const auto& S = out.morphology.sections();
  const int extra = spec.compartments - 1 - 2 * B;
  double total_length = 0;
  for (const Section& s : S) total_length += s.length();
  out.nseg.assign(static_cast<std::size_t>(B), 1);
  std::vector<std::pair<double, int>> rest;
  int given = 0;
  for (int s = 0; s < B; ++s) {
    const double share = extra * S[static_cast<std::size_t>(s)].length() / total_length;
    const int whole = static_cast<int>(share);
    out.nseg[static_cast<std::size_t>(s)] += whole;
    given += whole;
    rest.push_back({share - whole, s});
  }
  std::sort(rest.begin(), rest.end(), [](auto a, auto b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  for (int k = 0; k < extra - given; ++k) ++out.nseg[static_cast<std::size_t>(rest[static_cast<std::size_t>(k)].second)];
  return out;
}

// --- HinesTopology ---------------------------------------------------------------------------

struct HinesTopology::Data {
  std::vector<int> parent;
  // Branches in elimination order (height ascending, then by start node).
  std::vector<int> start, end, child_first, child_node, up_level, down_order, down_level;
};

HinesTopology::HinesTopology(std::vector<int> parent) {
  const int n = static_cast<int>(parent.size());
  detail::require(n >= 1, "HinesTopology: empty tree (a neuron needs at least one node)");
  detail::require(parent[0] == -1, "HinesTopology: parent[0] = " + std::to_string(parent[0]) +
                                       " must be -1 (node 0 is the root)");
  std::vector<int> nchild(static_cast<std::size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    const int p = parent[static_cast<std::size_t>(i)];
    if (p < 0 || p >= i)
      throw InvalidArgument("HinesTopology: parent[" + std::to_string(i) + "] = " + std::to_string(p) +
                            " must lie in [0, " + std::to_string(i) +
                            "): Hines order numbers every parent before its children");
    ++nchild[static_cast<std::size_t>(p)];
  }
  auto d = std::make_shared<Data>();
  // Branches in node order, then heights (children start later: reverse order) and depths.
  std::vector<int> start, branch_of(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const bool cont = i > 0 && parent[static_cast<std::size_t>(i)] == i - 1 && nchild[static_cast<std::size_t>(i - 1)] == 1;
    if (!cont) start.push_back(i);
    branch_of[static_cast<std::size_t>(i)] = static_cast<int>(start.size()) - 1;
  }
  const int B = static_cast<int>(start.size());
  std::vector<int> end(static_cast<std::size_t>(B)), parent_branch(static_cast<std::size_t>(B), -1);
  for (int b = 0; b < B; ++b) {
    end[static_cast<std::size_t>(b)] = b + 1 < B ? start[static_cast<std::size_t>(b + 1)] : n;
    if (b > 0) parent_branch[static_cast<std::size_t>(b)] = branch_of[static_cast<std::size_t>(parent[static_cast<std::size_t>(start[static_cast<std::size_t>(b)])])];
  }
  std::vector<int> height(static_cast<std::size_t>(B), 0), depth(static_cast<std::size_t>(B), 0);
  for (int b = B - 1; b > 0; --b) {
    int& h = height[static_cast<std::size_t>(parent_branch[static_cast<std::size_t>(b)])];
    h = std::max(h, height[static_cast<std::size_t>(b)] + 1);
  }
  for (int b = 1; b < B; ++b) depth[static_cast<std::size_t>(b)] = depth[static_cast<std::size_t>(parent_branch[static_cast<std::size_t>(b)])] + 1;
  std::vector<int> up(static_cast<std::size_t>(B)), down(static_cast<std::size_t>(B));
  std::iota(up.begin(), up.end(), 0);
  std::iota(down.begin(), down.end(), 0);
  std::stable_sort(up.begin(), up.end(), [&](int a, int b) { return height[static_cast<std::size_t>(a)] < height[static_cast<std::size_t>(b)]; });
  std::stable_sort(down.begin(), down.end(), [&](int a, int b) { return depth[static_cast<std::size_t>(a)] < depth[static_cast<std::size_t>(b)]; });
  std::vector<int> new_id(static_cast<std::size_t>(B));
  for (int k = 0; k < B; ++k) new_id[static_cast<std::size_t>(up[static_cast<std::size_t>(k)])] = k;
  std::vector<std::vector<int>> kids(static_cast<std::size_t>(B));
  for (int b = 1; b < B; ++b) kids[static_cast<std::size_t>(parent_branch[static_cast<std::size_t>(b)])].push_back(start[static_cast<std::size_t>(b)]);
  d->child_first.push_back(0);
  for (int k = 0; k < B; ++k) {
    const int b = up[static_cast<std::size_t>(k)];
    d->start.push_back(start[static_cast<std::size_t>(b)]);
    d->end.push_back(end[static_cast<std::size_t>(b)]);
    for (int c : kids[static_cast<std::size_t>(b)]) d->child_node.push_back(c);
    d->child_first.push_back(static_cast<int>(d->child_node.size()));
    if (k == 0 || height[static_cast<std::size_t>(b)] != height[static_cast<std::size_t>(up[static_cast<std::size_t>(k - 1)])]) d->up_level.push_back(k);
  }
  d->up_level.push_back(B);
  for (int k = 0; k < B; ++k) {
    const int b = down[static_cast<std::size_t>(k)];
    d->down_order.push_back(new_id[static_cast<std::size_t>(b)]);
    if (k == 0 || depth[static_cast<std::size_t>(b)] != depth[static_cast<std::size_t>(down[static_cast<std::size_t>(k - 1)])]) d->down_level.push_back(k);
  }
  d->down_level.push_back(B);
  d->parent = std::move(parent);
  data_ = std::move(d);
}

int HinesTopology::size() const { return static_cast<int>(data_->parent.size()); }
const std::vector<int>& HinesTopology::parent() const { return data_->parent; }
int HinesTopology::branches() const { return static_cast<int>(data_->start.size()); }
int HinesTopology::height() const { return static_cast<int>(data_->up_level.size()) - 1; }
int HinesTopology::depth() const { return static_cast<int>(data_->down_level.size()) - 1; }

HinesBatch HinesBatch::uniform(const HinesTopology& topology, index_t count) {
  detail::require(count >= 0, "HinesBatch::uniform: count = " + std::to_string(count) + " must be >= 0");
  HinesBatch b;
  b.topologies = {topology};
  b.topology_of.assign(static_cast<std::size_t>(count), 0);
  return b;
}

// --- kernels by name ---------------------------------------------------------------------------

namespace {
const std::pair<HinesKernel, const char*> kKernelNames[] = {
    {HinesKernel::automatic, "automatic"},        {HinesKernel::reference, "reference"},
    {HinesKernel::cpu_scalar, "cpu_scalar"},      {HinesKernel::cpu_vector, "cpu_vector"},
    {HinesKernel::cuda_paper, "cuda_paper"},      {HinesKernel::cuda_block_shared, "cuda_block_shared"},
    {HinesKernel::cuda_stack, "cuda_stack"},      {HinesKernel::cuda_branch, "cuda_branch"},
};
}  // namespace

const char* hines_kernel_name(HinesKernel k) {
  for (const auto& [kernel, name] : kKernelNames)
    if (kernel == k) return name;
  return "?";
}

HinesKernel hines_kernel_from_name(const std::string& name) {
  std::string names;
  for (const auto& [kernel, n] : kKernelNames) {
    if (name == n) return kernel;
    names += (names.empty() ? "" : ", ") + std::string(n);
  }
  throw InvalidArgument("unknown Hines kernel '" + name + "'; known: " + names);
}

// --- HinesPlan -----------------------------------------------------------------------------------

template <class T>
struct HinesPlan<T>::Impl {
  Executor exec = Executor::host();
  HinesBatch neurons;
  HinesOptions options;
  detail::HinesLayoutKind layout = detail::HinesLayoutKind::compact;
  VariableBatchPlan batch;
  HinesKernel kernel = HinesKernel::automatic;
  index_t span = 0;
  // Host copies of everything the views point to.
  std::vector<index_t> offsets, parent_base;
  std::vector<int> sizes, parents, tree_of;
  std::vector<detail::HinesTreeSchedule> schedules;
  std::vector<int> branch_start, branch_end, child_first, child_node, up_level, down_order, down_level;
  detail::HinesView host, device;
  detail::Storage device_storage;
  Array<int> flag;  // CUDA: the first bad neuron (cuda_backend::kNoBadNeuron when none)
  // Sorted layout: ranges of thread slots (whole chunks) whose sizes lie within a factor 2,
  // so that shared-memory kernels size each launch by its own largest neuron.
  std::vector<index_t> range_first;
  std::vector<int> range_rows;

  Impl(const Executor& e, const HinesBatch& b, HinesOptions o, const VariableBatchPlan& vb)
      : exec(e), neurons(b), options(o), batch(vb) {}
};

namespace {

std::vector<int> sizes_of(const HinesBatch& b) {
  std::vector<int> sizes(b.topology_of.size());
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const int t = b.topology_of[s];
    detail::require(t >= 0 && t < static_cast<int>(b.topologies.size()),
                    "HinesPlan: topology_of[" + std::to_string(s) + "] = " + std::to_string(t) + " must lie in [0, " +
                        std::to_string(b.topologies.size()) + ")");
    sizes[s] = b.topologies[static_cast<std::size_t>(t)].size();
  }
  return sizes;
}

VariableBatchPlan make_batch(const Executor& exec, const HinesBatch& b, const HinesOptions& o) {
  detail::require(o.chunk_width >= 1 && o.chunk_width <= 1024,
                  "HinesPlan: chunk_width = " + std::to_string(o.chunk_width) + " must lie in [1, 1024]");
  const std::vector<int> sizes = sizes_of(b);
  VariableBatchOptions vo;
  vo.chunk_width = o.chunk_width;
  return VariableBatchPlan(exec, BatchSizes{sizes.data(), static_cast<index_t>(sizes.size()), -1}, vo);
}

template <class V>
std::size_t bytes_of(const std::vector<V>& v) {
  return (v.size() * sizeof(V) + 255) / 256 * 256;
}

// Kernel <-> layout / executor rules; returns an empty string when allowed.
std::string kernel_refusal(HinesKernel k, detail::HinesLayoutKind layout, const Executor& exec) {
  using L = detail::HinesLayoutKind;
  const bool host = exec.is_host();
  switch (k) {
    case HinesKernel::automatic: return {};
    case HinesKernel::reference:
    case HinesKernel::cpu_scalar: return host ? "" : "runs on a host executor only";
    case HinesKernel::cpu_vector:
      if (!host) return "runs on a host executor only";
      return layout == L::sorted ? "" : "needs the SortedInterleaved layout";
    case HinesKernel::cuda_paper: return host ? "runs on a CUDA executor only" : "";
    case HinesKernel::cuda_block_shared:
    case HinesKernel::cuda_stack:
      if (host) return "runs on a CUDA executor only";
      return layout == L::sorted ? "" : "needs the SortedInterleaved layout";
    case HinesKernel::cuda_branch:
      if (host) return "runs on a CUDA executor only";
      return layout == L::compact ? "" : "needs the CompactBatch layout";
  }
  return "is unknown";
}

}  // namespace

// Automatic choices on CUDA (from the H100 run of bench_cuda_hines, docs/hines.md).
constexpr int kStackMinThreads = 128;      // neurons per block the stack kernel needs to pay
constexpr index_t kStackMaxNeurons = 65536;  // beyond: one thread per neuron streams faster
constexpr index_t kBranchMaxNeurons = 65536;  // PassiveNeurons: one block per neuron up to here

// The automatic kernel of a plan (HinesKernel::automatic).
template <class T>
static HinesKernel choose_kernel(const typename HinesPlan<T>::Impl& p) {
  using L = detail::HinesLayoutKind;
  if (p.exec.is_host()) return p.layout == L::sorted ? HinesKernel::cpu_vector : HinesKernel::cpu_scalar;
  const int max_size = p.batch.max_size();
  switch (p.layout) {
    case L::sorted:
      // The stack kernel keeps 2 values per compartment per neuron in shared memory, so a
      // block (one per SM) holds few neurons. On the H100 (bench_cuda_hines, docs/hines.md)
      // it beats the block-interleaved paper kernel only for small trees (>= 128 neurons per
      // block: 76 compartments) and moderate batches (25,600: 1.3x fp64, 2x fp32); at
      // 256,000 neurons the paper kernel streams faster, and for larger trees the stack
      // kernel is 2-8x slower.
      return kStackMinThreads <= cuda_backend::hines_stack_threads(max_size, sizeof(T), p.exec.device()) &&
                     p.neurons.count() <= kStackMaxNeurons
                 ? HinesKernel::cuda_stack
                 : HinesKernel::cuda_paper;
    case L::compact:
      // One block per neuron: the block stages its neuron with coalesced loads, so the solve
      // reads each input once and writes the solution once (bench_cuda_hines).
      return HinesKernel::cuda_branch;
    case L::padded: return HinesKernel::cuda_paper;
  }
  return HinesKernel::cuda_paper;
}

template <class T>
static void build(typename HinesPlan<T>::Impl& p) {
  const HinesBatch& b = p.neurons;
  const index_t count = b.count();
  detail::require(!b.topologies.empty() || count == 0, "HinesPlan: the batch has neurons but no topologies");
  const std::string refusal = kernel_refusal(p.options.kernel, p.layout, p.exec);
  detail::require(refusal.empty(), std::string("HinesPlan: kernel ") + hines_kernel_name(p.options.kernel) + " " +
                                       refusal + " (or choose HinesKernel::automatic)");
  detail::require(p.options.threads_per_block >= 0 && p.options.threads_per_block <= 1024,
                  "HinesPlan: threads_per_block = " + std::to_string(p.options.threads_per_block) +
                      " must lie in [0, 1024]");
  // Trees: parents and branch schedules concatenated.
  std::vector<index_t> tree_base;
  for (const HinesTopology& t : b.topologies) {
    const HinesTopology::Data& d = t.data();
    tree_base.push_back(static_cast<index_t>(p.parents.size()));
    p.parents.insert(p.parents.end(), d.parent.begin(), d.parent.end());
    detail::HinesTreeSchedule s;
    s.branches = static_cast<int>(d.start.size());
    s.up_levels = static_cast<int>(d.up_level.size()) - 1;
    s.down_levels = static_cast<int>(d.down_level.size()) - 1;
    s.branch_base = static_cast<int>(p.branch_start.size());
    s.child_first_base = static_cast<int>(p.child_first.size());
    s.child_base = static_cast<int>(p.child_node.size());
    s.up_level_base = static_cast<int>(p.up_level.size());
    s.down_level_base = static_cast<int>(p.down_level.size());
    p.schedules.push_back(s);
    p.branch_start.insert(p.branch_start.end(), d.start.begin(), d.start.end());
    p.branch_end.insert(p.branch_end.end(), d.end.begin(), d.end.end());
    p.down_order.insert(p.down_order.end(), d.down_order.begin(), d.down_order.end());
    p.child_first.insert(p.child_first.end(), d.child_first.begin(), d.child_first.end());
    p.child_node.insert(p.child_node.end(), d.child_node.begin(), d.child_node.end());
    p.up_level.insert(p.up_level.end(), d.up_level.begin(), d.up_level.end());
    p.down_level.insert(p.down_level.end(), d.down_level.begin(), d.down_level.end());
  }
  p.sizes = sizes_of(b);
  p.tree_of = b.topology_of;
  p.parent_base.resize(static_cast<std::size_t>(count));
  for (index_t s = 0; s < count; ++s) p.parent_base[static_cast<std::size_t>(s)] = tree_base[static_cast<std::size_t>(p.tree_of[static_cast<std::size_t>(s)])];

  const VariableBatchView& hv = p.batch.host_view();
  detail::HinesView& v = p.host;
  v.count = count;
  v.max_size = p.batch.max_size();
  v.layout = p.layout;
  v.stride = p.layout == detail::HinesLayoutKind::padded ? v.stride : 0;
  v.chunk_width = hv.chunk_width;
  v.chunk_offsets = hv.chunk_offsets;
  v.order = hv.order;
  v.position = hv.position;
  v.trees = static_cast<int>(b.topologies.size());
  v.sizes = p.sizes.data();
  v.parents = p.parents.data();
  v.parent_base = p.parent_base.data();
  v.tree_of = p.tree_of.data();
  v.offsets = p.offsets.data();
  v.schedules = p.schedules.data();
  v.branch_start = p.branch_start.data();
  v.branch_end = p.branch_end.data();
  v.child_first = p.child_first.data();
  v.child_node = p.child_node.data();
  v.up_level = p.up_level.data();
  v.down_order = p.down_order.data();
  v.down_level = p.down_level.data();

  if (p.exec.is_cuda()) {
    // One device allocation holding copies of the host arrays (256-byte aligned pieces).
    std::size_t total = 0;
    auto room = [&](std::size_t bytes) { total += bytes; };
    room(bytes_of(p.offsets));
    room(bytes_of(p.sizes));
    room(bytes_of(p.parents));
    room(bytes_of(p.parent_base));
    room(bytes_of(p.tree_of));
    room(bytes_of(p.schedules));
    for (auto* a : {&p.branch_start, &p.branch_end, &p.child_first, &p.child_node, &p.up_level, &p.down_order,
                    &p.down_level})
      room(bytes_of(*a));
    p.device_storage = detail::Storage(std::max<std::size_t>(total, 256), p.exec);
    std::vector<unsigned char> staging(total, 0);
    char* base = static_cast<char*>(p.device_storage.get());
    std::size_t at = 0;
    auto put = [&](const auto& vec) {
      const std::size_t bytes = vec.size() * sizeof(vec[0]);
      if (bytes) std::memcpy(staging.data() + at, vec.data(), bytes);
      void* dst = base + at;
      at += bytes_of(vec);
      return dst;
    };
    detail::HinesView d = v;
    d.offsets = static_cast<const index_t*>(put(p.offsets));
    d.sizes = static_cast<const int*>(put(p.sizes));
    d.parents = static_cast<const int*>(put(p.parents));
    d.parent_base = static_cast<const index_t*>(put(p.parent_base));
    d.tree_of = static_cast<const int*>(put(p.tree_of));
    d.schedules = static_cast<const detail::HinesTreeSchedule*>(put(p.schedules));
    d.branch_start = static_cast<const int*>(put(p.branch_start));
    d.branch_end = static_cast<const int*>(put(p.branch_end));
    d.child_first = static_cast<const int*>(put(p.child_first));
    d.child_node = static_cast<const int*>(put(p.child_node));
    d.up_level = static_cast<const int*>(put(p.up_level));
    d.down_order = static_cast<const int*>(put(p.down_order));
    d.down_level = static_cast<const int*>(put(p.down_level));
    if (total) detail::copy_bytes(base, MemorySpace::device, staging.data(), MemorySpace::host, total);
    const VariableBatchView& dv = p.batch.view();
    d.chunk_offsets = dv.chunk_offsets;
    d.order = dv.order;
    d.position = dv.position;
    p.device = d;
    p.flag = Array<int>(1, p.exec);
  } else {
    p.device = v;
  }
  if (p.layout == detail::HinesLayoutKind::sorted && count > 0) {
    const index_t W = hv.chunk_width;
    for (index_t slot = 0; slot < count; slot += W) {
      const int rows = p.sizes[static_cast<std::size_t>(hv.order[slot])];
      if (p.range_rows.empty() || 2 * rows <= p.range_rows.back()) {
        p.range_first.push_back(slot);
        p.range_rows.push_back(rows);
      }
    }
    p.range_first.push_back(count);
  }
  p.kernel = p.options.kernel == HinesKernel::automatic ? choose_kernel<T>(p) : p.options.kernel;
}

template <class T>
HinesPlan<T>::HinesPlan(const Executor& exec, const HinesBatch& batch, const CompactBatch& layout, HinesOptions options)
    : impl_(std::make_unique<Impl>(exec, batch, options, make_batch(exec, batch, options))) {
  Impl& p = *impl_;
  p.layout = detail::HinesLayoutKind::compact;
  const detail::CompactGeometry g =
      detail::compact_geometry(p.batch, layout, [](int n) { return static_cast<index_t>(n); }, "HinesPlan");
  p.offsets = g.offsets;
  p.span = g.span;
  build<T>(p);
}

template <class T>
HinesPlan<T>::HinesPlan(const Executor& exec, const HinesBatch& batch, const PaddedInterleaved& layout,
                        HinesOptions options)
    : impl_(std::make_unique<Impl>(exec, batch, options, make_batch(exec, batch, options))) {
  Impl& p = *impl_;
  p.layout = detail::HinesLayoutKind::padded;
  const index_t count = batch.count();
  const index_t stride = layout.stride == 0 ? count : layout.stride;
  const index_t rows = layout.rows == 0 ? p.batch.max_size() : layout.rows;
  detail::require(stride >= count, "HinesPlan: PaddedInterleaved stride = " + std::to_string(stride) +
                                       " must be >= the neuron count " + std::to_string(count));
  detail::require(rows >= p.batch.max_size(), "HinesPlan: PaddedInterleaved rows = " + std::to_string(rows) +
                                                  " must be >= the largest neuron " +
                                                  std::to_string(p.batch.max_size()));
  p.span = count == 0 ? 0 : (rows - 1) * stride + count;
  p.host.stride = stride;
  build<T>(p);
  p.host.stride = stride;
  p.device.stride = stride;
}

template <class T>
HinesPlan<T>::HinesPlan(const Executor& exec, const HinesBatch& batch, const SortedInterleaved& layout,
                        HinesOptions options)
    : impl_(std::make_unique<Impl>(exec, batch, options, make_batch(exec, batch, options))) {
  Impl& p = *impl_;
  p.layout = detail::HinesLayoutKind::sorted;
  p.span = p.batch.span(layout);
  build<T>(p);
}

template <class T>
HinesPlan<T>::~HinesPlan() = default;
template <class T>
HinesPlan<T>::HinesPlan(HinesPlan&&) noexcept = default;
template <class T>
HinesPlan<T>& HinesPlan<T>::operator=(HinesPlan&&) noexcept = default;

template <class T>
HinesKernel HinesPlan<T>::kernel() const {
  return impl_->kernel;
}
template <class T>
index_t HinesPlan<T>::span() const {
  return impl_->span;
}
template <class T>
const VariableBatchPlan& HinesPlan<T>::batch() const {
  return impl_->batch;
}
template <class T>
const HinesBatch& HinesPlan<T>::neurons() const {
  return impl_->neurons;
}

template <class T>
const detail::HinesView& HinesPlan<T>::view() const {
  return impl_->device;
}

template <class T>
index_t HinesPlan<T>::index(index_t s, int k) const {
  const Impl& p = *impl_;
  if (s < 0 || s >= p.neurons.count())
    throw InvalidArgument("HinesPlan::index: neuron " + std::to_string(s) + " out of range [0, " +
                          std::to_string(p.neurons.count()) + ")");
  if (k < 0 || k >= p.sizes[static_cast<std::size_t>(s)])
    throw InvalidArgument("HinesPlan::index: element " + std::to_string(k) + " out of range [0, " +
                          std::to_string(p.sizes[static_cast<std::size_t>(s)]) + ") of neuron " + std::to_string(s));
  return cpu::hines_address(p.host, cpu::hines_slot(p.host, s), k);
}

template <class T>
void HinesPlan<T>::solve(const T* offdiag, T* diag, T* rhs) {
  Impl& p = *impl_;
  if (p.neurons.count() == 0) return;
  detail::require(offdiag && diag && rhs, "HinesPlan::solve: offdiag, diag and rhs must not be null");
  const bool dev = p.exec.is_cuda();
  for (const void* ptr : {static_cast<const void*>(offdiag), static_cast<const void*>(diag), static_cast<const void*>(rhs)})
    detail::require(cuda_backend::is_device_pointer(ptr) == dev,
                    std::string("HinesPlan::solve: an array is in ") + (dev ? "host" : "device") +
                        " memory but the plan's executor is " + p.exec.name() +
                        "; pass arrays in the executor's memory space");
  index_t bad = -1;
  if (dev) {
    int* flag = p.options.check_pivots ? p.flag.data() : nullptr;
    cuda_backend::HinesLaunch launch;
    launch.threads_per_block = p.options.threads_per_block;
    if (!p.range_rows.empty()) {
      launch.range_first = p.range_first.data();
      launch.range_rows = p.range_rows.data();
      launch.ranges = static_cast<int>(p.range_rows.size());
    }
    cuda_backend::hines_solve<T>(p.kernel, p.device, offdiag, diag, rhs, launch, flag, p.exec.stream());
    if (flag) {
      int h = 0;
      cuda_backend::copy_on_stream(&h, flag, sizeof(int), cuda_backend::Copy::device_to_host, p.exec.stream());
      if (h != cuda_backend::kNoBadNeuron) bad = h;
    }
  } else {
    const int threads = p.exec.threads();
    switch (p.kernel) {
      case HinesKernel::reference: bad = cpu::hines_reference<T>(p.host, offdiag, diag, rhs); break;
      case HinesKernel::cpu_vector: bad = cpu::hines_vector<T>(p.host, offdiag, diag, rhs, threads); break;
      default: bad = cpu::hines_scalar<T>(p.host, offdiag, diag, rhs, threads); break;
    }
    if (!p.options.check_pivots) bad = -1;
  }
  if (bad >= 0)
    throw SingularSystem("HinesPlan::solve: zero or non-finite pivot in neuron " + std::to_string(bad) + " (kernel " +
                         hines_kernel_name(p.kernel) +
                         "); its matrix is singular or has non-finite entries (check diag > 0 and the assembly)", bad);
}

template class HinesPlan<float>;
template class HinesPlan<double>;

// --- PassiveNeurons ---------------------------------------------------------------------------

template <class T>
struct PassiveNeurons<T>::Impl {
  Executor exec = Executor::host();
  double dt = 0, time = 0;
  std::vector<Compartments> cells;
  std::vector<int> cell_of;
  std::unique_ptr<HinesPlan<T>> plan;
  Array<T> offdiag, d0, cdt, ge, v, diag;
  std::map<std::pair<index_t, int>, double> currents;  // (neuron, node) -> nA
  bool currents_dirty = true;
  std::vector<index_t> stim_pos;
  std::vector<T> stim_amp;
  Array<index_t> stim_pos_dev;
  Array<T> stim_amp_dev;
};

template <class T>
PassiveNeurons<T>::PassiveNeurons(const Executor& exec, std::vector<Compartments> cells, std::vector<int> cell_of,
                                  double dt, HinesOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  detail::require(std::isfinite(dt) && dt > 0, "PassiveNeurons: dt = " + num(dt) + " ms must be > 0");
  detail::require(!cells.empty(), "PassiveNeurons: no cells");
  p.exec = exec;
  p.dt = dt;
  p.cells = std::move(cells);
  p.cell_of = std::move(cell_of);
  HinesBatch batch;
  std::vector<HinesMatrix> mats;
  for (const Compartments& c : p.cells) {
    batch.topologies.emplace_back(c.parent);
    mats.push_back(implicit_euler_matrix(c, dt));
  }
  batch.topology_of = p.cell_of;
  int max_size = 0;
  for (const Compartments& c : p.cells) max_size = std::max(max_size, c.size());
  // On a GPU (bench_cuda_hines on the H100, docs/hines.md): one block per neuron (CompactBatch,
  // cuda_branch) for large cells and for populations too small to fill the GPU with one
  // thread per neuron (1.5-12x faster at 256-25,600 neurons), except small trees in batches
  // the stack kernel serves better; size-sorted chunks (one thread per neuron) otherwise.
  const bool small_trees =
      exec.is_cuda() && kStackMinThreads <= cuda_backend::hines_stack_threads(max_size, sizeof(T), exec.device());
  const index_t neurons = static_cast<index_t>(p.cell_of.size());
  const bool branch = max_size >= 1024 || (neurons <= kBranchMaxNeurons && !(small_trees && neurons > 8192));
  if (exec.is_cuda() && branch && options.kernel == HinesKernel::automatic)
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else if (options.kernel == HinesKernel::cuda_branch)
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else if (options.kernel == HinesKernel::cpu_scalar || options.kernel == HinesKernel::reference ||
           options.kernel == HinesKernel::cuda_paper)
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, SortedInterleaved{}, options);
  const index_t span = p.plan->span();
  std::vector<T> off(static_cast<std::size_t>(span), T(0)), d0(off), cdt(off), ge(off), v(off);
  for (index_t s = 0; s < batch.count(); ++s) {
    const int c = p.cell_of[static_cast<std::size_t>(s)];
    const Compartments& cell = p.cells[static_cast<std::size_t>(c)];
    const HinesMatrix& m = mats[static_cast<std::size_t>(c)];
    for (int k = 0; k < cell.size(); ++k) {
      const std::size_t i = static_cast<std::size_t>(p.plan->index(s, k));
      const std::size_t kk = static_cast<std::size_t>(k);
      off[i] = static_cast<T>(m.offdiag[kk]);
      d0[i] = static_cast<T>(m.diag[kk]);
      cdt[i] = static_cast<T>(cell.capacitance[kk] / dt);
      ge[i] = static_cast<T>(cell.leak[kk] * cell.e_leak);
      v[i] = static_cast<T>(cell.e_leak);
    }
  }
  auto upload = [&](Array<T>& a, const std::vector<T>& h) {
    a = Array<T>(std::max<index_t>(span, 1), exec);
    if (span) a.copy_from_host(h.data());
  };
  upload(p.offdiag, off);
  upload(p.d0, d0);
  upload(p.cdt, cdt);
  upload(p.ge, ge);
  upload(p.v, v);
  p.diag = Array<T>(std::max<index_t>(span, 1), exec);
}

template <class T>
PassiveNeurons<T>::~PassiveNeurons() = default;
template <class T>
PassiveNeurons<T>::PassiveNeurons(PassiveNeurons&&) noexcept = default;
template <class T>
PassiveNeurons<T>& PassiveNeurons<T>::operator=(PassiveNeurons&&) noexcept = default;

template <class T>
void PassiveNeurons<T>::set_voltage(double value) {
  Impl& p = *impl_;
  detail::require(std::isfinite(value), "PassiveNeurons::set_voltage: v = " + num(value) + " must be finite");
  const index_t span = p.plan->span();
  std::vector<T> v(static_cast<std::size_t>(span), T(0));
  for (index_t s = 0; s < count(); ++s) {
    const int n = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(s)])].size();
    for (int k = 0; k < n; ++k) v[static_cast<std::size_t>(p.plan->index(s, k))] = static_cast<T>(value);
  }
  if (span) p.v.copy_from_host(v.data());
}

template <class T>
void PassiveNeurons<T>::set_current(index_t neuron, int compartment, double nA) {
  Impl& p = *impl_;
  detail::require(std::isfinite(nA), "PassiveNeurons::set_current: " + num(nA) + " nA must be finite");
  const index_t i = p.plan->index(neuron, compartment);  // validates both
  (void)i;
  if (nA == 0)
    p.currents.erase({neuron, compartment});
  else
    p.currents[{neuron, compartment}] = nA;
  p.currents_dirty = true;
}

template <class T>
void PassiveNeurons<T>::clear_currents() {
  impl_->currents.clear();
  impl_->currents_dirty = true;
}

template <class T>
void PassiveNeurons<T>::step(int steps) {
  Impl& p = *impl_;
  detail::require(steps >= 0, "PassiveNeurons::step: steps = " + std::to_string(steps) + " must be >= 0");
  if (p.currents_dirty) {
    p.stim_pos.clear();
    p.stim_amp.clear();
    for (const auto& [at, nA] : p.currents) {
      p.stim_pos.push_back(p.plan->index(at.first, at.second));
      p.stim_amp.push_back(static_cast<T>(nA));
    }
    if (p.exec.is_cuda() && !p.stim_pos.empty()) {
      p.stim_pos_dev = Array<index_t>(static_cast<index_t>(p.stim_pos.size()), p.exec);
      p.stim_amp_dev = Array<T>(static_cast<index_t>(p.stim_amp.size()), p.exec);
      p.stim_pos_dev.copy_from_host(p.stim_pos.data());
      p.stim_amp_dev.copy_from_host(p.stim_amp.data());
    }
    p.currents_dirty = false;
  }
  const index_t span = p.plan->span();
  const int nstim = static_cast<int>(p.stim_pos.size());
  for (int k = 0; k < steps; ++k) {
    if (p.exec.is_cuda()) {
      cuda_backend::hines_assemble<T>(span, p.d0.data(), p.cdt.data(), p.ge.data(), p.diag.data(), p.v.data(),
                                      nstim ? p.stim_pos_dev.data() : nullptr, nstim ? p.stim_amp_dev.data() : nullptr,
                                      nstim, p.exec.stream());
    } else {
      cpu::hines_assemble<T>(span, p.d0.data(), p.cdt.data(), p.ge.data(), p.diag.data(), p.v.data(),
                             p.stim_pos.data(), p.stim_amp.data(), nstim, p.exec.threads());
    }
    p.plan->solve(p.offdiag.data(), p.diag.data(), p.v.data());
    p.time += p.dt;
  }
}

template <class T>
double PassiveNeurons<T>::time() const {
  return impl_->time;
}
template <class T>
double PassiveNeurons<T>::dt() const {
  return impl_->dt;
}
template <class T>
index_t PassiveNeurons<T>::count() const {
  return static_cast<index_t>(impl_->cell_of.size());
}
template <class T>
const HinesPlan<T>& PassiveNeurons<T>::plan() const {
  return *impl_->plan;
}

template <class T>
std::vector<T> PassiveNeurons<T>::voltages() const {
  const Impl& p = *impl_;
  const index_t span = p.plan->span();
  std::vector<T> all(static_cast<std::size_t>(span));
  if (span) p.v.copy_to_host(all.data());
  std::vector<T> out;
  for (index_t s = 0; s < count(); ++s) {
    const int n = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(s)])].size();
    for (int k = 0; k < n; ++k) out.push_back(all[static_cast<std::size_t>(p.plan->index(s, k))]);
  }
  return out;
}

template <class T>
std::vector<double> PassiveNeurons<T>::voltage(index_t neuron) const {
  const Impl& p = *impl_;
  detail::require(neuron >= 0 && neuron < count(), "PassiveNeurons::voltage: neuron " + std::to_string(neuron) +
                                                       " out of range [0, " + std::to_string(count()) + ")");
  const index_t span = p.plan->span();
  std::vector<T> all(static_cast<std::size_t>(span));
  if (span) p.v.copy_to_host(all.data());
  const int n = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(neuron)])].size();
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = all[static_cast<std::size_t>(p.plan->index(neuron, k))];
  return out;
}

template class PassiveNeurons<float>;
template class PassiveNeurons<double>;

}  // namespace adi
