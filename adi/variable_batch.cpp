#include "adi/variable_batch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "adi/error.hpp"
#include "adi/field.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

namespace detail {

template <class T>
std::vector<T> to_host(const T* p, index_t count, void* stream) {
  std::vector<T> h(static_cast<std::size_t>(count));
  if (count == 0) return h;
  const MemorySpace space = cuda_backend::is_device_pointer(p) ? MemorySpace::device : MemorySpace::host;
  copy_bytes(h.data(), MemorySpace::host, p, space, h.size() * sizeof(T), stream);
  return h;
}
template std::vector<int> to_host<int>(const int*, index_t, void*);
template std::vector<index_t> to_host<index_t>(const index_t*, index_t, void*);
template std::vector<const float*> to_host<const float*>(const float* const*, index_t, void*);
template std::vector<const double*> to_host<const double*>(const double* const*, index_t, void*);

}  // namespace detail

struct VariableBatchPlan::Impl {
  Executor exec = Executor::host();
  VariableBatchOptions options;
  index_t count = 0;
  int max_size = 0, min_size = 0;
  index_t total = 0;
  double build_seconds = 0;
  std::vector<int> sizes, chunk_rows;
  std::vector<index_t> order, position, offsets, chunk_offsets;
  std::vector<SizeBin> bins;
  VariableBatchView host, device;
  detail::Storage device_storage;  // one allocation holding the device copies
  int backend = 0;  // the row of the backend tables (kRelayout): 0 host, 1 CUDA; set once at construction
};

namespace {

// Sorted position -> system, sizes descending, ties in system order. A counting sort when
// the sizes are small next to the count (the usual case: 256k lines of <= 512, or 3000
// matrices of <= 512), a stable comparison sort otherwise.
std::vector<index_t> sort_by_size(const std::vector<int>& sizes, int max_size) {
  const index_t count = static_cast<index_t>(sizes.size());
  std::vector<index_t> order(sizes.size());
  if (static_cast<index_t>(max_size) <= 4 * count + 1024) {
    std::vector<index_t> start(static_cast<std::size_t>(max_size) + 2, 0);
    for (int n : sizes) ++start[static_cast<std::size_t>(max_size - n) + 1];
    for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
    for (index_t s = 0; s < count; ++s) order[start[max_size - sizes[s]]++] = s;
  } else {
    for (index_t s = 0; s < count; ++s) order[s] = s;
    std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) { return sizes[x] > sizes[y]; });
  }
  return order;
}

// Cuts the descending size order into size classes (edges: inclusive upper bounds,
// ascending; a last class up to the largest size is added when the edges stop short).
std::vector<SizeBin> make_bins(const std::vector<int>& sizes, const std::vector<index_t>& order, int max_size,
                               std::vector<int> edges) {
  if (edges.empty() || edges.back() < max_size) edges.push_back(max_size);
  std::vector<SizeBin> bins;
  index_t pos = static_cast<index_t>(order.size());  // from the smallest systems upwards
  for (int edge : edges) {
    SizeBin b;
    b.upper_bound = edge;
    index_t first = pos;
    while (first > 0 && sizes[order[first - 1]] <= edge) --first;
    b.first = first;
    b.count = pos - first;
    if (b.count > 0) {
      b.max_size = sizes[order[first]];
      b.min_size = sizes[order[pos - 1]];
    }
    bins.push_back(b);
    pos = first;
  }
  return bins;
}

template <class T>
std::size_t aligned_bytes(std::size_t n) {
  return (n * sizeof(T) + 63) / 64 * 64;
}

}  // namespace

VariableBatchPlan::VariableBatchPlan(const Executor& exec, const BatchSizes& in, VariableBatchOptions options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto p = std::make_shared<Impl>();
  p->exec = exec;
  p->options = options;
  cuda_backend::DeviceGuard device_guard(exec.device(), exec.is_cuda());  // copies and allocations on its GPU
  detail::require(in.count >= 0, "VariableBatchPlan: count = " + detail::number(in.count) + " must be >= 0");
  detail::require(in.count == 0 || in.sizes != nullptr,
                  "VariableBatchPlan: sizes is null with count = " + detail::number(in.count) +
                      "; pass an array of count sizes (host or device memory)");
  detail::require(options.chunk_width >= 1 && options.chunk_width <= 1024,
                  "VariableBatchPlan: chunk_width = " + detail::number(options.chunk_width) +
                      " must be in [1, 1024]");
  for (std::size_t i = 0; i < options.bin_edges.size(); ++i)
    detail::require(options.bin_edges[i] >= 0 && (i == 0 || options.bin_edges[i] > options.bin_edges[i - 1]),
                    "VariableBatchPlan: bin_edges must be non-negative and strictly ascending");
  p->backend = exec.is_cuda() ? 1 : 0;
  p->count = in.count;
  p->sizes = detail::to_host(in.sizes, in.count, exec.is_cuda() ? exec.stream() : nullptr);
  const int limit = options.max_supported;
  for (index_t s = 0; s < in.count; ++s) {
    const int n = p->sizes[s];
    if (n < 0)
      throw InvalidArgument("VariableBatchPlan: sizes[" + detail::number(s) + "] = " + detail::number(n) +
                            " is negative; sizes must be >= 0 (0 is an empty system)");
    if (in.max_size >= 0 && n > in.max_size)
      throw InvalidArgument("VariableBatchPlan: sizes[" + detail::number(s) + "] = " + detail::number(n) +
                            " is over the stated max_size = " + detail::number(in.max_size) +
                            "; raise max_size or pass -1 to let the plan find it");
    if (limit > 0 && n > limit)
      throw InvalidArgument("VariableBatchPlan: sizes[" + detail::number(s) + "] = " + detail::number(n) +
                            " is over the supported maximum " + detail::number(limit));
    p->max_size = std::max(p->max_size, n);
    p->total += n;
  }
  p->min_size = in.count ? *std::min_element(p->sizes.begin(), p->sizes.end()) : 0;

  p->order = sort_by_size(p->sizes, p->max_size);
  p->position.resize(p->order.size());
  for (index_t i = 0; i < in.count; ++i) p->position[p->order[i]] = i;
  p->offsets.assign(static_cast<std::size_t>(in.count) + 1, 0);
  for (index_t s = 0; s < in.count; ++s) p->offsets[s + 1] = p->offsets[s] + p->sizes[s];

  const int W = options.chunk_width;
  const index_t chunks = (in.count + W - 1) / W;
  p->chunk_rows.resize(chunks);
  p->chunk_offsets.assign(static_cast<std::size_t>(chunks) + 1, 0);
  for (index_t c = 0; c < chunks; ++c) {
    p->chunk_rows[c] = p->sizes[p->order[c * W]];  // the chunk's first system is its largest
    p->chunk_offsets[c + 1] = p->chunk_offsets[c] + static_cast<index_t>(W) * p->chunk_rows[c];
  }

  p->bins = make_bins(p->sizes, p->order, p->max_size, options.bin_edges);

  auto view_of = [&](const int* sizes, const index_t* order, const index_t* position, const index_t* offsets,
                     const index_t* chunk_offsets, const int* chunk_rows) {
    VariableBatchView v;
    v.count = in.count;
    v.max_size = p->max_size;
    v.chunk_width = W;
    v.chunks = chunks;
    v.total = p->total;
    v.sorted_span = p->chunk_offsets[chunks];
    v.sizes = sizes;
    v.order = order;
    v.position = position;
    v.offsets = offsets;
    v.chunk_offsets = chunk_offsets;
    v.chunk_rows = chunk_rows;
    return v;
  };
  p->host = view_of(p->sizes.data(), p->order.data(), p->position.data(), p->offsets.data(),
                    p->chunk_offsets.data(), p->chunk_rows.data());
  if (exec.is_cuda()) {
    const std::size_t nc = static_cast<std::size_t>(in.count), nk = static_cast<std::size_t>(chunks);
    const std::size_t b_sizes = aligned_bytes<int>(nc), b_idx = aligned_bytes<index_t>(nc),
                      b_off = aligned_bytes<index_t>(nc + 1), b_coff = aligned_bytes<index_t>(nk + 1),
                      b_rows = aligned_bytes<int>(nk);
    const std::size_t total = b_sizes + 2 * b_idx + b_off + b_coff + b_rows;
    p->device_storage = detail::Storage(std::max<std::size_t>(total, 64), exec);
    char* base = static_cast<char*>(p->device_storage.get());
    std::vector<char> staging(total, 0);
    std::size_t at = 0;
    auto put = [&](const void* src, std::size_t bytes, std::size_t room) {
      if (bytes) std::memcpy(staging.data() + at, src, bytes);
      void* dst = base + at;
      at += room;
      return dst;
    };
    const auto* d_sizes = static_cast<const int*>(put(p->sizes.data(), nc * sizeof(int), b_sizes));
    const auto* d_order = static_cast<const index_t*>(put(p->order.data(), nc * sizeof(index_t), b_idx));
    const auto* d_pos = static_cast<const index_t*>(put(p->position.data(), nc * sizeof(index_t), b_idx));
    const auto* d_off = static_cast<const index_t*>(put(p->offsets.data(), (nc + 1) * sizeof(index_t), b_off));
    const auto* d_coff =
        static_cast<const index_t*>(put(p->chunk_offsets.data(), (nk + 1) * sizeof(index_t), b_coff));
    const auto* d_rows = static_cast<const int*>(put(p->chunk_rows.data(), nk * sizeof(int), b_rows));
    detail::copy_bytes(base, MemorySpace::device, staging.data(), MemorySpace::host, total, exec.stream());
    p->device = view_of(d_sizes, d_order, d_pos, d_off, d_coff, d_rows);
  } else {
    p->device = p->host;
  }
  p->build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  impl_ = std::move(p);
}

const Executor& VariableBatchPlan::executor() const { return impl_->exec; }
const VariableBatchOptions& VariableBatchPlan::options() const { return impl_->options; }
index_t VariableBatchPlan::count() const { return impl_->count; }
int VariableBatchPlan::max_size() const { return impl_->max_size; }
int VariableBatchPlan::min_size() const { return impl_->min_size; }
index_t VariableBatchPlan::total_size() const { return impl_->total; }
double VariableBatchPlan::build_seconds() const { return impl_->build_seconds; }
const VariableBatchView& VariableBatchPlan::host_view() const { return impl_->host; }
const VariableBatchView& VariableBatchPlan::view() const { return impl_->device; }
const std::vector<SizeBin>& VariableBatchPlan::bins() const { return impl_->bins; }
std::vector<SizeBin> VariableBatchPlan::bins(const std::vector<int>& edges) const {
  for (std::size_t i = 0; i < edges.size(); ++i)
    detail::require(edges[i] >= 0 && (i == 0 || edges[i] > edges[i - 1]),
                    "VariableBatchPlan::bins: edges must be non-negative and strictly ascending");
  return make_bins(impl_->sizes, impl_->order, impl_->max_size, edges);
}

index_t VariableBatchPlan::span(const PaddedInterleaved& l) const {
  const index_t stride = l.stride ? l.stride : count();
  const index_t rows = l.rows ? l.rows : max_size();
  if (count() == 0 || rows == 0) return 0;
  return (rows - 1) * stride + count();
}

namespace {

void check_padded(const VariableBatchPlan& plan, const PaddedInterleaved& l, const char* who) {
  detail::require(l.stride == 0 || l.stride >= plan.count(),
                  std::string(who) + ": PaddedInterleaved stride = " + detail::number(l.stride) +
                      " must be 0 or >= the batch count " + detail::number(plan.count()));
  detail::require(l.rows == 0 || l.rows >= plan.max_size(),
                  std::string(who) + ": PaddedInterleaved rows = " + detail::number(l.rows) +
                      " must be 0 or >= the largest size " + detail::number(plan.max_size()));
}

index_t vector_elements(int n) { return n; }

// Host copy between SortedInterleaved and a user layout; `at(s, k)` gives the user index.
template <class T, class At>
void host_pack(const VariableBatchView& v, const T* src, T* dst, At at) {
  const int W = v.chunk_width;
#pragma omp parallel for schedule(dynamic, 16)
  for (index_t c = 0; c < v.chunks; ++c) {
    T* out = dst + v.chunk_offsets[c];
    for (int k = 0; k < v.chunk_rows[c]; ++k)
      for (int j = 0; j < W; ++j) {
        const index_t p = c * W + j;
        const index_t s = p < v.count ? v.order[p] : -1;
        out[static_cast<index_t>(k) * W + j] = (s >= 0 && k < v.sizes[s]) ? src[at(s, k)] : T(0);
      }
  }
}
template <class T, class At>
void host_unpack(const VariableBatchView& v, const T* src, T* dst, At at) {
  const int W = v.chunk_width;
#pragma omp parallel for schedule(dynamic, 16)
  for (index_t c = 0; c < v.chunks; ++c) {
    const T* in = src + v.chunk_offsets[c];
    for (int j = 0; j < W; ++j) {
      const index_t p = c * W + j;
      if (p >= v.count) break;
      const index_t s = v.order[p];
      for (int k = 0; k < v.sizes[s]; ++k) dst[at(s, k)] = in[static_cast<index_t>(k) * W + j];
    }
  }
}

template <class T>
void check_pack_pointers(const VariableBatchPlan& plan, const T* src, const T* dst, const char* who) {
  if (plan.count() == 0) return;
  detail::require(src != nullptr && dst != nullptr, std::string(who) + ": source or destination is null");
  const bool dev = plan.executor().is_cuda();
  for (const void* q : {static_cast<const void*>(src), static_cast<const void*>(dst)})
    detail::require(cuda_backend::is_device_pointer(q) == dev,
                    std::string(who) + ": arrays must be in the executor's memory (" + plan.executor().name() + ")");
}

// One copy between SortedInterleaved and a user layout: CompactBatch (`compact`: its
// offsets, or the plan's when they are null) or PaddedInterleaved with `stride`; to_sorted:
// pack, else unpack. Validated before; one implementation per backend, the plan's chosen
// at construction (VariableBatchPlan::Impl::backend).
struct Relayout {
  const CompactBatch* compact;
  index_t stride;
  bool to_sorted;
  const char* who;
};

template <class T>
void relayout_host(const VariableBatchPlan& plan, const T* src, T* dst, const Relayout& r) {
  const VariableBatchView& v = plan.host_view();
  auto run = [&](auto at) {
    if (r.to_sorted)
      host_pack(v, src, dst, at);
    else
      host_unpack(v, src, dst, at);
  };
  if (r.compact == nullptr) {
    const index_t stride = r.stride;
    run([&](index_t s, int k) { return k * stride + s; });
  } else if (r.compact->offsets == nullptr) {
    const index_t* off = v.offsets;
    run([&](index_t s, int k) { return off[s] + k; });
  } else {
    const auto g = detail::compact_geometry(plan, *r.compact, vector_elements, r.who);
    run([&](index_t s, int k) { return g.offsets[s] + k; });
  }
}

template <class T>
void relayout_cuda(const VariableBatchPlan& plan, const T* src, T* dst, const Relayout& r) {
  const Executor& exec = plan.executor();
  cuda_backend::DeviceGuard device_guard(exec.device());
  detail::Storage off;
  const index_t* d_off = r.compact ? plan.view().offsets : nullptr;
  if (r.compact && r.compact->offsets != nullptr) {
    const auto g = detail::compact_geometry(plan, *r.compact, vector_elements, r.who);
    off = detail::Storage(g.offsets.size() * sizeof(index_t), exec);
    detail::copy_bytes(off.get(), MemorySpace::device, g.offsets.data(), MemorySpace::host, off.bytes(),
                       exec.stream());
    d_off = static_cast<const index_t*>(off.get());
  }
  cuda_backend::variable_pack<T>(plan.view(), cuda_backend::VariableSource{d_off, r.compact ? 0 : r.stride}, src,
                                 dst, r.to_sorted, exec.stream());
  cuda_backend::synchronize(exec.stream());
}

template <class T>
using RelayoutFn = void (*)(const VariableBatchPlan&, const T*, T*, const Relayout&);
template <class T>
constexpr RelayoutFn<T> kRelayout[2] = {&relayout_host<T>, &relayout_cuda<T>};

}  // namespace

template <class T>
void VariableBatchPlan::pack(const T* src, const CompactBatch& layout, T* dst) const {
  check_pack_pointers(*this, src, dst, "VariableBatchPlan::pack");
  if (count() == 0) return;
  kRelayout<T>[impl_->backend](*this, src, dst, Relayout{&layout, 0, true, "VariableBatchPlan::pack"});
}

template <class T>
void VariableBatchPlan::pack(const T* src, const PaddedInterleaved& layout, T* dst) const {
  check_pack_pointers(*this, src, dst, "VariableBatchPlan::pack");
  check_padded(*this, layout, "VariableBatchPlan::pack");
  if (count() == 0) return;
  const index_t stride = layout.stride ? layout.stride : count();
  kRelayout<T>[impl_->backend](*this, src, dst, Relayout{nullptr, stride, true, "VariableBatchPlan::pack"});
}

template <class T>
void VariableBatchPlan::unpack(const T* src, T* dst, const CompactBatch& layout) const {
  check_pack_pointers(*this, src, dst, "VariableBatchPlan::unpack");
  if (count() == 0) return;
  kRelayout<T>[impl_->backend](*this, src, dst, Relayout{&layout, 0, false, "VariableBatchPlan::unpack"});
}

template <class T>
void VariableBatchPlan::unpack(const T* src, T* dst, const PaddedInterleaved& layout) const {
  check_pack_pointers(*this, src, dst, "VariableBatchPlan::unpack");
  check_padded(*this, layout, "VariableBatchPlan::unpack");
  if (count() == 0) return;
  const index_t stride = layout.stride ? layout.stride : count();
  kRelayout<T>[impl_->backend](*this, src, dst, Relayout{nullptr, stride, false, "VariableBatchPlan::unpack"});
}

#define ADI_VARIABLE_PACK(T)                                                                   \
  template void VariableBatchPlan::pack<T>(const T*, const CompactBatch&, T*) const;           \
  template void VariableBatchPlan::pack<T>(const T*, const PaddedInterleaved&, T*) const;      \
  template void VariableBatchPlan::unpack<T>(const T*, T*, const CompactBatch&) const;         \
  template void VariableBatchPlan::unpack<T>(const T*, T*, const PaddedInterleaved&) const;
ADI_VARIABLE_PACK(float)
ADI_VARIABLE_PACK(double)
ADI_VARIABLE_PACK(int)
ADI_VARIABLE_PACK(index_t)
#undef ADI_VARIABLE_PACK

namespace detail {

CompactGeometry compact_geometry(const VariableBatchPlan& plan, const CompactBatch& layout,
                                 index_t (*elements)(int n), const char* who) {
  const VariableBatchView& v = plan.host_view();
  CompactGeometry g;
  g.offsets.resize(static_cast<std::size_t>(v.count));
  if (layout.offsets == nullptr) {
    index_t at = 0;
    for (index_t s = 0; s < v.count; ++s) {
      g.offsets[s] = at;
      at += elements(v.sizes[s]);
    }
    g.span = at;
    return g;
  }
  g.offsets = to_host(layout.offsets, v.count, plan.executor().is_cuda() ? plan.executor().stream() : nullptr);
  // Systems must not overlap: sort the non-empty ones by offset and compare neighbours.
  std::vector<index_t> idx;
  idx.reserve(g.offsets.size());
  for (index_t s = 0; s < v.count; ++s) {
    if (g.offsets[s] < 0)
      throw InvalidArgument(std::string(who) + ": CompactBatch offsets[" + detail::number(s) +
                            "] = " + detail::number(g.offsets[s]) + " is negative");
    if (v.sizes[s] > 0) idx.push_back(s);
  }
  std::sort(idx.begin(), idx.end(), [&](index_t x, index_t y) { return g.offsets[x] < g.offsets[y]; });
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const index_t s = idx[i], end = g.offsets[s] + elements(v.sizes[s]);
    g.span = std::max(g.span, end);
    if (i + 1 < idx.size() && end > g.offsets[idx[i + 1]])
      throw InvalidArgument(std::string(who) + ": CompactBatch systems " + detail::number(s) + " and " +
                            detail::number(idx[i + 1]) + " overlap (offsets " + detail::number(g.offsets[s]) +
                            " and " + detail::number(g.offsets[idx[i + 1]]) + ", size " +
                            detail::number(v.sizes[s]) + ")");
  }
  return g;
}

std::vector<int> leading_dimensions(const VariableBatchPlan& plan, const PointerBatch& layout, const char* who) {
  const VariableBatchView& v = plan.host_view();
  std::vector<int> ld;
  if (layout.ld == nullptr) {
    ld.resize(static_cast<std::size_t>(v.count));
    for (index_t s = 0; s < v.count; ++s) ld[s] = std::max(1, v.sizes[s]);
    return ld;
  }
  ld = to_host(layout.ld, v.count, plan.executor().is_cuda() ? plan.executor().stream() : nullptr);
  for (index_t s = 0; s < v.count; ++s)
    if (ld[s] < std::max(1, v.sizes[s]))
      throw InvalidArgument(std::string(who) + ": leading dimension ld[" + detail::number(s) + "] = " +
                            detail::number(ld[s]) + " is smaller than max(1, n) = " +
                            detail::number(std::max(1, v.sizes[s])) + " of that matrix");
  return ld;
}

}  // namespace detail

}  // namespace adi
