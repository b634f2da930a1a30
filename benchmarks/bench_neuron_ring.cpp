// The active ring of issue 17 on adi (adi::ActiveNeurons on the GPU or the host): the network of
// benchmarks/neuron/ring.hoc, which runs it in NEURON 8.2, so that both can be timed on the same
// machine and their spike times compared (scripts/gpu_neuron_compare.sh).
//   - one SWC cell, adi's Import3d geometry, nseg by d_lambda (cm 1, Ra 100, d_lambda 0.1 at 100 Hz);
//   - hh (NEURON's defaults) in soma and axon sections, pas (5e-5 S/cm2, -70 mV) elsewhere;
//   - --cells copies; the first --stim-cells somas get an IClamp (--amp nA, --stim-del, --stim-dur ms);
//   - a spike detector at every soma(0.5) (--threshold mV) and every cell's spikes drive an ExpSyn
//     (--syn-tau ms, --syn-e mV) at the next cell's soma(0.5), --syn-weight uS after --syn-delay ms;
//   - dt 0.025 ms, --t-end ms, timed as one run (after construction and initialize), as NEURON's
//     pc.psolve(tstop) is in ring.hoc.
// Defaults are those of `neuron --active` and ring.hoc. Prints one line in ring.hoc's format
//   ring cells N compartments C threads T dt D steps K setup_s A init_s B run_s R
//        ns_per_compartment_step X spikes Z backend B precision P
// and with --spikes FILE writes "cell time_ms" per spike.
//
//   bench_neuron_ring --swc tests/data/morphologies/04a_pyramidal4aACC.CNG.swc --cells 100000 \
//                     --t-end 5 --backend cuda [--precision float] [--spikes out.txt]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/hines.hpp"
#include "adi/hines_active.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  std::string swc = "tests/data/morphologies/04a_pyramidal4aACC.CNG.swc", backend = "cuda", precision = "double";
  std::string spikes;
  long cells = 10, stim_cells = 1;
  int threads = 0;
  double t_end = 20, dt = 0.025, amp = 0.5, stim_del = 2, stim_dur = 10;
  double syn_weight = 0.05, syn_delay = 1, syn_tau = 2, syn_e = 0, threshold = 0, v_init = -65;
  double cm = 1, ra = 100, g_leak = 5e-5, e_leak = -70, d_lambda = 0.1, frequency = 100;
};

template <class T>
int run(const Options& o) {
  const auto t_setup = Clock::now();
  const adi::Morphology m = adi::Morphology::read_swc(o.swc);
  adi::CableParameters p;
  p.cm = o.cm;
  p.ra = o.ra;
  p.g_leak = o.g_leak;
  p.e_leak = o.e_leak;
  p.d_lambda = o.d_lambda;
  p.frequency = o.frequency;
  adi::ActiveCell cell{adi::discretise(m, p), {}, {}};
  for (const adi::Section& s : m.sections())
    cell.membrane.push_back(s.type == 1 || s.type == 2 ? adi::Membrane::hh : adi::Membrane::pas);
  const int soma = cell.compartments.at(std::max(m.soma(), 0), 0.5);
  const long long compartments = static_cast<long long>(cell.compartments.size()) * o.cells;
  const adi::Executor exec = o.backend == "cuda" ? adi::Executor::cuda() : adi::Executor::host(o.threads);
  adi::HinesOptions opt;
  opt.check_pivots = false;
  adi::ActiveNeurons<T> sim(exec, {cell}, std::vector<int>(static_cast<std::size_t>(o.cells), 0), o.dt, opt);
  for (long s = 0; s < o.cells; ++s) {
    if (s < o.stim_cells) sim.add_current_clamp(s, soma, o.amp, o.stim_del, o.stim_dur);
    sim.detect_spikes(s, soma, o.threshold);
  }
  std::vector<int> syn(static_cast<std::size_t>(o.cells));
  for (long s = 0; s < o.cells; ++s) syn[static_cast<std::size_t>(s)] = sim.add_synapse(s, soma, o.syn_tau, o.syn_e);
  if (o.cells > 1)
    for (long s = 0; s < o.cells; ++s)
      sim.connect(s, syn[static_cast<std::size_t>((s + 1) % o.cells)], o.syn_weight, o.syn_delay);
  const double setup_s = seconds_since(t_setup);
  const auto t_init = Clock::now();
  sim.initialize(o.v_init);
  if (exec.is_cuda()) exec.synchronize();
  const double init_s = seconds_since(t_init);
  const long steps = std::max(1L, std::lround(o.t_end / o.dt));
  const auto t_run = Clock::now();
  for (long k = 0; k < steps;) {  // step(int): whole run in pieces of at most 2^30 steps
    const long n = std::min(steps - k, 1L << 30);
    sim.step(static_cast<int>(n));
    k += n;
  }
  if (exec.is_cuda()) exec.synchronize();
  const double run_s = seconds_since(t_run);
  const std::vector<adi::Spike>& spikes = sim.spikes();
  std::printf("ring cells %ld compartments %lld threads %d dt %g steps %ld setup_s %.3f init_s %.3f run_s %.6f "
              "ns_per_compartment_step %.4f spikes %zu backend %s precision %s\n",
              o.cells, compartments, exec.is_cuda() ? 0 : exec.threads(), o.dt, steps, setup_s, init_s, run_s,
              run_s * 1e9 / (static_cast<double>(steps) * static_cast<double>(compartments)), spikes.size(),
              exec.name().c_str(), o.precision.c_str());
  if (!o.spikes.empty()) {
    std::FILE* f = std::fopen(o.spikes.c_str(), "w");
    if (!f) throw adi::Error("bench_neuron_ring: cannot write --spikes " + o.spikes);
    for (const adi::Spike& sp : spikes) std::fprintf(f, "%lld %.9g\n", static_cast<long long>(sp.neuron), sp.time);
    std::fclose(f);
  }
  return 0;
}

int usage(int rc) {
  std::printf("usage: bench_neuron_ring [--swc FILE] [--cells N] [--t-end MS] [--backend cuda|cpu] [--threads K]\n"
              "         [--precision double|float] [--stim-cells K] [--amp NA] [--stim-del MS] [--stim-dur MS]\n"
              "         [--syn-weight US] [--syn-delay MS] [--syn-tau MS] [--syn-e MV] [--threshold MV]\n"
              "         [--spikes FILE]\n");
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help") return usage(0);
    if (i + 1 >= argc) return usage(2);
    const std::string v = argv[++i];
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    const bool number = end && *end == '\0' && std::isfinite(x);
    auto num = [&](double& field) {
      if (!number) std::printf("bench_neuron_ring: %s needs a number, got '%s'\n", a.c_str(), v.c_str());
      field = x;
      return number;
    };
    auto count = [&](long& field, long lo) {
      if (!number || x < lo || x != std::floor(x) || x > 1e9) {
        std::printf("bench_neuron_ring: %s needs a whole number >= %ld, got '%s'\n", a.c_str(), lo, v.c_str());
        return false;
      }
      field = static_cast<long>(x);
      return true;
    };
    long threads = 0;
    bool ok = true;
    if (a == "--swc") o.swc = v;
    else if (a == "--spikes") o.spikes = v;
    else if (a == "--backend") o.backend = v, ok = v == "cuda" || v == "cpu";
    else if (a == "--precision") o.precision = v, ok = v == "double" || v == "float";
    else if (a == "--cells") ok = count(o.cells, 1);
    else if (a == "--stim-cells") ok = count(o.stim_cells, 0);
    else if (a == "--threads") ok = count(threads, 0), o.threads = static_cast<int>(threads);
    else if (a == "--t-end") ok = num(o.t_end) && o.t_end > 0;
    else if (a == "--amp") ok = num(o.amp);
    else if (a == "--stim-del") ok = num(o.stim_del);
    else if (a == "--stim-dur") ok = num(o.stim_dur);
    else if (a == "--syn-weight") ok = num(o.syn_weight);
    else if (a == "--syn-delay") ok = num(o.syn_delay) && o.syn_delay >= 0;
    else if (a == "--syn-tau") ok = num(o.syn_tau) && o.syn_tau > 0;
    else if (a == "--syn-e") ok = num(o.syn_e);
    else if (a == "--threshold") ok = num(o.threshold);
    else return usage(2);
    if (!ok) return std::printf("bench_neuron_ring: bad value '%s' for %s\n", v.c_str(), a.c_str()), 2;
  }
  try {
    if (o.backend == "cuda" && !adi::Executor::cuda_available()) {
      std::printf("bench_neuron_ring: no CUDA device (or adi built without CUDA): use --backend cpu\n");
      return 77;
    }
    return o.precision == "float" ? run<float>(o) : run<double>(o);
  } catch (const std::exception& e) {
    std::printf("bench_neuron_ring: %s\n", e.what());
    return 1;
  }
}
