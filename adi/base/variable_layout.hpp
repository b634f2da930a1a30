#pragma once
// Vocabulary of variable-size batches (adi/variable_batch.hpp): the sizes, the layouts
// (where element k of system s lives) and the plain view a plan hands to kernels.
// Header is C++17 so that CUDA translation units can include it.
#include "adi/base/layout.hpp"

namespace adi {

// The sizes of a batch: `count` systems, system s has sizes[s] >= 0 unknowns (0 is a
// valid, empty system). `max_size`, when the caller knows it (>= 0), is checked against
// every size and spares nothing else: the plan reads the sizes once anyway to sort them.
struct BatchSizes {
  const int* sizes = nullptr;  // count entries, host or device memory
  index_t count = 0;
  int max_size = -1;  // known upper bound of the sizes, or -1
};

// --- layouts: where element k of system s lives (explicit types, one per paper layout) ---

// cuThomasVBatch (paper section 3.1, figure 8): element k of system s at k*stride + s.
// Every system owns `rows` slots; slots k >= n_s are padding. Solvers never write the
// padding; CP kernels read it and replace it by identity rows, so its contents (NaN
// included) do not matter, but it must be allocated.
struct PaddedInterleaved {
  index_t stride = 0;  // distance between elements k and k+1 of a system (>= count); 0: count
  index_t rows = 0;    // slots per system (>= the largest size); 0: the largest size
};

// System s stored contiguously from offsets[s]: element k at offsets[s] + k. A dense
// matrix of a batch is column-major with leading dimension n_s there.
// Offsets null: systems back to back in order (offsets = exclusive sum of sizes, or of
// n_s^2 for matrices). Systems may not overlap (checked when the solver plan is built).
struct CompactBatch {
  const index_t* offsets = nullptr;  // count entries, host or device memory, or null
};

// MAGMA's vbatched interface: system s reached through its own pointer (the arrays of
// pointers are passed to solve); a dense matrix is column-major with leading dimension
// ld[s] >= max(1, n_s); a vector of system s has its elements contiguous.
struct PointerBatch {
  const int* ld = nullptr;  // count entries, host or device memory; null: ld[s] = max(1, n_s)
};

// The plan's own size-sorted layout (like SELL-C-sigma): systems sorted by size, largest
// first, cut into chunks of `chunk_width` consecutive sorted systems; chunk c stores its
// systems interleaved and padded to its own largest size:
//   element k of the system at sorted position p = c*W + j  ->  chunk_offset[c] + k*W + j.
// One warp (or SIMD group) then works on systems of similar size with coalesced loads, and
// time follows the total work instead of the largest system. Geometry: VariableBatchPlan.
struct SortedInterleaved {};

// A range of the sorted order holding the systems whose sizes lie in one size class.
struct SizeBin {
  index_t first = 0;  // sorted position of its largest system
  index_t count = 0;
  int min_size = 0, max_size = 0;  // of the systems in it (0, 0 when empty)
  int upper_bound = 0;             // the class's edge (the largest size it admits)
};

// Plain pointers into a plan's arrays, in one memory space, to pass to kernels by value.
struct VariableBatchView {
  index_t count = 0;
  int max_size = 0;
  int chunk_width = 0;
  index_t chunks = 0;                     // ceil(count / chunk_width)
  index_t total = 0;                      // sum of sizes
  index_t sorted_span = 0;                // elements of one SortedInterleaved array
  const int* sizes = nullptr;             // [count]  size of system s
  const index_t* order = nullptr;         // [count]  sorted position -> system (sizes descending, stable)
  const index_t* position = nullptr;      // [count]  system -> sorted position
  const index_t* offsets = nullptr;       // [count+1] exclusive sum of sizes (packed CompactBatch)
  const index_t* chunk_offsets = nullptr; // [chunks+1] start of chunk c in SortedInterleaved
  const int* chunk_rows = nullptr;        // [chunks] largest size in chunk c (its padded length)
};

}  // namespace adi
