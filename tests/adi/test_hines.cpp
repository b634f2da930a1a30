// The Hines pieces above the kernels: morphologies from SWC, NEURON's discretisation, the
// synthetic paper classes, the branch schedule, and the physics: an unbranched cable equals
// the tridiagonal solver, a passive cylinder reaches cable theory's steady state, a passive
// SWC cell follows NEURON 8.2 to 1e-9 relative, and bad parameters get clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "adi/error.hpp"
#include "adi/hines.hpp"
#include "adi/io/swc.hpp"
#include "adi/tridiagonal.hpp"
#include "hines_test_common.hpp"

namespace {

using adi::CableParameters;
using adi::Compartments;
using adi::HinesBatch;
using adi::HinesPlan;
using adi::HinesTopology;
using adi::index_t;
using adi::Morphology;
using adi::NsegRule;

constexpr double kPi = 3.14159265358979323846;

Morphology from_text(const std::string& text) {
  std::istringstream in(text);
  return Morphology::from_swc(adi::io::parse_swc(in, "inline.swc"), adi::SwcSections::branch_points);
}

Morphology import3d(const std::string& text) {
  std::istringstream in(text);
  return Morphology::from_swc(adi::io::parse_swc(in, "inline.swc"));
}

// --- morphology -----------------------------------------------------------------------

TEST(HinesMorphology, PointSomaBecomesACylinderOfTheSphereArea) {
  const Morphology m = from_text(
      "1 1 0 0 0 5 -1\n"
      "2 3 6 0 0 1 1\n"
      "3 3 16 0 0 1 2\n"
      "4 3 0 6 0 0.5 1\n");
  ASSERT_EQ(m.sections().size(), 3u);
  const adi::Section& soma = m.sections()[0];
  EXPECT_EQ(soma.parent, -1);
  EXPECT_DOUBLE_EQ(soma.length(), 10.0);
  EXPECT_DOUBLE_EQ(soma.points[0].radius, 5.0);
  for (int s : {1, 2}) {
    EXPECT_EQ(m.sections()[static_cast<std::size_t>(s)].parent, 0);
    EXPECT_DOUBLE_EQ(m.sections()[static_cast<std::size_t>(s)].parent_x, 0.5);
  }
  // Dendrites leave the soma centre with their own radius.
  EXPECT_DOUBLE_EQ(m.sections()[1].points[0].radius, 1.0);
  EXPECT_DOUBLE_EQ(m.sections()[1].length(), 16.0);
  EXPECT_EQ(m.sections()[1].points.size(), 3u);
  EXPECT_EQ(m.sections()[1].swc_line, 2);
  CableParameters p;
  p.rule = NsegRule::fixed;
  const Compartments c = adi::discretise(m, p);
  EXPECT_NEAR(c.area[1], 4 * kPi * 25, 1e-9);  // the sphere's area
  EXPECT_EQ(c.parent[static_cast<std::size_t>(c.first[1])], 1);  // soma(0.5): its only segment
}

TEST(HinesMorphology, SomaStackRootChildrenAndBranchPoints) {
  const Morphology m = from_text(
      "1 1 0 0 0 4 -1\n"
      "2 1 0 0 2 4 1\n"
      "3 3 3 0 0 1 1\n"
      "4 3 6 0 0 1 3\n"
      "5 3 9 1 0 1 4\n"
      "6 3 9 -1 0 1 4\n");
  ASSERT_EQ(m.sections().size(), 4u);
  EXPECT_EQ(m.sections()[0].parent, -1);  // 1 -> 2: the root section (first child in the file)
  EXPECT_EQ(m.sections()[0].type, 1);
  EXPECT_EQ(m.sections()[1].parent, 0);  // 1 -> 3 -> 4 leaves the root: root section's x = 0
  EXPECT_DOUBLE_EQ(m.sections()[1].parent_x, 0.0);
  EXPECT_EQ(m.sections()[1].points.size(), 3u);
  for (int s : {2, 3}) {
    EXPECT_EQ(m.sections()[static_cast<std::size_t>(s)].parent, 1);  // the branch point 4 ends section 1
    EXPECT_DOUBLE_EQ(m.sections()[static_cast<std::size_t>(s)].parent_x, 1.0);
  }
  CableParameters p;
  p.rule = NsegRule::fixed;
  p.nseg = 3;
  const Compartments c = adi::discretise(m, p);
  EXPECT_EQ(c.size(), 1 + 4 * (3 + 1));
  EXPECT_EQ(c.parent[static_cast<std::size_t>(c.first[1])], 0);   // x = 0 of the root section: node 0
  EXPECT_EQ(c.parent[static_cast<std::size_t>(c.first[2])], c.first[1] + 3);  // section 1's end node
  EXPECT_EQ(c.at(1, 0.0), 0);
  EXPECT_EQ(c.at(1, 1.0), c.first[1] + 3);
  EXPECT_EQ(c.at(1, 0.5), c.first[1] + 1);
  EXPECT_EQ(c.at(1, 1.0 / 3), c.first[1] + 1);  // NEURON's node_index: int(x * nseg)
  EXPECT_THROW(c.at(4, 0.5), adi::InvalidArgument);
  EXPECT_THROW(c.at(0, 1.5), adi::InvalidArgument);
}

// NEURON's Import3d rules (read_swc.hoc, import3d_gui.hoc): a one-point soma is a cylinder of
// length and diameter 2r along x; multi-sample neurites are wired to soma(0.5) from their own
// first sample; a one-sample neurite keeps the soma centre as its first point, with its own
// diameter; sections are named by type.
TEST(HinesImport3d, OnePointSomaWiresAndNames) {
  const Morphology m = import3d(
      "1 1 0 0 0 5 -1\n"
      "2 3 6 0 0 1 1\n"
      "3 3 16 0 0 1 2\n"
      "4 3 0 6 0 0.5 1\n");
  ASSERT_EQ(m.sections().size(), 3u);
  const adi::Section& soma = m.sections()[0];
  EXPECT_EQ(soma.name, "soma[0]");
  ASSERT_EQ(soma.points.size(), 3u);
  EXPECT_DOUBLE_EQ(soma.points[0].x, -5.0);
  EXPECT_DOUBLE_EQ(soma.points[2].x, 5.0);
  EXPECT_DOUBLE_EQ(soma.length(), 10.0);
  EXPECT_EQ(m.soma(), 0);
  const adi::Section& d0 = m.sections()[1];
  EXPECT_EQ(d0.name, "dend[0]");
  EXPECT_EQ(d0.parent, 0);
  EXPECT_DOUBLE_EQ(d0.parent_x, 0.5);
  ASSERT_EQ(d0.points.size(), 2u);  // wired: starts at its own first sample
  EXPECT_DOUBLE_EQ(d0.points[0].x, 6.0);
  EXPECT_DOUBLE_EQ(d0.length(), 10.0);
  const adi::Section& d1 = m.sections()[2];
  EXPECT_EQ(d1.name, "dend[1]");
  ASSERT_EQ(d1.points.size(), 2u);  // one sample: the soma centre with the child's diameter
  EXPECT_DOUBLE_EQ(d1.points[0].y, 0.0);
  EXPECT_DOUBLE_EQ(d1.points[0].radius, 0.5);
  EXPECT_DOUBLE_EQ(d1.parent_x, 0.5);
  EXPECT_EQ(m.find("dend[1]"), 2);
  EXPECT_EQ(m.find("apic[0]"), -1);
  CableParameters p;
  p.rule = NsegRule::fixed;
  const Compartments c = adi::discretise(m, p);
  EXPECT_NEAR(c.area[1], 4 * kPi * 25, 1e-9);  // the sphere's area
  EXPECT_EQ(c.parent[static_cast<std::size_t>(c.first[1])], 1);  // soma(0.5)
}

// NeuroMorpho's 3-point soma is one cylinder (of the root sample, as a sphere); a type change
// ends a section even without a branch.
TEST(HinesImport3d, ThreePointSomaAndTypeChanges) {
  const Morphology m = import3d(
      "1 1 0 0 0 2 -1\n"
      "2 1 0 2 0 2 1\n"
      "3 1 0 -2 0 2 1\n"
      "4 3 3 0 0 1 1\n"
      "5 3 6 0 0 1 4\n"
      "6 2 6 1 0 0.5 5\n"
      "7 2 9 1 0 0.5 6\n");
  ASSERT_EQ(m.sections().size(), 3u);
  EXPECT_EQ(m.sections()[0].name, "soma[0]");
  EXPECT_DOUBLE_EQ(m.sections()[0].length(), 4.0);
  EXPECT_DOUBLE_EQ(m.sections()[0].points[0].x, -2.0);
  EXPECT_EQ(m.sections()[1].name, "dend[0]");
  EXPECT_DOUBLE_EQ(m.sections()[1].parent_x, 0.5);
  EXPECT_DOUBLE_EQ(m.sections()[1].points[0].x, 3.0);
  const adi::Section& axon = m.sections()[2];
  EXPECT_EQ(axon.name, "axon[0]");
  EXPECT_EQ(axon.parent, 1);
  EXPECT_DOUBLE_EQ(axon.parent_x, 1.0);
  ASSERT_EQ(axon.points.size(), 3u);  // the parent sample's copy, then its own two
  EXPECT_DOUBLE_EQ(axon.points[0].radius, 1.0);
  EXPECT_DOUBLE_EQ(axon.points[1].radius, 0.5);
  // The earlier mapping keeps the three soma samples as two soma sections.
  EXPECT_EQ(from_text("1 1 0 0 0 2 -1\n2 1 0 2 0 2 1\n3 1 0 -2 0 2 1\n4 3 3 0 0 1 1\n").sections().size(), 3u);
}

// Frustums: a tapered section's axial resistance is Ra 4e-2/pi L/(d1 d2), not that of the
// mean diameter; its area includes the slant.
TEST(HinesImport3d, FrustumAreaAndResistance) {
  adi::Section s;
  s.points = {{0, 0, 0, 2}, {10, 0, 0, 0.5}};
  const Morphology m({s}, "cone");
  CableParameters p;
  p.rule = NsegRule::fixed;
  p.ra = 100;
  const Compartments c = adi::discretise(m, p);
  const double d_mid = 2.5;  // diameter at the middle
  const double r_left = p.ra * 4e-2 / kPi * 5 / (4 * d_mid), r_right = p.ra * 4e-2 / kPi * 5 / (d_mid * 1);
  EXPECT_NEAR(1 / c.axial[1], r_left, 1e-12 * r_left);
  EXPECT_NEAR(1 / c.axial[2], r_right, 1e-12 * r_right);
  const double slant = std::sqrt(100 + 0.75 * 0.75 * 4);
  EXPECT_NEAR(c.area[1], kPi * (2 + 0.5) * slant, 1e-9);
  p.geometry = adi::Geometry::mean_cylinder;
  EXPECT_NEAR(adi::discretise(m, p).area[1], kPi * 2.5 * 10, 1e-9);
}

// A file whose root is a neurite: the soma is where its type-1 samples are, not section 0.
TEST(HinesImport3d, SomaIsFoundByType) {
  const Morphology m = import3d(
      "1 3 0 0 0 1 -1\n"
      "2 3 5 0 0 1 1\n"
      "3 1 10 0 0 3 2\n"
      "4 1 13 0 0 3 3\n");
  ASSERT_EQ(m.sections().size(), 2u);
  EXPECT_EQ(m.sections()[0].name, "dend[0]");
  EXPECT_EQ(m.soma(), 1);
  EXPECT_EQ(m.sections()[1].name, "soma[0]");
}

TEST(HinesImport3d, BadInputNamesTheLine) {
  auto message = [](const std::string& text, adi::SwcSections s) {
    try {
      std::istringstream in(text);
      Morphology::from_swc(adi::io::parse_swc(in, "cell.swc"), s);
    } catch (const adi::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (adi::SwcSections s : {adi::SwcSections::import3d, adi::SwcSections::branch_points}) {
    const std::string zero = message("1 1 0 0 0 5 -1\n2 3 6 0 0 1 1\n3 3 16 0 0 0 2\n", s);
    EXPECT_NE(zero.find("cell.swc:3:"), std::string::npos) << zero;
    EXPECT_NE(zero.find("radius 0"), std::string::npos) << zero;
    const std::string soma = message("1 1 0 0 0 0 -1\n2 3 6 0 0 1 1\n", s);
    EXPECT_NE(soma.find("cell.swc:1: soma sample 1 has radius 0"), std::string::npos) << soma;
  }
  // A deleted soma line: its children name the missing parent, not a cycle.
  const std::string missing = message("2 3 6 0 0 1 1\n3 3 16 0 0 1 2\n4 3 0 6 0 0.5 1\n", adi::SwcSections::import3d);
  EXPECT_NE(missing.find("parent 1"), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing"), std::string::npos) << missing;
  EXPECT_EQ(missing.find("cycle"), std::string::npos) << missing;
}

TEST(HinesMorphology, RealCellsDiscretise) {
  for (const std::string& f : {hines_test::dense_cell(), hines_test::sparse_cell()}) {
    const Morphology m = Morphology::read_swc(f);
    const Compartments c = adi::discretise(m, CableParameters{});
    int expected = 1;
    for (int n : c.nseg) expected += n + 1;
    EXPECT_EQ(c.size(), expected);
    EXPECT_NO_THROW(HinesTopology{c.parent});
    for (int i = 1; i < c.size(); ++i) {
      ASSERT_LT(c.parent[static_cast<std::size_t>(i)], i);
      ASSERT_GT(c.axial[static_cast<std::size_t>(i)], 0);
    }
    std::printf("%s: %d samples, %zu sections, %d compartments (d_lambda 0.1 at 100 Hz)\n", f.c_str(), m.samples(),
                m.sections().size(), c.size());
  }
}

// --- discretisation ----------------------------------------------------------------------

Morphology cylinder(double L, double radius) {
  adi::Section s;
  s.points = {{0, 0, 0, radius}, {L, 0, 0, radius}};
  return Morphology({s}, "cylinder");
}

TEST(HinesDiscretisation, NeuronFormulas) {
  CableParameters p;
  p.rule = NsegRule::fixed;
  p.nseg = 4;
  p.cm = 2;
  p.ra = 150;
  p.g_leak = 2e-4;
  p.e_leak = -60;
  const Compartments c = adi::discretise(cylinder(100, 1.5), p);
  ASSERT_EQ(c.size(), 6);
  const double dx = 25, d = 3, area = kPi * d * dx, h = 1e-2 * 150 * (dx / 2) / (kPi * d * d / 4);
  EXPECT_EQ(c.area[0], 0);
  EXPECT_EQ(c.area[5], 0);
  for (int i = 1; i <= 4; ++i) {
    EXPECT_NEAR(c.area[static_cast<std::size_t>(i)], area, 1e-12 * area);
    EXPECT_NEAR(c.capacitance[static_cast<std::size_t>(i)], 2 * area * 1e-5, 1e-15);
    EXPECT_NEAR(c.leak[static_cast<std::size_t>(i)], 2e-4 * area * 1e-2, 1e-15);
    EXPECT_NEAR(c.location[static_cast<std::size_t>(i)], (i - 0.5) / 4, 1e-15);
    EXPECT_NEAR(c.x[static_cast<std::size_t>(i)], (i - 0.5) * 25, 1e-12);
  }
  EXPECT_NEAR(c.axial[1], 1 / h, 1e-12 / h);
  EXPECT_NEAR(c.axial[2], 1 / (2 * h), 1e-12 / h);
  EXPECT_NEAR(c.axial[5], 1 / h, 1e-12 / h);
  EXPECT_EQ(c.e_leak, -60);
}

TEST(HinesDiscretisation, NsegRules) {
  CableParameters p;
  p.rule = NsegRule::max_length;
  p.max_length = 30;
  EXPECT_EQ(adi::discretise(cylinder(1000, 1), p).nseg[0], 35);  // ceil(33.3) = 34 -> odd 35
  p.max_length = 1000;
  EXPECT_EQ(adi::discretise(cylinder(1000, 1), p).nseg[0], 1);
  p = CableParameters{};
  p.rule = NsegRule::d_lambda;
  const double lambda = 1e5 * std::sqrt(2.0 / (4 * kPi * 100 * 35.4 * 1.0));
  const int expected = static_cast<int>((1000 / (0.1 * lambda) + 0.9) / 2) * 2 + 1;
  EXPECT_EQ(adi::discretise(cylinder(1000, 1), p).nseg[0], expected);
  p.nseg_per_section = {6};
  EXPECT_EQ(adi::discretise(cylinder(1000, 1), p).nseg[0], 6);
}

TEST(HinesDiscretisation, ImplicitEulerRowsSumToTheMembrane) {
  const Compartments c = adi::discretise(Morphology::read_swc(hines_test::sparse_cell()), CableParameters{});
  const adi::HinesMatrix m = adi::implicit_euler_matrix(c, 0.025);
  std::vector<double> sum(m.diag);
  for (int i = 1; i < c.size(); ++i) {
    sum[static_cast<std::size_t>(i)] += m.offdiag[static_cast<std::size_t>(i)];
    sum[static_cast<std::size_t>(c.parent[static_cast<std::size_t>(i)])] += m.offdiag[static_cast<std::size_t>(i)];
  }
  for (int i = 0; i < c.size(); ++i) {
    const double membrane = c.capacitance[static_cast<std::size_t>(i)] / 0.025 + c.leak[static_cast<std::size_t>(i)];
    EXPECT_NEAR(sum[static_cast<std::size_t>(i)], membrane, 1e-9 * m.diag[static_cast<std::size_t>(i)]);
  }
}

TEST(HinesDiscretisation, BadParametersAndGeometry) {
  const Morphology m = cylinder(100, 1);
  auto bad = [&](auto change, const std::string& what) {
    CableParameters p;
    change(p);
    try {
      adi::discretise(m, p);
      ADD_FAILURE() << "no error for " << what;
    } catch (const adi::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  bad([](CableParameters& p) { p.cm = 0; }, "cm");
  bad([](CableParameters& p) { p.ra = -1; }, "Ra");
  bad([](CableParameters& p) { p.g_leak = std::nan(""); }, "g_leak");
  bad([](CableParameters& p) { p.e_leak = INFINITY; }, "e_leak");
  bad([](CableParameters& p) { p.rule = NsegRule::fixed, p.nseg = 0; }, "nseg");
  bad([](CableParameters& p) { p.rule = NsegRule::max_length, p.max_length = 0; }, "max_length");
  bad([](CableParameters& p) { p.d_lambda = -0.1; }, "d_lambda");
  bad([](CableParameters& p) { p.nseg_per_section = {1, 2}; }, "nseg_per_section");
  bad([](CableParameters& p) { p.nseg_per_section = {0}; }, "nseg_per_section[0]");
  // Zero length, zero radius, negative radius, parents out of order.
  const Morphology dot = from_text("1 3 0 0 0 1 -1\n2 3 0 0 0 1 1\n");
  try {
    adi::discretise(dot, CableParameters{});
    ADD_FAILURE() << "zero length accepted";
  } catch (const adi::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("zero length"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("SWC line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(adi::discretise(cylinder(100, 0), CableParameters{}), adi::InvalidArgument);
  EXPECT_THROW(cylinder(100, -1), adi::InvalidArgument);
  adi::Section a, b;
  a.points = b.points = {{0, 0, 0, 1}, {1, 0, 0, 1}};
  b.parent = 1;
  EXPECT_THROW(Morphology({a, b}), adi::InvalidArgument);
  b.parent = 0;
  b.parent_x = 1.5;
  EXPECT_THROW(Morphology({a, b}), adi::InvalidArgument);
  EXPECT_THROW(Morphology(std::vector<adi::Section>{}), adi::InvalidArgument);
  EXPECT_THROW(from_text("1 3 0 0 0 1 -1\n"), adi::InvalidArgument);  // one non-soma sample: no cable
  const Compartments c = adi::discretise(m, CableParameters{});
  EXPECT_THROW(adi::implicit_euler_matrix(c, 0), adi::InvalidArgument);
  EXPECT_THROW(adi::implicit_euler_matrix(c, -0.025), adi::InvalidArgument);
  EXPECT_THROW(adi::PassiveNeurons<double>(adi::Executor::host(), {c}, {0}, 0.0), adi::InvalidArgument);
  EXPECT_THROW(adi::PassiveNeurons<double>(adi::Executor::host(), {c}, {1}, 0.025), adi::InvalidArgument);
}

// --- synthetic classes and the branch schedule ------------------------------------------------

TEST(HinesSynthetic, PaperClassesHaveTheirSizesAndBranches) {
  for (const adi::SyntheticSpec& spec : adi::paper_classes()) {
    const adi::SyntheticNeuron a = adi::generate_morphology(spec);
    const Compartments c = adi::discretise(a.morphology, a.parameters());
    EXPECT_EQ(c.size(), spec.compartments) << spec.name;
    EXPECT_EQ(static_cast<int>(a.morphology.sections().size()), spec.branches) << spec.name;
    const adi::SyntheticNeuron b = adi::generate_morphology(spec);
    EXPECT_EQ(b.nseg, a.nseg) << "deterministic";
    const HinesTopology t(c.parent);
    std::printf("%-12s %4d compartments %4d sections, %4d solver branches, height %3d depth %3d\n", spec.name.c_str(),
                c.size(), spec.branches, t.branches(), t.height(), t.depth());
  }
  EXPECT_EQ(adi::paper_class("big-high").compartments, 691);
  EXPECT_THROW(adi::paper_class("huge"), adi::InvalidArgument);
  EXPECT_THROW(adi::generate_morphology({"x", 10, 5, 1}), adi::InvalidArgument);
  EXPECT_THROW(adi::generate_morphology({"x", 10, 0, 1}), adi::InvalidArgument);
}

TEST(HinesTopologyTest, Branches) {
  const HinesTopology cable(hines_test::cable(10));
  EXPECT_EQ(cable.branches(), 1);
  EXPECT_EQ(cable.height(), 1);
  EXPECT_EQ(cable.depth(), 1);
  const HinesTopology star(hines_test::star(6));
  EXPECT_EQ(star.branches(), 6);
  EXPECT_EQ(star.height(), 2);
  const HinesTopology heap(hines_test::binary(15));  // every node its own branch
  EXPECT_EQ(heap.branches(), 15);
  EXPECT_EQ(heap.height(), 4);
  EXPECT_EQ(heap.depth(), 4);
  const HinesTopology deep(hines_test::deep_binary(1 + 6 * 4, 4));  // node 0, then 3 splits into cables of 4
  EXPECT_EQ(deep.branches(), 7);  // node 0; A, B; A1, A2 at A's tip; A11, A12 at A1's tip
  EXPECT_EQ(deep.height(), 4);
  EXPECT_EQ(deep.depth(), 4);
  EXPECT_THROW(HinesTopology({0, 0}), adi::InvalidArgument);
  EXPECT_THROW(HinesTopology({-1, 1}), adi::InvalidArgument);
  EXPECT_THROW(HinesTopology(std::vector<int>{}), adi::InvalidArgument);
  EXPECT_STREQ(adi::hines_kernel_name(adi::hines_kernel_from_name("cuda_stack")), "cuda_stack");
  EXPECT_THROW(adi::hines_kernel_from_name("fast"), adi::InvalidArgument);
}

// --- physics ----------------------------------------------------------------------------------

template <class T>
class HinesPhysics : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(HinesPhysics, Types);

// An unbranched cable is a tridiagonal system: the Hines solve equals the tridiagonal
// solver's (adi/tridiagonal.hpp) on the same rows.
TYPED_TEST(HinesPhysics, CableEqualsTridiagonal) {
  using T = TypeParam;
  for (int n : {1, 2, 3, 33, 257}) {
    const index_t count = 5;
    const HinesBatch batch = HinesBatch::uniform(HinesTopology(hines_test::cable(n)), count);
    HinesPlan<T> plan(adi::Executor::host(), batch, adi::CompactBatch{});
    const auto sys = hines_test::random_systems<T>(batch, 31 + n);
    auto h = hines_test::place(plan, sys);
    std::vector<T> a(h.diag.size(), T(0)), b(h.diag), c(h.diag.size(), T(0)), d(h.rhs), u(h.rhs.size());
    for (index_t s = 0; s < count; ++s)
      for (int i = 0; i < n; ++i) {
        const std::size_t k = static_cast<std::size_t>(s * n + i);
        a[k] = i > 0 ? h.off[k] : T(0);
        c[k] = i + 1 < n ? h.off[k + 1] : T(0);
      }
    adi::TridiagonalPlan<T> tri(adi::Executor::host(), adi::StridedLines::contiguous(n, count));
    tri.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
    plan.solve(h.off.data(), h.diag.data(), h.rhs.data());
    double scale = 0, err = 0;
    for (std::size_t k = 0; k < u.size(); ++k) {
      scale = std::max(scale, std::fabs(static_cast<double>(u[k])));
      err = std::max(err, std::fabs(static_cast<double>(u[k]) - static_cast<double>(h.rhs[k])));
    }
    EXPECT_LE(err, (sizeof(T) == 8 ? 1e-13 : 1e-5) * scale) << "n = " << n;
  }
}

// Steady state of a sealed cylinder with current I injected at x = 0 (cable theory):
//   V(x) - E = I r_a lambda cosh((L - x) / lambda) / sinh(L / lambda),
//   r_a = 4 Ra / (pi d^2), lambda = sqrt(d / (4 Ra g)). Second order in dx.
TYPED_TEST(HinesPhysics, PassiveCylinderSteadyState) {
  using T = TypeParam;
  const double L = 1000, diam = 2, ra = 100, g = 1e-4, e = -65, I = 0.01;
  const double d_cm = diam * 1e-4, r_a = 4 * ra / (kPi * d_cm * d_cm), lambda = std::sqrt(d_cm / (4 * ra * g)) * 1e4;
  double previous = 0;
  // In float only the coarse cable: the steady system's condition grows like (L / dx)^2, so
  // beyond ~50 segments float round-off, not the discretisation, dominates the error.
  for (int nseg : sizeof(T) == 8 ? std::vector<int>{51, 101, 201} : std::vector<int>{51}) {
    CableParameters p;
    p.rule = NsegRule::fixed;
    p.nseg = nseg;
    p.ra = ra;
    p.g_leak = g;
    p.e_leak = e;
    const Compartments c = adi::discretise(cylinder(L, diam / 2), p);
    adi::PassiveNeurons<T> cell(adi::Executor::host(), {c}, {0}, 1e4);
    cell.set_current(0, 0, I);
    cell.step(8);
    const std::vector<double> v = cell.voltage(0);
    double err = 0, peak = 0;
    for (int i = 1; i <= nseg; ++i) {
      const double x = c.location[static_cast<std::size_t>(i)] * L;
      const double exact = I * 1e-9 * r_a * lambda * 1e-4 * std::cosh((L - x) / lambda) / std::sinh(L / lambda) * 1e3;
      peak = std::max(peak, exact);
      err = std::max(err, std::fabs(v[static_cast<std::size_t>(i)] - e - exact));
    }
    err /= peak;
    std::printf("%s nseg %3d: max relative error of V - E %.3e\n", sizeof(T) == 8 ? "double" : "float ", nseg, err);
    EXPECT_LT(err, sizeof(T) == 8 ? 1e-4 : 1e-3);
    if (sizeof(T) == 8 && previous > 0) EXPECT_GT(previous / err, 3.5) << "second order";
    previous = err;
  }
}

// PassiveNeurons against implicit Euler written out densely (Eigen), two different cells.
TYPED_TEST(HinesPhysics, PassiveNeuronsFollowDenseImplicitEuler) {
  using T = TypeParam;
  std::vector<Compartments> cells;
  for (const char* name : {"small-high", "medium-low"}) {
    const adi::SyntheticNeuron s = adi::generate_morphology(adi::paper_class(name));
    cells.push_back(adi::discretise(s.morphology, s.parameters()));
  }
  const double dt = 0.1;
  adi::PassiveNeurons<T> sim(adi::Executor::host(), cells, {1, 0, 1}, dt);
  sim.set_voltage(-65);
  sim.set_current(2, 5, 0.3);
  sim.set_current(0, 0, -0.1);
  sim.step(10);
  EXPECT_NEAR(sim.time(), 1.0, 1e-12);
  for (index_t s = 0; s < 3; ++s) {
    const Compartments& c = cells[s == 1 ? 0 : 1];
    const int n = c.size();
    const adi::HinesMatrix m = adi::implicit_euler_matrix(c, dt);
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i) {
      A(i, i) = m.diag[static_cast<std::size_t>(i)];
      if (i) A(i, c.parent[static_cast<std::size_t>(i)]) = A(c.parent[static_cast<std::size_t>(i)], i) = m.offdiag[static_cast<std::size_t>(i)];
    }
    const auto llt = A.llt();
    Eigen::VectorXd v = Eigen::VectorXd::Constant(n, -65);
    for (int k = 0; k < 10; ++k) {
      Eigen::VectorXd b(n);
      for (int i = 0; i < n; ++i)
        b(i) = c.capacitance[static_cast<std::size_t>(i)] / dt * v(i) + c.leak[static_cast<std::size_t>(i)] * c.e_leak;
      if (s == 2) b(5) += 0.3;
      if (s == 0) b(0) -= 0.1;
      v = llt.solve(b);
    }
    const std::vector<double> got = sim.voltage(s);
    for (int i = 0; i < n; ++i)
      ASSERT_NEAR(got[static_cast<std::size_t>(i)], v(i), sizeof(T) == 8 ? 1e-10 : 2e-3) << "neuron " << s << " node " << i;
  }
  const std::vector<T> all = sim.voltages();
  EXPECT_EQ(all.size(), static_cast<std::size_t>(2 * cells[1].size() + cells[0].size()));
}

// --- NEURON 8.2 ---------------------------------------------------------------------------

std::string reference_script() { return hines_test::tests_path("neuron_reference.py"); }

// The mapping the comparison uses: one NEURON section per adi section (same L, nseg from the
// d_lambda rule, per-segment diam = adi's d_j), connect(child(0), parent(parent_x)), pas
// everywhere, IClamp at section 0 (x = 0.5), fixed step implicit Euler (secondorder 0).
// adi's node order is root section(0), then per section seg (j + 1/2)/nseg and (1).
void compare_with_neuron(const std::string& swc) {
  const std::string python = hines_test::python_with_neuron();
  if (python.empty())
    GTEST_SKIP() << "NEURON NOT FOUND: 'import neuron' failed for $ADI_PYTHON, python3 and /usr/bin/python3; "
                    "install Debian's python3-neuron (scripts/install_deps.sh) to run the NEURON comparison";
  // adi's earlier mapping and mean-diameter cylinders: exactly what NEURON computes for
  // sections without 3-d points given those diameters (test_hines_neuron.cpp covers Import3d).
  const Morphology m = Morphology::read_swc(swc, adi::SwcSections::branch_points);
  CableParameters p;
  p.geometry = adi::Geometry::mean_cylinder;
  p.cm = 1.0;
  p.ra = 100;
  p.g_leak = 5e-5;
  p.e_leak = -70;
  const Compartments c = adi::discretise(m, p);
  const double dt = 0.025, v_init = -65, amp = 0.2, del = 1.0, dur = 4.0;
  const int steps = 400, every = 25;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("adi_hines_neuron_" + std::to_string(::getpid()) + "_" + m.name().substr(m.name().size() - 8));
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.txt").string(), out = (dir / "v.txt").string();
  {
    std::ofstream f(model);
    f.precision(17);
    f << "params " << dt << " " << steps << " " << every << " " << v_init << " " << p.cm << " " << p.ra << " "
      << p.g_leak << " " << p.e_leak << "\n";
    f << "stim 0 0.5 " << amp << " " << del << " " << dur << "\n";
    for (std::size_t s = 0; s < m.sections().size(); ++s) {
      const adi::Section& sec = m.sections()[s];
      f << "section " << sec.parent << " " << sec.parent_x << " " << sec.length() << " " << c.nseg[s];
      for (int j = 0; j < c.nseg[s]; ++j) f << " " << 2 * c.radius[static_cast<std::size_t>(c.first[s] + j)];
      f << "\n";
    }
  }
  const std::string cmd = python + " " + reference_script() + " " + model + " " + out + " > " + (dir / "log.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "NEURON run failed: " << cmd;

  adi::PassiveNeurons<double> sim(adi::Executor::host(), {c}, {0}, dt);
  sim.set_voltage(v_init);
  const int stim_node = c.at(0, 0.5);
  std::ifstream in(out);
  std::string line;
  int rows = 0, step = 0;
  double worst = 0, moved = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    double t;
    ls >> t;
    const int target = static_cast<int>(std::lround(t / dt));
    for (; step < target; ++step) {
      const double mid = (step + 0.5) * dt;  // IClamp is evaluated at t + dt/2 in NEURON's fixed step
      sim.set_current(0, stim_node, (mid >= del && mid < del + dur) ? amp : 0.0);
      sim.step();
    }
    const std::vector<double> v = sim.voltage(0);
    for (int i = 0; i < c.size(); ++i) {
      double ref;
      ASSERT_TRUE(static_cast<bool>(ls >> ref)) << "short NEURON line at t = " << t;
      worst = std::max(worst, std::fabs(v[static_cast<std::size_t>(i)] - ref) / std::fabs(ref));
      moved = std::max(moved, std::fabs(ref - v_init));
    }
    ++rows;
  }
  EXPECT_EQ(rows, steps / every + 1);
  EXPECT_GT(moved, 1.0) << "the stimulus must move the voltage for the comparison to mean something";
  std::printf("%s: %d compartments, %d steps of %g ms: max |v - v_NEURON| / |v_NEURON| = %.3e (depolarised up to %.2f mV)\n",
              m.name().c_str(), c.size(), steps, dt, worst, moved);
  EXPECT_LE(worst, 1e-9);
  std::filesystem::remove_all(dir);
}

TEST(HinesNeuron, SparseCellMatchesNeuron) { compare_with_neuron(hines_test::sparse_cell()); }
TEST(HinesNeuron, DenseCellMatchesNeuron) { compare_with_neuron(hines_test::dense_cell()); }

}  // namespace

// --- active membranes (NEURON comparisons: test_hines_neuron.cpp) ------------------------------

#include "adi/hines_active.hpp"

namespace {

using hines_test::active_cell;

TEST(HinesActive, FloatFollowsDoubleAndSpikesTravel) {
  const Morphology m = Morphology::read_swc(hines_test::data_dir() + "/04a_pyramidal4aACC.CNG.swc");
  const adi::ActiveCell cell = active_cell(m);
  const int soma = cell.compartments.at(m.soma(), 0.5);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    adi::ActiveNeurons<T> net(adi::Executor::host(), {cell}, std::vector<int>(10, 0), 0.025);
    net.initialize(-65);
    net.add_current_clamp(0, soma, 1.0, 2, 10);  // one spike in neuron 0, then a chain
    for (adi::index_t s = 0; s < net.count(); ++s) net.detect_spikes(s, soma);
    for (adi::index_t s = 0; s + 1 < net.count(); ++s) net.connect(s, net.add_synapse(s + 1, soma, 2, 0), 0.05, 1);
    net.step(2000);
    return net.spikes();
  };
  const std::vector<adi::Spike> d = run(double{}), f = run(float{});
  ASSERT_EQ(d.size(), 10u);  // the spike went down the whole chain, once per neuron
  ASSERT_EQ(f.size(), d.size());
  for (std::size_t k = 0; k < d.size(); ++k) {
    EXPECT_EQ(d[k].neuron, static_cast<adi::index_t>(k));
    EXPECT_NEAR(f[k].time, d[k].time, 0.025 + 1e-9) << k;
  }
  EXPECT_GT(d.back().time, d.front().time + 9 * 1.0);  // at least the 1 ms delays
}

TEST(HinesActive, BadInput) {
  const Morphology m = Morphology::read_swc(hines_test::data_dir() + "/04a_pyramidal4aACC.CNG.swc");
  adi::ActiveCell cell = active_cell(m);
  EXPECT_THROW(adi::ActiveNeurons<double>(adi::Executor::host(), {cell}, {0}, 0.0), adi::InvalidArgument);
  EXPECT_THROW(adi::ActiveNeurons<double>(adi::Executor::host(), {cell}, {1}, 0.025), adi::InvalidArgument);
  adi::ActiveCell wrong = cell;
  wrong.membrane.pop_back();
  EXPECT_THROW(adi::ActiveNeurons<double>(adi::Executor::host(), {wrong}, {0}, 0.025), adi::InvalidArgument);
  adi::ActiveNeurons<double> net(adi::Executor::host(), {cell}, {0, 0}, 0.025);
  EXPECT_THROW(net.add_current_clamp(2, 1, 0.1, 0, 1), adi::InvalidArgument);
  EXPECT_THROW(net.add_current_clamp(0, cell.compartments.size(), 0.1, 0, 1), adi::InvalidArgument);
  EXPECT_THROW(net.add_synapse(0, 1, 0, 0), adi::InvalidArgument);
  EXPECT_THROW(net.deliver(0, 1, 0.1), adi::InvalidArgument);  // no synapse yet
  const int syn = net.add_synapse(1, 1, 2, 0);
  EXPECT_THROW(net.connect(0, syn, 0.1, -1), adi::InvalidArgument);
  EXPECT_THROW(net.connect(0, syn + 1, 0.1, 1), adi::InvalidArgument);
  EXPECT_THROW(net.step(-1), adi::InvalidArgument);
  EXPECT_THROW(net.voltage(2), adi::InvalidArgument);
}

}  // namespace

// --- the population solve: each tree's constant part factored once (solvers/cpu/hines_split.hpp)

#include <algorithm>
#include <random>

#include "solvers/cpu/hines_split.hpp"

namespace {

// Random trees (parent[k] < k), random varying nodes, 1..11 neurons of two trees in the compact
// layout (groups of 8, 4, 2, 1 and runs broken by the other tree): every neuron's solution solves
// its full matrix (residual at round-off; the matrices are diagonally dominant); the fixed nodes'
// diagonal is never read (NaN there).
template <class T>
void split_against_dense(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  for (int n : {1, 2, 3, 31, 33, 257}) {
    for (int mode = 0; mode < 4; ++mode) {  // no varying node, a few, all, the root only
      std::vector<std::vector<int>> parents(2);
      std::vector<std::vector<double>> off(2), diag(2);
      std::vector<std::vector<char>> var(2);
      std::vector<adi::cpu::HinesSplit<T>> trees;
      for (int t = 0; t < 2; ++t) {
        const int size = t == 0 ? n : n + 2;
        parents[t].assign(size, -1);
        off[t].assign(size, 0);
        diag[t].assign(size, 0);
        var[t].assign(size, 0);
        for (int k = 1; k < size; ++k) {
          parents[t][k] = u(rng) < 0.7 ? k - 1 : static_cast<int>(u(rng) * k);
          off[t][k] = -(0.1 + u(rng));
        }
        for (int k = 0; k < size; ++k) {
          diag[t][k] = 0.05 + u(rng);  // the membrane and C/dt ...
          for (int j = 1; j < size; ++j)  // ... plus the axial conductances: diagonally dominant
            if (j == k || parents[t][j] == k) diag[t][k] -= off[t][j];
          var[t][k] = mode == 2 || (mode == 1 && u(rng) < 0.1) || (mode == 3 && k == 0);
        }
        trees.push_back(adi::cpu::hines_split<T>(parents[t], off[t], diag[t], var[t]));
      }
      for (int count = 1; count <= 11; ++count) {
        std::vector<int> tree_of(count);
        std::vector<index_t> offsets(count), order(count);
        index_t span = 0;
        for (int s = 0; s < count; ++s) {
          tree_of[s] = (s == 9 || s == 10 || s == 3) ? 1 : 0;
          order[s] = s;
          offsets[s] = span;
          span += static_cast<index_t>(parents[tree_of[s]].size());
        }
        // The places visit neurons out of memory order (groups of non-adjacent neurons, runs
        // of one tree broken by the other).
        std::reverse(order.begin(), order.end());
        std::vector<T> d(span, std::numeric_limits<T>::quiet_NaN()), r(span);
        std::vector<std::vector<double>> full(count), rhs(count);
        for (int s = 0; s < count; ++s) {
          const int t = tree_of[s], size = static_cast<int>(parents[t].size());
          full[s] = diag[t];
          for (int k = 0; k < size; ++k) {
            if (trees[t].vary[k]) {  // varying, or above a varying node
              const T extra = var[t][k] ? static_cast<T>(u(rng)) : T(0);
              full[s][k] += extra;
              // the constant part as hines_split left it (less the fixed children) + the extra
              d[offsets[s] + k] = trees[t].base[k] + extra;
            }
            const T b = static_cast<T>(u(rng) - 0.5);
            r[offsets[s] + k] = b;
            rhs[s].push_back(b);
          }
        }
        adi::cpu::HinesSplitWork<T> work;
        work.prepare(trees);
        ASSERT_EQ(adi::cpu::hines_split_solve<T>(trees, work, tree_of.data(), order.data(), offsets.data(), 0, count, d.data(), r.data()), -1)
            << "n " << n << " mode " << mode << " count " << count << " bad trees " << trees[0].bad << trees[1].bad;
        for (int s = 0; s < count; ++s) {
          const int t = tree_of[s], size = static_cast<int>(parents[t].size());
          // The residual of the full matrix (diagonally dominant: a small residual is a small error).
          std::vector<double> res(size), x(size);
          for (int k = 0; k < size; ++k) x[k] = static_cast<double>(r[offsets[s] + k]);
          for (int k = 0; k < size; ++k) res[k] = full[s][k] * x[k] - rhs[s][k];
          for (int k = 1; k < size; ++k) {
            res[k] += off[t][k] * x[parents[t][k]];
            res[parents[t][k]] += off[t][k] * x[k];
          }
          for (int k = 0; k < size; ++k)
            ASSERT_LE(std::abs(res[k]), sizeof(T) == 8 ? 1e-13 : 2e-5)
                << "n " << n << " mode " << mode << " count " << count << " neuron " << s << " node " << k;
        }
      }
    }
  }
}

TEST(HinesSplit, EveryNeuronSolvesItsMatrix) {
  split_against_dense<double>(1);
  split_against_dense<float>(2);
}

TEST(HinesSplit, BadPivotsNameTheNeuron) {
  const std::vector<int> parent{-1, 0, 1, 1};
  const std::vector<double> off{0, -1, -1, -1};
  const std::vector<double> diag{3, 3, 3, 2};
  // Varying node 3: a NaN there in neuron 2 of 4 is reported as neuron 2.
  std::vector<adi::cpu::HinesSplit<double>> trees{adi::cpu::hines_split<double>(parent, off, diag, {0, 0, 0, 1})};
  const std::vector<int> tree_of(4, 0);
  const std::vector<index_t> offsets{0, 4, 8, 12}, order{0, 1, 2, 3};
  std::vector<double> d(16, 0), r(16, 1);
  for (int s = 0; s < 4; ++s)
    for (int k = 0; k < 4; ++k) d[4 * s + k] = trees[0].base[k];
  d[4 * 2 + 3] = std::numeric_limits<double>::quiet_NaN();
  adi::cpu::HinesSplitWork<double> work;
  work.prepare(trees);
  EXPECT_EQ(adi::cpu::hines_split_solve<double>(trees, work, tree_of.data(), order.data(), offsets.data(), 0, 4, d.data(), r.data()), 2);
  // A fixed pivot that is zero: every neuron of the tree is bad, the first is named.
  trees[0] = adi::cpu::hines_split<double>(parent, off, {3, 2, 1, 1}, {});  // node 1: 2 - 1/1 - 1/1 = 0
  EXPECT_TRUE(trees[0].bad);
  work.prepare(trees, 1);
  EXPECT_EQ(adi::cpu::hines_split_solve<double>(trees, work, tree_of.data(), order.data(), offsets.data(), 1, 4, d.data(), r.data()), 1);
}

// The automatic host path (the split solve) against the general kernels (HinesPlan, compact
// scalar and sorted vector) on two real cells: hh, clamps, synapses on dendrites (varying nodes
// away from the soma), events, a ring of connections, a synapse added mid-run.
TEST(HinesActive, AutomaticPathEqualsTheGeneralKernels) {
  const Morphology a = Morphology::read_swc(hines_test::data_dir() + "/04a_pyramidal4aACC.CNG.swc");
  const Morphology b = Morphology::read_swc(hines_test::data_dir() + "/allen-177300.01.02.01.swc");
  const std::vector<adi::ActiveCell> cells{active_cell(a), active_cell(b)};
  const std::vector<int> cell_of{0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 0};
  auto run = [&](adi::HinesKernel kernel, int threads) {
    adi::HinesOptions o;
    o.kernel = kernel;
    adi::ActiveNeurons<double> net(adi::Executor::host(threads), cells, cell_of, 0.025, o);
    net.initialize(-65);
    const int n = static_cast<int>(cell_of.size());
    for (int s = 0; s < n; ++s) {
      const adi::ActiveCell& c = cells[cell_of[s]];
      const int soma = c.compartments.at(std::max((cell_of[s] ? b : a).soma(), 0), 0.5);
      net.detect_spikes(s, soma);
      if (s % 3 == 0) net.add_current_clamp(s, soma, 0.6, 1 + s * 0.1, 20);
      const int target = (s + 1) % n;
      const int syn = net.add_synapse(target, cells[cell_of[target]].compartments.size() - 1 - 7 * s % 40, 2, 0);
      net.connect(s, syn, 0.05, 1.5);
    }
    net.deliver(0, 3.0, 0.02);
    net.step(600);
    net.add_synapse(5, 17, 3, -70);  // varying nodes change mid-run
    net.deliver(net.add_synapse(2, 30, 1, 0), 16.0, 0.1);
    net.step(600);
    std::vector<std::vector<double>> v;
    for (int s = 0; s < n; ++s) v.push_back(net.voltage(s));
    return std::make_pair(net.spikes(), v);
  };
  const auto ref = run(adi::HinesKernel::cpu_scalar, 1);
  ASSERT_GE(ref.first.size(), 5u);
  for (const auto& [kernel, threads] : {std::pair{adi::HinesKernel::automatic, 1}, std::pair{adi::HinesKernel::automatic, 2},
                                         std::pair{adi::HinesKernel::cpu_vector, 1}}) {
    const auto got = run(kernel, threads);
    ASSERT_EQ(got.first.size(), ref.first.size()) << adi::hines_kernel_name(kernel);
    for (std::size_t k = 0; k < ref.first.size(); ++k) {
      EXPECT_EQ(got.first[k].neuron, ref.first[k].neuron);
      EXPECT_NEAR(got.first[k].time, ref.first[k].time, 1e-9);
    }
    for (std::size_t s = 0; s < ref.second.size(); ++s)
      for (std::size_t k = 0; k < ref.second[s].size(); ++k)
        ASSERT_NEAR(got.second[s][k], ref.second[s][k], 1e-8) << adi::hines_kernel_name(kernel) << " neuron " << s << " node " << k;
  }
}

// Large enough for two threads (> 32,768 compartments): the same voltages to the bit.
TEST(HinesActive, ThreadsGiveTheSameResult) {
  const Morphology a = Morphology::read_swc(hines_test::data_dir() + "/04a_pyramidal4aACC.CNG.swc");
  const adi::ActiveCell cell = active_cell(a);
  const int soma = cell.compartments.at(a.soma(), 0.5);
  auto run = [&](int threads) {
    adi::ActiveNeurons<double> net(adi::Executor::host(threads), {cell}, std::vector<int>(160, 0), 0.025);
    net.initialize(-65);
    for (int s = 0; s < 160; s += 7) net.add_current_clamp(s, soma, 0.5, 0, 10);
    net.step(60);
    return net.voltage(154);
  };
  EXPECT_EQ(run(1), run(2));
  adi::PassiveNeurons<double> one(adi::Executor::host(1), {cell.compartments}, std::vector<int>(160, 0), 0.025);
  adi::PassiveNeurons<double> two(adi::Executor::host(2), {cell.compartments}, std::vector<int>(160, 0), 0.025);
  ASSERT_GT(160 * cell.compartments.size(), 32768);  // enough for a team of two
  for (auto* p : {&one, &two}) {
    p->set_voltage(-65);
    p->set_current(3, soma, 0.2);
    p->set_current(150, soma, 0.3);
    p->step(40);
  }
  EXPECT_EQ(one.voltages(), two.voltages());
}

// A non-finite membrane parameter: SingularSystem naming the neuron, on the host as on a GPU.
TEST(HinesActive, NonFinitePivotNamesTheNeuron) {
  const Morphology a = Morphology::read_swc(hines_test::data_dir() + "/04a_pyramidal4aACC.CNG.swc");
  adi::ActiveCell good = active_cell(a), bad = good;
  bad.hh.gkbar = std::numeric_limits<double>::quiet_NaN();
  adi::ActiveNeurons<double> net(adi::Executor::host(), {good, bad}, {0, 0, 1, 0}, 0.025);
  try {
    net.step(3);
    ADD_FAILURE() << "no SingularSystem";
  } catch (const adi::SingularSystem& e) {
    EXPECT_EQ(e.system(), 2) << e.what();
    EXPECT_NE(std::string(e.what()).find("neuron 2"), std::string::npos) << e.what();
  }
}

}  // namespace
