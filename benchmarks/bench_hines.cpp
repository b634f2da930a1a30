// Passive neurons on the host: one implicit Euler step (assemble + Hines solve) per
// iteration with adi::PassiveNeurons, against NEURON 8.2's own fixed step on the same cells,
// the same machine and the same thread count (tests/neuron_reference.py --time).
//
//   bench_hines [--quick] [--no-neuron] [--neuron-steps N] [benchmark flags]
//
// Cases (the GPU benchmark's, scaled down): the paper's six classes (adi::paper_classes) x 256
// and 2,560 neurons, the six mixed x 2,560, the two real SWC cells (a compartment per
// sample) x 16 and 64. Rows: flat layout with the scalar kernel and size-sorted chunks with
// the SIMD kernel, fp32 and fp64, 1 and 2 threads. Time per compartment and step; memory
// traffic is not the point here (a step reads offdiag, d0, C/dt, G e and v and writes diag
// and v). NEURON rows: the same cell as NEURON sections (same L, nseg, per-segment diam, pas,
// IClamp), fixed step (secondorder 0), 1 and 2 threads (ParallelContext.nthread), 256 copies
// of a paper class or 16 of a real cell; time per compartment (NEURON's nodes) and step.
// The summaries: per case, our best fp64 step against NEURON's, per thread count, twice:
// medians against NEURON's mean step, and the fastest repetition against NEURON's fastest
// tenth of steps (on a shared machine the least disturbed figures of both).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "adi/hines.hpp"

namespace {

using adi::index_t;
using Clock = std::chrono::steady_clock;

std::string source_dir() { return std::filesystem::path(__FILE__).parent_path().parent_path().string(); }

struct Cell {
  std::string name;
  adi::Morphology morphology;
  adi::CableParameters params;
  adi::Compartments comp;
};

struct Case {
  std::string name;
  std::vector<int> cells;  // indices into g_cells
  std::vector<int> cell_of;
  index_t compartments = 0;
};

std::vector<Cell> g_cells;
std::map<std::string, std::vector<double>> g_ns;  // row -> ns per compartment-step of each repetition
std::map<std::string, double> g_neuron;          // "cell/threads" -> ns per compartment-step (mean)
std::map<std::string, double> g_neuron_best;     // the same, fastest tenth of the steps
int g_repetitions = 5;

adi::CableParameters cable() {
  adi::CableParameters p;
  p.ra = 100;
  p.g_leak = 5e-5;
  p.e_leak = -70;
  return p;
}

template <class T>
void bm_step(benchmark::State& st, const Case& c, adi::HinesKernel kernel, int threads, const std::string& key) {
  std::vector<adi::Compartments> cells;
  for (int k : c.cells) cells.push_back(g_cells[static_cast<std::size_t>(k)].comp);
  adi::HinesOptions o;
  o.kernel = kernel;
  adi::PassiveNeurons<T> sim(adi::Executor::host(threads), cells, c.cell_of, 0.025, o);
  sim.set_voltage(-65);
  sim.set_current(0, 1, 0.1);
  sim.step(2);
  const auto t0 = Clock::now();
  for (auto _ : st) sim.step();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const double ns = s * 1e9 / (static_cast<double>(st.iterations()) * static_cast<double>(c.compartments));
  st.counters["ns/comp"] = ns;
  g_ns[key].push_back(ns);
}

std::string find_python() {
  std::vector<std::string> c;
  if (const char* env = std::getenv("ADI_PYTHON")) c.push_back(env);
  c.push_back("python3");
  c.push_back("/usr/bin/python3");
  for (const std::string& py : c)
    if (std::system((py + " -c 'import neuron' > /dev/null 2>&1").c_str()) == 0) return py;
  return {};
}

// NEURON's fixed step on `copies` of the cell; ns per compartment-step (mean over the steps;
// `best`: the fastest tenth of them), or < 0 on failure.
double neuron_ns(const std::string& python, const Cell& cell, int copies, int threads, int steps, double& best) {
  best = -1;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "adi_bench_hines";
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "model.txt").string(), log = (dir / "log.txt").string();
  {
    std::ofstream f(model);
    f.precision(17);
    const adi::CableParameters& p = cell.params;
    f << "params 0.025 " << steps << " 1 -65 " << p.cm << " " << p.ra << " " << p.g_leak << " " << p.e_leak << "\n";
    f << "stim 0 0.5 0.1 0 1e9\ncopies " << copies << "\nthreads " << threads << "\n";
    for (std::size_t s = 0; s < cell.morphology.sections().size(); ++s) {
      const adi::Section& sec = cell.morphology.sections()[s];
      f << "section " << sec.parent << " " << sec.parent_x << " " << sec.length() << " " << cell.comp.nseg[s];
      for (int j = 0; j < cell.comp.nseg[s]; ++j) f << " " << 2 * cell.comp.radius[static_cast<std::size_t>(cell.comp.first[s] + j)];
      f << "\n";
    }
  }
  const std::string cmd = python + " " + source_dir() + "/tests/neuron_reference.py " + model + " --time > " + log + " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::printf("NEURON run failed (%s); see %s\n", cmd.c_str(), log.c_str());
    return -1;
  }
  std::ifstream in(log);
  std::string word;
  double seconds = -1, fastest = -1;
  long compartments = 0;
  while (in >> word) {
    if (word == "neuron_seconds_per_step") in >> seconds >> word >> compartments;
    if (word == "neuron_best_chunk_seconds_per_step") in >> fastest;
  }
  if (fastest > 0 && compartments > 0) best = fastest * 1e9 / static_cast<double>(compartments);
  return seconds > 0 && compartments > 0 ? seconds * 1e9 / static_cast<double>(compartments) : -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, with_neuron = true;
  int neuron_steps = 100;
  std::vector<char*> args{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") quick = true;
    else if (a == "--no-neuron") with_neuron = false;
    else if (a == "--neuron-steps" && i + 1 < argc) neuron_steps = std::max(1, std::atoi(argv[++i]));
    else if (a.rfind("--benchmark_repetitions=", 0) == 0) {
      g_repetitions = std::max(1, std::atoi(argv[i] + 24));
      args.push_back(argv[i]);
    } else args.push_back(argv[i]);
  }
  std::string reps = "--benchmark_repetitions=" + std::to_string(g_repetitions);
  bool has_reps = false;
  for (char* a : args) has_reps |= std::string(a).rfind("--benchmark_repetitions=", 0) == 0;
  if (!has_reps) args.push_back(reps.data());
  // Plain seconds: Google Benchmark 1.7 (Debian 12) rejects the "0.2s" form that 1.8 prefers; both take this.
  std::string min_time = "--benchmark_min_time=0.2";
  args.push_back(min_time.data());

  for (const adi::SyntheticSpec& spec : adi::paper_classes()) {
    const adi::SyntheticNeuron n = adi::generate_morphology(spec);
    const adi::CableParameters p = n.parameters(cable());
    g_cells.push_back({spec.name, n.morphology, p, adi::discretise(n.morphology, p)});
  }
  for (const auto& [file, name] : {std::pair<std::string, std::string>{"10-2012-02-09-001.CNG.swc", "real-dense"},
                                   {"allen-177300.01.02.01.swc", "real-sparse"}}) {
    const adi::Morphology m = adi::Morphology::read_swc(source_dir() + "/tests/data/morphologies/" + file);
    adi::CableParameters p = cable();
    p.rule = adi::NsegRule::per_point;
    g_cells.push_back({name, m, p, adi::discretise(m, p)});
  }
  std::vector<Case> cases;
  auto add = [&](std::string name, std::vector<int> cells, index_t count) {
    Case c;
    c.name = name + " x" + std::to_string(count);
    c.cells = cells;
    for (index_t s = 0; s < count; ++s) {
      const int k = static_cast<int>(s % static_cast<index_t>(cells.size()));
      c.cell_of.push_back(k);
      c.compartments += g_cells[static_cast<std::size_t>(cells[static_cast<std::size_t>(k)])].comp.size();
    }
    cases.push_back(c);
  };
  for (index_t count : quick ? std::vector<index_t>{256} : std::vector<index_t>{256, 2560})
    for (int k = 0; k < 6; ++k) add(g_cells[static_cast<std::size_t>(k)].name, {k}, count);
  add("mixed", {0, 1, 2, 3, 4, 5}, 2560);
  for (index_t count : quick ? std::vector<index_t>{16} : std::vector<index_t>{16, 64}) {
    add("real-dense", {6}, count);
    add("real-sparse", {7}, count);
  }

  struct Variant {
    const char* name;
    adi::HinesKernel kernel;
  };
  const Variant variants[] = {{"flat/scalar", adi::HinesKernel::cpu_scalar}, {"sorted/vector", adi::HinesKernel::cpu_vector}};
  for (const Case& c : cases)
    for (int threads : {1, 2})
      for (const Variant& v : variants) {
        const std::string k64 = "fp64 " + c.name + " " + v.name + " t" + std::to_string(threads);
        const std::string k32 = "fp32 " + c.name + " " + v.name + " t" + std::to_string(threads);
        benchmark::RegisterBenchmark(k64.c_str(), [=](benchmark::State& st) { bm_step<double>(st, c, v.kernel, threads, k64); })
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
        benchmark::RegisterBenchmark(k32.c_str(), [=](benchmark::State& st) { bm_step<float>(st, c, v.kernel, threads, k32); })
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }
  int bargc = static_cast<int>(args.size());
  benchmark::Initialize(&bargc, args.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, args.data())) return 1;
  benchmark::AddCustomContext("omp_threads", std::to_string(omp_get_max_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // NEURON on the same cells (256 copies of a class, 16 of a real cell), 1 and 2 threads.
  const std::string python = with_neuron ? find_python() : std::string();
  if (with_neuron && python.empty())
    std::printf("\nNEURON NOT FOUND ('import neuron' failed): no NEURON rows; install python3-neuron\n");
  if (!python.empty())
    for (const Cell& cell : g_cells)
      for (int threads : {1, 2}) {
        const int copies = cell.name.rfind("real", 0) == 0 ? 16 : 256;
        double best = -1;
        const double ns = neuron_ns(python, cell, copies, threads, neuron_steps, best);
        if (ns > 0) g_neuron[cell.name + "/" + std::to_string(threads)] = ns;
        if (best > 0) g_neuron_best[cell.name + "/" + std::to_string(threads)] = best;
        std::printf("NEURON %-12s x%-4d %d thread(s): %7.2f ns per compartment-step (fastest tenth %.2f)\n",
                    cell.name.c_str(), copies, threads, ns, best);
      }

  // Two summaries: medians (ours) against NEURON's mean step, and the fastest repetition
  // against NEURON's fastest tenth of steps (the least disturbed figures on a shared machine).
  for (const bool fastest : {false, true}) {
    std::printf("\n== implicit Euler step (assemble + solve), ns per compartment-step, %s ==\n",
                fastest ? "fastest of the repetitions vs NEURON's fastest tenth of steps"
                        : "median of the repetitions vs NEURON's mean step");
    std::printf("%-20s %9s | %-7s %10s %10s | %10s %10s | %8s %8s\n", "case", "comps", "threads", "fp64 flat",
                "fp64 sort", "fp32 sort", "NEURON", "x NEURON", "target");
    for (const Case& c : cases)
      for (int threads : {1, 2}) {
        auto get = [&](const char* prec, const char* var) {
          const auto it = g_ns.find(std::string(prec) + " " + c.name + " " + var + " t" + std::to_string(threads));
          if (it == g_ns.end() || it->second.empty()) return 0.0;
          return fastest ? *std::min_element(it->second.begin(), it->second.end()) : median(it->second);
        };
        const double flat = get("fp64", "flat/scalar"), sorted = get("fp64", "sorted/vector"),
                     f32 = get("fp32", "sorted/vector");
        const double best64 = std::min(flat > 0 ? flat : 1e30, sorted > 0 ? sorted : 1e30);
        const std::string cell_name = c.name.substr(0, c.name.find(' '));
        const auto& table = fastest ? g_neuron_best : g_neuron;
        const auto it = table.find(cell_name + "/" + std::to_string(threads));
        const double nrn = it == table.end() ? 0 : it->second;
        std::printf("%-20s %9lld | %-7d %10.3f %10.3f | %10.3f %10.2f | %8.1f %8s\n", c.name.c_str(),
                    static_cast<long long>(c.compartments), threads, flat, sorted, f32, nrn,
                    nrn > 0 ? nrn / best64 : 0.0, nrn > 0 ? (nrn / best64 >= 6 ? "met" : "MISSED") : "-");
      }
  }
  return 0;
}
