#pragma once
// Vocabulary of the batched Hines solver (adi/hines.hpp): the kernel arguments shared by
// the host and CUDA backends (pointers in one memory space).
// Header is C++17 so that CUDA translation units can include it.
#include <string>

#include "adi/base/layout.hpp"

namespace adi {

// The kernels. Each is written once for float and double.
enum class HinesKernel {
  automatic,
  reference,          // host, fp64 Hines per neuron, one thread: the oracle
  cpu_scalar,         // host, Hines per neuron (any layout), OpenMP across neurons
  cpu_vector,         // host, SortedInterleaved: SIMD lanes across a chunk's neurons (one tree per
                      // chunk; chunks mixing trees run lane by lane)
  cuda_paper,         // one thread per neuron, algorithm 1 in global memory: the paper's flat
                      // (CompactBatch), full-interleaved (PaddedInterleaved) and block-interleaved
                      // (SortedInterleaved, block = chunk_width) kernels
  cuda_block_shared,  // SortedInterleaved: paper section 3.1, the block's rhs in shared memory
  cuda_stack,         // SortedInterleaved: one thread per neuron reading diag/offdiag/rhs once;
                      // the elimination's pivots and partial solution in shared memory
  cuda_branch,        // CompactBatch: one block per neuron, branches of a level in parallel, the
                      // neuron staged in shared memory (few large neurons)
};
const char* hines_kernel_name(HinesKernel k);
HinesKernel hines_kernel_from_name(const std::string& name);  // throws InvalidArgument

namespace detail {

enum class HinesLayoutKind { compact, padded, sorted };

// Where one tree's branch schedule lies in the concatenated arrays of HinesView.
struct HinesTreeSchedule {
  int branches = 0, up_levels = 0, down_levels = 0;
  int branch_base = 0;       // branch_start, branch_end, down_order: [base, base + branches)
  int child_first_base = 0;  // child_first: branches + 1 entries, values relative to child_base
  int child_base = 0;
  int up_level_base = 0;     // up_level: up_levels + 1 entries (tree-local branch ids)
  int down_level_base = 0;   // down_level: down_levels + 1 entries
};

// Where element k of the neuron at thread slot t lives, and which tree it has. Threads are
// numbered by sorted position for the sorted layout and by neuron otherwise.
struct HinesView {
  index_t count = 0;
  int max_size = 0;
  HinesLayoutKind layout = HinesLayoutKind::compact;
  const index_t* offsets = nullptr;  // compact: [count] start of neuron s
  index_t stride = 0;                // padded: k * stride + s
  int chunk_width = 0;               // sorted
  const index_t* chunk_offsets = nullptr;  // sorted: [chunks + 1]
  const index_t* order = nullptr;          // sorted: position -> neuron
  const index_t* position = nullptr;       // sorted: neuron -> position
  const int* sizes = nullptr;              // [count] by neuron
  const int* parents = nullptr;            // the trees' parent arrays, concatenated
  const index_t* parent_base = nullptr;    // [count] by neuron: start of its tree in parents
  const int* tree_of = nullptr;            // [count] by neuron
  int trees = 0;
  // Branch schedules (HinesTopology), concatenated over the trees; schedules[t] says where.
  const HinesTreeSchedule* schedules = nullptr;  // [trees]
  const int* branch_start = nullptr;  // node where a branch starts; branches in elimination order
  const int* branch_end = nullptr;    // one past its last node
  const int* child_first = nullptr;   // CSR (branches + 1 per tree) into child_node
  const int* child_node = nullptr;    // first nodes of a branch's child branches
  const int* up_level = nullptr;      // level boundaries of the elimination order (levels + 1 per tree)
  const int* down_order = nullptr;    // branches ordered by depth (tree-local ids)
  const int* down_level = nullptr;    // level boundaries of down_order (levels + 1 per tree)
};

}  // namespace detail

}  // namespace adi
