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
// (stored as value v = r*M + c: row-major blocks), of system l = l0 + l1*count0 lives at
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
// per thread on the host; twice that when periodic); d*_i is kept in u. A pivot block
// that is singular or nearly so throws SingularBlock (a SingularSystem) naming the system
// and block row; the solve never returns NaN in its place.
//
// Header is C++17 so that CUDA translation units can include it.
#include <cstddef>
#include <memory>
#include <string>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/layout.hpp"

namespace adi {

// Block sizes with compiled kernels.
inline constexpr int kMinBlockSize = 2;
inline constexpr int kMaxBlockSize = 8;

// Strides (in elements of T) of one family of arrays; see the storage rule above.
struct BlockStrides {
  index_t row = 0;        // between block rows i and i+1 of a system
  index_t system0 = 0;    // between systems l0 and l0+1
  index_t system1 = 0;    // between systems l1 and l1+1
  index_t component = 1;  // between values v and v+1 (vector entry, or row-major block entry)
};

// The canonical form every block layout converts to. Systems are numbered l0 + l1*count0.
struct BlockLineSet {
  int m = 0;              // block size, 2..8
  index_t n = 0;          // block rows per system
  index_t count0 = 0;     // inner system index range
  index_t count1 = 1;     // outer system index range
  BlockStrides vectors;   // d and u
  BlockStrides blocks;    // A, B and C
  index_t systems() const { return count0 * count1; }
};

// Figure 17 (system-contiguous, the host's natural layout): the n blocks of system p
// one after the other, A[(p*n + i)*M*M + r*M + c]; vectors d[(p*n + i)*M + v].
struct BlockContiguous {
  int m = 0;
  index_t n = 0;
  index_t systems = 0;
};

// Figures 14-15 (interleaved, coalesced on a GPU): block row i of system p at
// A[(i*systems + p)*M*M + r*M + c]; vectors d[(i*systems + p)*M + v].
struct BlockInterleaved {
  int m = 0;
  index_t n = 0;
  index_t systems = 0;
};

// Where the values of each point of an nx x ny x nz grid live in one caller array:
// value v of point (x, y, z) at x*sx + y*sy + z*sz + v*component.
struct PointArray {
  index_t sx = 0, sy = 0, sz = 0;
  index_t component = 1;
  // Array of structures: `values` consecutive values per point, points x fastest,
  // dense (values = M for d and u, M*M for the row-major blocks A, B, C).
  static PointArray aos(index_t values, index_t nx, index_t ny, [[maybe_unused]] index_t nz) {
    return {values, values * nx, values * nx * ny, 1};
  }
  // Structure of arrays: one dense x-fastest array of nx*ny*nz points per value,
  // value v starting at v*nx*ny*nz.
  static PointArray soa(index_t nx, index_t ny, index_t nz) { return {1, nx, nx * ny, nx * ny * nz}; }
  // The same with padded rows/planes (e.g. an adi::Field's Box3) and a given distance
  // between the values' arrays (>= box.span()).
  static PointArray soa(const Box3& box, index_t component) { return {1, box.sy, box.sz, component}; }
};

// The block systems along `axis` of an nx x ny x nz grid (one system per grid line, n =
// extent along the axis, M variables per point). The vectors d and u share `vectors`;
// A, B and C share `blocks` (their M*M row-major entries are the point's values).
struct BlockGridLines {
  int m = 0;
  index_t nx = 0, ny = 0, nz = 0;
  Axis axis = Axis::x;
  PointArray vectors;
  PointArray blocks;
};

// Layout conversions; validate (InvalidArgument names the field and the accepted range):
// M in 2..8, n >= 1, counts >= 0, strides >= 1 where they matter, and no two values of
// one array family at the same address (overlapping strides are "mismatched").
BlockLineSet to_block_lines(const BlockLineSet& l);
BlockLineSet to_block_lines(const BlockContiguous& l);
BlockLineSet to_block_lines(const BlockInterleaved& l);
BlockLineSet to_block_lines(const BlockGridLines& l);

// One past the furthest element of the vectors (d, u) / blocks (A, B, C) a layout
// touches, relative to the base pointer: what the arrays must hold.
index_t vector_span(const BlockLineSet& l);
index_t block_span(const BlockLineSet& l);

// The three block arrays of a batch (read only).
template <class T>
struct BlockBands {
  const T* a = nullptr;  // sub-diagonal blocks A_i (A_0 not read)
  const T* b = nullptr;  // diagonal blocks B_i
  const T* c = nullptr;  // super-diagonal blocks C_i (C_{n-1} not read)
};

// The kernels a plan may run; `automatic` lets the plan choose (host: cpu_block_thomas;
// device: the measured choice documented in adi/block_tridiagonal.cpp).
enum class BlockKernel {
  automatic,
  reference,                  // plain block Thomas, one system at a time (host, the test oracle)
  cpu_block_thomas,           // Eigen fixed-size blocks, a system per thread, OpenMP across systems
  cuda_block_thomas_shuffle,  // M threads per system, block rows in registers, warp shuffles
  cuda_block_thomas_shared,   // M threads per system, exchanging through shared memory
};
const char* block_kernel_name(BlockKernel k);
// Parses the names printed by block_kernel_name; throws InvalidArgument on unknown names.
BlockKernel block_kernel_from_name(const std::string& name);

struct BlockTridiagonalOptions {
  BlockKernel kernel = BlockKernel::automatic;
  // Relative pivot threshold: a pivot p of S_i's LU with |p| <= pivot_tolerance * max|S_i|
  // (or non-finite) counts as singular. 0 selects 16 * machine epsilon of T.
  double pivot_tolerance = 0;
  // Block-cyclic systems (periodic grid lines): solved by eliminating the last block row
  // along the sweep (a bordered block Thomas), twice the factor storage and about twice
  // the flops of the non-periodic solve; a singular final M x M system reports row n-1.
  bool periodic = false;
};

// A pivot block S_i = B_i - A_i C*_{i-1} that is singular or nearly so: which system
// (l0 + l1*count0) and which block row. The solution arrays then hold no result.
class SingularBlock : public SingularSystem {
 public:
  SingularBlock(const std::string& what, index_t system, index_t row)
      : SingularSystem(what), system_(system), row_(row) {}
  index_t system() const { return system_; }
  index_t row() const { return row_; }

 private:
  index_t system_;
  index_t row_;
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
