// Morphologies: sections from SWC files, as NEURON's Import3d builds them (the default) or
// broken at branch points only (adi's earlier mapping), and their validation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "adi/detail/hines_geometry.hpp"
#include "adi/error.hpp"
#include "adi/hines.hpp"
#include "adi/io/swc.hpp"

namespace adi {

namespace {

namespace H = detail::hines;
using detail::require;

std::string at_line(const io::SwcTree& t, int line) { return t.source + ":" + std::to_string(line) + ": "; }

// NEURON refuses a zero diameter (lambda_f, nrn_area_ri), so do we, naming the line.
void check_radii(const io::SwcTree& t) {
  for (const io::SwcSample& s : t.samples)
    if (!(s.radius > 0))
      throw InvalidArgument(at_line(t, s.line) + (s.type == 1 ? "soma sample " : "sample ") + std::to_string(s.id) +
                            " has radius " + H::num(s.radius) +
                            "; every radius must be > 0 (NEURON refuses a zero diameter: its axial "
                            "resistance would be infinite)");
}

// What NEURON stores for a coordinate that Import3d passed through hoc: printed with %.8g
// (Import3d_GUI.instantiate executes "pt3dadd(%.8g, ...)"), then kept as a float (Pt3d).
double as_pt3d(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.8g", v);
  return static_cast<double>(static_cast<float>(std::strtod(b, nullptr)));
}

const char* type_name(int type, std::string& buf) {
  switch (type) {
    case 1: return "soma";
    case 2: return "axon";
    case 3: return "dend";
    case 4: return "apic";
    default:
      buf = type < 0 ? "minus_" + std::to_string(-type) : "dend_" + std::to_string(type);
      return buf.c_str();
  }
}

// NEURON's Import3d (share/lib/hoc/import3d/read_swc.hoc, Import3d_SWC_read, and
// import3d_gui.hoc, Import3d_GUI.instantiate), rule by rule, on the samples in id order:
//  - a section is a run of consecutive samples; it ends at a sample with other than exactly one
//    child, at a child listed out of order (not the next line), and where the type changes
//    (a sample whose parent is a soma sample starts a section of its own type);
//  - a non-root section's 3-d points start with a copy of its parent sample (with the child's
//    own diameter when the parent is soma and the child is not), except where it is "wired":
//    a multi-sample neurite leaving a one-point soma, an interior soma point, or a soma point
//    with several soma children starts at its own first sample;
//  - connections: to a one-point soma at 0.5, to the root's first point at 0, to the interior
//    of a soma at 0.5, otherwise at 1; a branch off the first sample of a neurite that leaves
//    the soma (or off a non-soma root) connects at 0 of that neurite;
//  - a root of one 3-d point (a one-point soma, or NeuroMorpho's 3-point soma: the root with
//    two childless samples of its diameter at distance r on either side) becomes a cylinder
//    of length and diameter 2r along x (sphere_rep), the area of the sphere;
//  - sections left with one point or with two equal points are removed (their children move
//    to their parent, chk_valid);
//  - names: soma[k], axon[k], dend[k], apic[k], dend_T[k] numbered by type in section order.
Morphology import3d_sections(const io::SwcTree& tree) {
  const int n = static_cast<int>(tree.samples.size());
  // Samples in id order (Import3d sorts by id); parents must precede children there.
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return tree.samples[static_cast<std::size_t>(a)].id < tree.samples[static_cast<std::size_t>(b)].id; });
  std::vector<int> rank(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) rank[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])] = k;
  std::vector<const io::SwcSample*> S(static_cast<std::size_t>(n));
  std::vector<int> pix(static_cast<std::size_t>(n), -1), type(static_cast<std::size_t>(n));
  std::vector<double> d(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) {
    const int i = order[static_cast<std::size_t>(k)];
    S[static_cast<std::size_t>(k)] = &tree.samples[static_cast<std::size_t>(i)];
    type[static_cast<std::size_t>(k)] = S[static_cast<std::size_t>(k)]->type;
    d[static_cast<std::size_t>(k)] = 2 * S[static_cast<std::size_t>(k)]->radius;  // Import3d works with diameters
    const int p = tree.parent[static_cast<std::size_t>(i)];
    if (p >= 0) {
      pix[static_cast<std::size_t>(k)] = rank[static_cast<std::size_t>(p)];
      if (pix[static_cast<std::size_t>(k)] >= k)
        throw InvalidArgument(at_line(tree, S[static_cast<std::size_t>(k)]->line) + "parent " +
                              std::to_string(S[static_cast<std::size_t>(k)]->parent_id) + " is not less than id " +
                              std::to_string(S[static_cast<std::size_t>(k)]->id) +
                              "; NEURON's Import3d needs every parent listed with a smaller id "
                              "(or read with SwcSections::branch_points)");
    }
  }
  auto U = [](int i) { return static_cast<std::size_t>(i); };
  auto dist = [&](int a, int b) {
    const double dx = S[U(a)]->x - S[U(b)]->x, dy = S[U(a)]->y - S[U(b)]->y, dz = S[U(a)]->z - S[U(b)]->z;
    return std::sqrt(dx * dx + dy * dy + dz * dz);
  };
  // mark_branch: children counted in hundredths (1 per child, +1/100 for a child out of line
  // or of another type), so "exactly one contiguous child of the same type" is 100.
  std::vector<int> nchild(U(n), 0);
  std::vector<char> connect2prox(U(n), 0);
  for (int i = 0; i < n; ++i) {
    const int p = pix[U(i)];
    if (p < 0) continue;
    nchild[U(p)] += 100;
    if (p != i - 1) {
      nchild[U(p)] += 1;
      if (p > 1) {
        if (type[U(p)] != 1 && type[U(pix[U(p)])] == 1) {
          connect2prox[U(i)] = 1;
          nchild[U(p)] = 100;
        }
      } else if (p == 0 && type[0] != 1) {
        connect2prox[U(i)] = 1;
        nchild[0] = 100;
      }
    }
    if (type[U(p)] != type[U(i)]) nchild[U(p)] += 1;
  }
  // sectionify: soma children per soma point, NeuroMorpho's 3-point soma, soma contiguity.
  std::vector<int> nchild_soma(U(n), 0);
  int nsoma = type[0] == 1 ? 1 : 0;
  for (int i = 1; i < n; ++i)
    if (type[U(i)] == 1) {
      ++nsoma;
      const int p = pix[U(i)];
      if (p >= 0 && type[U(p)] == 1) ++nchild_soma[U(p)];
    }
  bool soma3geom = false;
  if (nsoma == 3 && n >= 3 && pix[1] == 0 && pix[2] == 0 && nchild[1] == 0 && nchild[2] == 0 && d[1] == d[0] &&
      d[2] == d[0]) {
    const double len = dist(1, 0) + dist(2, 0);
    if (std::fabs(len / d[0] - 1) < .01) {
      soma3geom = true;
      pix[2] = 1;  // one soma section, of which only the first point is kept
    }
  }
  for (int i = 0; i + 1 < n; ++i)
    if (type[U(i)] == 1 && type[U(i + 1)] == 1 && pix[U(i + 1)] == i && !(i != 0 && nchild_soma[U(i)] > 1))
      nchild[U(i)] = 100;
  // Sections: runs ending where nchild != 1.
  std::vector<int> point2sec(U(n), 0), sec_first;
  sec_first.push_back(0);
  for (int i = 0, s = 0; i < n; ++i) {
    point2sec[U(i)] = s;
    if (nchild[U(i)] != 100 && i + 1 < n) {
      ++s;
      sec_first.push_back(i + 1);
    }
  }
  struct Raw {
    int id = 0;  // first own sample
    int parent = -1;
    double parent_x = 1;
    int first = 0;  // 1: the first point (the parent sample's copy) is a wire, not a 3-d point
    int type = 0;
    std::vector<int> pts;  // samples; pts[0] is the parent sample for non-root sections
    std::vector<double> diam;
    bool removed = false;
  };
  const int nsec = static_cast<int>(sec_first.size());
  std::vector<Raw> secs(U(nsec));
  for (int s = 0; s < nsec; ++s) {
    const int first = sec_first[U(s)];
    int end = s + 1 < nsec ? sec_first[U(s + 1)] : n;
    Raw& r = secs[U(s)];
    r.id = first;
    if (s == 0) {
      if (soma3geom) end = 1;
      for (int i = first; i < end; ++i) r.pts.push_back(i);
    } else {
      const int pp = pix[U(first)];
      r.parent = point2sec[U(pp)];
      const Raw& ps = secs[U(r.parent)];
      const bool den_con_soma = ps.type == 1 && type[U(first)] != 1, con_soma = ps.type == 1;
      const int own = end - first, psize = static_cast<int>(ps.pts.size());
      bool handled = false;
      if (r.parent == 0) {
        handled = true;
        if (den_con_soma && psize == 1) {
          r.parent_x = 0.5;
          if (own > 1) r.first = 1;
        } else if (pp == ps.id) {
          r.parent_x = 0;
          if (type[U(first)] != 1 && nchild_soma[U(pp)] > 1) r.first = 1;
        } else {
          handled = false;
        }
      }
      if (!handled && con_soma) {
        const int offset = ps.id == 0 ? -1 : -2;
        if (pp < ps.id + psize + offset) {
          r.parent_x = 0.5;  // the interior of a soma: its middle
          if (den_con_soma && own > 1) r.first = 1;
        } else if (own > 1 && nchild_soma[U(pp)] > 1 && type[U(first)] != 1) {
          r.first = 1;
        }
      }
      r.pts.push_back(pp);
      for (int i = first; i < end; ++i) r.pts.push_back(i);
    }
    r.type = type[U(first)];
    for (int i : r.pts) r.diam.push_back(d[U(i)]);
    if (r.parent >= 0 && secs[U(r.parent)].type == 1 && r.type != 1) r.diam[0] = r.diam[1];
    if (connect2prox[U(first)]) r.parent_x = 0;
  }
  // chk_valid: drop sections of one 3-d point or two equal ones; children move to the parent.
  for (int s = nsec - 1; s >= 1; --s) {
    Raw& r = secs[U(s)];
    const int count = static_cast<int>(r.pts.size()) - r.first;
    bool drop = count <= 1;
    if (!drop && count == 2) {
      const int a = r.pts[U(r.first)], b = r.pts[U(r.first + 1)];
      drop = S[U(a)]->x == S[U(b)]->x && S[U(a)]->y == S[U(b)]->y && S[U(a)]->z == S[U(b)]->z;
    }
    if (!drop) continue;
    r.removed = true;
    for (int c = s + 1; c < nsec; ++c)
      if (!secs[U(c)].removed && secs[U(c)].parent == s) {
        secs[U(c)].parent = r.parent;
        secs[U(c)].parent_x = r.parent_x;
      }
  }
  // instantiate: names, 3-d points as NEURON stores them, connections.
  std::vector<int> new_index(U(nsec), -1);
  std::vector<Section> out;
  std::map<int, int> name_count;
  for (int s = 0; s < nsec; ++s) {
    const Raw& r = secs[U(s)];
    if (r.removed) continue;
    new_index[U(s)] = static_cast<int>(out.size());
    Section sec;
    sec.type = r.type;
    sec.parent = r.parent < 0 ? -1 : new_index[U(r.parent)];
    sec.parent_x = r.parent_x;
    sec.swc_line = S[U(r.id)]->line;
    std::string buf;
    sec.name = std::string(type_name(r.type, buf)) + "[" + std::to_string(name_count[r.type]++) + "]";
    std::vector<double> xs, ys, zs, ds;
    for (std::size_t k = static_cast<std::size_t>(r.first); k < r.pts.size(); ++k) {
      xs.push_back(S[U(r.pts[k])]->x);
      ys.push_back(S[U(r.pts[k])]->y);
      zs.push_back(S[U(r.pts[k])]->z);
      ds.push_back(r.diam[k]);
    }
    if (ds.size() == 1) {  // sphere_rep: a cylinder of length and diameter d along x
      xs = {xs[0] - ds[0] / 2, xs[0], xs[0] + ds[0] / 2};
      ys.assign(3, ys[0]);
      zs.assign(3, zs[0]);
      ds.assign(3, ds[0]);
    }
    for (std::size_t k = 0; k < ds.size(); ++k)
      sec.points.push_back({as_pt3d(xs[k]), as_pt3d(ys[k]), as_pt3d(zs[k]), as_pt3d(ds[k]) / 2});
    out.push_back(std::move(sec));
  }
  return Morphology(std::move(out), tree.source);
}

Morphology branch_point_sections(const io::SwcTree& tree) {
  const int n = static_cast<int>(tree.samples.size());
  require(n >= 1 && tree.parent.size() == tree.samples.size(),
                  "Morphology::from_swc: '" + tree.source + "' has no samples");
  std::vector<int> children(static_cast<std::size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    const int p = tree.parent[static_cast<std::size_t>(i)];
    require(p >= 0 && p < i, "Morphology::from_swc: '" + tree.source +
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
  require(!sections.empty(), "Morphology::from_swc: '" + tree.source +
                                         "' has a single sample that is not a soma; a neuron needs a "
                                         "soma sample (type 1) or at least two samples");
  return Morphology(std::move(sections), tree.source);
}

}  // namespace

double Section::length() const {
  double L = 0;
  for (std::size_t k = 1; k < points.size(); ++k) L += H::distance(points[k - 1], points[k]);
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
                    where + " attaches at x = " + H::num(sec.parent_x) + "; x must lie in [0, 1]");
    detail::require(sec.points.size() >= 2,
                    where + " has " + std::to_string(sec.points.size()) + " points; a section needs at least 2");
    for (const MorphologyPoint& p : sec.points) {
      detail::require(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z),
                      where + " has a point with a non-finite coordinate");
      detail::require(std::isfinite(p.radius) && p.radius >= 0,
                      where + " has radius " + H::num(p.radius) + "; radii must be finite and >= 0");
    }
  }
}
int Morphology::soma() const {
  for (std::size_t s = 0; s < sections_.size(); ++s)
    if (sections_[s].type == 1) return static_cast<int>(s);
  return -1;
}

int Morphology::find(const std::string& section_name) const {
  for (std::size_t s = 0; s < sections_.size(); ++s)
    if (sections_[s].name == section_name) return static_cast<int>(s);
  return -1;
}

Morphology Morphology::from_swc(const io::SwcTree& tree, SwcSections convention) {
  const int n = static_cast<int>(tree.samples.size());
  detail::require(n >= 1 && tree.parent.size() == tree.samples.size(),
                  "Morphology::from_swc: '" + tree.source + "' has no samples");
  for (int i = 1; i < n; ++i) {
    const int p = tree.parent[static_cast<std::size_t>(i)];
    detail::require(p >= 0 && p < i, "Morphology::from_swc: '" + tree.source +
                                         "' is not in Hines order (use io::read_swc / parse_swc)");
  }
  check_radii(tree);
  Morphology m = convention == SwcSections::import3d ? import3d_sections(tree) : branch_point_sections(tree);
  m.samples_ = n;
  return m;
}

Morphology Morphology::read_swc(const std::string& path, SwcSections convention) {
  return from_swc(io::read_swc(path), convention);
}

}  // namespace adi
