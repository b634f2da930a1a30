#pragma once
// Neurons as passive cables on trees, and the batched Hines solver (one tree-structured
// symmetric system per neuron per time step). After cuHinesBatch (Valero-Lara et al.,
// ICCS 2017): Hines' algorithm (their algorithm 1) with the flat, full-interleaved and
// block-interleaved layouts and the shared-memory variant, plus what the paper left for
// later: batches that mix morphologies (sorted by size, adi/variable_batch.hpp), symmetric
// storage with one parent array per morphology, and several threads per neuron for few
// large cells.
//
//   adi::Morphology cell = adi::Morphology::read_swc("cell.swc");
//   adi::Compartments comp = adi::discretise(cell, adi::CableParameters{});   // NEURON's nseg mapping
//   adi::HinesBatch batch = adi::HinesBatch::uniform(adi::HinesTopology(comp.parent), 1000);
//   adi::HinesPlan<double> plan(adi::Executor::host(), batch, adi::SortedInterleaved{});
//   plan.solve(offdiag, diag, rhs);          // arrays of plan.span() values; rhs <- solution
//
// Units throughout: um, ms, mV, nA, nF, uS (so that uS * mV = nA and nF / ms = uS).
// Header is C++17 so that CUDA translation units can include it.
#include <memory>
#include <string>
#include <vector>

#include "adi/base/hines_view.hpp"
#include "adi/executor.hpp"
#include "adi/layout.hpp"
#include "adi/variable_batch.hpp"

namespace adi {

namespace io {
struct SwcTree;
}
namespace detail {
struct HinesView;
}

// ---------------------------------------------------------------------------------------
// Morphology
// ---------------------------------------------------------------------------------------

// A point of a section's centre line with the radius there (um).
struct MorphologyPoint {
  double x = 0, y = 0, z = 0;
  double radius = 0;
};

// An unbranched cable: a polyline whose first point is where it attaches to its parent.
struct Section {
  int parent = -1;        // index of the parent section (< this section's index); -1: root section
  double parent_x = 1.0;  // where on the parent it attaches, NEURON's connect(child(0), parent(x))
  int type = 0;           // SWC type of its samples (1 soma, 2 axon, 3 basal, 4 apical)
  int swc_line = 0;       // line of its first own SWC sample (0 when not from a file), for messages
  std::string name;       // NEURON's name under Import3d ("soma[0]", "dend[12]"); may be empty
  std::vector<MorphologyPoint> points;  // at least 2
  double length() const;                // um, along the polyline
};

// How SWC samples become sections.
enum class SwcSections {
  // NEURON's Import3d (Import3d_SWC_read + Import3d_GUI.instantiate), the default, so that a
  // cell matches NEURON loaded the way users load it:
  //  - samples in id order; a section is a run of consecutive samples ending at a branch
  //    point, a leaf, a child listed out of line, or where the SWC type changes;
  //  - a section starts with a copy of its parent sample (its own first diameter when the
  //    parent is soma), except that neurites leaving a one-point soma or the interior of a
  //    soma start at their own first sample, wired to soma(0.5);
  //  - a one-point soma (and NeuroMorpho's 3-point soma: two childless samples at +-r around
  //    the root) is a cylinder of length and diameter 2r along x (the sphere's area);
  //  - connections at 1, at 0 to the root's first sample, 0.5 into a soma's interior;
  //  - one-point and zero-length two-point sections are dropped (children move up);
  //  - 3-d points kept as NEURON keeps them (printed with %.8g, stored as float);
  //  - sections named as NEURON names them (soma[k], axon[k], dend[k], apic[k], dend_T[k]).
  import3d,
  // adi's earlier mapping: sections break at branch points only and start at their parent
  // sample (a soma's centre included); a one-point soma is a cylinder of length 2r along y
  // whose children attach at 0.5; other sections leaving the root attach at its x = 0.
  branch_points,
};

// A neuron's shape as sections (NEURON's view of an SWC file, see SwcSections).
class Morphology {
 public:
  Morphology() = default;
  // Validates: at least one section, parents before children (section 0 is the only root),
  // >= 2 points each, radii >= 0 and finite, parent_x in [0, 1].
  explicit Morphology(std::vector<Section> sections, std::string name = {});
  // From SWC. Throws InvalidArgument naming the file and line for a zero radius (NEURON
  // refuses zero diameters), and, with import3d, for a parent whose id is not smaller.
  static Morphology from_swc(const io::SwcTree& tree, SwcSections sections = SwcSections::import3d);
  static Morphology read_swc(const std::string& path, SwcSections sections = SwcSections::import3d);
  int soma() const;                          // the first section of SWC type 1, -1 when none
  int find(const std::string& name) const;   // the section of that NEURON name, -1 when none

  const std::vector<Section>& sections() const { return sections_; }
  const std::string& name() const { return name_; }
  int samples() const { return samples_; }  // SWC samples it came from (0 when built directly)

 private:
  std::vector<Section> sections_;
  std::string name_;
  int samples_ = 0;
};

// ---------------------------------------------------------------------------------------
// Passive cable discretisation (NEURON's, so that results compare to NEURON 8.2 exactly)
// ---------------------------------------------------------------------------------------

// How many segments (nseg) a section gets.
enum class NsegRule {
  fixed,       // nseg = CableParameters::nseg
  max_length,  // the smallest odd nseg with L / nseg <= max_length
  d_lambda,    // NEURON's geom_nseg: nseg = int((L / (d_lambda * lambda_f) + 0.9) / 2) * 2 + 1 with
               // NEURON's lambda_f over the 3-d points (L / (sqrt(2) 1e-5 sqrt(4 pi f Ra cm)
               // sum_i (arc_i - arc_{i-1}) / sqrt(d_{i-1} + d_i))); for Geometry::mean_cylinder
               // 1e5 sqrt(diam / (4 pi f Ra cm)) of the mean diameter
  per_point,   // one segment per piece of the polyline (points - 1): a compartment per SWC sample
};

// How a segment's area and axial resistance come from the 3-d points.
enum class Geometry {
  frustums,       // NEURON with 3-d points (treeset.cpp diam_from_list): each half segment integrated
                  // over its frustums: area with slant, resistance Ra 4e-2/pi sum(l / (d1 d2))
  mean_cylinder,  // one cylinder per segment of the polyline's mean diameter (NEURON without 3-d
                  // points given those diameters; slant neglected)
};

// Membrane and axial properties (NEURON names and units), the same for every section.
struct CableParameters {
  double cm = 1.0;        // membrane capacitance, uF/cm^2
  double ra = 35.4;       // axial resistivity, ohm cm
  double g_leak = 0.001;  // leak conductance, S/cm^2 (g_pas)
  double e_leak = -70.0;  // leak reversal potential, mV (e_pas)
  NsegRule rule = NsegRule::d_lambda;
  Geometry geometry = Geometry::frustums;
  int nseg = 1;             // NsegRule::fixed
  double max_length = 20;   // NsegRule::max_length, um
  double d_lambda = 0.1;    // NsegRule::d_lambda
  double frequency = 100;   // NsegRule::d_lambda, Hz
  std::vector<int> nseg_per_section;  // when not empty: nseg of every section, overriding the rule
};

// One neuron's compartments (the unknowns of its Hines system) in NEURON's layout:
//   node 0: the root node, the root section's x = 0 end (no membrane);
//   per section, in section order: nseg nodes at the segment centres x = (j + 1/2) / nseg,
//   then one node at its x = 1 end (no membrane), where children attach.
// Segment j of a section of length L covers [j dx, (j+1) dx], dx = L / nseg. Its area and its
// left and right half resistances l_j, r_j come from the 3-d points (Geometry): integrated over
// the frustums (default), or from a cylinder of the mean diameter (l_j = r_j = 1e-2 Ra (dx/2) /
// (pi d_j^2 / 4) MOhm). The conductances to the parent are 1/l_0 (first segment to the
// attachment node), 1/(r_{j-1} + l_j) between segments and 1/r_{nseg-1} (end node to the last
// segment), as in NEURON's nrn_area_ri. A child attached at x in (0, 1) hangs on the segment
// node holding x.
struct Compartments {
  std::vector<int> parent;          // parent[0] = -1, parent[i] < i
  std::vector<double> area;         // um^2 (0 at the root node and the section end nodes)
  std::vector<double> capacitance;  // nF: cm * area * 1e-5
  std::vector<double> leak;         // uS: g_leak * area * 1e-2
  std::vector<double> axial;        // uS: conductance to the parent (axial[0] = 0)
  double e_leak = -70.0;            // mV
  std::vector<double> x, y, z, radius;  // where each node lies (um), for output
  std::vector<int> section;         // NEURON location sec(location) of each node
  std::vector<double> location;
  std::vector<int> nseg;            // per section
  std::vector<int> first;           // per section: its first segment node (then nseg more nodes)

  int size() const { return static_cast<int>(parent.size()); }
  // The node NEURON's sec(x) refers to (x = 0: the attachment node, 1: the end node).
  int at(int section, double x) const;
};

// Discretises a morphology. Throws InvalidArgument on bad parameters (cm, Ra, g_leak <= 0 or
// not finite, nseg < 1, wrong nseg_per_section length, max_length / d_lambda / frequency
// <= 0) and on geometry a cable cannot have: a section of zero length or a segment of zero
// diameter (the message names the section and its SWC line).
Compartments discretise(const Morphology& morphology, const CableParameters& parameters);

// The implicit Euler matrix of one neuron for step dt (NEURON's fixed step, secondorder 0):
//   (C/dt + G) v_new - sum_nbr g (v_nbr_new - v_new) = C/dt v_old + G e_leak + I
// stored symmetrically: diag[i] = C_i/dt + G_i + axial[i] + sum over children axial[c],
// offdiag[i] = -axial[i] (couples i and parent[i]; offdiag[0] = 0). Throws on dt <= 0.
struct HinesMatrix {
  std::vector<double> offdiag, diag;
};
HinesMatrix implicit_euler_matrix(const Compartments& c, double dt);

// ---------------------------------------------------------------------------------------
// Synthetic morphologies (the paper's six classes)
// ---------------------------------------------------------------------------------------

// A random neuron with exactly `compartments` nodes (in the layout above) and `branches`
// sections. Needs compartments >= 2 * branches + 1.
struct SyntheticSpec {
  std::string name;
  int compartments = 0;
  int branches = 0;
  unsigned long long seed = 1;
};
// Table 1 of the paper: small-low 76/7, small-high 76/29, medium-low 305/30,
// medium-high 319/157, big-low 695/66, big-high 691/341 (compartments/branches).
std::vector<SyntheticSpec> paper_classes();
// Throws InvalidArgument when no name matches (the message lists the names).
SyntheticSpec paper_class(const std::string& name);

struct SyntheticNeuron {
  Morphology morphology;
  std::vector<int> nseg;  // per section: discretised with these, it has spec.compartments nodes
  // `base` with nseg_per_section set to nseg.
  CableParameters parameters(CableParameters base = {}) const;
};
// Random binary branching (each split adds two sections at a leaf's end), section lengths
// 20-200 um, radii tapering from 1.5 um; nseg shared out in proportion to length.
SyntheticNeuron generate_morphology(const SyntheticSpec& spec);

// ---------------------------------------------------------------------------------------
// The batched solver
// ---------------------------------------------------------------------------------------

// The shape of one tree's Hines matrix: parent[i] < i for i >= 1, parent[0] = -1. Immutable,
// cheap to copy. Also holds the branch schedule used by several-threads-per-neuron kernels:
// branches (maximal runs i, i+1, ... in which each node but the last has the next as its only
// child) ordered by height (leaves first) for the elimination and by depth for the
// substitution.
class HinesTopology {
 public:
  // Throws InvalidArgument on an empty tree or a parent that does not precede its child.
  explicit HinesTopology(std::vector<int> parent);
  int size() const;
  const std::vector<int>& parent() const;
  int branches() const;
  int height() const;  // levels of the elimination (1 for an unbranched cable)
  int depth() const;   // levels of the substitution

  struct Data;
  const Data& data() const { return *data_; }

 private:
  std::shared_ptr<const Data> data_;
};

// Neurons of a batch: neuron s has the tree topologies[topology_of[s]]. Storing each tree
// once (not once per neuron) is what keeps the parent arrays out of the memory traffic.
struct HinesBatch {
  std::vector<HinesTopology> topologies;
  std::vector<int> topology_of;
  // `count` neurons of one tree.
  static HinesBatch uniform(const HinesTopology& topology, index_t count);
  index_t count() const { return static_cast<index_t>(topology_of.size()); }
};

struct HinesOptions {
  HinesKernel kernel = HinesKernel::automatic;
  int chunk_width = 32;  // SortedInterleaved chunk (the paper's block size BS for one tree)
  // Throw SingularSystem naming the first neuron with a zero or non-finite pivot (on CUDA:
  // synchronises at the end of solve).
  bool check_pivots = true;
  int threads_per_block = 0;  // CUDA launch shape override (0: the kernel's default)
};

// Built once per batch and layout: validates, sorts (SortedInterleaved), picks the kernel,
// copies the trees to the executor's memory. solve() allocates nothing. Not thread-safe.
template <class T>
class HinesPlan {
 public:
  // Neuron s stored contiguously (the paper's flat layout): element k at offsets[s] + k, or
  // back to back in neuron order when offsets is null.
  HinesPlan(const Executor& exec, const HinesBatch& batch, const CompactBatch& layout, HinesOptions options = {});
  // Element k of neuron s at k * stride + s (full-interleaved; stride >= count, rows >= the largest).
  HinesPlan(const Executor& exec, const HinesBatch& batch, const PaddedInterleaved& layout,
            HinesOptions options = {});
  // Sorted by size in chunks of chunk_width interleaved neurons (block-interleaved for one tree).
  HinesPlan(const Executor& exec, const HinesBatch& batch, const SortedInterleaved& layout,
            HinesOptions options = {});
  ~HinesPlan();
  HinesPlan(HinesPlan&&) noexcept;
  HinesPlan& operator=(HinesPlan&&) noexcept;

  // Solves A_s x_s = rhs_s for every neuron s, where A_s is symmetric with diagonal `diag`
  // and A_s[i][parent(i)] = A_s[parent(i)][i] = offdiag[i] (offdiag[0] is never read).
  // rhs is overwritten by the solution; diag is scratch (its values afterwards are
  // unspecified: assemble it again before the next solve). Arrays of span() values in the
  // executor's memory, in the plan's layout; padding is neither read into the result nor
  // written.
  void solve(const T* offdiag, T* diag, T* rhs);

  HinesKernel kernel() const;
  index_t span() const;
  const VariableBatchPlan& batch() const;  // sizes, sort order, pack/unpack to the layouts
  const HinesBatch& neurons() const;
  // Position of element k of neuron s in the plan's layout.
  index_t index(index_t s, int k) const;
  // The kernels' view of the batch, pointers in the executor's memory (for benchmarks and
  // user kernels that fill or check arrays in the plan's layout).
  const detail::HinesView& view() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class HinesPlan<float>;
extern template class HinesPlan<double>;

// ---------------------------------------------------------------------------------------
// Passive neurons in time (implicit Euler, NEURON's fixed step)
// ---------------------------------------------------------------------------------------

// A population of passive neurons advanced by implicit Euler: each step assembles
// diag = C/dt + G + sum g and rhs = C/dt v + G e + I, then solves with a HinesPlan. Currents
// injected with set_current hold until changed (NEURON's IClamp is such a current evaluated
// at the step's midpoint t + dt/2). State lives in the executor's memory.
template <class T>
class PassiveNeurons {
 public:
  // cells[c] is a discretised morphology; neuron s is cells[cell_of[s]].
  PassiveNeurons(const Executor& exec, std::vector<Compartments> cells, std::vector<int> cell_of, double dt,
                 HinesOptions options = {});
  ~PassiveNeurons();
  PassiveNeurons(PassiveNeurons&&) noexcept;
  PassiveNeurons& operator=(PassiveNeurons&&) noexcept;

  void set_voltage(double v);                                       // every node, mV
  void set_current(index_t neuron, int compartment, double nA);     // injected from now on
  void clear_currents();
  void step(int steps = 1);  // advances time by steps * dt
  double time() const;       // ms since construction
  double dt() const;
  index_t count() const;
  // Voltages of one neuron (node order of its Compartments), copied to the host.
  std::vector<double> voltage(index_t neuron) const;
  // All voltages, neuron after neuron (CompactBatch order), copied to the host.
  std::vector<T> voltages() const;
  const HinesPlan<T>& plan() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class PassiveNeurons<float>;
extern template class PassiveNeurons<double>;

}  // namespace adi
