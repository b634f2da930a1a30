#pragma once
// Variable-size batches: one description of a batch whose systems (tridiagonal lines,
// small dense matrices, neurons) have different sizes, shared by every variable-size
// solver (adi/variable_tridiagonal.hpp, adi/batched_cholesky.hpp, the Hines solver).
// After cuThomasVBatch (Valero-Lara et al., section 3.1: interleaved and padded to the
// largest) and MAGMA's vbatched routines (Abdelfattah et al., section III: sizes and
// leading dimensions as arrays, a known maximum, early termination, implicit sorting).
//
//   std::vector<int> n = ...;                                   // one size per system
//   adi::VariableBatchPlan batch(adi::Executor::host(), adi::BatchSizes{n.data(), index_t(n.size())});
//   batch.build_seconds();        // validation, sorting, offsets: paid once per batch shape
//   batch.pack(user_compact, adi::CompactBatch{}, sorted);      // once, like cuThomasBatch's interleave
//   adi::VariableTridiagonalPlan<double> solve(batch, adi::SortedInterleaved{});
//
// Sizes are `int`, like MAGMA's interface, so that arrays users already hold can be
// passed as they are; positions and offsets are index_t. Every index array may live in
// host or device memory (detected); the plan keeps its own copies where it needs them.
// Header is C++17 so that CUDA translation units can include it.
#include <memory>
#include <vector>

#include "adi/executor.hpp"
#include "adi/base/variable_layout.hpp"
#include "adi/layout.hpp"

namespace adi {

// --- the plan ---

struct VariableBatchOptions {
  // Systems per chunk of SortedInterleaved: a warp, and 4 AVX-512 fp64 vectors on the
  // host; one value for both backends so that packed data moves between them as it is.
  int chunk_width = 32;
  // Largest size the caller's solver supports (0: no limit); larger sizes throw.
  int max_supported = 0;
  // Inclusive upper bounds of size classes, ascending (e.g. {32, 64, 512}): bins() then
  // lists the systems of each class as one range of the sorted order, so that a solver
  // can launch one kernel per class. Empty: a single class.
  std::vector<int> bin_edges;
};

// Built once per batch shape (sizes + executor): validates the sizes, finds the largest,
// sorts the systems by size (largest first, so that the threads of a warp, the lanes of
// a vector or the blocks scheduled first get similar, large work), bins them by size
// class, and lays out SortedInterleaved. Keeps host and (on a CUDA executor) device
// copies. Cheap to copy (shared, immutable state). Throws InvalidArgument on a null sizes
// array with count > 0, a negative size, or a size over max_size / max_supported.
class VariableBatchPlan {
 public:
  VariableBatchPlan(const Executor& exec, const BatchSizes& sizes, VariableBatchOptions options = {});

  const Executor& executor() const;
  const VariableBatchOptions& options() const;
  index_t count() const;
  int max_size() const;          // 0 for an empty batch
  int min_size() const;
  index_t total_size() const;    // sum of sizes (the useful unknowns)
  double build_seconds() const;  // wall time the constructor took (reported apart from solves)

  // Host copies (always available); views of the same arrays in the executor's memory.
  const VariableBatchView& host_view() const;
  const VariableBatchView& view() const;  // device pointers on a CUDA executor
  const std::vector<SizeBin>& bins() const;
  // The same cut for other class edges (inclusive upper bounds, ascending), computed on
  // demand: how a solver with its own size classes splits a batch built without them.
  std::vector<SizeBin> bins(const std::vector<int>& edges) const;
  int size(index_t s) const { return host_view().sizes[s]; }

  // Elements one array of each layout must hold for this batch.
  index_t span(const PaddedInterleaved& l) const;
  index_t span(const SortedInterleaved&) const { return host_view().sorted_span; }
  index_t span(const CompactBatch&) const { return total_size(); }  // packed (offsets null)

  // Copies one array (of T = float, double, int or index_t) between a user layout and
  // SortedInterleaved, on the plan's executor, src and dst in its memory space: done
  // once, like cuThomasBatch's interleave at the start of a simulation. pack() writes
  // zeros into the sorted layout's padding; unpack() writes only real elements.
  template <class T>
  void pack(const T* src, const CompactBatch& layout, T* dst) const;
  template <class T>
  void pack(const T* src, const PaddedInterleaved& layout, T* dst) const;
  template <class T>
  void unpack(const T* src, T* dst, const CompactBatch& layout) const;
  template <class T>
  void unpack(const T* src, T* dst, const PaddedInterleaved& layout) const;

  struct Impl;

 private:
  std::shared_ptr<const Impl> impl_;
};

namespace detail {
// Offsets of a CompactBatch made concrete on the host: the caller's (copied to the host)
// or the packed ones (exclusive sum of sizes[s] * per_system(sizes[s])). Checks that
// systems do not overlap (sorted by offset) and returns them with the span they need.
struct CompactGeometry {
  std::vector<index_t> offsets;  // count entries
  index_t span = 0;              // one past the furthest element
};
// `elements(n)`: elements a system of size n occupies (n for vectors, n*n for matrices).
CompactGeometry compact_geometry(const VariableBatchPlan& plan, const CompactBatch& layout,
                                 index_t (*elements)(int n), const char* who);
// Leading dimensions of a PointerBatch on the host (copied, defaults filled in), each
// checked against max(1, n_s) with a message naming the matrix.
std::vector<int> leading_dimensions(const VariableBatchPlan& plan, const PointerBatch& layout,
                                    const char* who);
// Copies `count` values from host or device memory (detected) to a host vector; a device
// copy runs on `stream` (the executor's: after the work queued there) and waits for it.
template <class T>
std::vector<T> to_host(const T* p, index_t count, void* stream = nullptr);
}  // namespace detail

}  // namespace adi
