#pragma once
// Vocabulary of the block-tridiagonal solves (adi/block_tridiagonal.hpp): the storage rule
// (BlockStrides, the canonical BlockLineSet and the public layouts that convert to it), the
// block band arrays and the kernel identifiers. The storage rule is documented at the top
// of adi/block_tridiagonal.hpp. Header is C++17 so that CUDA translation units can include it.
#include <string>

#include "adi/base/layout.hpp"

namespace adi {

// Block sizes with compiled kernels.
inline constexpr int kMinBlockSize = 2;
inline constexpr int kMaxBlockSize = 8;

// The order of the M*M entries of a block: entry (r, c) is value v = r*M + c (row-major, C's
// order, the default) or v = c*M + r (column-major, Fortran's: a CFD code's 5x5 blocks as they
// are), at v*component from the block's start. The kernels read either order in place.
enum class BlockOrder { row_major, column_major };
// Where entry (r, c) of an M x M block is stored, in values from the block's start (times
// the component stride): r*M + c row-major, c*M + r column-major. constexpr so that device
// code may call it (nvcc --expt-relaxed-constexpr).
constexpr index_t block_entry(BlockOrder o, int m, int r, int c) {
  return o == BlockOrder::column_major ? index_t(c) * m + r : index_t(r) * m + c;
}
inline const char* block_order_name(BlockOrder o) {
  return o == BlockOrder::row_major ? "row_major" : o == BlockOrder::column_major ? "column_major" : "unknown";
}

// Strides (in elements of T) of one family of arrays; see the storage rule above.
struct BlockStrides {
  index_t row = 0;        // between block rows i and i+1 of a system
  index_t system0 = 0;    // between systems l0 and l0+1
  index_t system1 = 0;    // between systems l1 and l1+1
  index_t component = 1;  // between values v and v+1 (vector entry, or block entry in `order`)
};

// The canonical form every block layout converts to. Systems are numbered l0 + l1*count0.
struct BlockLineSet {
  int m = 0;              // block size, 2..8
  index_t n = 0;          // block rows per system
  index_t count0 = 0;     // inner system index range
  index_t count1 = 1;     // outer system index range
  BlockStrides vectors;   // d and u
  BlockStrides blocks;    // A, B and C
  BlockOrder order = BlockOrder::row_major;  // of the entries of A, B and C
  index_t systems() const { return count0 * count1; }
};

// Figure 17 (system-contiguous, the host's natural layout): the n blocks of system p
// one after the other, A[(p*n + i)*M*M + r*M + c]; vectors d[(p*n + i)*M + v].
struct BlockContiguous {
  int m = 0;
  index_t n = 0;
  index_t systems = 0;
  BlockOrder order = BlockOrder::row_major;  // column_major: A[(p*n + i)*M*M + c*M + r]
};

// Figures 14-15 (interleaved, coalesced on a GPU): block row i of system p at
// A[(i*systems + p)*M*M + r*M + c]; vectors d[(i*systems + p)*M + v].
struct BlockInterleaved {
  int m = 0;
  index_t n = 0;
  index_t systems = 0;
  BlockOrder order = BlockOrder::row_major;  // column_major: A[(i*systems + p)*M*M + c*M + r]
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
// A, B and C share `blocks` (their M*M entries, row- or column-major, are the point's values).
struct BlockGridLines {
  int m = 0;
  index_t nx = 0, ny = 0, nz = 0;
  Axis axis = Axis::x;
  PointArray vectors;
  PointArray blocks;
  BlockOrder order = BlockOrder::row_major;  // of the M*M block values of a point
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
  cuda_block_thomas_shared,   // M threads per system, exchanging through shared memory; kept for
                              // comparison: compiled only with -DADI_CUDA_UNROLL_ALL=ON, other
                              // builds run cuda_block_thomas_shuffle and say so once on stderr
};
const char* block_kernel_name(BlockKernel k);
// Parses the names printed by block_kernel_name; throws InvalidArgument on unknown names.
BlockKernel block_kernel_from_name(const std::string& name);

}  // namespace adi
