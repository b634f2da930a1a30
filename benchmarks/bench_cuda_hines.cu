// Batched Hines solves on one GPU: every layout and kernel of adi/hines.hpp on the paper's six
// morphology classes, mixed batches and two real cells, as a fraction of the device's copy
// bandwidth (cuHinesBatch, Valero-Lara et al. 2017, section 4).
//
//   bench_cuda_hines [--reps N] [--quick] [--filter TEXT] [--max-seconds S] [--swc-dir DIR] [--real-counts N,...]
//
// 1. Copy bandwidth: cudaMemcpy device-to-device of 1 GiB, bytes read + written: the 100%.
// 2. Cases: the six classes (Table 1: 76/7, 76/29, 305/30, 319/157, 695/66, 691/341
//    compartments/branches, adi::generate_morphology) x 256, 2,560, 25,600, 256,000
//    neurons; "mixed": the six classes in turn (the same counts); the two real SWC cells
//    x 16,384 (one compartment per SWC sample: ~3,970 and ~3,900; --real-counts: other counts, e.g.
//    2560,4096,8192,16384 for where one block per cell stops paying against one thread per cell).
//    fp32 and fp64.
// 3. Per case every (layout, kernel): flat/paper, flat/branch (a warp per neuron; 4 warps for
//    large cells), full-interleaved/paper, block-interleaved (chunk 32 and 128)/paper,
//    block32/shared (paper 3.1), block32/stack. Median of N timed solves (CUDA events, after
//    2 warm-ups); diag and rhs are restored from pristine copies before each (untimed).
//    Bandwidth counts the minimum traffic: read offdiag, diag, rhs and write x (4 values per
//    compartment). `resid` = max |A x - b| / max(1, |b|) over all neurons (fp64 sums).
// Pivot checks are off in the timed solves.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "adi/hines.hpp"
#include "solvers/cuda/hines.cuh"
#include "benchmarks/cuda_bench_util.cuh"

namespace {

using adi::bench::Dev;
using adi::bench::median_ms;
using adi::index_t;
using adi::detail::HinesView;

int g_reps = 7;
double g_copy_gbs = 0;
std::string g_filter;
double g_max_seconds = 1e9;
const auto g_start = std::chrono::steady_clock::now();

double elapsed() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count(); }

__device__ double uniform(unsigned long long i, unsigned long long seed) {  // [0, 1)
  unsigned long long z = i * 0x9E3779B97F4A7C15ull + seed * 0xBF58476D1CE4E5B9ull + 0x94D049BB133111EBull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return (z >> 11) * (1.0 / 9007199254740992.0);
}

// Symmetric, diagonally dominant systems: |offdiag| <= 1 and diag = degree + 0.5 + u. The
// values depend on (neuron, node) only, so every layout solves the same systems.
template <class T>
__global__ void fill_kernel(HinesView v, const int* degree, T* off, T* diag, T* rhs) {
  const index_t t = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (t >= v.count) return;
  const adi::cuda_backend::hines::Slot s = adi::cuda_backend::hines::slot_of(v, t);
  const int* deg = degree + v.parent_base[s.neuron];
  for (int k = 0; k < s.n; ++k) {
    const unsigned long long id = (static_cast<unsigned long long>(s.neuron) << 24) + 4ull * k;
    const index_t a = s.base + k * s.step;
    off[a] = static_cast<T>(-(0.1 + 0.9 * uniform(id, 1)));
    diag[a] = static_cast<T>(deg[k] + 0.5 + uniform(id + 1, 1));
    rhs[a] = static_cast<T>(2 * uniform(id + 2, 1) - 1);
  }
}

// Per neuron max |A x - b| / max(1, |b|) in double; y (the scratch diag) receives A x.
template <class T>
__global__ void residual_kernel(HinesView v, const T* off, const T* diag0, const T* rhs0, const T* x, T* y,
                                float* out) {
  const index_t t = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (t >= v.count) return;
  const adi::cuda_backend::hines::Slot s = adi::cuda_backend::hines::slot_of(v, t);
  for (int k = 0; k < s.n; ++k) {
    const index_t a = s.base + k * s.step;
    y[a] = static_cast<T>(static_cast<double>(diag0[a]) * static_cast<double>(x[a]));
  }
  for (int k = 1; k < s.n; ++k) {
    const index_t a = s.base + k * s.step, ap = s.base + s.parent[k] * s.step;
    y[a] += off[a] * x[ap];
    y[ap] += off[a] * x[a];
  }
  double worst = 0;
  for (int k = 0; k < s.n; ++k) {
    const index_t a = s.base + k * s.step;
    worst = fmax(worst, fabs(static_cast<double>(y[a]) - static_cast<double>(rhs0[a])) /
                            fmax(1.0, fabs(static_cast<double>(rhs0[a]))));
  }
  out[t] = static_cast<float>(worst);
}

struct Case {
  std::string name;
  adi::HinesBatch batch;
  index_t compartments = 0;
  std::string group;  // the mono/mixed comparison key
};

struct Variant {
  std::string name;
  int layout;  // 0 flat, 1 interleaved, 2 sorted
  adi::HinesKernel kernel;
  int chunk = 32;
  int threads = 0;
};

std::vector<Variant> variants() {
  using K = adi::HinesKernel;
  return {{"flat/paper", 0, K::cuda_paper},
          {"flat/branch", 0, K::cuda_branch},
          {"interleaved/paper", 1, K::cuda_paper},
          {"block32/paper", 2, K::cuda_paper, 32},
          {"block128/paper", 2, K::cuda_paper, 128},
          {"block32/shared", 2, K::cuda_block_shared, 32},
          {"block32/stack", 2, K::cuda_stack, 32}};
}

struct Row {
  std::string prec, cs, variant;
  index_t neurons = 0, compartments = 0;
  double ms = 0, ns_per = 0, gbs = 0, pct = 0, resid = 0;
  bool ok = true;
  std::string note;
};
std::vector<Row> g_rows;

template <class T>
void run_case(const Case& c) {
  const char* prec = sizeof(T) == 8 ? "fp64" : "fp32";
  std::vector<int> degree;
  for (const adi::HinesTopology& t : c.batch.topologies) {
    std::vector<int> d(t.parent().size(), 0);
    for (std::size_t i = 1; i < d.size(); ++i) {
      ++d[i];
      ++d[static_cast<std::size_t>(t.parent()[i])];
    }
    degree.insert(degree.end(), d.begin(), d.end());
  }
  Dev<int> deg(degree.size());
  CK(cudaMemcpy(deg.p, degree.data(), degree.size() * sizeof(int), cudaMemcpyHostToDevice));
  for (const Variant& var : variants()) {
    const std::string label = std::string(prec) + " " + c.name + " " + var.name;
    if (!g_filter.empty() && label.find(g_filter) == std::string::npos) continue;
    if (elapsed() > g_max_seconds) {
      std::printf("  (time limit: skipping %s)\n", label.c_str());
      continue;
    }
    Row row{prec, c.name, var.name, c.batch.count(), c.compartments};
    try {
      adi::HinesOptions o;
      o.kernel = var.kernel;
      o.chunk_width = var.chunk;
      o.threads_per_block = var.threads;
      o.check_pivots = false;
      const adi::Executor ex = adi::Executor::cuda();
      std::unique_ptr<adi::HinesPlan<T>> plan =
          var.layout == 0   ? std::make_unique<adi::HinesPlan<T>>(ex, c.batch, adi::CompactBatch{}, o)
          : var.layout == 1 ? std::make_unique<adi::HinesPlan<T>>(ex, c.batch, adi::PaddedInterleaved{}, o)
                            : std::make_unique<adi::HinesPlan<T>>(ex, c.batch, adi::SortedInterleaved{}, o);
      const std::size_t span = static_cast<std::size_t>(plan->span());
      Dev<T> off(span), diag(span), rhs(span), diag0(span), rhs0(span);
      const HinesView& v = plan->view();
      const unsigned blocks = static_cast<unsigned>((v.count + 127) / 128);
      fill_kernel<T><<<blocks, 128>>>(v, deg.p, off.p, diag0.p, rhs0.p);
      CK(cudaGetLastError());
      const std::size_t bytes = span * sizeof(T);
      auto prepare = [&] {
        CK(cudaMemcpyAsync(diag.p, diag0.p, bytes, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpyAsync(rhs.p, rhs0.p, bytes, cudaMemcpyDeviceToDevice));
      };
      // Fewer repetitions where one solve takes long (flat at 256,000 neurons), and one once
      // most of the time limit is spent: fewer repetitions rather than fewer cases.
      int reps = c.compartments > 50'000'000 && var.name == "flat/paper" ? std::min(g_reps, 3) : g_reps;
      if (elapsed() > 0.7 * g_max_seconds) reps = 1;
      row.ms = median_ms([&] { plan->solve(off.p, diag.p, rhs.p); }, reps, prepare);
      Dev<float> res(static_cast<std::size_t>(v.count));
      residual_kernel<T><<<blocks, 128>>>(v, off.p, diag0.p, rhs0.p, rhs.p, diag.p, res.p);
      CK(cudaGetLastError());
      std::vector<float> r(static_cast<std::size_t>(v.count));
      CK(cudaMemcpy(r.data(), res.p, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (float x : r) row.resid = std::max(row.resid, std::isfinite(x) ? double(x) : 1e30);
      row.ns_per = row.ms * 1e6 / static_cast<double>(c.compartments);
      row.gbs = 4.0 * sizeof(T) * static_cast<double>(c.compartments) / (row.ms * 1e6);
      row.pct = 100 * row.gbs / g_copy_gbs;
      row.ok = row.resid < (sizeof(T) == 8 ? 1e-10 : 1e-3);
    } catch (const std::exception& e) {
      row.note = e.what();
      row.ok = false;
    }
    if (row.note.empty())
      std::printf("%-5s %-22s %8lld %-18s %9.3f ms %8.4f ns/comp %7.0f GB/s %5.1f%% resid %.1e%s\n", prec,
                  c.name.c_str(), (long long)c.batch.count(), var.name.c_str(), row.ms, row.ns_per, row.gbs, row.pct,
                  row.resid, row.ok ? "" : "  WRONG");
    else
      std::printf("%-5s %-22s %8lld %-18s  skipped: %.100s\n", prec, c.name.c_str(), (long long)c.batch.count(),
                  var.name.c_str(), row.note.c_str());
    std::fflush(stdout);
    g_rows.push_back(row);
  }
}

Case mono(const adi::SyntheticSpec& spec, index_t count) {
  const adi::SyntheticNeuron n = adi::generate_morphology(spec);
  Case c;
  c.batch = adi::HinesBatch::uniform(adi::HinesTopology(adi::discretise(n.morphology, n.parameters()).parent), count);
  c.name = spec.name;
  c.compartments = count * spec.compartments;
  return c;
}

Case mixed(index_t count) {
  Case c;
  c.name = "mixed";
  for (const adi::SyntheticSpec& spec : adi::paper_classes()) {
    const adi::SyntheticNeuron n = adi::generate_morphology(spec);
    c.batch.topologies.emplace_back(adi::discretise(n.morphology, n.parameters()).parent);
  }
  for (index_t s = 0; s < count; ++s) {
    const int t = static_cast<int>(s % 6);
    c.batch.topology_of.push_back(t);
    c.compartments += c.batch.topologies[static_cast<std::size_t>(t)].size();
  }
  return c;
}

Case real(const std::string& path, const std::string& name, index_t count) {
  // One compartment per SWC sample (NsegRule::per_point): the "large" cells of the issue.
  adi::CableParameters p;
  p.rule = adi::NsegRule::per_point;
  const adi::Compartments comp = adi::discretise(adi::Morphology::read_swc(path), p);
  Case c;
  c.name = name;
  c.batch = adi::HinesBatch::uniform(adi::HinesTopology(comp.parent), count);
  c.compartments = count * comp.size();
  return c;
}

const Row* find(const std::string& prec, const std::string& cs, index_t n, const std::string& var) {
  for (const Row& r : g_rows)
    if (r.prec == prec && r.cs == cs && r.neurons == n && r.variant == var && r.note.empty()) return &r;
  return nullptr;
}

const Row* best(const std::string& prec, const std::string& cs, index_t n) {
  const Row* b = nullptr;
  for (const Row& r : g_rows)
    if (r.prec == prec && r.cs == cs && r.neurons == n && r.note.empty() && r.ok && (!b || r.ms < b->ms)) b = &r;
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::vector<index_t> real_counts{16384};  // the real cells' batch sizes
  std::string swc_dir = std::string(__FILE__).substr(0, std::string(__FILE__).rfind('/')) + "/../tests/data/morphologies";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_cuda_hines: %s needs a value\n", name);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--reps") g_reps = std::max(1, std::atoi(value("--reps").c_str()));
    else if (a == "--quick") quick = true;
    else if (a == "--filter") g_filter = value("--filter");
    else if (a == "--max-seconds") g_max_seconds = std::atof(value("--max-seconds").c_str());
    else if (a == "--swc-dir") swc_dir = value("--swc-dir");
    else if (a == "--real-counts") {
      real_counts.clear();
      const std::string list = value("--real-counts");
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(',', at), list.size());
        const std::string item = list.substr(at, end - at);
        char* rest = nullptr;
        const long long v = std::strtoll(item.c_str(), &rest, 10);
        if (item.empty() || *rest != '\0' || v < 1) {
          std::fprintf(stderr, "bench_cuda_hines: --real-counts: '%s' is not a positive count (e.g. 2560,16384)\n",
                       item.c_str());
          return 2;
        }
        real_counts.push_back(static_cast<index_t>(v));
        at = end + 1;
      }
    } else if (a == "-h" || a == "--help") {
      std::printf(
          "bench_cuda_hines [--reps N] [--quick] [--filter TEXT] [--max-seconds S] [--swc-dir DIR] "
          "[--real-counts N,...]\n");
      return 0;
    } else {
      std::fprintf(stderr, "bench_cuda_hines: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  if (!adi::Executor::cuda_available()) {
    std::fprintf(stderr, "bench_cuda_hines: no CUDA device\n");
    return 1;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  g_copy_gbs = adi::bench::measure_copy(10).memcpy_gbs;
  std::printf("device %s, %d SMs; copy bandwidth %.0f GB/s (cudaMemcpy D2D, read + write)\n", prop.name,
              prop.multiProcessorCount, g_copy_gbs);
  const std::vector<index_t> counts = quick ? std::vector<index_t>{2560, 256000}
                                            : std::vector<index_t>{256, 2560, 25600, 256000};
  std::vector<Case> cases;
  for (index_t n : counts) {
    for (const adi::SyntheticSpec& spec : adi::paper_classes()) cases.push_back(mono(spec, n));
    cases.push_back(mixed(n));
  }
  for (index_t n : real_counts) {
    cases.push_back(real(swc_dir + "/10-2012-02-09-001.CNG.swc", "real-dense", n));
    cases.push_back(real(swc_dir + "/allen-177300.01.02.01.swc", "real-sparse", n));
  }
  // Largest first: the figures that matter most are in even if a time limit cuts the run.
  std::stable_sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.compartments > b.compartments; });
  for (const Case& c : cases) {
    run_case<double>(c);
    run_case<float>(c);
  }

  // --- summary ------------------------------------------------------------------------------
  std::printf("\n== best kernel per case (ns per compartment, %% of copy %.0f GB/s) ==\n", g_copy_gbs);
  std::printf("%-5s %-12s %8s | %-18s %9s %6s | %9s %9s %9s %9s\n", "prec", "case", "neurons", "best", "ns/comp",
              "%copy", "flat", "interl.", "block32", "stack");
  for (const char* prec : {"fp64", "fp32"})
    for (const Case& c : cases) {
      const Row* b = best(prec, c.name, c.batch.count());
      if (!b) continue;
      auto ns = [&](const char* var) {
        const Row* r = find(prec, c.name, c.batch.count(), var);
        return r ? r->ns_per : NAN;
      };
      std::printf("%-5s %-12s %8lld | %-18s %9.4f %5.1f%% | %9.4f %9.4f %9.4f %9.4f\n", prec, c.name.c_str(),
                  (long long)c.batch.count(), b->variant.c_str(), b->ns_per, b->pct, ns("flat/paper"),
                  ns("interleaved/paper"), ns("block32/paper"), ns("block32/stack"));
    }
  std::printf("\n== targets (256,000 neurons; fp64 <= 0.019 ns & >= 70%% copy, fp32 <= 0.0095 ns) ==\n");
  for (const char* prec : {"fp64", "fp32"}) {
    const double target = std::string(prec) == "fp64" ? 0.019 : 0.0095;
    double mono_ns_weighted = 0, mono_comp = 0;
    for (const adi::SyntheticSpec& spec : adi::paper_classes()) {
      const Row* b = best(prec, spec.name, 256000);
      if (!b) continue;
      std::printf("%s %-12s best %-18s %.4f ns/comp %5.1f%% copy: %s\n", prec, spec.name.c_str(), b->variant.c_str(),
                  b->ns_per, b->pct, b->ns_per <= target ? "met" : "MISSED");
      mono_ns_weighted += b->ns_per * spec.compartments;
      mono_comp += spec.compartments;
    }
    const Row* mx = best(prec, "mixed", 256000);
    if (mx && mono_comp > 0) {
      const double mono = mono_ns_weighted / mono_comp;  // the mix's compartments at mono speed
      std::printf("%s mixed best %-18s %.4f ns/comp vs mono %.4f: %.0f%% of the mono figure (target >= 90%%)\n", prec,
                  mx->variant.c_str(), mx->ns_per, mono, 100 * mono / mx->ns_per);
    }
    for (const char* cell : {"real-dense", "real-sparse"}) {
      const Row* b = best(prec, cell, 16384);
      const Row* one = find(prec, cell, 16384, "interleaved/paper");
      if (b && one)
        std::printf("%s %-12s x16384 best %-18s %.4f ns/comp (%.1f%% copy) vs one thread per cell (interleaved) %.4f: "
                    "%.1fx (target >= 3x)\n",
                    prec, cell, b->variant.c_str(), b->ns_per, b->pct, one->ns_per, one->ns_per / b->ns_per);
    }
  }
  int wrong = 0;
  for (const Row& r : g_rows) wrong += (!r.ok && r.note.empty());
  std::printf("\n%d rows, %d with a wrong residual; %.0f s\n", static_cast<int>(g_rows.size()), wrong, elapsed());
  return wrong ? 1 : 0;
}
