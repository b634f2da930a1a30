// The batched Hines solver: branch schedules (HinesTopology), plans (HinesPlan) and passive
// populations in time (PassiveNeurons). Morphologies, discretisation and the synthetic classes
// live in adi/hines_morphology.cpp, adi/hines_discretise.cpp and adi/hines_synthetic.cpp.
#include "adi/hines.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <omp.h>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "adi/detail/hines_geometry.hpp"
#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/cpu/hines.hpp"
#include "solvers/cpu/hines_split.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace {
std::string num(double v) { return detail::number(v); }
}  // namespace

// --- HinesTopology ---------------------------------------------------------------------------

struct HinesTopology::Data {
  std::vector<int> parent;
  // Branches in elimination order (height ascending, then by start node).
  std::vector<int> start, end, child_first, child_node, up_level, down_order, down_level;
};

HinesTopology::HinesTopology(std::vector<int> parent) {
  const int n = static_cast<int>(parent.size());
  detail::require(n >= 1, "HinesTopology: empty tree (a neuron needs at least one node)");
  detail::require(parent[0] == -1, "HinesTopology: parent[0] = " + std::to_string(parent[0]) +
                                       " must be -1 (node 0 is the root)");
  std::vector<int> nchild(static_cast<std::size_t>(n), 0);
  for (int i = 1; i < n; ++i) {
    const int p = parent[static_cast<std::size_t>(i)];
    if (p < 0 || p >= i)
      throw InvalidArgument("HinesTopology: parent[" + std::to_string(i) + "] = " + std::to_string(p) +
                            " must lie in [0, " + std::to_string(i) +
                            "): Hines order numbers every parent before its children");
    ++nchild[static_cast<std::size_t>(p)];
  }
  auto d = std::make_shared<Data>();
  // Branches in node order, then heights (children start later: reverse order) and depths.
  std::vector<int> start, branch_of(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const bool cont = i > 0 && parent[static_cast<std::size_t>(i)] == i - 1 && nchild[static_cast<std::size_t>(i - 1)] == 1;
    if (!cont) start.push_back(i);
    branch_of[static_cast<std::size_t>(i)] = static_cast<int>(start.size()) - 1;
  }
  const int B = static_cast<int>(start.size());
  std::vector<int> end(static_cast<std::size_t>(B)), parent_branch(static_cast<std::size_t>(B), -1);
  for (int b = 0; b < B; ++b) {
    end[static_cast<std::size_t>(b)] = b + 1 < B ? start[static_cast<std::size_t>(b + 1)] : n;
    if (b > 0) parent_branch[static_cast<std::size_t>(b)] = branch_of[static_cast<std::size_t>(parent[static_cast<std::size_t>(start[static_cast<std::size_t>(b)])])];
  }
  std::vector<int> height(static_cast<std::size_t>(B), 0), depth(static_cast<std::size_t>(B), 0);
  for (int b = B - 1; b > 0; --b) {
    int& h = height[static_cast<std::size_t>(parent_branch[static_cast<std::size_t>(b)])];
    h = std::max(h, height[static_cast<std::size_t>(b)] + 1);
  }
  for (int b = 1; b < B; ++b) depth[static_cast<std::size_t>(b)] = depth[static_cast<std::size_t>(parent_branch[static_cast<std::size_t>(b)])] + 1;
  std::vector<int> up(static_cast<std::size_t>(B)), down(static_cast<std::size_t>(B));
  std::iota(up.begin(), up.end(), 0);
  std::iota(down.begin(), down.end(), 0);
  std::stable_sort(up.begin(), up.end(), [&](int a, int b) { return height[static_cast<std::size_t>(a)] < height[static_cast<std::size_t>(b)]; });
  std::stable_sort(down.begin(), down.end(), [&](int a, int b) { return depth[static_cast<std::size_t>(a)] < depth[static_cast<std::size_t>(b)]; });
  std::vector<int> new_id(static_cast<std::size_t>(B));
  for (int k = 0; k < B; ++k) new_id[static_cast<std::size_t>(up[static_cast<std::size_t>(k)])] = k;
  std::vector<std::vector<int>> kids(static_cast<std::size_t>(B));
  for (int b = 1; b < B; ++b) kids[static_cast<std::size_t>(parent_branch[static_cast<std::size_t>(b)])].push_back(start[static_cast<std::size_t>(b)]);
  d->child_first.push_back(0);
  for (int k = 0; k < B; ++k) {
    const int b = up[static_cast<std::size_t>(k)];
    d->start.push_back(start[static_cast<std::size_t>(b)]);
    d->end.push_back(end[static_cast<std::size_t>(b)]);
    for (int c : kids[static_cast<std::size_t>(b)]) d->child_node.push_back(c);
    d->child_first.push_back(static_cast<int>(d->child_node.size()));
    if (k == 0 || height[static_cast<std::size_t>(b)] != height[static_cast<std::size_t>(up[static_cast<std::size_t>(k - 1)])]) d->up_level.push_back(k);
  }
  d->up_level.push_back(B);
  for (int k = 0; k < B; ++k) {
    const int b = down[static_cast<std::size_t>(k)];
    d->down_order.push_back(new_id[static_cast<std::size_t>(b)]);
    if (k == 0 || depth[static_cast<std::size_t>(b)] != depth[static_cast<std::size_t>(down[static_cast<std::size_t>(k - 1)])]) d->down_level.push_back(k);
  }
  d->down_level.push_back(B);
  d->parent = std::move(parent);
  data_ = std::move(d);
}

int HinesTopology::size() const { return static_cast<int>(data_->parent.size()); }
const std::vector<int>& HinesTopology::parent() const { return data_->parent; }
int HinesTopology::branches() const { return static_cast<int>(data_->start.size()); }
int HinesTopology::height() const { return static_cast<int>(data_->up_level.size()) - 1; }
int HinesTopology::depth() const { return static_cast<int>(data_->down_level.size()) - 1; }

HinesBatch HinesBatch::uniform(const HinesTopology& topology, index_t count) {
  detail::require(count >= 0, "HinesBatch::uniform: count = " + std::to_string(count) + " must be >= 0");
  HinesBatch b;
  b.topologies = {topology};
  b.topology_of.assign(static_cast<std::size_t>(count), 0);
  return b;
}

// --- kernels by name ---------------------------------------------------------------------------

namespace {
const std::pair<HinesKernel, const char*> kKernelNames[] = {
    {HinesKernel::automatic, "automatic"},        {HinesKernel::reference, "reference"},
    {HinesKernel::cpu_scalar, "cpu_scalar"},      {HinesKernel::cpu_vector, "cpu_vector"},
    {HinesKernel::cuda_paper, "cuda_paper"},      {HinesKernel::cuda_block_shared, "cuda_block_shared"},
    {HinesKernel::cuda_stack, "cuda_stack"},      {HinesKernel::cuda_branch, "cuda_branch"},
};
}  // namespace

const char* hines_kernel_name(HinesKernel k) {
  for (const auto& [kernel, name] : kKernelNames)
    if (kernel == k) return name;
  return "?";
}

HinesKernel hines_kernel_from_name(const std::string& name) {
  std::string names;
  for (const auto& [kernel, n] : kKernelNames) {
    if (name == n) return kernel;
    names += (names.empty() ? "" : ", ") + std::string(n);
  }
  throw InvalidArgument("unknown Hines kernel '" + name + "'; known: " + names);
}

// --- HinesPlan -----------------------------------------------------------------------------------

template <class T>
struct HinesPlan<T>::Impl {
  Executor exec = Executor::host();
  HinesBatch neurons;
  HinesOptions options;
  detail::HinesLayoutKind layout = detail::HinesLayoutKind::compact;
  VariableBatchPlan batch;
  HinesKernel kernel = HinesKernel::automatic;
  index_t span = 0;
  // Host copies of everything the views point to.
  std::vector<index_t> offsets, parent_base;
  std::vector<int> sizes, parents, tree_of;
  std::vector<detail::HinesTreeSchedule> schedules;
  std::vector<int> branch_start, branch_end, child_first, child_node, up_level, down_order, down_level;
  detail::HinesView host, device;
  detail::Storage device_storage;
  Array<int> flag;  // CUDA: the first bad neuron (cuda_backend::kNoBadNeuron when none)
  // Sorted layout: ranges of thread slots (whole chunks) whose sizes lie within a factor 2,
  // so that shared-memory kernels size each launch by its own largest neuron.
  std::vector<index_t> range_first;
  std::vector<int> range_rows;
  // The kernel's backend, chosen once by build(): solves and returns the first neuron with a
  // bad pivot (-1: none, or pivots unchecked).
  using Run = index_t (*)(Impl&, const T* offdiag, T* diag, T* rhs);
  Run run = nullptr;

  Impl(const Executor& e, const HinesBatch& b, HinesOptions o, const VariableBatchPlan& vb)
      : exec(e), neurons(b), options(o), batch(vb) {}

  static index_t run_reference(Impl& p, const T* offdiag, T* diag, T* rhs) {
    return p.checked(cpu::hines_reference<T>(p.host, offdiag, diag, rhs));
  }
  static index_t run_vector(Impl& p, const T* offdiag, T* diag, T* rhs) {
    return p.checked(cpu::hines_vector<T>(p.host, offdiag, diag, rhs, p.exec.threads()));
  }
  static index_t run_scalar(Impl& p, const T* offdiag, T* diag, T* rhs) {
    return p.checked(cpu::hines_scalar<T>(p.host, offdiag, diag, rhs, p.exec.threads()));
  }
  static index_t run_cuda(Impl& p, const T* offdiag, T* diag, T* rhs);
  index_t checked(index_t bad) const { return options.check_pivots ? bad : -1; }
};

template <class T>
index_t HinesPlan<T>::Impl::run_cuda(Impl& p, const T* offdiag, T* diag, T* rhs) {
  const cuda_backend::DeviceGuard guard(p.exec.device());
  int* flag = p.options.check_pivots ? p.flag.data() : nullptr;
  cuda_backend::HinesLaunch launch;
  launch.threads_per_block = p.options.threads_per_block;
  if (!p.range_rows.empty()) {
    launch.range_first = p.range_first.data();
    launch.range_rows = p.range_rows.data();
    launch.ranges = static_cast<int>(p.range_rows.size());
  }
  cuda_backend::hines_solve<T>(p.kernel, p.device, offdiag, diag, rhs, launch, flag, p.exec.stream());
  if (!flag) return -1;
  int h = 0;
  cuda_backend::copy_on_stream(&h, flag, sizeof(int), cuda_backend::Copy::device_to_host, p.exec.stream());
  return h != cuda_backend::kNoBadNeuron ? h : -1;
}

namespace {

std::vector<int> sizes_of(const HinesBatch& b) {
  std::vector<int> sizes(b.topology_of.size());
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const int t = b.topology_of[s];
    detail::require(t >= 0 && t < static_cast<int>(b.topologies.size()),
                    "HinesPlan: topology_of[" + std::to_string(s) + "] = " + std::to_string(t) + " must lie in [0, " +
                        std::to_string(b.topologies.size()) + ")");
    sizes[s] = b.topologies[static_cast<std::size_t>(t)].size();
  }
  return sizes;
}

VariableBatchPlan make_batch(const Executor& exec, const HinesBatch& b, const HinesOptions& o) {
  detail::require(o.chunk_width >= 1 && o.chunk_width <= 1024,
                  "HinesPlan: chunk_width = " + std::to_string(o.chunk_width) + " must lie in [1, 1024]");
  const std::vector<int> sizes = sizes_of(b);
  VariableBatchOptions vo;
  vo.chunk_width = o.chunk_width;
  return VariableBatchPlan(exec, BatchSizes{sizes.data(), static_cast<index_t>(sizes.size()), -1}, vo);
}

template <class V>
std::size_t bytes_of(const std::vector<V>& v) {
  return (v.size() * sizeof(V) + 255) / 256 * 256;
}

// Kernel <-> layout / executor rules; returns an empty string when allowed.
std::string kernel_refusal(HinesKernel k, detail::HinesLayoutKind layout, const Executor& exec) {
  using L = detail::HinesLayoutKind;
  const bool host = exec.is_host();
  switch (k) {
    case HinesKernel::automatic: return {};
    case HinesKernel::reference:
    case HinesKernel::cpu_scalar: return host ? "" : "runs on a host executor only";
    case HinesKernel::cpu_vector:
      if (!host) return "runs on a host executor only";
      return layout == L::sorted ? "" : "needs the SortedInterleaved layout";
    case HinesKernel::cuda_paper: return host ? "runs on a CUDA executor only" : "";
    case HinesKernel::cuda_block_shared:
    case HinesKernel::cuda_stack:
      if (host) return "runs on a CUDA executor only";
      return layout == L::sorted ? "" : "needs the SortedInterleaved layout";
    case HinesKernel::cuda_branch:
      if (host) return "runs on a CUDA executor only";
      return layout == L::compact ? "" : "needs the CompactBatch layout";
  }
  return "is unknown";
}

}  // namespace

// Automatic choices on CUDA (from the H100 run of bench_cuda_hines, docs/hines.md).
constexpr int kStackMinThreads = 128;      // neurons per block the stack kernel needs to pay
constexpr index_t kStackMaxNeurons = 65536;  // beyond: one thread per neuron streams faster
constexpr index_t kBranchMaxNeurons = 65536;  // PassiveNeurons: one block per neuron up to here

namespace detail::hines {
// One block per neuron (CompactBatch, cuda_branch) for populations too small to fill the GPU with
// one thread per neuron (1.5-12x faster at 256-25,600 neurons: bench_cuda_hines on the H100),
// except small trees in batches the stack kernel serves better; size-sorted chunks otherwise. For
// large cells (>= 1,024 compartments) one thread per neuron walks a chain of thousands of
// dependent steps, so its time hardly grows with the count (the two real cells on an H200, runs
// s53/1 and s53/5: 3.1-4.2 ms from 2,560 to 32,768 neurons) while one block per neuron grows
// linearly (fp64 0.083-0.104 ns a compartment, fp32 0.041-0.050): the sorted layout from 12,288
// neurons in fp64 (there 0.070-0.074 against 0.083-0.104 ns; at 8,192 the dense cell's branch
// kernel was still 1.28x faster) and from 24,576 in fp32 (0.035-0.037 against 0.040-0.049; at
// 16,384 the dense cell's branch kernel 1.30x faster, the sparse cell's level).
bool gpu_population_compact(int max_size, index_t neurons, std::size_t value_size, int device) {
  if (max_size >= 1024) return neurons < (value_size == 4 ? 24576 : 12288);
  const bool small_trees = kStackMinThreads <= cuda_backend::hines_stack_threads(max_size, value_size, device);
  return neurons <= kBranchMaxNeurons && !(small_trees && neurons > 8192);
}
}  // namespace detail::hines

// The automatic kernel of a plan (HinesKernel::automatic).
template <class T>
static HinesKernel choose_kernel(const typename HinesPlan<T>::Impl& p) {
  using L = detail::HinesLayoutKind;
  // Host: SIMD lanes across a chunk's neurons, except for batches too small to fill lanes
  // (bench_hines_neuron: below 4 neurons the scalar kernel wins, docs/hines.md).
  if (p.exec.is_host())
    return p.layout == L::sorted && p.neurons.count() >= detail::hines::kHostCompactBelow ? HinesKernel::cpu_vector
                                                                                          : HinesKernel::cpu_scalar;
  const int max_size = p.batch.max_size();
  switch (p.layout) {
    case L::sorted:
      // The stack kernel keeps 2 values per compartment per neuron in shared memory, so a
      // block (one per SM) holds few neurons. On the H100 (bench_cuda_hines, docs/hines.md)
      // it beat the block-interleaved paper kernel only for small trees (>= 128 neurons per
      // block: 76 compartments) and moderate batches (25,600: 1.3x fp64, 2x fp32); at
      // 256,000 neurons the paper kernel streams faster, and for larger trees the stack
      // kernel is 2-8x slower. Since stop 52's paper kernel (8 values a compartment, no
      // division in the substitution; H200 run s52/1) that holds in fp32 only (25,600 small
      // trees: stack 0.0196-0.0204 ns, paper 0.0221-0.0234); in fp64 the paper kernel is
      // faster there (0.0319-0.0363 against 0.046) and within 8% either way below.
      return sizeof(T) == 4 &&
                     kStackMinThreads <= cuda_backend::hines_stack_threads(max_size, sizeof(T), p.exec.device()) &&
                     p.neurons.count() <= kStackMaxNeurons
                 ? HinesKernel::cuda_stack
                 : HinesKernel::cuda_paper;
    case L::compact:
      // One block per neuron: the block stages its neuron with coalesced loads, so the solve
      // reads each input once and writes the solution once (bench_cuda_hines).
      return HinesKernel::cuda_branch;
    case L::padded: return HinesKernel::cuda_paper;
  }
  return HinesKernel::cuda_paper;
}

template <class T>
static void build(typename HinesPlan<T>::Impl& p) {
  const HinesBatch& b = p.neurons;
  const index_t count = b.count();
  detail::require(!b.topologies.empty() || count == 0, "HinesPlan: the batch has neurons but no topologies");
  const std::string refusal = kernel_refusal(p.options.kernel, p.layout, p.exec);
  detail::require(refusal.empty(), std::string("HinesPlan: kernel ") + hines_kernel_name(p.options.kernel) + " " +
                                       refusal + " (or choose HinesKernel::automatic)");
  detail::require(p.options.threads_per_block >= 0 && p.options.threads_per_block <= 1024,
                  "HinesPlan: threads_per_block = " + std::to_string(p.options.threads_per_block) +
                      " must lie in [0, 1024]");
  // Trees: parents and branch schedules concatenated.
  std::vector<index_t> tree_base;
  for (const HinesTopology& t : b.topologies) {
    const HinesTopology::Data& d = t.data();
    tree_base.push_back(static_cast<index_t>(p.parents.size()));
    p.parents.insert(p.parents.end(), d.parent.begin(), d.parent.end());
    detail::HinesTreeSchedule s;
    s.branches = static_cast<int>(d.start.size());
    s.up_levels = static_cast<int>(d.up_level.size()) - 1;
    s.down_levels = static_cast<int>(d.down_level.size()) - 1;
    s.branch_base = static_cast<int>(p.branch_start.size());
    s.child_first_base = static_cast<int>(p.child_first.size());
    s.child_base = static_cast<int>(p.child_node.size());
    s.up_level_base = static_cast<int>(p.up_level.size());
    s.down_level_base = static_cast<int>(p.down_level.size());
    p.schedules.push_back(s);
    p.branch_start.insert(p.branch_start.end(), d.start.begin(), d.start.end());
    p.branch_end.insert(p.branch_end.end(), d.end.begin(), d.end.end());
    p.down_order.insert(p.down_order.end(), d.down_order.begin(), d.down_order.end());
    p.child_first.insert(p.child_first.end(), d.child_first.begin(), d.child_first.end());
    p.child_node.insert(p.child_node.end(), d.child_node.begin(), d.child_node.end());
    p.up_level.insert(p.up_level.end(), d.up_level.begin(), d.up_level.end());
    p.down_level.insert(p.down_level.end(), d.down_level.begin(), d.down_level.end());
  }
  p.sizes = sizes_of(b);
  p.tree_of = b.topology_of;
  p.parent_base.resize(static_cast<std::size_t>(count));
  for (index_t s = 0; s < count; ++s) p.parent_base[static_cast<std::size_t>(s)] = tree_base[static_cast<std::size_t>(p.tree_of[static_cast<std::size_t>(s)])];

  const VariableBatchView& hv = p.batch.host_view();
  detail::HinesView& v = p.host;
  v.count = count;
  v.max_size = p.batch.max_size();
  v.layout = p.layout;
  v.stride = p.layout == detail::HinesLayoutKind::padded ? v.stride : 0;
  v.chunk_width = hv.chunk_width;
  v.chunk_offsets = hv.chunk_offsets;
  v.order = hv.order;
  v.position = hv.position;
  v.trees = static_cast<int>(b.topologies.size());
  v.sizes = p.sizes.data();
  v.parents = p.parents.data();
  v.parent_base = p.parent_base.data();
  v.tree_of = p.tree_of.data();
  v.offsets = p.offsets.data();
  v.schedules = p.schedules.data();
  v.branch_start = p.branch_start.data();
  v.branch_end = p.branch_end.data();
  v.child_first = p.child_first.data();
  v.child_node = p.child_node.data();
  v.up_level = p.up_level.data();
  v.down_order = p.down_order.data();
  v.down_level = p.down_level.data();

  if (p.exec.is_cuda()) {
    const cuda_backend::DeviceGuard guard(p.exec.device());  // the caller's device back on return
    // One device allocation holding copies of the host arrays (256-byte aligned pieces).
    std::size_t total = 0;
    auto room = [&](std::size_t bytes) { total += bytes; };
    room(bytes_of(p.offsets));
    room(bytes_of(p.sizes));
    room(bytes_of(p.parents));
    room(bytes_of(p.parent_base));
    room(bytes_of(p.tree_of));
    room(bytes_of(p.schedules));
    for (auto* a : {&p.branch_start, &p.branch_end, &p.child_first, &p.child_node, &p.up_level, &p.down_order,
                    &p.down_level})
      room(bytes_of(*a));
    p.device_storage = detail::Storage(std::max<std::size_t>(total, 256), p.exec);
    std::vector<unsigned char> staging(total, 0);
    char* base = static_cast<char*>(p.device_storage.get());
    std::size_t at = 0;
    auto put = [&](const auto& vec) {
      const std::size_t bytes = vec.size() * sizeof(vec[0]);
      if (bytes) std::memcpy(staging.data() + at, vec.data(), bytes);
      void* dst = base + at;
      at += bytes_of(vec);
      return dst;
    };
    detail::HinesView d = v;
    d.offsets = static_cast<const index_t*>(put(p.offsets));
    d.sizes = static_cast<const int*>(put(p.sizes));
    d.parents = static_cast<const int*>(put(p.parents));
    d.parent_base = static_cast<const index_t*>(put(p.parent_base));
    d.tree_of = static_cast<const int*>(put(p.tree_of));
    d.schedules = static_cast<const detail::HinesTreeSchedule*>(put(p.schedules));
    d.branch_start = static_cast<const int*>(put(p.branch_start));
    d.branch_end = static_cast<const int*>(put(p.branch_end));
    d.child_first = static_cast<const int*>(put(p.child_first));
    d.child_node = static_cast<const int*>(put(p.child_node));
    d.up_level = static_cast<const int*>(put(p.up_level));
    d.down_order = static_cast<const int*>(put(p.down_order));
    d.down_level = static_cast<const int*>(put(p.down_level));
    if (total) detail::copy_bytes(base, MemorySpace::device, staging.data(), MemorySpace::host, total, p.exec.stream());
    const VariableBatchView& dv = p.batch.view();
    d.chunk_offsets = dv.chunk_offsets;
    d.order = dv.order;
    d.position = dv.position;
    p.device = d;
    p.flag = Array<int>(1, p.exec);
  } else {
    p.device = v;
  }
  if (p.layout == detail::HinesLayoutKind::sorted && count > 0) {
    const index_t W = hv.chunk_width;
    for (index_t slot = 0; slot < count; slot += W) {
      const int rows = p.sizes[static_cast<std::size_t>(hv.order[slot])];
      if (p.range_rows.empty() || 2 * rows <= p.range_rows.back()) {
        p.range_first.push_back(slot);
        p.range_rows.push_back(rows);
      }
    }
    p.range_first.push_back(count);
  }
  p.kernel = p.options.kernel == HinesKernel::automatic ? choose_kernel<T>(p) : p.options.kernel;
  using Impl = typename HinesPlan<T>::Impl;
  switch (p.kernel) {
    case HinesKernel::reference: p.run = &Impl::run_reference; break;
    case HinesKernel::cpu_vector: p.run = &Impl::run_vector; break;
    case HinesKernel::cpu_scalar: p.run = &Impl::run_scalar; break;
    default: p.run = &Impl::run_cuda; break;  // kernel_refusal: the cuda_* kernels only on a CUDA executor
  }
}

template <class T>
HinesPlan<T>::HinesPlan(const Executor& exec, const HinesBatch& batch, const CompactBatch& layout, HinesOptions options)
    : impl_(std::make_unique<Impl>(exec, batch, options, make_batch(exec, batch, options))) {
  Impl& p = *impl_;
  p.layout = detail::HinesLayoutKind::compact;
  const detail::CompactGeometry g =
      detail::compact_geometry(p.batch, layout, [](int n) { return static_cast<index_t>(n); }, "HinesPlan");
  p.offsets = g.offsets;
  p.span = g.span;
  build<T>(p);
}

template <class T>
HinesPlan<T>::HinesPlan(const Executor& exec, const HinesBatch& batch, const PaddedInterleaved& layout,
                        HinesOptions options)
    : impl_(std::make_unique<Impl>(exec, batch, options, make_batch(exec, batch, options))) {
  Impl& p = *impl_;
  p.layout = detail::HinesLayoutKind::padded;
  const index_t count = batch.count();
  const index_t stride = layout.stride == 0 ? count : layout.stride;
  const index_t rows = layout.rows == 0 ? p.batch.max_size() : layout.rows;
  detail::require(stride >= count, "HinesPlan: PaddedInterleaved stride = " + std::to_string(stride) +
                                       " must be >= the neuron count " + std::to_string(count));
  detail::require(rows >= p.batch.max_size(), "HinesPlan: PaddedInterleaved rows = " + std::to_string(rows) +
                                                  " must be >= the largest neuron " +
                                                  std::to_string(p.batch.max_size()));
  p.span = count == 0 ? 0 : (rows - 1) * stride + count;
  p.host.stride = stride;
  build<T>(p);
  p.host.stride = stride;
  p.device.stride = stride;
}

template <class T>
HinesPlan<T>::HinesPlan(const Executor& exec, const HinesBatch& batch, const SortedInterleaved& layout,
                        HinesOptions options)
    : impl_(std::make_unique<Impl>(exec, batch, options, make_batch(exec, batch, options))) {
  Impl& p = *impl_;
  p.layout = detail::HinesLayoutKind::sorted;
  p.span = p.batch.span(layout);
  build<T>(p);
}

template <class T>
HinesPlan<T>::~HinesPlan() = default;
template <class T>
HinesPlan<T>::HinesPlan(HinesPlan&&) noexcept = default;
template <class T>
HinesPlan<T>& HinesPlan<T>::operator=(HinesPlan&&) noexcept = default;

template <class T>
HinesKernel HinesPlan<T>::kernel() const {
  return impl_->kernel;
}
template <class T>
index_t HinesPlan<T>::span() const {
  return impl_->span;
}
template <class T>
const VariableBatchPlan& HinesPlan<T>::batch() const {
  return impl_->batch;
}
template <class T>
const HinesBatch& HinesPlan<T>::neurons() const {
  return impl_->neurons;
}

template <class T>
const detail::HinesView& HinesPlan<T>::view() const {
  return impl_->device;
}

template <class T>
index_t HinesPlan<T>::index(index_t s, int k) const {
  const Impl& p = *impl_;
  if (s < 0 || s >= p.neurons.count())
    throw InvalidArgument("HinesPlan::index: neuron " + std::to_string(s) + " out of range [0, " +
                          std::to_string(p.neurons.count()) + ")");
  if (k < 0 || k >= p.sizes[static_cast<std::size_t>(s)])
    throw InvalidArgument("HinesPlan::index: element " + std::to_string(k) + " out of range [0, " +
                          std::to_string(p.sizes[static_cast<std::size_t>(s)]) + ") of neuron " + std::to_string(s));
  return cpu::hines_address(p.host, cpu::hines_slot(p.host, s), k);
}

template <class T>
void HinesPlan<T>::solve(const T* offdiag, T* diag, T* rhs) {
  Impl& p = *impl_;
  if (p.neurons.count() == 0) return;
  // Messages are built only on failure: at one small cell per plan, building them every solve
  // cost as much as the solve (bench_hines_neuron).
  if (!(offdiag && diag && rhs)) throw InvalidArgument("HinesPlan::solve: offdiag, diag and rhs must not be null");
  const bool dev = p.exec.is_cuda();
  for (const void* ptr : {static_cast<const void*>(offdiag), static_cast<const void*>(diag), static_cast<const void*>(rhs)})
    if (cuda_backend::is_device_pointer(ptr) != dev)
      throw InvalidArgument(std::string("HinesPlan::solve: an array is in ") + (dev ? "host" : "device") +
                            " memory but the plan's executor is " + p.exec.name() +
                            "; pass arrays in the executor's memory space");
  const index_t bad = p.run(p, offdiag, diag, rhs);
  if (bad >= 0)
    throw SingularSystem("HinesPlan::solve: zero or non-finite pivot in neuron " + std::to_string(bad) + " (kernel " +
                         hines_kernel_name(p.kernel) +
                         "); its matrix is singular or has non-finite entries (check diag > 0 and the assembly)", bad);
}

template class HinesPlan<float>;
template class HinesPlan<double>;

// --- PassiveNeurons ---------------------------------------------------------------------------

template <class T>
struct PassiveNeurons<T>::Impl {
  Executor exec = Executor::host();
  double dt = 0, time = 0;
  std::vector<Compartments> cells;
  std::vector<int> cell_of;
  std::unique_ptr<HinesPlan<T>> plan;
  Array<T> offdiag, d0, cdt, ge, v, diag;
  bool check_pivots = true;
  std::map<std::pair<index_t, int>, double> currents;  // (neuron, node) -> nA
  bool currents_dirty = true;
  std::vector<index_t> stim_pos;
  std::vector<T> stim_amp;
  Array<index_t> stim_pos_dev;
  Array<T> stim_amp_dev;
  // Host, automatic kernel: each tree's constant matrix factored once (solvers/cpu/hines_split.hpp);
  // a step is the assembly of the rhs and two sweeps of multiply-adds per neuron.
  bool split = false;
  std::vector<cpu::HinesSplit<T>> trees;
  std::vector<cpu::HinesSplitWork<T>> work;  // per thread
  std::vector<index_t> order, offsets;       // compact layout: order[j] = neuron at place j, neuron s at offsets[s]
  void step_split(int steps);
  // The step's backend, chosen once in the constructor: the currents where the assembly
  // reads them, and the assembly of diag and rhs.
  struct Backend {
    void (*upload_currents)(Impl&);
    void (*assemble)(Impl&, index_t span, int nstim);
  };
  const Backend* backend = nullptr;
  static void upload_host(Impl&) {}
  static void upload_cuda(Impl& p) {
    if (p.stim_pos.empty()) return;
    p.stim_pos_dev = Array<index_t>(static_cast<index_t>(p.stim_pos.size()), p.exec);
    p.stim_amp_dev = Array<T>(static_cast<index_t>(p.stim_amp.size()), p.exec);
    p.stim_pos_dev.copy_from_host(p.stim_pos.data());
    p.stim_amp_dev.copy_from_host(p.stim_amp.data());
  }
  static void assemble_host(Impl& p, index_t span, int nstim) {
    cpu::hines_assemble<T>(span, p.d0.data(), p.cdt.data(), p.ge.data(), p.diag.data(), p.v.data(),
                           p.stim_pos.data(), p.stim_amp.data(), nstim, p.exec.threads());
  }
  static void assemble_cuda(Impl& p, index_t span, int nstim) {
    const cuda_backend::DeviceGuard guard(p.exec.device());
    cuda_backend::hines_assemble<T>(span, p.d0.data(), p.cdt.data(), p.ge.data(), p.diag.data(), p.v.data(),
                                    nstim ? p.stim_pos_dev.data() : nullptr, nstim ? p.stim_amp_dev.data() : nullptr,
                                    nstim, p.exec.stream());
  }
  static constexpr Backend kHost{&upload_host, &assemble_host};
  static constexpr Backend kCuda{&upload_cuda, &assemble_cuda};
};

template <class T>
PassiveNeurons<T>::PassiveNeurons(const Executor& exec, std::vector<Compartments> cells, std::vector<int> cell_of,
                                  double dt, HinesOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  detail::require(std::isfinite(dt) && dt > 0, "PassiveNeurons: dt = " + num(dt) + " ms must be > 0");
  detail::require(!cells.empty(), "PassiveNeurons: no cells");
  p.exec = exec;
  p.backend = exec.is_cuda() ? &Impl::kCuda : &Impl::kHost;
  p.dt = dt;
  p.cells = std::move(cells);
  p.cell_of = std::move(cell_of);
  HinesBatch batch;
  std::vector<HinesMatrix> mats;
  for (const Compartments& c : p.cells) {
    batch.topologies.emplace_back(c.parent);
    mats.push_back(implicit_euler_matrix(c, dt));
  }
  batch.topology_of = p.cell_of;
  int max_size = 0;
  for (const Compartments& c : p.cells) max_size = std::max(max_size, c.size());
  // On a GPU: detail::hines::gpu_population_compact (above).
  const index_t neurons = static_cast<index_t>(p.cell_of.size());
  const bool branch =
      exec.is_cuda() && detail::hines::gpu_population_compact(max_size, neurons, sizeof(T), exec.device());
  p.split = exec.is_host() && options.kernel == HinesKernel::automatic &&
            std::all_of(p.cell_of.begin(), p.cell_of.end(),
                        [&](int c) { return c >= 0 && c < static_cast<int>(p.cells.size()); });  // else the plan says why
  if (p.split) {
    // The split solve: the compact layout with the neurons of one tree side by side.
    std::vector<int> sizes;
    for (const Compartments& c : p.cells) sizes.push_back(c.size());
    cpu::hines_tree_order(p.cell_of, sizes, p.order, p.offsets);
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{p.offsets.data()}, options);
  } else if (exec.is_cuda() && branch && options.kernel == HinesKernel::automatic)
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else if (options.kernel == HinesKernel::cuda_branch)
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else if (options.kernel == HinesKernel::cpu_scalar || options.kernel == HinesKernel::reference ||
           options.kernel == HinesKernel::cuda_paper || (exec.is_host() && options.kernel == HinesKernel::automatic))
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, CompactBatch{}, options);
  else
    p.plan = std::make_unique<HinesPlan<T>>(exec, batch, SortedInterleaved{}, options);
  const index_t span = p.plan->span();
  std::vector<T> off(static_cast<std::size_t>(span), T(0)), d0(off), cdt(off), ge(off), v(off);
  for (index_t s = 0; s < batch.count(); ++s) {
    const int c = p.cell_of[static_cast<std::size_t>(s)];
    const Compartments& cell = p.cells[static_cast<std::size_t>(c)];
    const HinesMatrix& m = mats[static_cast<std::size_t>(c)];
    for (int k = 0; k < cell.size(); ++k) {
      const std::size_t i = static_cast<std::size_t>(p.plan->index(s, k));
      const std::size_t kk = static_cast<std::size_t>(k);
      off[i] = static_cast<T>(m.offdiag[kk]);
      d0[i] = static_cast<T>(m.diag[kk]);
      cdt[i] = static_cast<T>(cell.capacitance[kk] / dt);
      ge[i] = static_cast<T>(cell.leak[kk] * cell.e_leak);
      v[i] = static_cast<T>(cell.e_leak);
    }
  }
  auto upload = [&](Array<T>& a, const std::vector<T>& h) {
    a = Array<T>(std::max<index_t>(span, 1), exec);
    if (span) a.copy_from_host(h.data());
  };
  upload(p.offdiag, off);
  upload(p.d0, d0);
  upload(p.cdt, cdt);
  upload(p.ge, ge);
  upload(p.v, v);
  p.diag = Array<T>(std::max<index_t>(span, 1), exec);
  if (p.split) {
    for (std::size_t c = 0; c < p.cells.size(); ++c)
      p.trees.push_back(cpu::hines_split<T>(p.cells[c].parent, mats[c].offdiag, mats[c].diag, {}));
    p.work.resize(static_cast<std::size_t>(std::max(1, exec.threads() > 0 ? exec.threads() : omp_get_max_threads())));
  }
  p.check_pivots = options.check_pivots;
}

template <class T>
PassiveNeurons<T>::~PassiveNeurons() = default;
template <class T>
PassiveNeurons<T>::PassiveNeurons(PassiveNeurons&&) noexcept = default;
template <class T>
PassiveNeurons<T>& PassiveNeurons<T>::operator=(PassiveNeurons&&) noexcept = default;

template <class T>
void PassiveNeurons<T>::set_voltage(double value) {
  Impl& p = *impl_;
  detail::require(std::isfinite(value), "PassiveNeurons::set_voltage: v = " + num(value) + " must be finite");
  const index_t span = p.plan->span();
  std::vector<T> v(static_cast<std::size_t>(span), T(0));
  for (index_t s = 0; s < count(); ++s) {
    const int n = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(s)])].size();
    for (int k = 0; k < n; ++k) v[static_cast<std::size_t>(p.plan->index(s, k))] = static_cast<T>(value);
  }
  if (span) p.v.copy_from_host(v.data());
}

template <class T>
void PassiveNeurons<T>::set_current(index_t neuron, int compartment, double nA) {
  Impl& p = *impl_;
  detail::require(std::isfinite(nA), "PassiveNeurons::set_current: " + num(nA) + " nA must be finite");
  const index_t i = p.plan->index(neuron, compartment);  // validates both
  (void)i;
  if (nA == 0)
    p.currents.erase({neuron, compartment});
  else
    p.currents[{neuron, compartment}] = nA;
  p.currents_dirty = true;
}

template <class T>
void PassiveNeurons<T>::clear_currents() {
  impl_->currents.clear();
  impl_->currents_dirty = true;
}

template <class T>
void PassiveNeurons<T>::step(int steps) {
  Impl& p = *impl_;
  detail::require(steps >= 0, "PassiveNeurons::step: steps = " + std::to_string(steps) + " must be >= 0");
  if (p.currents_dirty) {
    p.stim_pos.clear();
    p.stim_amp.clear();
    for (const auto& [at, nA] : p.currents) {
      p.stim_pos.push_back(p.plan->index(at.first, at.second));
      p.stim_amp.push_back(static_cast<T>(nA));
    }
    p.backend->upload_currents(p);
    p.currents_dirty = false;
  }
  if (p.split) return p.step_split(steps);
  const index_t span = p.plan->span();
  const int nstim = static_cast<int>(p.stim_pos.size());
  for (int k = 0; k < steps; ++k) {
    p.backend->assemble(p, span, nstim);
    p.plan->solve(p.offdiag.data(), p.diag.data(), p.v.data());
    p.time += p.dt;
  }
}

template <class T>
void PassiveNeurons<T>::Impl::step_split(int steps) {
  Impl& p = *this;
  const index_t span = p.plan->span(), count = static_cast<index_t>(p.cell_of.size());
  const int nstim = static_cast<int>(p.stim_pos.size());
  const int* tree_of = p.cell_of.data();
  const index_t* offsets = p.offsets.data();
  const index_t* order = p.order.data();
  const T *cdt = p.cdt.data(), *ge = p.ge.data();
  const index_t* stim_pos = p.stim_pos.data();
  const T* stim_amp = p.stim_amp.data();
  T* v = p.v.data();
  T* d = p.diag.data();
  // Threads only where each has enough work (a parallel region costs as much as a small cell's step).
  const int team = span > 32768 ? static_cast<int>(p.work.size()) : 1;
  index_t bad = -1;
  auto range = [&](int t, int team_size, int k) {
    // The neurons at places [first, last) of this thread: assemble their rhs, add the currents that fall in
    // them, solve.
    const index_t first = count * t / team_size, last = count * (t + 1) / team_size;
    const index_t lo = offsets[order[first]], hi = last < count ? offsets[order[last]] : span;
    cpu::HinesSplitWork<T>& w = p.work[static_cast<std::size_t>(t)];
    w.prepare(p.trees);
    index_t b = -1;
    for (int step = 0; step < k; ++step) {
#pragma omp simd
      for (index_t i = lo; i < hi; ++i) v[i] = cdt[i] * v[i] + ge[i];
      for (int q = 0; q < nstim; ++q)
        if (stim_pos[q] >= lo && stim_pos[q] < hi) v[stim_pos[q]] += stim_amp[q];
      const index_t bs = cpu::hines_split_solve<T>(p.trees, w, tree_of, order, offsets, first, last, d, v);
      if (bs >= 0 && b < 0) b = bs;
    }
    return b;
  };
  if (team > 1) {
    // Neurons are independent: each thread runs all the steps on its own neurons.
#pragma omp parallel num_threads(team) reduction(max : bad)
    {
      const index_t b = range(omp_get_thread_num(), omp_get_num_threads(), steps);
      if (b >= 0) bad = std::max(bad, b);  // one bad neuron is enough to report
    }
  } else {
    bad = range(0, 1, steps);
  }
  for (int k = 0; k < steps; ++k) p.time += p.dt;  // as the other path adds it
  if (bad >= 0 && p.check_pivots)
    throw SingularSystem("PassiveNeurons::step: zero or non-finite pivot in neuron " + std::to_string(bad) +
                             "; its matrix is singular or has non-finite entries (check the cell's parameters)",
                         bad);
}

template <class T>
double PassiveNeurons<T>::time() const {
  return impl_->time;
}
template <class T>
double PassiveNeurons<T>::dt() const {
  return impl_->dt;
}
template <class T>
index_t PassiveNeurons<T>::count() const {
  return static_cast<index_t>(impl_->cell_of.size());
}
template <class T>
const HinesPlan<T>& PassiveNeurons<T>::plan() const {
  return *impl_->plan;
}

template <class T>
std::vector<T> PassiveNeurons<T>::voltages() const {
  const Impl& p = *impl_;
  const index_t span = p.plan->span();
  std::vector<T> all(static_cast<std::size_t>(span));
  if (span) p.v.copy_to_host(all.data());
  std::vector<T> out;
  for (index_t s = 0; s < count(); ++s) {
    const int n = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(s)])].size();
    for (int k = 0; k < n; ++k) out.push_back(all[static_cast<std::size_t>(p.plan->index(s, k))]);
  }
  return out;
}

template <class T>
std::vector<double> PassiveNeurons<T>::voltage(index_t neuron) const {
  const Impl& p = *impl_;
  detail::require(neuron >= 0 && neuron < count(), "PassiveNeurons::voltage: neuron " + std::to_string(neuron) +
                                                       " out of range [0, " + std::to_string(count()) + ")");
  const index_t span = p.plan->span();
  std::vector<T> all(static_cast<std::size_t>(span));
  if (span) p.v.copy_to_host(all.data());
  const int n = p.cells[static_cast<std::size_t>(p.cell_of[static_cast<std::size_t>(neuron)])].size();
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = all[static_cast<std::size_t>(p.plan->index(neuron, k))];
  return out;
}

template class PassiveNeurons<float>;
template class PassiveNeurons<double>;

}  // namespace adi
