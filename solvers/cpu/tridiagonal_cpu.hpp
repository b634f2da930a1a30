#pragma once
// Host backend of the batched tridiagonal solves. Called by adi::TridiagonalPlan
// after validation; these functions assume valid input.
#include <cstddef>

#include "adi/base/layout.hpp"
#include "adi/base/tridiagonal_types.hpp"

namespace adi::cpu {

// a, b, c either shaped like d (shared == false) or length-n arrays used by every line.
template <class T>
struct BandView {
  const T* a;
  const T* b;
  const T* c;
  bool shared;
};

// Bytes of scratch the kernel needs for `threads` threads (the plan allocates it once).
std::size_t workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic, int threads,
                            std::size_t value_size);

// Solves all lines with the given host kernel (reference, cpu_*). Throws SingularSystem
// (naming the line) on a zero or non-finite pivot when check_pivots is set.
template <class T>
void solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u, bool periodic,
           bool check_pivots, void* workspace, int threads);

}  // namespace adi::cpu
