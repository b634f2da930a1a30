// Active neurons in time: NEURON's fixed step with pas, hh (hh.mod's rates table and cnexp
// update), IClamp, ExpSyn, events and spike detection; the Hines solve through HinesPlan.
#include "adi/hines_active.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <omp.h>
#include <queue>
#include <string>
#include <utility>

#include "adi/detail/hines_geometry.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/common/hh_membrane.hpp"
#include "solvers/cpu/hines_split.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/hines_active.hpp"

namespace adi {

namespace {

using detail::require;
using detail::hines::num;

namespace hha = cuda_backend::hines_active;

// Device memory for a host vector (at least one element, so that every pointer is valid).
template <class V>
Array<V> upload(const std::vector<V>& h, const Executor& exec) {
  Array<V> a(std::max<index_t>(static_cast<index_t>(h.size()), 1), exec);
  if (!h.empty()) detail::copy_bytes(a.data(), MemorySpace::device, h.data(), MemorySpace::host, h.size() * sizeof(V),
                                     exec.stream());
  return a;
}
template <class V>
std::vector<V> download(const Array<V>& a, std::size_t n) {
  std::vector<V> h(n);
  if (n) detail::copy_bytes(h.data(), MemorySpace::host, a.data(), MemorySpace::device, n * sizeof(V),
                            a.executor().stream());
  return h;
}

// Record entries (step, detector) kept on the device between host synchronisations, at most.
constexpr std::int64_t kRecordCapacity = std::int64_t(1) << 22;

}  // namespace

template <class T>
struct ActiveNeurons<T>::Impl {
  Executor exec = Executor::host();
  double dt = 0, t = 0;
  bool check_pivots = true;
  std::vector<ActiveCell> cells;
  std::vector<int> cell_of;
  std::unique_ptr<HinesPlan<T>> plan;
  index_t span = 0, real = 0;  // positions in the layout; compartments
  std::vector<T> offdiag, d0, cdt, gpas, gepas, v, diag, rhs;
  // hh nodes (positions in the plan's layout) and their state.
  std::vector<index_t> hh_pos;
  std::vector<int> hh_table;
  std::vector<T> gna, gk, gl, gel, ena, ek, m, h, n;
  std::vector<T> tables;  // membrane::kHHTableSize values per cell
  struct Clamp {
    index_t pos;
    double amp, del, dur;
  };
  std::vector<Clamp> clamps;
  struct Synapse {
    index_t pos;
    double tau, e, g, decay;
    index_t neuron;
    int node;
  };
  std::vector<Synapse> synapses;
  struct Event {
    double time;
    int synapse;
    double weight;
    bool operator>(const Event& o) const { return time > o.time; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  struct Detector {
    index_t neuron, pos;
    double threshold;
    bool above;
  };
  std::vector<Detector> detectors;
  struct Connection {
    int synapse;
    double weight, delay;
  };
  std::vector<std::vector<Connection>> out;  // per neuron
  double min_delay = -1;                     // smallest connection delay (-1: none)
  std::vector<Spike> spikes;

  // CUDA: the state in device memory (the host vectors above hold the set-up only).
  struct Device {
    Array<T> offdiag, d0, cdt, gpas, gepas, v, diag, rhs;
    Array<index_t> hh_pos;
    Array<int> hh_of, hh_table;
    Array<T> tables, gna, gk, gl, gel, ena, ek, m, h, n;
    // point processes, rebuilt when clamps, synapses or detectors are added
    Array<index_t> clamp_pos, syn_pos, det_pos;
    Array<double> clamp_amp, clamp_del, clamp_dur, syn_g, syn_e, syn_decay, det_threshold;
    Array<int> det_above;
    std::size_t synapses = 0, detectors = 0;  // how many the device arrays hold
    Array<int> record, recorded;
    std::int64_t record_capacity = 0;
    Array<int> event_syn;
    Array<double> event_weight;
    std::size_t event_capacity = 0;
    Array<unsigned long long> bad;
  } dev;
  bool points_dirty = true;
  bool host_v = true;

  // Host, automatic kernel: the compact layout with each tree's constant part factored once
  // (solvers/cpu/hines_split.hpp). Varying diagonals: hh nodes and synapse nodes (of any neuron
  // of the tree); rebuilt when a synapse is added.
  bool split = false, split_dirty = true;
  long split_generation = 0;
  std::vector<HinesMatrix> mats;              // per cell: the implicit-Euler matrix (pas everywhere)
  std::vector<cpu::HinesSplit<T>> trees;      // per cell
  std::vector<cpu::HinesSplitWork<T>> work;   // per thread
  std::vector<index_t> order, offsets;        // order[j]: the neuron at place j; neuron s starts at offsets[s]
  std::vector<index_t> var_pos;               // varying nodes of every neuron ...
  std::vector<T> var_base;                    // ... and the constant part of their diagonal
  void build_split();  // CUDA: v (host) still equals the device's voltages (no step since initialize)

  bool on_device() const { return exec.is_cuda(); }

  index_t position(index_t neuron, int node, const char* who) const {
    require(neuron >= 0 && neuron < static_cast<index_t>(cell_of.size()),
            std::string(who) + ": neuron " + std::to_string(neuron) + " out of range [0, " +
                std::to_string(cell_of.size()) + ")");
    const int size = cells[static_cast<std::size_t>(cell_of[static_cast<std::size_t>(neuron)])].compartments.size();
    require(node >= 0 && node < size, std::string(who) + ": node " + std::to_string(node) + " out of range [0, " +
                                          std::to_string(size) + ") of neuron " + std::to_string(neuron));
    return plan->index(neuron, node);
  }

  hha::HH<T> hh_view() {
    hha::HH<T> x;
    x.count = static_cast<index_t>(hh_pos.size());
    x.pos = dev.hh_pos.data();
    x.hh_of = dev.hh_of.data();
    x.table_of = dev.hh_table.data();
    x.tables = dev.tables.data();
    x.gna = dev.gna.data(), x.gk = dev.gk.data(), x.gl = dev.gl.data(), x.gel = dev.gel.data();
    x.ena = dev.ena.data(), x.ek = dev.ek.data();
    x.m = dev.m.data(), x.h = dev.h.data(), x.n = dev.n.data();
    return x;
  }

  hha::Points points_view() {
    hha::Points x;
    x.clamps = static_cast<int>(clamps.size());
    x.clamp_pos = dev.clamp_pos.data();
    x.clamp_amp = dev.clamp_amp.data(), x.clamp_del = dev.clamp_del.data(), x.clamp_dur = dev.clamp_dur.data();
    x.synapses = static_cast<int>(synapses.size());
    x.syn_pos = dev.syn_pos.data();
    x.syn_g = dev.syn_g.data(), x.syn_e = dev.syn_e.data(), x.syn_decay = dev.syn_decay.data();
    x.detectors = static_cast<int>(detectors.size());
    x.det_pos = dev.det_pos.data();
    x.det_threshold = dev.det_threshold.data();
    x.det_above = dev.det_above.data();
    return x;
  }

  // The device's synapse conductances and detector flags back into the host lists.
  void pull_points() {
    if (dev.synapses) {
      const std::vector<double> g = download(dev.syn_g, dev.synapses);
      for (std::size_t k = 0; k < dev.synapses; ++k) synapses[k].g = g[k];
    }
    if (dev.detectors) {
      const std::vector<int> above = download(dev.det_above, dev.detectors);
      for (std::size_t k = 0; k < dev.detectors; ++k) detectors[k].above = above[k] != 0;
    }
  }

  // Host lists of point processes -> device (after pull_points when the device had state).
  void push_points() {
    std::vector<index_t> cpos, spos, dpos;
    std::vector<double> camp, cdel, cdur, sg, se, sdecay, dthr;
    std::vector<int> dabove;
    for (const Clamp& c : clamps) cpos.push_back(c.pos), camp.push_back(c.amp), cdel.push_back(c.del), cdur.push_back(c.dur);
    for (const Synapse& s : synapses) spos.push_back(s.pos), sg.push_back(s.g), se.push_back(s.e), sdecay.push_back(s.decay);
    for (const Detector& d : detectors) dpos.push_back(d.pos), dthr.push_back(d.threshold), dabove.push_back(d.above);
    dev.clamp_pos = upload(cpos, exec), dev.clamp_amp = upload(camp, exec), dev.clamp_del = upload(cdel, exec);
    dev.clamp_dur = upload(cdur, exec);
    dev.syn_pos = upload(spos, exec), dev.syn_g = upload(sg, exec), dev.syn_e = upload(se, exec);
    dev.syn_decay = upload(sdecay, exec);
    dev.det_pos = upload(dpos, exec), dev.det_threshold = upload(dthr, exec), dev.det_above = upload(dabove, exec);
    dev.synapses = synapses.size();
    dev.detectors = detectors.size();
    points_dirty = false;
  }

  void step_host(int steps);
  void step_device(int steps);
  void (Impl::*step_backend)(int) = &Impl::step_host;  // chosen once in the constructor
  // Steps the device may run before the host must see its spikes: events from a spike at the
  // end of step j (time t_j) are due at t_j + delay >= t_j + min_delay, so with k * dt <=
  // min_delay none falls inside the window that recorded the spike.
  int window(int steps_left) const;
};

template <class T>
ActiveNeurons<T>::ActiveNeurons(const Executor& exec, std::vector<ActiveCell> cells, std::vector<int> cell_of, double dt,
                                HinesOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  const char* who = "ActiveNeurons";
  require(std::isfinite(dt) && dt > 0, std::string(who) + ": dt = " + num(dt) + " ms must be > 0");
  require(!cells.empty(), std::string(who) + ": no cells");
  const cuda_backend::DeviceGuard guard(exec.device(), exec.is_cuda());
  p.exec = exec;
  p.step_backend = exec.is_cuda() ? &Impl::step_device : &Impl::step_host;
  p.dt = dt;
  p.cells = std::move(cells);
  p.cell_of = std::move(cell_of);
  p.check_pivots = options.check_pivots;
  HinesBatch batch;
  p.tables.resize(p.cells.size() * membrane::kHHTableSize);
  for (std::size_t c = 0; c < p.cells.size(); ++c) {
    ActiveCell& cell = p.cells[c];
    const std::size_t nsec = cell.compartments.nseg.size();
    if (cell.membrane.empty()) cell.membrane.assign(nsec, Membrane::pas);
    require(cell.membrane.size() == nsec, std::string(who) + ": cell " + std::to_string(c) + " has " +
                                              std::to_string(cell.membrane.size()) + " membranes for " +
                                              std::to_string(nsec) + " sections");
    batch.topologies.emplace_back(cell.compartments.parent);
    membrane::hh_fill_table(cell.hh.celsius, p.tables.data() + c * membrane::kHHTableSize);
  }
  batch.topology_of = p.cell_of;  // HinesPlan validates the indices
  const index_t neurons = batch.count();
  if (exec.is_cuda()) {
    // The plan's own pivot check would synchronise every solve; the population checks its
    // voltages once per step() call instead (see step_device).
    options.check_pivots = false;
    int max_size = 0;
    for (const ActiveCell& cell : p.cells) max_size = std::max(max_size, cell.compartments.size());
    // PassiveNeurons' choice on a GPU (detail::hines::gpu_population_compact, adi/hines.cpp).
    // cuda_branch and cuda_paper ask for CompactBatch, cuda_stack for the sorted layout.
    const bool compact = options.kernel == HinesKernel::cuda_branch || options.kernel == HinesKernel::cuda_paper ||
                         (options.kernel == HinesKernel::automatic &&
                          detail::hines::gpu_population_compact(max_size, neurons, sizeof(T), exec.device()));
    if (compact)
      p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
    else
      p.plan = std::make_unique<HinesPlan<T>>(exec, batch, SortedInterleaved{}, options);
  } else {
    p.split = options.kernel == HinesKernel::automatic &&
              std::all_of(p.cell_of.begin(), p.cell_of.end(),
                          [&](int c) { return c >= 0 && c < static_cast<int>(p.cells.size()); });  // else the plan says why
    const bool compact = options.kernel == HinesKernel::cpu_scalar || options.kernel == HinesKernel::reference ||
                         options.kernel == HinesKernel::automatic;
    if (p.split) {
      // The split solve: the compact layout with the neurons of one tree side by side.
      std::vector<int> sizes;
      for (const ActiveCell& c : p.cells) sizes.push_back(c.compartments.size());
      cpu::hines_tree_order(p.cell_of, sizes, p.order, p.offsets);
      p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{p.offsets.data()}, options);
    } else if (compact)
      p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
    else
      p.plan = std::make_unique<HinesPlan<T>>(exec, batch, SortedInterleaved{}, options);
  }
  p.span = p.plan->span();
  const std::size_t span = static_cast<std::size_t>(p.span);
  for (auto* a : {&p.offdiag, &p.cdt, &p.gpas, &p.gepas, &p.v, &p.diag, &p.rhs}) a->assign(span, T(0));
  p.d0.assign(span, T(1));  // padding: a harmless unit diagonal
  std::vector<int> hh_of(span, -1);
  std::vector<HinesMatrix>& mats = p.mats;
  for (const ActiveCell& cell : p.cells) mats.push_back(implicit_euler_matrix(cell.compartments, dt));
  for (index_t s = 0; s < neurons; ++s) {
    const int ci = p.cell_of[static_cast<std::size_t>(s)];
    const ActiveCell& cell = p.cells[static_cast<std::size_t>(ci)];
    const Compartments& c = cell.compartments;
    const HinesMatrix& mat = mats[static_cast<std::size_t>(ci)];
    p.real += c.size();
    for (int k = 0; k < c.size(); ++k) {
      const std::size_t kk = static_cast<std::size_t>(k);
      const index_t i = p.plan->index(s, k);
      const std::size_t ii = static_cast<std::size_t>(i);
      const bool hh = c.area[kk] > 0 && cell.membrane[static_cast<std::size_t>(c.section[kk])] == Membrane::hh;
      p.offdiag[ii] = static_cast<T>(mat.offdiag[kk]);
      p.d0[ii] = static_cast<T>(mat.diag[kk] - c.leak[kk]);  // C/dt + axial; membranes added per step
      p.cdt[ii] = static_cast<T>(c.capacitance[kk] / dt);
      if (hh) {
        const double a = c.area[kk] * 1e-2;  // S/cm2 -> uS
        hh_of[ii] = static_cast<int>(p.hh_pos.size());
        p.hh_pos.push_back(i);
        p.hh_table.push_back(ci);
        p.gna.push_back(static_cast<T>(cell.hh.gnabar * a));
        p.gk.push_back(static_cast<T>(cell.hh.gkbar * a));
        p.gl.push_back(static_cast<T>(cell.hh.gl * a));
        p.gel.push_back(static_cast<T>(cell.hh.gl * a * cell.hh.el));
        p.ena.push_back(static_cast<T>(cell.hh.ena));
        p.ek.push_back(static_cast<T>(cell.hh.ek));
      } else {
        p.gpas[ii] = static_cast<T>(c.leak[kk]);
        p.gepas[ii] = static_cast<T>(c.leak[kk] * c.e_leak);
      }
    }
  }
  const std::size_t nh = p.hh_pos.size();
  require(nh < static_cast<std::size_t>(1) << 31, std::string(who) + ": too many hh compartments for one population");
  p.m.assign(nh, T(0));
  p.h.assign(nh, T(0));
  p.n.assign(nh, T(0));
  p.out.resize(static_cast<std::size_t>(neurons));
  if (p.split) {
    p.work.resize(static_cast<std::size_t>(std::max(1, exec.threads() > 0 ? exec.threads() : omp_get_max_threads())));
  } else {
    std::vector<HinesMatrix>().swap(p.mats);
  }
  if (exec.is_cuda()) {
    typename Impl::Device& d = p.dev;
    d.offdiag = upload(p.offdiag, exec), d.d0 = upload(p.d0, exec), d.cdt = upload(p.cdt, exec);
    d.gpas = upload(p.gpas, exec), d.gepas = upload(p.gepas, exec), d.v = upload(p.v, exec);
    // diag and rhs poisoned: every step assembles all of them before any kernel reads them, and
    // a value missed would surface as a non-finite voltage (step's check, the GPU tests).
    const std::vector<T> poison(span, std::numeric_limits<T>::quiet_NaN());
    d.diag = upload(poison, exec), d.rhs = upload(poison, exec);
    d.hh_pos = upload(p.hh_pos, exec), d.hh_of = upload(hh_of, exec), d.hh_table = upload(p.hh_table, exec);
    d.tables = upload(p.tables, exec);
    d.gna = upload(p.gna, exec), d.gk = upload(p.gk, exec), d.gl = upload(p.gl, exec), d.gel = upload(p.gel, exec);
    d.ena = upload(p.ena, exec), d.ek = upload(p.ek, exec);
    d.m = upload(p.m, exec), d.h = upload(p.h, exec), d.n = upload(p.n, exec);
    d.recorded = Array<int>(1, exec);
    d.bad = Array<unsigned long long>(1, exec);
    // The host copies of the per-step arrays are not needed any more.
    for (auto* a : {&p.offdiag, &p.d0, &p.cdt, &p.gpas, &p.gepas, &p.diag, &p.rhs}) std::vector<T>().swap(*a);
  }
  initialize(-65);
}

template <class T>
ActiveNeurons<T>::~ActiveNeurons() = default;
template <class T>
ActiveNeurons<T>::ActiveNeurons(ActiveNeurons&&) noexcept = default;
template <class T>
ActiveNeurons<T>& ActiveNeurons<T>::operator=(ActiveNeurons&&) noexcept = default;

template <class T>
void ActiveNeurons<T>::initialize(double v0) {
  Impl& p = *impl_;
  require(std::isfinite(v0), "ActiveNeurons::initialize: v = " + num(v0) + " must be finite");
  std::fill(p.v.begin(), p.v.end(), static_cast<T>(v0));
  for (std::size_t k = 0; k < p.hh_pos.size(); ++k) {
    T r[membrane::kHHColumns];
    membrane::hh_table_rates(p.tables.data() + static_cast<std::size_t>(p.hh_table[k]) * membrane::kHHTableSize,
                             static_cast<T>(v0), r);
    p.m[k] = r[0], p.h[k] = r[2], p.n[k] = r[4];
  }
  for (auto& s : p.synapses) s.g = 0;
  p.events = {};
  p.spikes.clear();
  for (auto& d : p.detectors) d.above = v0 > d.threshold;
  p.t = 0;
  if (p.on_device()) {
    const cuda_backend::DeviceGuard guard(p.exec.device());
    p.dev.v = upload(p.v, p.exec);
    p.dev.m = upload(p.m, p.exec), p.dev.h = upload(p.h, p.exec), p.dev.n = upload(p.n, p.exec);
    p.push_points();
    p.host_v = true;
  }
}

template <class T>
void ActiveNeurons<T>::add_current_clamp(index_t neuron, int node, double amp, double delay, double duration) {
  Impl& p = *impl_;
  require(std::isfinite(amp) && std::isfinite(delay) && duration >= 0,
          "ActiveNeurons::add_current_clamp: amp, delay must be finite and duration >= 0");
  const index_t pos = p.position(neuron, node, "ActiveNeurons::add_current_clamp");
  if (p.on_device() && !p.points_dirty) p.pull_points();
  p.clamps.push_back({pos, amp, delay, duration});
  p.points_dirty = true;
}

template <class T>
int ActiveNeurons<T>::add_synapse(index_t neuron, int node, double tau, double e) {
  Impl& p = *impl_;
  require(std::isfinite(tau) && tau > 0, "ActiveNeurons::add_synapse: tau = " + num(tau) + " ms must be > 0");
  require(std::isfinite(e), "ActiveNeurons::add_synapse: e = " + num(e) + " mV must be finite");
  const index_t pos = p.position(neuron, node, "ActiveNeurons::add_synapse");
  if (p.on_device() && !p.points_dirty) p.pull_points();
  p.synapses.push_back({pos, tau, e, 0.0, std::exp(-p.dt / tau), neuron, node});
  p.points_dirty = true;
  p.split_dirty = true;
  return static_cast<int>(p.synapses.size()) - 1;
}

template <class T>
void ActiveNeurons<T>::deliver(int synapse, double time, double weight) {
  Impl& p = *impl_;
  require(synapse >= 0 && synapse < static_cast<int>(p.synapses.size()),
          "ActiveNeurons::deliver: synapse " + std::to_string(synapse) + " out of range [0, " +
              std::to_string(p.synapses.size()) + ")");
  require(std::isfinite(time) && std::isfinite(weight), "ActiveNeurons::deliver: time and weight must be finite");
  p.events.push({time, synapse, weight});
}

template <class T>
void ActiveNeurons<T>::detect_spikes(index_t neuron, int node, double threshold) {
  Impl& p = *impl_;
  const index_t pos = p.position(neuron, node, "ActiveNeurons::detect_spikes");
  require(std::isfinite(threshold), "ActiveNeurons::detect_spikes: threshold = " + num(threshold) + " mV must be finite");
  T vd = p.v[static_cast<std::size_t>(pos)];
  if (p.on_device()) {
    const cuda_backend::DeviceGuard guard(p.exec.device());
    if (!p.host_v)
      detail::copy_bytes(&vd, MemorySpace::host, p.dev.v.data() + pos, MemorySpace::device, sizeof(T), p.exec.stream());
    if (!p.points_dirty) p.pull_points();
    p.points_dirty = true;
  }
  p.detectors.push_back({neuron, pos, threshold, static_cast<double>(vd) > threshold});
}

template <class T>
void ActiveNeurons<T>::connect(index_t source, int synapse, double weight, double delay) {
  Impl& p = *impl_;
  require(source >= 0 && source < count(), "ActiveNeurons::connect: source " + std::to_string(source) + " out of range");
  require(synapse >= 0 && synapse < static_cast<int>(p.synapses.size()),
          "ActiveNeurons::connect: synapse " + std::to_string(synapse) + " out of range");
  require(std::isfinite(delay) && delay >= 0, "ActiveNeurons::connect: delay = " + num(delay) + " ms must be >= 0");
  require(std::isfinite(weight), "ActiveNeurons::connect: weight = " + num(weight) + " uS must be finite");
  p.out[static_cast<std::size_t>(source)].push_back({synapse, weight, delay});
  p.min_delay = p.min_delay < 0 ? delay : std::min(p.min_delay, delay);
}

template <class T>
void ActiveNeurons<T>::step(int steps) {
  Impl& p = *impl_;
  require(steps >= 0, "ActiveNeurons::step: steps = " + std::to_string(steps) + " must be >= 0");
  (p.*p.step_backend)(steps);
}

template <class T>
void ActiveNeurons<T>::Impl::step_host(int steps) {
  Impl& p = *this;
  if (p.split && p.split_dirty) p.build_split();
  const index_t span = p.span;
  const index_t nh = static_cast<index_t>(p.hh_pos.size());
  // Threads only where each has enough work: even a parallel region of one thread costs as
  // much as a small cell's step.
  const int max_threads = p.exec.threads() > 0 ? p.exec.threads() : omp_get_max_threads();
  const int team = p.real > 32768 ? max_threads : 1;
  const T dt = static_cast<T>(p.dt);
  T* v = p.v.data();
  T* diag = p.diag.data();
  T* rhs = p.rhs.data();
  const T *d0 = p.d0.data(), *cdt = p.cdt.data(), *gpas = p.gpas.data(), *gepas = p.gepas.data();
  const index_t* hh_pos = p.hh_pos.data();
  const T *gna = p.gna.data(), *gk = p.gk.data(), *gl = p.gl.data(), *gel = p.gel.data(), *ena = p.ena.data(),
          *ek = p.ek.data();
  T *m = p.m.data(), *h = p.h.data(), *n = p.n.data();
  const bool one_table = p.cells.size() == 1;
  const T* tables = p.tables.data();
  const int* hh_table = p.hh_table.data();
  const bool split = p.split;
  const index_t nvar = static_cast<index_t>(p.var_pos.size());
  const index_t* var_pos = p.var_pos.data();
  const T* var_base = p.var_base.data();
  const index_t count = static_cast<index_t>(p.cell_of.size());
  // diag (split: on varying nodes only) and rhs of v(t), hh's currents with the gates of t.
  auto assemble = [&] {
    if (split) {
#pragma omp for simd schedule(static) nowait
      for (index_t i = 0; i < span; ++i) rhs[i] = cdt[i] * v[i] + gepas[i];
#pragma omp for schedule(static)
      for (index_t q = 0; q < nvar; ++q) diag[var_pos[q]] = var_base[q];
    } else {
#pragma omp for simd schedule(static)
      for (index_t i = 0; i < span; ++i) {
        diag[i] = d0[i] + gpas[i];
        rhs[i] = cdt[i] * v[i] + gepas[i];
      }
    }
#pragma omp for simd schedule(static)
    for (index_t q = 0; q < nh; ++q) {
      const index_t i = hh_pos[q];
      membrane::hh_current(gna[q], gk[q], gl[q], gel[q], ena[q], ek[q], m[q], h[q], n[q], diag[i], rhs[i]);
    }
  };
  // The gates with v(t + dt).
  auto gates = [&] {
#pragma omp for schedule(static)
    for (index_t q = 0; q < nh; ++q) {
      const T* table = tables + (one_table ? 0 : static_cast<std::size_t>(hh_table[q]) * membrane::kHHTableSize);
      membrane::hh_gates(table, v[hh_pos[q]], dt, m[q], h[q], n[q]);
    }
  };
  auto solve = [&](int t, int team_size) {
    const index_t first = count * t / team_size, last = count * (t + 1) / team_size;
    cpu::HinesSplitWork<T>& w = p.work[static_cast<std::size_t>(t)];
    w.prepare(p.trees, p.split_generation);
    return cpu::hines_split_solve<T>(p.trees, w, p.cell_of.data(), p.order.data(), p.offsets.data(), first, last, diag,
                                     rhs);
  };
  for (int k = 0; k < steps; ++k) {
    const double tm = p.t + 0.5 * p.dt;  // NEURON: t += dt/2 before the currents
    while (!p.events.empty() && p.events.top().time <= tm) {
      const auto e = p.events.top();
      p.events.pop();
      p.synapses[static_cast<std::size_t>(e.synapse)].g += e.weight;
    }
    if (team > 1) {
#pragma omp parallel num_threads(team)
      assemble();
    } else {
      assemble();
    }
    for (const auto& c : p.clamps)
      if (tm >= c.del && tm < c.del + c.dur) rhs[c.pos] += static_cast<T>(c.amp);
    for (const auto& s : p.synapses) {
      diag[s.pos] += static_cast<T>(s.g);
      rhs[s.pos] += static_cast<T>(s.g * s.e);
    }
    if (!split) {
      p.plan->solve(p.offdiag.data(), diag, rhs);
    } else {
      index_t bad = -1;
      if (team > 1) {
#pragma omp parallel num_threads(team) reduction(max : bad)
        bad = std::max(bad, solve(omp_get_thread_num(), omp_get_num_threads()));
      } else {
        bad = solve(0, 1);
      }
      if (bad >= 0 && p.check_pivots)
        throw SingularSystem("ActiveNeurons::step: zero or non-finite pivot in neuron " + std::to_string(bad) +
                                 " at t = " + num(p.t) + " ms (a non-finite parameter, or dt too large for its membranes)",
                             bad);
    }
    std::swap(p.v, p.rhs);
    v = p.v.data();
    rhs = p.rhs.data();
    p.t = tm + 0.5 * p.dt;
    // States with v(t + dt): hh gates (cnexp), synapse decay, spike detection.
    if (team > 1 && nh > 8192) {
#pragma omp parallel num_threads(team)
      gates();
    } else {
      gates();
    }
    for (auto& s : p.synapses) s.g *= s.decay;
    for (auto& d : p.detectors) {
      const double vd = static_cast<double>(v[d.pos]);
      if (vd > d.threshold) {
        if (!d.above) {
          d.above = true;
          p.spikes.push_back({d.neuron, p.t});
          for (const auto& c : p.out[static_cast<std::size_t>(d.neuron)]) p.events.push({p.t + c.delay, c.synapse, c.weight});
        }
      } else {
        d.above = false;
      }
    }
  }
}

template <class T>
void ActiveNeurons<T>::Impl::build_split() {
  Impl& p = *this;
  std::vector<std::vector<char>> varies(p.cells.size());
  for (std::size_t c = 0; c < p.cells.size(); ++c) {
    const ActiveCell& cell = p.cells[c];
    const Compartments& comp = cell.compartments;
    varies[c].assign(static_cast<std::size_t>(comp.size()), 0);
    for (int k = 0; k < comp.size(); ++k) {
      const std::size_t kk = static_cast<std::size_t>(k);
      varies[c][kk] = comp.area[kk] > 0 && cell.membrane[static_cast<std::size_t>(comp.section[kk])] == Membrane::hh;
    }
  }
  for (const Synapse& syn : p.synapses)
    varies[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(syn.neuron)])][static_cast<std::size_t>(syn.node)] = 1;
  p.trees.clear();
  for (std::size_t c = 0; c < p.cells.size(); ++c) {
    const Compartments& comp = p.cells[c].compartments;
    std::vector<double> diag = p.mats[c].diag;  // C/dt + axial + leak: the leak off where hh sits
    for (int k = 0; k < comp.size(); ++k) {
      const std::size_t kk = static_cast<std::size_t>(k);
      if (comp.area[kk] > 0 && p.cells[c].membrane[static_cast<std::size_t>(comp.section[kk])] == Membrane::hh)
        diag[kk] -= comp.leak[kk];
    }
    p.trees.push_back(cpu::hines_split<T>(comp.parent, p.mats[c].offdiag, diag, varies[c]));
  }
  p.var_pos.clear();
  p.var_base.clear();
  for (std::size_t s = 0; s < p.cell_of.size(); ++s) {
    const cpu::HinesSplit<T>& tr = p.trees[static_cast<std::size_t>(p.cell_of[s])];
    if (tr.root_varies) p.var_pos.push_back(p.offsets[s]), p.var_base.push_back(tr.base[0]);
    for (const int k : tr.varying)
      p.var_pos.push_back(p.offsets[s] + k), p.var_base.push_back(tr.base[static_cast<std::size_t>(k)]);
  }
  ++p.split_generation;
  p.split_dirty = false;
}

template <class T>
int ActiveNeurons<T>::Impl::window(int steps_left) const {
  if (detectors.empty()) return steps_left;  // no spikes, no events from the device
  std::int64_t k = steps_left;
  if (min_delay >= 0) k = std::min<std::int64_t>(k, std::max<std::int64_t>(1, static_cast<std::int64_t>(min_delay / dt)));
  k = std::min<std::int64_t>(k, std::max<std::int64_t>(1, kRecordCapacity / static_cast<std::int64_t>(detectors.size())));
  return static_cast<int>(std::max<std::int64_t>(k, 1));
}

template <class T>
void ActiveNeurons<T>::Impl::step_device(int steps) {
  Impl& p = *this;
  const cuda_backend::DeviceGuard guard(p.exec.device());
  void* stream = p.exec.stream();
  if (p.points_dirty) p.push_points();
  if (steps > 0) p.host_v = false;
  const hha::HH<T> hh = p.hh_view();
  const hha::Points pts = p.points_view();
  const T dt = static_cast<T>(p.dt);
  std::vector<double> tms, ts;
  std::vector<std::size_t> ev_first;
  std::vector<int> ev_syn;
  std::vector<double> ev_w;
  for (int done = 0; done < steps;) {
    const int k = p.window(steps - done);
    // The window's times (computed as step_host computes them) and the events due in each step.
    tms.assign(static_cast<std::size_t>(k), 0);
    ts.assign(static_cast<std::size_t>(k), 0);
    ev_first.assign(static_cast<std::size_t>(k) + 1, 0);
    ev_syn.clear();
    ev_w.clear();
    double t = p.t;
    for (int j = 0; j < k; ++j) {
      const double tm = t + 0.5 * p.dt;
      while (!p.events.empty() && p.events.top().time <= tm) {
        ev_syn.push_back(p.events.top().synapse);
        ev_w.push_back(p.events.top().weight);
        p.events.pop();
      }
      ev_first[static_cast<std::size_t>(j) + 1] = ev_syn.size();
      tms[static_cast<std::size_t>(j)] = tm;
      t = tm + 0.5 * p.dt;
      ts[static_cast<std::size_t>(j)] = t;
    }
    if (!ev_syn.empty()) {
      if (ev_syn.size() > p.dev.event_capacity) {
        p.dev.event_capacity = std::max(ev_syn.size(), 2 * p.dev.event_capacity);
        p.dev.event_syn = Array<int>(static_cast<index_t>(p.dev.event_capacity), p.exec);
        p.dev.event_weight = Array<double>(static_cast<index_t>(p.dev.event_capacity), p.exec);
      }
      detail::copy_bytes(p.dev.event_syn.data(), MemorySpace::device, ev_syn.data(), MemorySpace::host,
                         ev_syn.size() * sizeof(int), stream);
      detail::copy_bytes(p.dev.event_weight.data(), MemorySpace::device, ev_w.data(), MemorySpace::host,
                         ev_w.size() * sizeof(double), stream);
    }
    const std::int64_t need = static_cast<std::int64_t>(p.detectors.size()) * k;
    if (need > p.dev.record_capacity) {
      p.dev.record_capacity = need;
      p.dev.record = Array<int>(2 * need, p.exec);
    }
    if (!p.detectors.empty()) {
      const int zero = 0;
      p.dev.recorded.copy_from_host(&zero);
    }
    for (int j = 0; j < k; ++j) {
      const std::size_t e0 = ev_first[static_cast<std::size_t>(j)], e1 = ev_first[static_cast<std::size_t>(j) + 1];
      if (e1 > e0)
        hha::active_deliver(static_cast<int>(e1 - e0), p.dev.event_syn.data() + e0, p.dev.event_weight.data() + e0,
                            pts.syn_g, stream);
      hha::active_assemble<T>(p.span, p.dev.d0.data(), p.dev.cdt.data(), p.dev.gpas.data(), p.dev.gepas.data(),
                              p.dev.v.data(), p.dev.diag.data(), p.dev.rhs.data(), hh, stream);
      hha::active_points<T>(tms[static_cast<std::size_t>(j)], pts, p.dev.diag.data(), p.dev.rhs.data(), stream);
      p.plan->solve(p.dev.offdiag.data(), p.dev.diag.data(), p.dev.rhs.data());
      std::swap(p.dev.v, p.dev.rhs);
      hha::active_advance<T>(p.dev.v.data(), dt, hh, pts, j, p.dev.record.data(), p.dev.recorded.data(), stream);
    }
    p.t = ts.back();
    done += k;
    if (p.detectors.empty()) continue;
    // The window's threshold crossings, in the host's order (step, then detector).
    int recorded = 0;
    p.dev.recorded.copy_to_host(&recorded);
    if (recorded == 0) continue;
    std::vector<int> rec(2 * static_cast<std::size_t>(recorded));
    detail::copy_bytes(rec.data(), MemorySpace::host, p.dev.record.data(), MemorySpace::device, rec.size() * sizeof(int),
                       stream);
    std::vector<std::pair<int, int>> order;
    order.reserve(static_cast<std::size_t>(recorded));
    for (int r = 0; r < recorded; ++r)
      order.emplace_back(rec[2 * static_cast<std::size_t>(r)], rec[2 * static_cast<std::size_t>(r) + 1]);
    std::sort(order.begin(), order.end());
    for (const auto& [j, det] : order) {
      const Detector& d = p.detectors[static_cast<std::size_t>(det)];
      const double ts_j = ts[static_cast<std::size_t>(j)];
      p.spikes.push_back({d.neuron, ts_j});
      for (const auto& c : p.out[static_cast<std::size_t>(d.neuron)]) p.events.push({ts_j + c.delay, c.synapse, c.weight});
    }
  }
  if (p.check_pivots && steps > 0) {
    // One look at the voltages per call (the plan's per-solve check would synchronise every step).
    const unsigned long long none = ~0ull;
    p.dev.bad.copy_from_host(&none);
    hha::active_first_nonfinite<T>(p.span, p.dev.v.data(), p.dev.bad.data(), stream);
    unsigned long long bad = none;
    p.dev.bad.copy_to_host(&bad);
    if (bad != none) {
      index_t neuron = -1;
      for (index_t s = 0; s < static_cast<index_t>(p.cell_of.size()) && neuron < 0; ++s) {
        const int size = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(s)])].compartments.size();
        for (int c = 0; c < size; ++c)
          if (p.plan->index(s, c) == static_cast<index_t>(bad)) neuron = s;
      }
      throw SingularSystem("ActiveNeurons::step: neuron " + std::to_string(neuron) +
                               " has a non-finite voltage by t = " + num(p.t) +
                               " ms (a non-finite parameter, or dt too large for its membranes)",
                           neuron, -1);
    }
  }
}

template <class T>
double ActiveNeurons<T>::time() const {
  return impl_->t;
}
template <class T>
double ActiveNeurons<T>::dt() const {
  return impl_->dt;
}
template <class T>
index_t ActiveNeurons<T>::count() const {
  return static_cast<index_t>(impl_->cell_of.size());
}
template <class T>
const std::vector<Spike>& ActiveNeurons<T>::spikes() const {
  return impl_->spikes;
}
template <class T>
const HinesPlan<T>& ActiveNeurons<T>::plan() const {
  return *impl_->plan;
}

template <class T>
std::vector<double> ActiveNeurons<T>::voltage(index_t neuron) const {
  const Impl& p = *impl_;
  p.position(neuron, 0, "ActiveNeurons::voltage");
  const int size = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(neuron)])].compartments.size();
  std::vector<double> out(static_cast<std::size_t>(size));
  if (p.on_device()) {
    const cuda_backend::DeviceGuard guard(p.exec.device());
    // The neuron's positions lie in [lo, hi] (contiguous, or its chunk of the sorted layout).
    index_t lo = p.plan->index(neuron, 0), hi = lo;
    for (int k = 1; k < size; ++k) lo = std::min(lo, p.plan->index(neuron, k)), hi = std::max(hi, p.plan->index(neuron, k));
    std::vector<T> part(static_cast<std::size_t>(hi - lo + 1));
    detail::copy_bytes(part.data(), MemorySpace::host, p.dev.v.data() + lo, MemorySpace::device, part.size() * sizeof(T),
                       p.exec.stream());
    for (int k = 0; k < size; ++k) out[static_cast<std::size_t>(k)] = part[static_cast<std::size_t>(p.plan->index(neuron, k) - lo)];
    return out;
  }
  for (int k = 0; k < size; ++k) out[static_cast<std::size_t>(k)] = p.v[static_cast<std::size_t>(p.plan->index(neuron, k))];
  return out;
}

template class ActiveNeurons<float>;
template class ActiveNeurons<double>;

}  // namespace adi
