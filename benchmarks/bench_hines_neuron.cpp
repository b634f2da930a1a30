// Real cells as NEURON users build them (Import3d, d_lambda), passive and active (hh on soma
// and axon, pas elsewhere), populations of 1 to 256 cells: adi's full step (assembly, membrane
// mechanisms, Hines solve) against NEURON 8.2's fixed step on the same cells, the same machine,
// 1 thread and all cores, NEURON with cvode.cache_efficient(0) and (1), its steps run by its own
// loop (ParallelContext.psolve, tests/neuron_import3d.py --time). ns per compartment-step:
// adi's fastest of 5 repetitions, NEURON's fastest tenth of max(400, 40000 / cells) steps; with
// one thread both sides on the thread's CPU time (--wall: adi on wall time), with several on
// wall time. adi and NEURON run interleaved, --repeat R rounds (default 3), medians printed.
//
//   bench_hines_neuron [--quick] [--no-neuron] [--neuron-max N] [--steps N] [--populations 1,2,4]
//                      [--threads K] [--repeat R] [--auto-only] [--wall] [--cells 04a|allen]
//                      [--membranes pas|hh] [--large 1000,10000,100000] [--large-only] [--no-gpu]
//
// A second table, large active populations (--large LIST; --large-only skips the first table and
// defaults to 1000,10000,100000): the
// pyramidal cell with hh, every soma clamped and its spikes driving the next cell (a ring, 1 ms
// delay), ns per compartment-step on the GPU (fp64, fp32; Executor::cuda, when there is one and
// not --no-gpu), adi on all host cores beside it, and NEURON cache_efficient(1) on all cores
// where NEURON is installed and the population is at most --neuron-max (NEURON is not on the GPU
// machine: run `bench_hines_neuron --large-only --no-gpu --neuron-max 10000` where it is).
//
// Columns: adi's automatic choice (on the host: the compact layout with each tree's constant
// matrix factored once, solvers/cpu/hines_split.hpp), and the two general host paths forced
// (compact layout + scalar kernel, size-sorted 32-lane chunks + SIMD kernel; --auto-only skips
// them).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "adi/hines.hpp"
#include "adi/hines_active.hpp"

namespace {

using adi::index_t;
using Clock = std::chrono::steady_clock;

std::string source_dir() { return std::filesystem::path(__FILE__).parent_path().parent_path().string(); }

struct Cell {
  std::string file;
  adi::Morphology m;
  adi::CableParameters p;
  adi::ActiveCell cell;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The clock: with one thread the calling thread's CPU time (on a machine shared with other
// work, time-slicing would otherwise inflate both sides by the load), wall time otherwise.
// NEURON is measured the same way (tests/neuron_import3d.py --time).
bool g_cpu_clock = true;
double now_seconds(bool cpu) {
  if (!cpu) return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// ns per compartment-step: the fastest of 5 repetitions of enough steps for ~50 ms each (on
// a shared machine the least disturbed one; NEURON's figure is its fastest tenth of steps).
template <class Sim>
double time_steps(Sim& sim, int steps, double compartments, bool cpu = false) {
  sim.step(5);
  double t0 = now_seconds(cpu);
  sim.step(steps);
  const double once = now_seconds(cpu) - t0;
  const int k = std::max(steps, static_cast<int>(steps * 0.05 / std::max(once, 1e-9)));
  double best = 1e300;
  for (int r = 0; r < 5; ++r) {
    t0 = now_seconds(cpu);
    sim.step(k);
    best = std::min(best, (now_seconds(cpu) - t0) * 1e9 / (k * compartments));
  }
  return best;
}

// The large active population: every soma clamped (tonic firing), spikes detected at the soma
// and sent round a ring with a 1 ms delay (so the GPU reads its spikes back every 40 steps).
template <class T>
double active_ring(const Cell& c, const adi::Executor& exec, int population, int steps) {
  adi::HinesOptions o;
  o.check_pivots = false;
  const double n = static_cast<double>(c.cell.compartments.size()) * population;
  const int soma = c.cell.compartments.at(std::max(c.m.soma(), 0), 0.5);
  adi::ActiveNeurons<T> sim(exec, {c.cell}, std::vector<int>(static_cast<std::size_t>(population), 0), 0.025, o);
  sim.initialize(-65);
  std::vector<int> syn(static_cast<std::size_t>(population));
  for (int s = 0; s < population; ++s) {
    sim.add_current_clamp(s, soma, 0.5, 0, 1e9);
    sim.detect_spikes(s, soma);
    syn[static_cast<std::size_t>(s)] = sim.add_synapse(s, soma, 2, 0);
  }
  for (int s = 0; s < population; ++s) sim.connect(s, syn[static_cast<std::size_t>((s + 1) % population)], 0.01, 1.0);
  return time_steps(sim, steps, n);
}

double ours(const Cell& c, bool active, int population, int threads, adi::HinesKernel kernel, int steps) {
  adi::HinesOptions o;
  o.kernel = kernel;
  o.check_pivots = false;
  const adi::Executor exec = adi::Executor::host(threads);
  const double n = static_cast<double>(c.cell.compartments.size()) * population;
  const int soma = c.cell.compartments.at(std::max(c.m.soma(), 0), 0.5);
  if (active) {
    adi::ActiveNeurons<double> sim(exec, {c.cell}, std::vector<int>(static_cast<std::size_t>(population), 0), 0.025, o);
    sim.initialize(-65);
    for (int s = 0; s < population; ++s) sim.add_current_clamp(s, soma, 0.5, 0, 1e9);
    return time_steps(sim, steps, n, threads == 1 && g_cpu_clock);
  }
  adi::PassiveNeurons<double> sim(exec, {c.cell.compartments}, std::vector<int>(static_cast<std::size_t>(population), 0),
                                  0.025, o);
  sim.set_voltage(-65);
  for (int s = 0; s < population; ++s) sim.set_current(s, soma, 0.2);
  return time_steps(sim, steps, n, threads == 1 && g_cpu_clock);
}

std::string python_with_neuron() {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(py) + " -c 'import neuron' > /dev/null 2>&1").c_str()) == 0) return py;
  return {};
}

// NEURON's ns per compartment-step, or -1.
double neuron(const std::string& py, const Cell& c, bool active, int population, int threads, int cache_efficient,
              int steps) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "adi_bench_hines_neuron";
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.txt").string(), log = (dir / "log.txt").string();
  {
    std::ofstream f(model);
    f.precision(17);
    f << "swc " << c.file << "\nparams 0.025 " << steps << " 1 -65 " << c.p.cm << " " << c.p.ra << " " << c.p.d_lambda
      << " " << c.p.frequency << "\npas " << c.p.g_leak << " " << c.p.e_leak << "\n";
    if (active) f << "hh soma,axon\n";
    f << "stim " << c.m.sections()[static_cast<std::size_t>(std::max(c.m.soma(), 0))].name << " 0.5 "
      << (active ? 0.5 : 0.2) << " 0 1e9\ncopies " << population << "\nthreads " << threads << "\ncache_efficient "
      << cache_efficient << "\n";
  }
  const std::string cmd = py + " " + source_dir() + "/tests/neuron_import3d.py " + model + " --time > " + log + " 2>&1";
  if (std::system(cmd.c_str()) != 0) return -1;
  std::ifstream in(log);
  std::string word;
  double n = 0, best = -1;
  while (in >> word) {
    if (word == "neuron_seconds_per_step") {
      double mean = 0;
      std::string tag;
      in >> mean >> tag >> n;
    } else if (word == "neuron_best_chunk_seconds_per_step") {
      in >> best;
    }
  }
  return n > 0 && best > 0 ? best * 1e9 / n : -1;
}

std::vector<int> int_list(std::string list) {
  std::vector<int> out;
  while (!list.empty()) {
    out.push_back(std::atoi(list.c_str()));
    const std::size_t comma = list.find(',');
    list = comma == std::string::npos ? std::string() : list.substr(comma + 1);
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string cellv(double v) {
  char b[32];
  if (v < 0) return std::string("-");
  std::snprintf(b, sizeof b, "%.2f", v);
  return std::string(b);
}

// The large active populations on the GPU beside the host (and NEURON where it is installed).
void large_table(const Cell& c, const std::vector<int>& populations, bool gpu, const std::string& py, int neuron_max,
                 int cores, int steps) {
  std::printf("\nActive (hh + pas) populations of %s (%d compartments), ring with 1 ms delay, ns per "
              "compartment-step\n\n| cells | compartments | GPU fp64 | GPU fp32 | adi host fp64 (%d threads) | "
              "NEURON ce=1 (%d threads) | GPU fp64 x adi host | adi host x NEURON |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|\n",
              std::filesystem::path(c.file).stem().c_str(), c.cell.compartments.size(), cores, cores);
  for (int pop : populations) {
    const int s = std::max(20, steps * 64 / std::max(pop, 64));
    double g64 = -1, g32 = -1, h = -1, nn = -1;
    if (gpu) {
      g64 = active_ring<double>(c, adi::Executor::cuda(), pop, std::max(s, 200));
      g32 = active_ring<float>(c, adi::Executor::cuda(), pop, std::max(s, 200));
    }
    h = active_ring<double>(c, adi::Executor::host(cores), pop, s);
    if (!py.empty() && pop <= neuron_max) nn = neuron(py, c, true, pop, cores, 1, 100);
    std::printf("| %d | %lld | %s | %s | %s | %s | %s | %s |\n", pop,
                static_cast<long long>(c.cell.compartments.size()) * pop, cellv(g64).c_str(), cellv(g32).c_str(),
                cellv(h).c_str(), cellv(nn).c_str(), g64 > 0 ? (cellv(h / g64) + "x").c_str() : "-",
                nn > 0 ? (cellv(nn / h) + "x").c_str() : "-");
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, with_neuron = true, large_only = false, with_gpu = true, auto_only = false;
  int neuron_max = 64, steps = 400, only_threads = 0, repeat = 3;
  std::string cell_filter, membranes;
  std::vector<int> custom, large;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--no-neuron") with_neuron = false;
    else if (a == "--neuron-max" && i + 1 < argc) neuron_max = std::atoi(argv[++i]);
    else if (a == "--steps" && i + 1 < argc) steps = std::atoi(argv[++i]);
    else if (a == "--populations" && i + 1 < argc) custom = int_list(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) only_threads = std::atoi(argv[++i]);
    else if (a == "--large" && i + 1 < argc) large = int_list(argv[++i]);
    else if (a == "--large-only") large_only = true;
    else if (a == "--no-gpu") with_gpu = false;
    else if (a == "--wall") g_cpu_clock = false;
    else if (a == "--auto-only") auto_only = true;
    else if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (a == "--cells" && i + 1 < argc) cell_filter = argv[++i];
    else if (a == "--membranes" && i + 1 < argc) membranes = argv[++i];
    else {
      std::printf("usage: bench_hines_neuron [--quick] [--no-neuron] [--neuron-max N] [--steps N] "
                  "[--populations 1,2,4] [--threads K] [--repeat R] [--auto-only] [--wall] [--cells 04a|allen] "
                  "[--membranes pas|hh] [--large 1000,10000,100000] [--large-only] [--no-gpu]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  for (int v : custom) if (v < 1) return std::printf("--populations: %d must be >= 1\n", v), 2;
  for (int v : large) if (v < 1) return std::printf("--large: %d must be >= 1\n", v), 2;
  if (steps < 1) return std::printf("--steps: %d must be >= 1\n", steps), 2;
  if (repeat < 1) return std::printf("--repeat: %d must be >= 1\n", repeat), 2;
  const std::string py = with_neuron ? python_with_neuron() : std::string();
  if (with_neuron && py.empty()) std::printf("NEURON not found ('import neuron' failed): adi columns only\n");
  std::vector<Cell> cells;
  for (const char* f : {"04a_pyramidal4aACC.CNG.swc", "allen-177300.01.02.01.swc"}) {
    Cell c;
    c.file = source_dir() + "/tests/data/morphologies/" + f;
    c.m = adi::Morphology::read_swc(c.file);
    c.p.ra = 100;
    c.p.g_leak = 5e-5;
    c.cell.compartments = adi::discretise(c.m, c.p);
    for (const adi::Section& s : c.m.sections())
      c.cell.membrane.push_back(s.type == 1 || s.type == 2 ? adi::Membrane::hh : adi::Membrane::pas);
    cells.push_back(std::move(c));
  }
  const int cores = omp_get_num_procs();
  std::vector<int> populations = quick ? std::vector<int>{1, 16, 64} : std::vector<int>{1, 2, 4, 16, 64, 256};
  if (!custom.empty()) populations = custom;
  std::vector<int> thread_counts{1};
  if (cores > 1) thread_counts.push_back(cores);
  if (only_threads > 0) thread_counts = {only_threads};
  const bool gpu = with_gpu && adi::Executor::cuda_available();
  if (with_gpu && !gpu) std::printf("no CUDA device (or adi built without CUDA): GPU columns left empty\n");
  if (large_only && large.empty()) large = {1000, 10000, 100000};
  if (large_only) {
    large_table(cells.front(), large, gpu, py, neuron_max, only_threads > 0 ? only_threads : cores, steps);
    return 0;
  }
  std::printf("| cell | membrane | cells | threads | adi auto | adi compact/scalar | adi sorted/vector | NEURON | "
              "NEURON cache_efficient | x NEURON ce |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Cell& c : cells)
    for (bool active : {false, true})
      for (int pop : populations)
        for (int th : thread_counts) {
          if (!cell_filter.empty() && c.file.find(cell_filter) == std::string::npos) continue;
          if (!membranes.empty() && membranes != (active ? "hh" : "pas")) continue;
          const int s = std::max(20, steps * 64 / std::max(pop, 64));
          // adi and NEURON interleaved, `repeat` rounds, medians (the machine's load changes).
          std::vector<double> ra, rsc, rve, rn0, rn1;
          for (int r = 0; r < repeat; ++r) {
            ra.push_back(ours(c, active, pop, th, adi::HinesKernel::automatic, s));
            if (!py.empty() && pop <= neuron_max) {
              const int ns = std::max(400, 40000 / pop);
              rn0.push_back(neuron(py, c, active, pop, th, 0, ns));
              rn1.push_back(neuron(py, c, active, pop, th, 1, ns));
            }
            if (!auto_only) {
              rsc.push_back(ours(c, active, pop, th, adi::HinesKernel::cpu_scalar, s));
              rve.push_back(ours(c, active, pop, th, adi::HinesKernel::cpu_vector, s));
            }
          }
          const double a = median(ra), sc = median(rsc), ve = median(rve), n0 = median(rn0), n1 = median(rn1);
          std::printf("| %s (%d) | %s | %d | %d | %s | %s | %s | %s | %s | %s |\n",
                      std::filesystem::path(c.file).stem().c_str(), c.cell.compartments.size(), active ? "hh+pas" : "pas",
                      pop, th, cellv(a).c_str(), cellv(sc).c_str(), cellv(ve).c_str(), cellv(n0).c_str(),
                      cellv(n1).c_str(), n1 > 0 ? (cellv(n1 / a) + "x").c_str() : "-");
          std::fflush(stdout);
        }
  if (!large.empty()) large_table(cells.front(), large, gpu, py, neuron_max, only_threads > 0 ? only_threads : cores, steps);
  return 0;
}
