#pragma once
// Batched block-tridiagonal solves (block size M = 2..8) on the host or a CUDA device.
//
// Block row i of every system (A_i, B_i, C_i are M x M, u_i, d_i have M values):
//     A_i u_{i-1} + B_i u_i + C_i u_{i+1} = d_i,        A_0 and C_{n-1} are never read,
// unless the systems are periodic (BlockTridiagonalOptions::periodic, block-cyclic): then
// A_0 multiplies u_{n-1} in row 0 and C_{n-1} multiplies u_0 in row n-1.
// Solved by block Thomas (paper "Manycore algorithms for batch scalar and block
// tridiagonal solvers", block part, algorithm 12) with partial pivoting *inside* each
// M x M pivot block S_i = B_i - A_i C*_{i-1}; no pivoting across block rows, so the
// systems should be block diagonally dominant (implicit CFD, coupled diffusion).
//
// Storage. Value v (0 <= v < M) of u_i / d_i, and entry (r, c) of A_i / B_i / C_i
// (stored as value v = r*M + c: row-major blocks, the default; or v = c*M + r with
// BlockOrder::column_major, Fortran's order, read in place by every kernel with no
// transposed copy), of system l = l0 + l1*count0 lives at
//     l0*system0 + l1*system1 + i*row + v*component
// with one BlockStrides for the vectors (d, u) and one for the blocks (A, B, C). Every
// public layout below converts to that canonical BlockLineSet:
//
//   adi::BlockContiguous   figure 17: system after system, block row after block row (CPU)
//   adi::BlockInterleaved  figures 14-15: block row i of all systems together (GPU)
//   adi::BlockGridLines    the lines along x, y or z of a 3D grid whose M variables
//                          per point sit in the caller's arrays, array-of-structures
//                          (PointArray::aos) or structure-of-arrays (PointArray::soa)
//                          or any other strides: no layout conversion by the caller.
//
//   adi::BlockTridiagonalPlan<double> plan(adi::Executor::host(),
//                                          adi::BlockContiguous{4, n, systems});
//   plan.solve(adi::BlockBands<double>{A, B, C}, d, u);   // u may equal d (in place)
//
// Pointers live in the executor's memory (host arrays for Executor::host(), device
// arrays for Executor::cuda()). A, B, C and d are only read unless u == d; the plan owns
// a workspace for the factors C*_i (systems * n * M * M values on a device, n * M * M
// per thread on the host; twice that when periodic) and, on a device, for d*_i (systems
// * n * M values; on the host d*_i is kept in u). A pivot block
// that is singular or nearly so throws SingularBlock (a SingularSystem) naming the system
// and block row; the solve never returns NaN in its place.
//
// Header is C++17 so that CUDA translation units can include it.
#include <cstddef>
#include <memory>
#include <string>
#if __cplusplus >= 202002L
#include <span>  // the size-checked overloads (C++20; CUDA translation units of C++17 skip them)
#define ADI_HAVE_SPAN 1
#endif

#include "adi/base/block_layout.hpp"
#include "adi/base/pivot.hpp"
#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/layout.hpp"

namespace adi {

struct BlockTridiagonalOptions {
  BlockKernel kernel = BlockKernel::automatic;
  // Relative pivot tolerance, adi/base/pivot.hpp: a pivot p of S_i's LU with
  // |p| <= pivot_tolerance * max|S_i| (or non-finite) counts as singular; 0 selects
  // 16 * machine epsilon of T.
  double pivot_tolerance = 0;
  // Block-cyclic systems (periodic grid lines): solved by eliminating the last block row
  // along the sweep (a bordered block Thomas), twice the factor storage and about twice
  // the flops of the non-periodic solve; a singular final M x M system reports row n-1.
  bool periodic = false;
  // As everywhere (adi/base/pivot.hpp): throw SingularBlock with system() and row() (the block
  // row). On a CUDA executor this synchronises the stream at the end of solve(); false leaves
  // the solve asynchronous and a singular system unreported.
  bool check_pivots = true;
};

// A pivot block S_i = B_i - A_i C*_{i-1} that is singular or nearly so: which system
// (l0 + l1*count0) and which block row. The solution arrays then hold no result.
class SingularBlock : public SingularSystem {
 public:
  using SingularSystem::SingularSystem;
};

// Built once for a problem shape: validates the layout, chooses the kernel and owns the
// workspace, so solve() allocates nothing. Not thread-safe: one plan per concurrent caller.
template <class T>
class BlockTridiagonalPlan {
 public:
  BlockTridiagonalPlan(const Executor& exec, const BlockLineSet& lines, BlockTridiagonalOptions options = {});
  BlockTridiagonalPlan(const Executor& exec, const BlockContiguous& l, BlockTridiagonalOptions o = {})
      : BlockTridiagonalPlan(exec, to_block_lines(l), o) {}
  BlockTridiagonalPlan(const Executor& exec, const BlockInterleaved& l, BlockTridiagonalOptions o = {})
      : BlockTridiagonalPlan(exec, to_block_lines(l), o) {}
  BlockTridiagonalPlan(const Executor& exec, const BlockGridLines& l, BlockTridiagonalOptions o = {})
      : BlockTridiagonalPlan(exec, to_block_lines(l), o) {}
  ~BlockTridiagonalPlan();
  BlockTridiagonalPlan(BlockTridiagonalPlan&&) noexcept;
  BlockTridiagonalPlan& operator=(BlockTridiagonalPlan&&) noexcept;

  // Solves every system. u may equal d (in place); otherwise they must not overlap.
  // On a CUDA executor the work is enqueued on the executor's stream and solve()
  // synchronises it to read the singular-block report.
  void solve(const BlockBands<T>& bands, const T* d, T* u);
  // The same with sizes: A, B, C must hold block_span(lines()) values, d and u
  // vector_span(lines()); a shorter array throws InvalidArgument naming it, before any kernel.
#if defined(ADI_HAVE_SPAN)
  void solve(std::span<const T> a, std::span<const T> b, std::span<const T> c, std::span<const T> d,
             std::span<T> u);
#endif

  BlockKernel kernel() const;
  const BlockLineSet& lines() const;
  const Executor& executor() const;
  const BlockTridiagonalOptions& options() const;
  std::size_t workspace_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// One-shot convenience: builds a plan and solves (allocates the workspace each call).
template <class T, class Layout>
void solve_block_tridiagonal(const Executor& exec, const Layout& layout, const BlockBands<T>& bands,
                             const T* d, T* u, BlockTridiagonalOptions options = {}) {
  BlockTridiagonalPlan<T>(exec, to_block_lines(layout), options).solve(bands, d, u);
}

extern template class BlockTridiagonalPlan<float>;
extern template class BlockTridiagonalPlan<double>;

}  // namespace adi
