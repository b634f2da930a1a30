// Cells loaded as NEURON users load them (Import3d, nseg by d_lambda 0.1 at 100 Hz, fixed
// step, secondorder 0) against NEURON 8.2 itself (tests/neuron_import3d.py builds the cell
// from the SWC file, not from adi's sections): per-segment area and axial resistance, then
// every node's voltage. Five public cells of different kinds (tests/data/morphologies/README.md).
// Skips, and ctest reports SKIPPED, when `import neuron` fails.
#include <gtest/gtest.h>

#include <ostream>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "adi/hines.hpp"
#include "adi/hines_active.hpp"
#include "hines_test_common.hpp"

namespace {

using adi::CableParameters;
using adi::Compartments;
using adi::Morphology;

using hines_test::python_with_neuron;

#define REQUIRE_NEURON()                                                                                  \
  if (python_with_neuron().empty())                                                                       \
  GTEST_SKIP() << "NEURON NOT FOUND: 'import neuron' failed for $ADI_PYTHON, python3 and /usr/bin/python3; " \
                  "install Debian's python3-neuron (scripts/install_deps.sh) to compare with NEURON"

std::string script() { return hines_test::tests_path("neuron_import3d.py"); }

struct NeuronRun {
  std::filesystem::path dir;
  explicit NeuronRun(const std::string& tag) {
    dir = std::filesystem::temp_directory_path() / ("adi_neuron_" + std::to_string(::getpid()) + "_" + tag);
    std::filesystem::create_directories(dir);
  }
  ~NeuronRun() { std::filesystem::remove_all(dir); }
  // Runs the script on `model` with `args`; returns false (and the log) on failure.
  bool operator()(const std::string& model, const std::string& args, std::string& log) const {
    const std::string m = (dir / "model.txt").string(), l = (dir / "log.txt").string();
    std::ofstream(m) << model;
    const std::string cmd = python_with_neuron() + " " + script() + " " + m + " " + args + " > " + l + " 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream in(l);
    std::stringstream ss;
    ss << in.rdbuf();
    log = ss.str();
    return rc == 0;
  }
};

struct Cell {
  const char* file;
  const char* kind;
  double amp;  // nA into the soma (or root) for the active test: enough to fire
};
// Read by GoogleTest (and CTest's test list) instead of a hex dump of the bytes.
inline void PrintTo(const Cell& c, std::ostream* os) { *os << c.file; }
const Cell kCells[] = {
    {"allen-177300.01.02.01.swc", "mouse cortex, Allen Institute: 1-point soma", 0.5},
    {"10-2012-02-09-001.CNG.swc", "NeuroMorpho (De Schutter): 17-point soma", 1.0},
    {"04a_pyramidal4aACC.CNG.swc", "NeuroMorpho (Allman, ACC pyramidal): 3-point soma", 1.0},
    {"EBT7R.CNG.swc", "NeuroMorpho (Drosophila ellipsoid body): thin, root is a neurite, no soma", 0.02},
    {"dCH-cobalt.CNG.swc", "NeuroMorpho (Calliphora LPTC, Borst): large fly neuron", 2.0},
};

CableParameters parameters() {
  CableParameters p;  // Import3d geometry, frustums, d_lambda 0.1 at 100 Hz
  p.cm = 1.0;
  p.ra = 100;
  p.g_leak = 5e-5;
  p.e_leak = -70;
  return p;
}

std::string model_head(const std::string& swc, const CableParameters& p, double dt, int steps, int every, double v_init) {
  std::ostringstream f;
  f.precision(17);
  f << "swc " << swc << "\nparams " << dt << " " << steps << " " << every << " " << v_init << " " << p.cm << " " << p.ra
    << " " << p.d_lambda << " " << p.frequency << "\npas " << p.g_leak << " " << p.e_leak << "\n";
  return f.str();
}

// The section that receives the current: the soma's middle, or the root's for a cell without one.
std::pair<int, double> stim_site(const Morphology& m) { return {std::max(m.soma(), 0), 0.5}; }

// NEURON's output: "section NAME NSEG" lines (h.allsec() order), then rows t, v(root 0), per
// section v at its segment centres and at 1; `nodes` maps the columns to adi's nodes.
struct Trace {
  std::vector<int> nodes{0};
  std::vector<double> t;
  std::vector<std::vector<double>> v;
};
Trace read_trace(const std::string& path, const Morphology& m, const Compartments& c) {
  Trace tr;
  std::ifstream in(path);
  std::string line;
  while (in.peek() == 's' && std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag, name;
    int nseg = 0;
    ls >> tag >> name >> nseg;
    const int s = m.find(name);
    if (s < 0) throw std::runtime_error("NEURON section " + name + " unknown to adi");
    if (c.nseg[static_cast<std::size_t>(s)] != nseg) throw std::runtime_error("nseg differs in " + name);
    for (int j = 0; j <= nseg; ++j) tr.nodes.push_back(c.first[static_cast<std::size_t>(s)] + j);
  }
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    double t;
    ls >> t;
    std::vector<double> row(tr.nodes.size());
    for (double& x : row)
      if (!(ls >> x)) throw std::runtime_error("short NEURON line");
    tr.t.push_back(t);
    tr.v.push_back(row);
  }
  return tr;
}

class NeuronCells : public ::testing::TestWithParam<Cell> {};

// Area and axial resistance of every segment (and of every end node) as NEURON computes them
// from the 3-d points Import3d gave it.
TEST_P(NeuronCells, GeometryMatchesNeuron) {
  REQUIRE_NEURON();
  const std::string swc = hines_test::data_dir() + "/" + GetParam().file;
  const Morphology m = Morphology::read_swc(swc);
  const CableParameters p = parameters();
  const Compartments c = adi::discretise(m, p);
  NeuronRun run(std::string("geom_") + std::to_string(std::hash<std::string>{}(swc) % 100000));
  std::string log;
  ASSERT_TRUE(run(model_head(swc, p, 0.025, 0, 1, -65), "--geometry " + (run.dir / "geom.txt").string(), log)) << log;
  std::ifstream in(run.dir / "geom.txt");
  std::string line;
  int sections = 0;
  double worst_area = 0, worst_ri = 0;
  std::string worst_where;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, parent;
    double px, L;
    int nseg;
    ls >> name >> parent >> px >> nseg >> L;
    const int s = m.find(name);
    ASSERT_GE(s, 0) << "NEURON has section " << name << " that adi's Import3d does not";
    const adi::Section& sec = m.sections()[static_cast<std::size_t>(s)];
    ++sections;
    if (sec.parent >= 0) {
      EXPECT_EQ(m.sections()[static_cast<std::size_t>(sec.parent)].name, parent) << name;
      EXPECT_DOUBLE_EQ(sec.parent_x, px) << name;
    }
    ASSERT_EQ(c.nseg[static_cast<std::size_t>(s)], nseg) << name << " (L " << L << ")";
    EXPECT_NEAR(sec.length(), L, 1e-6 * L) << name;  // NEURON translates 3-d points in float (define_shape)
    for (int j = 0; j <= nseg; ++j) {
      double area = 0, ri = 0;
      if (j < nseg) ls >> area;
      ls >> ri;
      const std::size_t node = static_cast<std::size_t>(c.first[static_cast<std::size_t>(s)] + j);
      if (j < nseg) {
        const double e = std::fabs(c.area[node] - area) / area;
        if (e > worst_area) worst_area = e, worst_where = name + " area seg " + std::to_string(j);
      }
      const double e = std::fabs(1 / c.axial[node] - ri) / ri;
      if (e > worst_ri) worst_ri = e, worst_where = name + " ri node " + std::to_string(j);
    }
  }
  EXPECT_EQ(sections, static_cast<int>(m.sections().size()));
  std::printf("%s: %d sections, %d compartments: max relative error area %.2e, ri %.2e (%s)\n", GetParam().file,
              sections, c.size(), worst_area, worst_ri, worst_where.c_str());
  EXPECT_LE(worst_area, 1e-6) << worst_where;
  EXPECT_LE(worst_ri, 1e-6) << worst_where;
}

// Passive response to a current step into the soma: every node (soma, segment centres, every
// section end) within 1e-6 of the response (max |v - v_init| over the run).
TEST_P(NeuronCells, PassiveVoltageMatchesNeuron) {
  REQUIRE_NEURON();
  const std::string swc = hines_test::data_dir() + "/" + GetParam().file;
  const Morphology m = Morphology::read_swc(swc);
  const CableParameters p = parameters();
  const Compartments c = adi::discretise(m, p);
  const double dt = 0.025, v_init = -65, amp = 0.5, del = 0.5, dur = 2.0;
  const int steps = 160, every = 10;
  const auto [stim_sec, stim_x] = stim_site(m);
  const std::string stim_name = m.sections()[static_cast<std::size_t>(stim_sec)].name;
  std::ostringstream model;
  model << model_head(swc, p, dt, steps, every, v_init) << "stim " << stim_name << " " << stim_x << " " << amp << " "
        << del << " " << dur << "\n";
  NeuronRun run(std::string("pas_") + std::to_string(std::hash<std::string>{}(swc) % 100000));
  std::string log;
  const std::string out = (run.dir / "v.txt").string();
  ASSERT_TRUE(run(model.str(), out, log)) << log;

  const Trace tr = read_trace(out, m, c);
  const std::vector<int>& nodes = tr.nodes;
  adi::PassiveNeurons<double> sim(adi::Executor::host(), {c}, {0}, dt);
  sim.set_voltage(v_init);
  const int stim_node = c.at(stim_sec, stim_x);
  std::vector<std::vector<double>> ours;
  const std::vector<std::vector<double>>& theirs = tr.v;
  int step = 0;
  for (double t : tr.t) {
    for (const int target = static_cast<int>(std::lround(t / dt)); step < target; ++step) {
      const double mid = (step + 0.5) * dt;  // NEURON's fixed step evaluates IClamp at t + dt/2
      sim.set_current(0, stim_node, (mid >= del && mid < del + dur) ? amp : 0.0);
      sim.step();
    }
    const std::vector<double> v = sim.voltage(0);
    std::vector<double> row;
    for (int node : nodes) row.push_back(v[static_cast<std::size_t>(node)]);
    ours.push_back(row);
  }
  ASSERT_EQ(static_cast<int>(theirs.size()), steps / every + 1);
  double response = 0, worst = 0, soma_worst = 0;
  for (const auto& row : theirs)
    for (double v : row) response = std::max(response, std::fabs(v - v_init));
  const int soma_node = c.at(stim_sec, 0.5);
  for (std::size_t r = 0; r < theirs.size(); ++r)
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      const double e = std::fabs(ours[r][k] - theirs[r][k]) / response;
      worst = std::max(worst, e);
      if (nodes[k] == soma_node) soma_worst = std::max(soma_worst, e);
    }
  std::printf("%s (%s): %d compartments, %d steps: response %.3f mV, max |v - v_NEURON| / response = %.2e "
              "(soma %.2e)\n",
              GetParam().file, GetParam().kind, c.size(), steps, response, worst, soma_worst);
  EXPECT_GT(response, 1.0);
  EXPECT_LE(worst, 1e-6);
}

// Hodgkin-Huxley on soma and axon (pas elsewhere), a current step into the soma and an ExpSyn
// on a dendrite driven by events, 100 ms: every node within 1e-6 relative of NEURON before the
// first spike, and every spike time at the soma within one step.
TEST_P(NeuronCells, ActiveVoltageAndSpikesMatchNeuron) {
  REQUIRE_NEURON();
  const std::string swc = hines_test::data_dir() + "/" + GetParam().file;
  const Morphology m = Morphology::read_swc(swc);
  const CableParameters p = parameters();
  adi::ActiveCell cell;
  cell.compartments = adi::discretise(m, p);
  const Compartments& c = cell.compartments;
  for (const adi::Section& sec : m.sections())
    cell.membrane.push_back(sec.type == 1 || sec.type == 2 ? adi::Membrane::hh : adi::Membrane::pas);
  const double dt = 0.025, v_init = -65, del = 2, dur = 100, amp = GetParam().amp;
  const int steps = 4000, every = 40;
  const auto [stim_sec, stim_x] = stim_site(m);
  int syn_sec = 0;
  for (std::size_t s = 0; s < m.sections().size() && syn_sec == 0; ++s)
    if (m.sections()[s].type == 3 || m.sections()[s].type == 4) syn_sec = static_cast<int>(s);
  const std::string stim_name = m.sections()[static_cast<std::size_t>(stim_sec)].name;
  const std::string syn_name = m.sections()[static_cast<std::size_t>(syn_sec)].name;
  const double syn_tau = 2, syn_e = 0, syn_w = 0.01;
  const std::vector<double> syn_times{10.0, 35.0, 60.5};
  std::ostringstream model;
  model.precision(17);
  model << model_head(swc, p, dt, steps, every, v_init) << "hh soma,axon\nstim " << stim_name << " " << stim_x << " "
        << amp << " " << del << " " << dur << "\nsyn " << syn_name << " 0.5 " << syn_tau << " " << syn_e << " " << syn_w;
  for (double t : syn_times) model << " " << t;
  model << "\ndetect " << stim_name << " 0.5 0\n";
  NeuronRun run(std::string("hh_") + std::to_string(std::hash<std::string>{}(swc) % 100000));
  std::string log;
  const std::string out = (run.dir / "v.txt").string();
  ASSERT_TRUE(run(model.str(), out, log)) << log;
  const Trace tr = read_trace(out, m, c);
  std::vector<double> neuron_spikes;
  {
    std::ifstream in(out + ".spikes");
    for (double t; in >> t;) neuron_spikes.push_back(t);
  }

  adi::ActiveNeurons<double> sim(adi::Executor::host(), {cell}, {0}, dt);
  sim.initialize(v_init);
  const int soma_node = c.at(stim_sec, 0.5);
  sim.add_current_clamp(0, soma_node, amp, del, dur);
  const int syn = sim.add_synapse(0, c.at(syn_sec, 0.5), syn_tau, syn_e);
  for (double t : syn_times) sim.deliver(syn, t, syn_w);
  sim.detect_spikes(0, soma_node, 0);
  const double first = neuron_spikes.empty() ? 1e30 : neuron_spikes.front();
  double worst = 0;
  int step = 0, compared = 0;
  for (std::size_t r = 0; r < tr.t.size(); ++r) {
    for (const int target = static_cast<int>(std::lround(tr.t[r] / dt)); step < target; ++step) sim.step();
    if (tr.t[r] >= first - 1.0) continue;  // before the first spike's upstroke
    const std::vector<double> v = sim.voltage(0);
    for (std::size_t k = 0; k < tr.nodes.size(); ++k)
      worst = std::max(worst, std::fabs(v[static_cast<std::size_t>(tr.nodes[k])] - tr.v[r][k]) / std::fabs(tr.v[r][k]));
    ++compared;
  }
  std::vector<double> ours;
  for (const adi::Spike& s : sim.spikes()) ours.push_back(s.time);
  double worst_spike = 0;
  for (std::size_t k = 0; k < std::min(ours.size(), neuron_spikes.size()); ++k)
    worst_spike = std::max(worst_spike, std::fabs(ours[k] - neuron_spikes[k]));
  std::printf("%s: hh soma+axon, %d compartments, %d steps: %zu spikes (NEURON %zu), first at %.3f ms; "
              "before it (%d rows) max |v - v_NEURON| / |v_NEURON| = %.2e; spike times differ by <= %.3g ms\n",
              GetParam().file, c.size(), steps, ours.size(), neuron_spikes.size(), first, compared, worst, worst_spike);
  EXPECT_GE(neuron_spikes.size(), 1u) << "the stimulus must make the cell spike";
  EXPECT_GT(compared, 0);
  EXPECT_LE(worst, 1e-6);
  ASSERT_EQ(ours.size(), neuron_spikes.size());
  EXPECT_LE(worst_spike, dt * (1 + 1e-9));
}

INSTANTIATE_TEST_SUITE_P(PublicCells, NeuronCells, ::testing::ValuesIn(kCells),
                         [](const ::testing::TestParamInfo<Cell>& info) {
                           std::string n = info.param.file;
                           n = n.substr(0, n.find(".swc"));
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace

namespace {

// fp32 against fp64 on the thin fly neuron (radii 0.07-0.7 um, d_lambda compartments of a few
// um): implicit Euler solved for v itself loses digits where C/dt is small beside the axial
// conductances (pivots are differences of large numbers), so fp32 drifts. Documents the size
// of the drift (docs/hines.md); no NEURON needed.
TEST(NeuronPrecision, Fp32DriftOnAThinCell) {
  for (const adi::NsegRule rule : {adi::NsegRule::d_lambda, adi::NsegRule::per_point})
  for (const char* file : {"EBT7R.CNG.swc", "allen-177300.01.02.01.swc"}) {
    const Morphology m = Morphology::read_swc(hines_test::data_dir() + "/" + file);
    CableParameters p = parameters();
    p.rule = rule;
    const Compartments c = adi::discretise(m, p);
    adi::PassiveNeurons<double> d(adi::Executor::host(), {c}, {0}, 0.025);
    adi::PassiveNeurons<float> f(adi::Executor::host(), {c}, {0}, 0.025);
    const int stim = c.at(std::max(m.soma(), 0), 0.5);
    const double amp = std::string(file).rfind("EBT7R", 0) == 0 ? 0.02 : 0.5;
    d.set_voltage(-65);
    f.set_voltage(-65);
    d.set_current(0, stim, amp);
    f.set_current(0, stim, amp);
    double response = 0, drift = 0;
    for (int k = 0; k < 800; ++k) {
      d.step();
      f.step();
      if ((k + 1) % 100) continue;
      const std::vector<double> vd = d.voltage(0), vf = f.voltage(0);
      for (std::size_t i = 0; i < vd.size(); ++i) {
        response = std::max(response, std::fabs(vd[i] + 65));
        drift = std::max(drift, std::fabs(vf[i] - vd[i]));
      }
    }
    std::printf("%s (%s, %d compartments): fp32 vs fp64 after 800 steps: max |v32 - v64| = %.3g mV = %.2e of the "
                "response (%.3g mV)\n",
                file, rule == adi::NsegRule::d_lambda ? "d_lambda" : "per_point", c.size(), drift, drift / response,
                response);
    EXPECT_LT(drift / response, rule == adi::NsegRule::d_lambda ? 1e-3 : 0.2);
  }
}

}  // namespace
