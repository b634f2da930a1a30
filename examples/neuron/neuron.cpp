// neuron: a population of passive neurons (from SWC files or the paper's synthetic classes)
// with a current injected into every soma, advanced by implicit Euler (NEURON's fixed step)
// with the batched Hines solver, on the host or a GPU. Writes every neuron as VTK polydata
// (points and lines of its compartments, radius and membrane voltage as point data) into
// DIR/neuron.pvd, a time series ParaView plays (each step lists one part per neuron written).
//
//   neuron --swc cell.swc --neurons 1000 --t-end 50 --amp 0.5 --output out
//   neuron --class big-high --class small-low --neurons 25600 --backend cuda --no-output
//   neuron --swc cell.swc --active --neurons 100 --t-end 100 --output out   # hh, spikes in a ring
//   neuron --class small-high --active --neurons 100000 --backend cuda --no-output
//
// --active: Hodgkin-Huxley (NEURON's hh) in soma and axon sections, pas elsewhere, the current
// step into the first --stim-neurons somas, and every neuron's somatic spikes drive an ExpSyn on
// the next neuron's soma (a ring, --syn-weight uS after --syn-delay ms): spikes propagate around
// the population. Spike times go to DIR/spikes.txt ("neuron time_ms" per line), the membrane
// potential to the VTK series as before. On the host or (--backend cuda) a GPU (adi::ActiveNeurons).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/hines.hpp"
#include "adi/hines_active.hpp"
#include "adi/io/vtk_polydata.hpp"
#include "common/cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Options {
  std::vector<std::string> swc, classes;
  long neurons = 16;
  double dt = 0.025, t_end = 20;
  double amp = 0.5, delay = 2, duration = 10;  // nA, ms, ms
  double cm = 1, ra = 100, g_leak = 5e-5, e_leak = -70, v_init = -65;
  std::string nseg_rule = "d_lambda";
  int nseg = 1;
  double max_length = 20;
  std::string precision = "double", backend = "cpu";
  int threads = 0;
  std::string output = "neuron_out";
  long every = 40;
  int vtk_neurons = 4;
  bool no_output = false, progress = false;
  bool active = false;
  long stim_neurons = 1;
  double syn_weight = 0.05, syn_delay = 1.0, syn_tau = 2.0;  // uS, ms, ms
};

// "[#####.....]  25/50 steps  0.8 s  ETA 0.8 s" on stderr, redrawn at most 10 times a second.
class Progress {
 public:
  Progress(long total, bool enabled) : total_(total), enabled_(enabled), t0_(Clock::now()) {}
  void update(long done) {
    if (!enabled_) return;
    const double el = seconds_since(t0_);
    if (done < total_ && el - last_ < 0.1) return;
    last_ = el;
    constexpr int width = 30;
    const int filled = total_ > 0 ? static_cast<int>(width * done / total_) : width;
    const double eta = done > 0 ? el * static_cast<double>(total_ - done) / static_cast<double>(done) : 0.0;
    std::fprintf(stderr, "\r[%s%s] %ld/%ld steps  %.1f s  ETA %.1f s ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total_, el, eta);
    if (done >= total_) std::fputc('\n', stderr);
    std::fflush(stderr);
  }

 private:
  long total_;
  bool enabled_;
  Clock::time_point t0_;
  double last_ = -1;
};

struct Cell {
  std::string name;
  adi::Compartments comp;
  int soma_section = 0;               // the first type-1 section (section 0 when none)
  std::vector<adi::Membrane> membrane;  // --active: hh in soma and axon sections, pas elsewhere
};

Cell make_cell(const std::string& name, const adi::Morphology& m, const adi::CableParameters& p) {
  Cell c{name, adi::discretise(m, p), std::max(m.soma(), 0), {}};
  for (const adi::Section& s : m.sections())
    c.membrane.push_back(s.type == 1 || s.type == 2 ? adi::Membrane::hh : adi::Membrane::pas);
  return c;
}

std::vector<Cell> load_cells(const Options& o) {
  adi::CableParameters p;
  p.cm = o.cm;
  p.ra = o.ra;
  p.g_leak = o.g_leak;
  p.e_leak = o.e_leak;
  p.rule = o.nseg_rule == "fixed"        ? adi::NsegRule::fixed
           : o.nseg_rule == "max_length" ? adi::NsegRule::max_length
           : o.nseg_rule == "per_point"  ? adi::NsegRule::per_point
                                         : adi::NsegRule::d_lambda;
  p.nseg = o.nseg;
  p.max_length = o.max_length;
  std::vector<Cell> cells;
  for (const std::string& f : o.swc) cells.push_back(make_cell(f, adi::Morphology::read_swc(f), p));
  for (const std::string& c : o.classes) {
    const adi::SyntheticNeuron n = adi::generate_morphology(adi::paper_class(c));
    cells.push_back(make_cell(c, n.morphology, n.parameters(p)));
  }
  if (cells.empty()) {  // default: one of each paper class
    for (const adi::SyntheticSpec& s : adi::paper_classes()) {
      const adi::SyntheticNeuron n = adi::generate_morphology(s);
      cells.push_back(make_cell(s.name, n.morphology, n.parameters(p)));
    }
  }
  return cells;
}

// The neurons' cells: which morphology each population member has, and their total size.
struct Population {
  std::vector<int> cell_of;
  long long compartments = 0;
};
Population populate(const Options& o, const std::vector<Cell>& cells) {
  Population p;
  p.cell_of.resize(static_cast<std::size_t>(o.neurons));
  for (long s = 0; s < o.neurons; ++s) {
    p.cell_of[static_cast<std::size_t>(s)] = static_cast<int>(s % static_cast<long>(cells.size()));
    p.compartments += cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(s)])].comp.size();
  }
  return p;
}

// The VTK series of the first --vtk-neurons neurons (radius and voltage); nothing with --no-output.
class VoltageSeries {
 public:
  VoltageSeries(const Options& o, const std::vector<Cell>& cells, const std::vector<int>& cell_of)
      : cells_(cells), cell_of_(cell_of), parts_(static_cast<int>(std::min<long>(o.vtk_neurons, o.neurons))) {
    if (!o.no_output) series_ = std::make_unique<adi::io::PolyDataSeries>(o.output, "neuron");
  }
  template <class Sim>
  void write(long step, const Sim& sim) {
    if (!series_) return;
    for (int s = 0; s < parts_; ++s) {
      const adi::Compartments& c = cells_[static_cast<std::size_t>(cell_of_[static_cast<std::size_t>(s)])].comp;
      const adi::io::TreeGeometry g{c.x, c.y, c.z, c.parent};
      series_->write(step, s, sim.time(), g, {{"radius", c.radius}, {"voltage", sim.voltage(s)}});
    }
  }

  bool written() const { return series_ != nullptr; }
  std::string pvd_path() const { return series_->pvd_path(); }
  std::size_t steps() const { return series_->steps(); }
  int parts() const { return parts_; }

 private:
  const std::vector<Cell>& cells_;
  const std::vector<int>& cell_of_;
  int parts_;
  std::unique_ptr<adi::io::PolyDataSeries> series_;
};

template <class T>
int run(const Options& o) {
  const std::vector<Cell> cells = load_cells(o);
  std::vector<adi::Compartments> comps;
  for (const Cell& c : cells) comps.push_back(c.comp);
  const Population pop = populate(o, cells);
  const std::vector<int>& cell_of = pop.cell_of;
  const long long compartments = pop.compartments;
  const adi::Executor exec = o.backend == "cuda" ? adi::Executor::cuda() : adi::Executor::host(o.threads);
  adi::PassiveNeurons<T> sim(exec, comps, cell_of, o.dt);
  sim.set_voltage(o.v_init);
  // The soma: the middle of the type-1 section (section 0 for a cell without one).
  std::vector<int> soma(cells.size());
  for (std::size_t c = 0; c < cells.size(); ++c) soma[c] = cells[c].comp.at(cells[c].soma_section, 0.5);
  auto inject = [&](double nA) {
    for (long s = 0; s < o.neurons; ++s) sim.set_current(s, soma[static_cast<std::size_t>(cell_of[static_cast<std::size_t>(s)])], nA);
  };
  const long steps = std::max(1L, std::lround(o.t_end / o.dt));
  std::printf("neuron: %ld neurons of %zu morphologies, %lld compartments, %ld steps of %g ms on %s, %s, kernel %s\n",
              o.neurons, cells.size(), compartments, steps, o.dt, exec.name().c_str(), o.precision.c_str(),
              exec.is_host() ? "host split solve" : adi::hines_kernel_name(sim.plan().kernel()));

  VoltageSeries series(o, cells, cell_of);
  auto write = [&](long step) { series.write(step, sim); };
  write(0);
  Progress bar(steps, o.progress || ::isatty(2));
  std::vector<double> peak(cells.size(), o.v_init);
  bool on = false;
  const auto t0 = Clock::now();
  double solve_seconds = 0;
  for (long k = 0; k < steps; ++k) {
    const double mid = (static_cast<double>(k) + 0.5) * o.dt;  // NEURON evaluates IClamp at t + dt/2
    const bool want = mid >= o.delay && mid < o.delay + o.duration;
    if (want != on) {
      inject(want ? o.amp : 0.0);
      on = want;
    }
    const auto s0 = Clock::now();
    sim.step();
    if (exec.is_cuda()) exec.synchronize();
    solve_seconds += seconds_since(s0);
    const bool frame = o.every > 0 && (k + 1) % o.every == 0;
    if (frame || k + 1 == steps) {
      for (std::size_t c = 0; c < cells.size() && c < static_cast<std::size_t>(o.neurons); ++c)
        peak[c] = std::max(peak[c], sim.voltage(static_cast<adi::index_t>(c))[static_cast<std::size_t>(soma[c])]);
      for (std::size_t c = 0; c < cells.size() && c < static_cast<std::size_t>(o.neurons); ++c)
        example::require_all_finite(sim.voltage(static_cast<adi::index_t>(c)),
                                    "the voltage of neuron " + std::to_string(c), "at step " + std::to_string(k + 1),
                                    "check --amp, --dt and the cable parameters");
      if (frame) write(k + 1);
    }
    bar.update(k + 1);
  }
  if (o.every <= 0 || steps % o.every != 0) write(steps);
  const double wall = seconds_since(t0);
  std::printf("neuron: %.3f s for %ld steps (%.3f ms/step, %.2f ns per compartment-step)\n", wall, steps,
              1e3 * solve_seconds / static_cast<double>(steps),
              1e9 * solve_seconds / (static_cast<double>(steps) * static_cast<double>(compartments)));
  for (std::size_t c = 0; c < cells.size() && c < static_cast<std::size_t>(o.neurons); ++c)
    std::printf("  %-40s %6d compartments: soma peak %.3f mV (rest %.1f mV)\n", cells[c].name.c_str(),
                cells[c].comp.size(), peak[c], o.e_leak);
  if (series.written())
    std::printf("neuron: wrote %s (%zu time steps, %d neuron(s) each)\n", series.pvd_path().c_str(), series.steps(),
                series.parts());
  return 0;
}


// --active: hh populations with spikes propagating around a ring (adi::ActiveNeurons).
template <class T>
int run_active(const Options& o) {
  const std::vector<Cell> cells = load_cells(o);
  std::vector<adi::ActiveCell> models;
  for (const Cell& c : cells) models.push_back({c.comp, c.membrane, {}});
  const Population pop = populate(o, cells);
  const std::vector<int>& cell_of = pop.cell_of;
  const long long compartments = pop.compartments;
  const adi::Executor exec = o.backend == "cuda" ? adi::Executor::cuda() : adi::Executor::host(o.threads);
  adi::ActiveNeurons<T> sim(exec, models, cell_of, o.dt);
  sim.initialize(o.v_init);
  auto soma_of = [&](long s) {
    const Cell& c = cells[static_cast<std::size_t>(cell_of[static_cast<std::size_t>(s)])];
    return c.comp.at(c.soma_section, 0.5);
  };
  for (long s = 0; s < o.neurons; ++s) {
    if (s < o.stim_neurons) sim.add_current_clamp(s, soma_of(s), o.amp, o.delay, o.duration);
    sim.detect_spikes(s, soma_of(s), 0);
  }
  if (o.neurons > 1)
    for (long s = 0; s < o.neurons; ++s) {
      const long next = (s + 1) % o.neurons;
      sim.connect(s, sim.add_synapse(next, soma_of(next), o.syn_tau, 0), o.syn_weight, o.syn_delay);
    }
  const long steps = std::max(1L, std::lround(o.t_end / o.dt));
  std::printf("neuron: --active, %ld neurons of %zu morphologies, %lld compartments, %ld steps of %g ms on %s, %s, "
              "kernel %s\n",
              o.neurons, cells.size(), compartments, steps, o.dt, exec.name().c_str(), o.precision.c_str(),
              exec.is_host() ? "host split solve" : adi::hines_kernel_name(sim.plan().kernel()));
  VoltageSeries series(o, cells, cell_of);
  auto write = [&](long step) { series.write(step, sim); };
  write(0);
  Progress bar(steps, o.progress || ::isatty(2));
  const auto t0 = Clock::now();
  // Steps in chunks up to the next frame (or a hundredth of the run): on a GPU the population
  // then looks at its spikes once per connection delay, not once per step.
  const long chunk = std::min(o.every > 0 && !o.no_output ? o.every : std::max(1L, steps / 100), 1L << 30);
  for (long k = 0; k < steps;) {
    const long n = std::min(chunk - k % chunk, steps - k);
    sim.step(static_cast<int>(n));
    k += n;
    if (o.every > 0 && k % o.every == 0) write(k);
    bar.update(k);
  }
  if (o.every <= 0 || steps % o.every != 0) write(steps);
  const double wall = seconds_since(t0);
  std::printf("neuron: %.3f s for %ld steps (%.2f ns per compartment-step, writing included)\n", wall, steps,
              1e9 * wall / (static_cast<double>(steps) * static_cast<double>(compartments)));
  const std::vector<adi::Spike>& spikes = sim.spikes();
  long firing = 0;
  {
    std::vector<char> fired(static_cast<std::size_t>(o.neurons), 0);
    for (const adi::Spike& sp : spikes) fired[static_cast<std::size_t>(sp.neuron)] = 1;
    for (char f : fired) firing += f;
  }
  std::printf("neuron: %zu spikes, %ld of %ld neurons fired", spikes.size(), firing, o.neurons);
  if (!spikes.empty()) std::printf(", first at %.3f ms, last at %.3f ms", spikes.front().time, spikes.back().time);
  std::printf("\n");
  if (!o.no_output) {
    const std::string path = o.output + "/spikes.txt";
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw adi::Error("cannot write " + path);
    std::fprintf(f, "# neuron time_ms\n");
    for (const adi::Spike& sp : spikes) std::fprintf(f, "%lld %.6f\n", static_cast<long long>(sp.neuron), sp.time);
    std::fclose(f);
    std::printf("neuron: wrote %s and %s\n", path.c_str(), series.pvd_path().c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  using example::finite;
  using example::positive;
  CLI::App app{"Passive neurons (SWC files or the paper's synthetic classes) with a somatic current step, "
               "implicit Euler with the batched Hines solver; VTK polydata output (.pvd)"};
  app.add_option("--swc", o.swc, "SWC morphology file (repeat for several)")->check(CLI::ExistingFile);
  std::vector<std::string> names;
  for (const adi::SyntheticSpec& s : adi::paper_classes()) names.push_back(s.name);
  app.add_option("--class", o.classes, "Synthetic paper class (repeat; default: all six when no --swc)")
      ->check(CLI::IsMember(names));
  app.add_option("--neurons", o.neurons, "Population size (cycles through the morphologies)")
      ->check(example::integer(1, 100000000))
      ->capture_default_str();
  app.add_option("--dt", o.dt, "Time step, ms")->check(positive())->capture_default_str();
  app.add_option("--t-end", o.t_end, "Simulated time, ms (rounded to whole steps, with a note)")
      ->check(positive())
      ->capture_default_str();
  app.add_option("--amp", o.amp, "Somatic current step, nA")->check(finite())->capture_default_str();
  app.add_option("--delay", o.delay, "Current onset, ms")->check(example::non_negative())->capture_default_str();
  app.add_option("--duration", o.duration, "Current duration, ms")
      ->check(example::non_negative())
      ->capture_default_str();
  app.add_option("--cm", o.cm, "Membrane capacitance, uF/cm^2")->check(positive())->capture_default_str();
  app.add_option("--ra", o.ra, "Axial resistivity, ohm cm")->check(positive())->capture_default_str();
  app.add_option("--g-leak", o.g_leak, "Leak conductance, S/cm^2")->check(positive())->capture_default_str();
  app.add_option("--e-leak", o.e_leak, "Leak reversal potential, mV")
      ->check(example::range(-1000, 1000))
      ->capture_default_str();
  app.add_option("--v-init", o.v_init, "Initial membrane potential, mV")
      ->check(example::range(-1000, 1000))
      ->capture_default_str();
  app.add_option("--nseg-rule", o.nseg_rule, "Segments per section (NEURON's nseg)")
      ->check(CLI::IsMember({"d_lambda", "fixed", "max_length", "per_point"}))
      ->capture_default_str();
  auto* onseg = app.add_option("--nseg", o.nseg, "nseg for --nseg-rule fixed")->check(example::integer(1, 100000));
  auto* omax = app.add_option("--max-length", o.max_length, "Longest segment for --nseg-rule max_length, um")
                   ->check(positive());
  app.add_option("--precision", o.precision, "Floating-point type")
      ->check(CLI::IsMember({"float", "double"}))
      ->capture_default_str();
  app.add_option("--backend", o.backend, "Where to run")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  app.add_option("--threads", o.threads, "Host threads (0: all)")->check(example::integer(0, 4096));
  auto* oout = app.add_option("--output", o.output, "Output directory")->capture_default_str();
  auto* oevery = app.add_option("--every", o.every, "Write a frame every K steps (0: first and last only)")
                     ->check(example::integer(0, 1L << 40))
                     ->capture_default_str();
  auto* ovtk = app.add_option("--vtk-neurons", o.vtk_neurons, "Neurons written per frame (the first ones)")
                   ->check(example::integer(1, 1000000))
                   ->capture_default_str();
  app.add_flag("--no-output", o.no_output, "Write no files")->excludes(oout)->excludes(oevery)->excludes(ovtk);
  app.add_flag("--progress", o.progress, "Show the progress bar even when stderr is not a terminal");
  auto* oactive = app.add_flag("--active", o.active, "Hodgkin-Huxley in soma and axon, spikes propagating around a ring of neurons");
  auto* ostim = app.add_option("--stim-neurons", o.stim_neurons, "--active: neurons receiving the current step (the first ones)")
                    ->check(example::integer(0, 100000000))
                    ->capture_default_str();
  auto* oweight = app.add_option("--syn-weight", o.syn_weight, "--active: ExpSyn weight, uS")
                      ->check(example::non_negative())
                      ->capture_default_str();
  auto* odelay = app.add_option("--syn-delay", o.syn_delay, "--active: spike-to-synapse delay, ms")
                     ->check(example::non_negative())
                     ->capture_default_str();
  if (const auto rc = example::parse(app, "neuron", argc, argv)) return *rc;
  return example::guarded("neuron", [&] {
    // Every combination is checked before any work.
    example::require(onseg->count() == 0 || o.nseg_rule == "fixed", "--nseg needs --nseg-rule fixed");
    example::require(omax->count() == 0 || o.nseg_rule == "max_length", "--max-length needs --nseg-rule max_length");
    const double steps = std::round(o.t_end / o.dt);
    example::require(steps <= 1e12, "--t-end " + example::num(o.t_end) + " / --dt " + example::num(o.dt) + " is " +
                                        example::num(o.t_end / o.dt) + " steps (at most 1e12)");
    if (std::abs(std::max(1.0, steps) * o.dt - o.t_end) > 1e-9 * o.t_end)
      std::fprintf(stderr,
                   "neuron: note: --t-end %g is not a whole number of --dt %g steps: %g steps, ending at %g ms\n",
                   o.t_end, o.dt, std::max(1.0, steps), std::max(1.0, steps) * o.dt);
    example::require(oactive->count() > 0 || (ostim->count() == 0 && oweight->count() == 0 && odelay->count() == 0),
                     "--stim-neurons, --syn-weight and --syn-delay need --active");
    if (o.backend == "cuda") example::cuda_executor("--backend cpu");  // exit 77 without a GPU
    if (!o.no_output) example::prepare_output(o.output);
    if (o.active) return o.precision == "float" ? run_active<float>(o) : run_active<double>(o);
    return o.precision == "float" ? run<float>(o) : run<double>(o);
  });
}
