#pragma once
// Active neurons: NEURON's `pas` and Hodgkin-Huxley `hh` membranes per section, current clamps
// (IClamp), conductance synapses (ExpSyn) driven by events, spike detection and connections,
// advanced by NEURON's fixed step (secondorder = 0) with the batched Hines solver.
//
//   adi::ActiveCell cell{adi::discretise(m, p), {}, {}};
//   cell.membrane.assign(m.sections().size(), adi::Membrane::pas);
//   cell.membrane[m.soma()] = adi::Membrane::hh;
//   adi::ActiveNeurons<double> net(adi::Executor::host(), {cell}, std::vector<int>(100, 0), 0.025);
//   net.initialize(-65);
//   net.add_current_clamp(0, cell.compartments.at(m.soma(), 0.5), 0.5, 1, 50);
//   net.step(4000);
//   for (const adi::Spike& s : net.spikes()) ...
//
// The step is NEURON's: events due by t + dt/2 are delivered (ExpSyn g += weight); membrane
// currents and their conductances are evaluated at v(t) with the gates of t (clamps at
// t + dt/2); one implicit solve gives v(t + dt); then the gates advance with v(t + dt) (hh's
// cnexp update, m += (1 - exp(-dt/tau)) (minf - m), rates from NEURON's table of 1 mV steps over
// [-100, 100] mV with linear interpolation, as hh.mod with usetable_hh = 1), synapses decay by
// exp(-dt/tau), and a spike is recorded at t + dt where the detector's voltage first rises
// above its threshold. Units: mV, ms, nA, uS.
#include <memory>
#include <vector>

#include "adi/hines.hpp"

namespace adi {

// hh.mod's parameters (NEURON's defaults).
struct HodgkinHuxley {
  double gnabar = 0.12;  // S/cm2
  double gkbar = 0.036;  // S/cm2
  double gl = 0.0003;    // S/cm2
  double el = -54.3;     // mV
  double ena = 50;       // mV (NEURON's default sodium reversal)
  double ek = -77;       // mV
  double celsius = 6.3;  // degC (rates scaled by 3^((celsius - 6.3) / 10))
};

enum class Membrane {
  pas,  // the leak of the Compartments (g_leak, e_leak of the CableParameters)
  hh,   // Hodgkin-Huxley (and no pas), as NEURON's hh mechanism
};

// One cell: its compartments and the membrane of each section (empty: pas everywhere).
struct ActiveCell {
  Compartments compartments;
  std::vector<Membrane> membrane;
  HodgkinHuxley hh;
};

struct Spike {
  index_t neuron = 0;
  double time = 0;  // ms
};

// A population of active neurons on the host (OpenMP across neurons, SIMD for the membranes)
// or on a GPU (Executor::cuda: state in device memory, the membranes, clamps, synapses and
// spike detection as device kernels, solvers/cuda/hines_active.cu, the same formulas as the
// host, solvers/common/hh_membrane.hpp). On a GPU, step(k) synchronises with the host once per
// window of steps no longer than the smallest connection delay (threshold crossings are
// recorded on the device and read back then, so event delivery is exact), and once at its end
// to look for non-finite voltages (HinesOptions::check_pivots; the plan's own per-solve check
// is off). See docs/hines.md.
template <class T>
class ActiveNeurons {
 public:
  // neuron s is cells[cell_of[s]]. Throws InvalidArgument on dt <= 0, bad indices or a
  // membrane list of the wrong length. On CUDA, options.kernel picks the layout as for
  // PassiveNeurons (automatic; cuda_branch / cuda_paper: CompactBatch; cuda_stack: sorted).
  ActiveNeurons(const Executor& exec, std::vector<ActiveCell> cells, std::vector<int> cell_of, double dt,
                HinesOptions options = {});
  ~ActiveNeurons();
  ActiveNeurons(ActiveNeurons&&) noexcept;
  ActiveNeurons& operator=(ActiveNeurons&&) noexcept;

  // NEURON's finitialize(v): every node at v, hh gates at their steady state, synapses closed,
  // time 0, spikes and pending events cleared.
  void initialize(double v);
  // IClamp: amp nA into `node` while delay <= t + dt/2 < delay + duration.
  void add_current_clamp(index_t neuron, int node, double amp, double delay, double duration);
  // ExpSyn at `node` (tau ms, reversal e mV); returns its id.
  int add_synapse(index_t neuron, int node, double tau, double e);
  // An event (NetCon.event): the synapse's g grows by weight uS at `time` ms.
  void deliver(int synapse, double time, double weight);
  // Spike detection at `node` of `neuron` (NetCon threshold, mV).
  void detect_spikes(index_t neuron, int node, double threshold = 0);
  // Every spike of `source` (it needs a detector) sends an event to `synapse` after `delay` ms.
  void connect(index_t source, int synapse, double weight, double delay);

  // Advances steps * dt. On CUDA: throws SingularSystem naming the neuron when a voltage is
  // non-finite at the end (with options.check_pivots).
  void step(int steps = 1);
  double time() const;
  double dt() const;
  index_t count() const;
  std::vector<double> voltage(index_t neuron) const;  // node order of its Compartments
  const std::vector<Spike>& spikes() const;           // in time order
  const HinesPlan<T>& plan() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class ActiveNeurons<float>;
extern template class ActiveNeurons<double>;

}  // namespace adi
