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
// pivoting: the plan's TridiagonalOptions::pivoting (automatic needs the pivoting scratch
// for its fall-back).
std::size_t workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic, int threads,
                            std::size_t value_size, Pivoting pivoting = Pivoting::none);

// Solves all lines with the given host kernel (reference, cpu_*). A Thomas kernel with
// pivoting == automatic re-solves groups that fail the stability check with partial
// pivoting; with none and check_pivots it throws UnstableSystem (naming line and row).
// A zero or non-finite pivot throws SingularSystem when check_pivots is set.
template <class T>
void solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u, bool periodic,
           bool check_pivots, void* workspace, int threads, Pivoting pivoting = Pivoting::none);

}  // namespace adi::cpu
