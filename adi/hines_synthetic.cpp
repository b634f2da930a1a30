// The paper's six synthetic morphology classes (cuHinesBatch, Table 1) as random binary trees.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adi/error.hpp"
#include "adi/hines.hpp"

namespace adi {



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
}  // namespace adi
