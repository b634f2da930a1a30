#include "adi/block_tridiagonal.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/cpu/block_thomas.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace {
struct BlockKernelName {
  BlockKernel kernel;
  const char* name;
};
constexpr BlockKernelName kBlockKernelNames[] = {
    {BlockKernel::automatic, "automatic"},
    {BlockKernel::reference, "reference"},
    {BlockKernel::cpu_block_thomas, "cpu_block_thomas"},
    {BlockKernel::cuda_block_thomas_shuffle, "cuda_block_thomas_shuffle"},
    {BlockKernel::cuda_block_thomas_shared, "cuda_block_thomas_shared"},
};

std::string str(index_t v) { return detail::number(v); }

std::string describe(const BlockStrides& s) {
  return "(row = " + str(s.row) + ", system0 = " + str(s.system0) + ", system1 = " + str(s.system1) +
         ", component = " + str(s.component) + ")";
}

// No two values of one family at the same address. Sufficient test for strided maps:
// sorted by stride, each stride must step over everything the smaller ones span.
bool disjoint(const BlockStrides& s, index_t values, const BlockLineSet& l) {
  struct Dim {
    index_t extent, stride;
  };
  std::vector<Dim> dims;
  for (Dim d : {Dim{values, s.component}, Dim{l.n, s.row}, Dim{l.count0, s.system0}, Dim{l.count1, s.system1}})
    if (d.extent > 1) dims.push_back(d);
  std::sort(dims.begin(), dims.end(), [](const Dim& x, const Dim& y) { return x.stride < y.stride; });
  index_t reach = 0;  // furthest offset the smaller strides reach
  for (const Dim& d : dims) {
    if (d.stride <= reach) return false;
    reach += (d.extent - 1) * d.stride;
  }
  return true;
}

void validate_strides(const BlockStrides& s, const char* family, index_t values, const BlockLineSet& l) {
  const std::string who = std::string("block layout: ") + family + " strides " + describe(s);
  detail::require(s.component >= 1, who + ": component must be >= 1");
  detail::require(l.n <= 1 || s.row >= 1, who + ": row must be >= 1 when n > 1");
  detail::require(l.count0 <= 1 || s.system0 >= 1, who + ": system0 must be >= 1 when count0 > 1");
  detail::require(l.count1 <= 1 || s.system1 >= 1, who + ": system1 must be >= 1 when count1 > 1");
  detail::require(disjoint(s, values, l),
                  who + " put two of the " + str(values) + " values per block row (M = " + str(l.m) +
                      ") of different rows, systems or components at the same address; array-of-"
                      "structures needs component = 1 and point strides >= " +
                      str(values) + ", structure-of-arrays needs component >= the span of one value's points");
}

index_t span_of(const BlockStrides& s, index_t values, const BlockLineSet& l) {
  if (l.n == 0 || l.systems() == 0) return 0;
  return (values - 1) * s.component + (l.n - 1) * s.row + (l.count0 - 1) * s.system0 +
         (l.count1 - 1) * s.system1 + 1;
}

void require_block_size(int m, const char* who) {
  detail::require(m >= kMinBlockSize && m <= kMaxBlockSize,
                  std::string(who) + ": block size m = " + detail::number(m) + " is not supported; use " +
                      detail::number(kMinBlockSize) + ".." + detail::number(kMaxBlockSize) +
                      " (a scalar system, m = 1, goes to adi::TridiagonalPlan)");
}
}  // namespace

const char* block_kernel_name(BlockKernel k) {
  for (const auto& e : kBlockKernelNames)
    if (e.kernel == k) return e.name;
  return "unknown";
}

BlockKernel block_kernel_from_name(const std::string& name) {
  std::string all;
  for (const auto& e : kBlockKernelNames) {
    if (name == e.name) return e.kernel;
    all += all.empty() ? "" : ", ";
    all += e.name;
  }
  throw InvalidArgument("unknown block tridiagonal kernel '" + name + "'; expected one of: " + all);
}

BlockLineSet to_block_lines(const BlockLineSet& l) {
  require_block_size(l.m, "BlockLineSet");
  detail::require(l.n >= 1, "BlockLineSet: n = " + str(l.n) + " block rows; must be >= 1");
  detail::require(l.count0 >= 0 && l.count1 >= 0, "BlockLineSet: system counts (" + str(l.count0) + ", " +
                                                      str(l.count1) + ") must be >= 0");
  validate_strides(l.vectors, "vector (d, u)", l.m, l);
  validate_strides(l.blocks, "block (A, B, C)", static_cast<index_t>(l.m) * l.m, l);
  detail::require(l.order == BlockOrder::row_major || l.order == BlockOrder::column_major,
                  "BlockLineSet: order = " + str(static_cast<int>(l.order)) +
                      " is not BlockOrder::row_major or BlockOrder::column_major");
  return l;
}

BlockLineSet to_block_lines(const BlockContiguous& s) {
  require_block_size(s.m, "BlockContiguous");
  const index_t m = s.m, mm = m * m;
  return to_block_lines(BlockLineSet{s.m, s.n, s.systems, 1, {m, s.n * m, 0, 1}, {mm, s.n * mm, 0, 1}, s.order});
}

BlockLineSet to_block_lines(const BlockInterleaved& s) {
  require_block_size(s.m, "BlockInterleaved");
  const index_t m = s.m, mm = m * m;
  return to_block_lines(
      BlockLineSet{s.m, s.n, s.systems, 1, {s.systems * m, m, 0, 1}, {s.systems * mm, mm, 0, 1}, s.order});
}

BlockLineSet to_block_lines(const BlockGridLines& g) {
  require_block_size(g.m, "BlockGridLines");
  detail::require(g.nx >= 1 && g.ny >= 1 && g.nz >= 1, "BlockGridLines: extents (" + str(g.nx) + ", " +
                                                           str(g.ny) + ", " + str(g.nz) + ") must all be >= 1");
  auto strides = [&](const PointArray& p) {
    switch (g.axis) {
      case Axis::x: return BlockStrides{p.sx, p.sy, p.sz, p.component};
      case Axis::y: return BlockStrides{p.sy, p.sx, p.sz, p.component};
      default: return BlockStrides{p.sz, p.sx, p.sy, p.component};
    }
  };
  for (const PointArray* p : {&g.vectors, &g.blocks})
    detail::require(p->sx >= 0 && p->sy >= 0 && p->sz >= 0,
                    "BlockGridLines: point strides (" + str(p->sx) + ", " + str(p->sy) + ", " + str(p->sz) +
                        ") must be >= 0");
  const index_t n = g.axis == Axis::x ? g.nx : g.axis == Axis::y ? g.ny : g.nz;
  const index_t c0 = g.axis == Axis::x ? g.ny : g.nx;
  const index_t c1 = g.axis == Axis::z ? g.ny : g.nz;
  return to_block_lines(BlockLineSet{g.m, n, c0, c1, strides(g.vectors), strides(g.blocks), g.order});
}

index_t vector_span(const BlockLineSet& l) { return span_of(l.vectors, l.m, l); }
index_t block_span(const BlockLineSet& l) { return span_of(l.blocks, static_cast<index_t>(l.m) * l.m, l); }

template <class T>
struct BlockTridiagonalPlan<T>::Impl {
  Executor exec = Executor::host();
  BlockLineSet lines;
  BlockTridiagonalOptions options;
  BlockKernel kernel = BlockKernel::automatic;
  double tol = 0;
  detail::Storage workspace;
  detail::Storage singular;  // device unsigned long long (CUDA only)
  // The backend, chosen once in the constructor from the executor and kernel: solves the
  // batch and returns the first singular pivot block's key (system * n + row), or -1.
  using Run = index_t (*)(Impl&, const BlockBands<T>&, const T*, T*);
  Run run = nullptr;

  void check_pointers(const BlockBands<T>& bands, const T* d, const T* u) const;
  void report(index_t key) const;
  static index_t run_reference(Impl& p, const BlockBands<T>& bands, const T* d, T* u) {
    return cpu::block_thomas_reference<T>(p.lines, bands.a, bands.b, bands.c, d, u, p.tol, p.options.periodic);
  }
  static index_t run_host(Impl& p, const BlockBands<T>& bands, const T* d, T* u) {
    return cpu::block_thomas<T>(p.lines, bands.a, bands.b, bands.c, d, u, p.tol, p.options.periodic,
                                p.workspace.get(), p.exec.threads());
  }
  static index_t run_cuda(Impl& p, const BlockBands<T>& bands, const T* d, T* u);
};

namespace {
bool is_host_kernel(BlockKernel k) { return k == BlockKernel::reference || k == BlockKernel::cpu_block_thomas; }

}  // namespace

template <class T>
void BlockTridiagonalPlan<T>::Impl::check_pointers(const BlockBands<T>& bands, const T* d, const T* u) const {
  const struct {
    const T* p;
    const char* name;
    index_t span;
  } ptrs[] = {{bands.a, "A", block_span(lines)},
              {bands.b, "B", block_span(lines)},
              {bands.c, "C", block_span(lines)},
              {d, "d", vector_span(lines)},
              {u, "u", vector_span(lines)}};
  for (const auto& q : ptrs) {
    if (q.p == nullptr)
      throw InvalidArgument(std::string("block tridiagonal solve: pointer ") + q.name +
                            " is null; pass an array of the layout's span (" + str(q.span) + " values)");
    if (reinterpret_cast<std::uintptr_t>(q.p) % alignof(T) != 0)
      throw InvalidArgument(std::string("block tridiagonal solve: pointer ") + q.name + " is not aligned to " +
                            detail::number(alignof(T)) + " bytes");
    const bool on_device = cuda_backend::is_device_pointer(q.p);
    if (on_device != exec.is_cuda())
      throw InvalidArgument(std::string("block tridiagonal solve: array ") + q.name + " is in " +
                            (on_device ? "device" : "host") + " memory but the executor is " + exec.name() +
                            "; pass " + (exec.is_host() ? "host" : "device") +
                            " arrays or change the executor");
  }
  const index_t nv = vector_span(lines);
  // The kernels read d after writing u: in place only when they are the same array.
  // (u sharing memory with A, B or C is not checked: a caller's structure may
  // legitimately interleave them; the header says they must not alias.)
  if (d != u && detail::arrays_overlap(d, nv, u, nv))
    throw InvalidArgument("block tridiagonal solve: u and d overlap without being equal; pass u == d for an "
                          "in-place solve or separate arrays");
}

template <class T>
void BlockTridiagonalPlan<T>::Impl::report(index_t key) const {
  if (key < 0) return;
  const index_t sys = key / lines.n, row = key % lines.n;
  throw SingularBlock("block tridiagonal solve (" + std::string(block_kernel_name(kernel)) +
                          "): the pivot block S_i = B_i - A_i C*_{i-1} of system " + str(sys) + " (l0 = " +
                          str(sys % std::max<index_t>(lines.count0, 1)) + ", l1 = " +
                          str(sys / std::max<index_t>(lines.count0, 1)) + ") at block row i = " + str(row) +
                          " is singular or nearly so (a pivot <= " + detail::number(tol) +
                          " * max|S_i|, or a non-finite value); block Thomas needs block diagonally dominant "
                          "systems",
                      sys, row);
}

template <class T>
BlockTridiagonalPlan<T>::BlockTridiagonalPlan(const Executor& exec, const BlockLineSet& lines_in,
                                              BlockTridiagonalOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& p = *impl_;
  p.exec = exec;
  p.lines = to_block_lines(lines_in);
  p.options = options;
  detail::check_pivot_tolerance(options.pivot_tolerance, "BlockTridiagonalOptions");
  p.tol = options.pivot_tolerance > 0 ? options.pivot_tolerance : 16 * std::numeric_limits<T>::epsilon();
  if (options.kernel == BlockKernel::automatic) {
    // Host: the Eigen kernel. Device: shuffles for every M (see solvers/cuda/README
    // block section for the measurements that set this).
    p.kernel = exec.is_host() ? BlockKernel::cpu_block_thomas : BlockKernel::cuda_block_thomas_shuffle;
  } else {
    if (is_host_kernel(options.kernel) != exec.is_host())
      throw InvalidArgument(std::string("BlockTridiagonalPlan: kernel ") + block_kernel_name(options.kernel) +
                            " cannot run on executor " + exec.name() + "; use BlockKernel::automatic or a " +
                            (exec.is_host() ? "host (reference, cpu_*)" : "cuda_*") + " kernel");
    p.kernel = options.kernel;
  }
  if (exec.is_host()) {
    p.run = p.kernel == BlockKernel::reference ? &Impl::run_reference : &Impl::run_host;
    if (p.kernel == BlockKernel::cpu_block_thomas)
      p.workspace = detail::Storage(
          cpu::block_thomas_workspace_bytes(p.lines, options.periodic, exec.threads(), sizeof(T)), exec);
  } else {
    p.run = &Impl::run_cuda;
    p.workspace =
        detail::Storage(cuda_backend::block_tridiagonal_workspace_bytes(p.kernel, p.lines, options.periodic,
                                                                        sizeof(T)),
                        exec);
    p.singular = detail::Storage(sizeof(unsigned long long), exec);
  }
}

template <class T>
BlockTridiagonalPlan<T>::~BlockTridiagonalPlan() = default;
template <class T>
BlockTridiagonalPlan<T>::BlockTridiagonalPlan(BlockTridiagonalPlan&&) noexcept = default;
template <class T>
BlockTridiagonalPlan<T>& BlockTridiagonalPlan<T>::operator=(BlockTridiagonalPlan&&) noexcept = default;

// The device backend: the key comes back from the device only when pivots are checked.
template <class T>
index_t BlockTridiagonalPlan<T>::Impl::run_cuda(Impl& p, const BlockBands<T>& bands, const T* d, T* u) {
  cuda_backend::DeviceGuard device_guard(p.exec.device());
  auto* flag = static_cast<unsigned long long*>(p.singular.get());  // the kernels always record
  const bool check = p.options.check_pivots;
  if (check) cuda_backend::memset_zero_async(flag, sizeof(unsigned long long), p.exec.stream());
  cuda_backend::block_tridiagonal_solve<T>(p.kernel, p.lines, bands.a, bands.b, bands.c, d, u, p.tol,
                                           p.options.periodic, p.workspace.get(), flag, p.exec.stream());
  if (!check) return -1;
  unsigned long long h = 0;
  cuda_backend::copy_on_stream(&h, flag, sizeof(h), cuda_backend::Copy::device_to_host, p.exec.stream());
  // The kernels record max(~0 - key) so that a zeroed flag means "none".
  return h != 0 ? static_cast<index_t>(~0ull - h) : -1;
}

template <class T>
void BlockTridiagonalPlan<T>::solve(const BlockBands<T>& bands, const T* d, T* u) {
  Impl& p = *impl_;
  p.check_pointers(bands, d, u);
  if (p.lines.systems() == 0) return;
  const index_t key = p.run(p, bands, d, u);
  if (p.options.check_pivots) p.report(key);
}

template <class T>
void BlockTridiagonalPlan<T>::solve(std::span<const T> a, std::span<const T> b, std::span<const T> c,
                                    std::span<const T> d, std::span<T> u) {
  const index_t nb = block_span(impl_->lines), nv = vector_span(impl_->lines);
  constexpr const char* who = "block tridiagonal solve";
  detail::require_length(a.size(), nb, who, "A");
  detail::require_length(b.size(), nb, who, "B");
  detail::require_length(c.size(), nb, who, "C");
  detail::require_length(d.size(), nv, who, "d");
  detail::require_length(u.size(), nv, who, "u");
  solve(BlockBands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
}

template <class T>
BlockKernel BlockTridiagonalPlan<T>::kernel() const {
  return impl_->kernel;
}
template <class T>
const BlockLineSet& BlockTridiagonalPlan<T>::lines() const {
  return impl_->lines;
}
template <class T>
const Executor& BlockTridiagonalPlan<T>::executor() const {
  return impl_->exec;
}
template <class T>
const BlockTridiagonalOptions& BlockTridiagonalPlan<T>::options() const {
  return impl_->options;
}
template <class T>
std::size_t BlockTridiagonalPlan<T>::workspace_bytes() const {
  return impl_->workspace.bytes();
}

template class BlockTridiagonalPlan<float>;
template class BlockTridiagonalPlan<double>;

}  // namespace adi
