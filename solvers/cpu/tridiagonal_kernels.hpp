#pragma once
// The host kernels behind adi::cpu::solve, one file each (named after the algorithm).
// Each returns the first line with a zero or non-finite pivot, or -1. `threads` is the
// executor's thread count (0: all); `workspace` holds workspace_bytes for that count.
#include "solvers/cpu/tridiagonal_problem.hpp"

namespace adi::cpu::detail {

// Kernel::reference: the fp64 oracle (solvers/reference/thomas.hpp), line by line.
template <class T>
index_t reference_lines(const Problem<T>& p);

// Kernel::cpu_thomas: scalar Thomas per line, any strides, OpenMP across lines.
Shape thomas_shape(const LineSet& lines, std::size_t value_size, int threads);
template <class T>
index_t thomas(const Problem<T>& p, void* workspace, int threads);

// Kernel::cpu_thomas_transpose: lines with element stride 1; W lines per group,
// W x W tiles transposed in registers (paper section 5, "X dimension").
Shape thomas_transpose_shape(const LineSet& lines, std::size_t value_size, int threads);
template <class T>
index_t thomas_transpose(const Problem<T>& p, void* workspace, int threads);

// Kernel::cpu_thomas_vector: neighbouring lines adjacent in memory (stride0 == 1
// after normalised()); vector loads straight from memory (paper section 5, "Y and Z").
Shape thomas_vector_shape(const LineSet& lines, std::size_t value_size, int threads);
template <class T>
index_t thomas_vector(const Problem<T>& p, void* workspace, int threads);
// Solves whose u has at least 16 MiB write it with non-temporal stores (where aligned).
// Tests only: sets that threshold (0: every size streams) and returns the previous one.
std::size_t set_thomas_vector_stream_bytes_for_testing(std::size_t bytes);

}  // namespace adi::cpu::detail
