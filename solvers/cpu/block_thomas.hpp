#pragma once
// Host backend of the batched block-tridiagonal solves. Called by
// adi::BlockTridiagonalPlan after validation; these functions assume valid input.
#include <cstddef>

#include "adi/base/block_layout.hpp"

namespace adi::cpu {

// What a block solve reports: -1, or the smallest key system * n + row of a pivot block
// found singular (the plan turns it into SingularBlock).
using BlockFailure = index_t;

// Scratch for `threads` threads (0: every processor): n*M*M values of C* per thread
// (and as many of Z* for periodic systems).
std::size_t block_thomas_workspace_bytes(const BlockLineSet& lines, bool periodic, int threads,
                                         std::size_t value_size);

// Block Thomas with Eigen fixed-size blocks, one system per thread, OpenMP across
// systems (paper, block part, section 5). tol: relative pivot threshold. periodic:
// block-cyclic systems (the bordered elimination of solvers/reference/block_thomas.hpp).
template <class T>
BlockFailure block_thomas(const BlockLineSet& lines, const T* a, const T* b, const T* c, const T* d, T* u,
                          double tol, bool periodic, void* workspace, int threads);

// solvers/reference/block_thomas.hpp on every system, one thread, in double.
template <class T>
BlockFailure block_thomas_reference(const BlockLineSet& lines, const T* a, const T* b, const T* c,
                                    const T* d, T* u, double tol, bool periodic);

}  // namespace adi::cpu
