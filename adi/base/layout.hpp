#pragma once
// Layouts of batches of lines (tridiagonal systems) in memory, as explicit types.
// Every public layout converts to one canonical LineSet that the kernels read:
// element i of line (l0, l1) lives at  l0*stride0 + l1*stride1 + i*stride.
// Header is C++17 so that CUDA translation units can include it.
#include <cstdint>
#include <string>
#include <utility>

#include "adi/base/error.hpp"

namespace adi {

using index_t = std::int64_t;

enum class Axis : int { x = 0, y = 1, z = 2 };

inline const char* axis_name(Axis a) { return a == Axis::x ? "x" : a == Axis::y ? "y" : "z"; }

// `count` lines of `n` elements; element i of line l at l*line_stride + i*element_stride.
struct StridedLines {
  index_t n = 0;
  index_t count = 0;
  index_t element_stride = 1;
  index_t line_stride = 0;
  // Lines stored one after the other (LAPACK / cuSPARSE gtsv2StridedBatch layout).
  static StridedLines contiguous(index_t n, index_t count) { return {n, count, 1, n}; }
};

// cuThomasBatch layout: element k of system s at k*batch + s.
struct InterleavedBatch {
  index_t n = 0;
  index_t batch = 0;
};

// A 3D box, x fastest: element (i,j,k) at i + j*sy + k*sz. sy >= nx and sz >= sy*ny
// allow padded rows and planes; a sub-box of a larger array is the same with a
// base pointer moved to its first element.
struct Box3 {
  index_t nx = 0, ny = 0, nz = 0;
  index_t sy = 0, sz = 0;
  static Box3 dense(index_t nx, index_t ny, index_t nz) { return {nx, ny, nz, nx, nx * ny}; }
  index_t extent(Axis a) const { return a == Axis::x ? nx : a == Axis::y ? ny : nz; }
  index_t stride(Axis a) const { return a == Axis::x ? 1 : a == Axis::y ? sy : sz; }
  index_t size() const { return nx * ny * nz; }
  // Elements spanned from the first to one past the last (what an allocation must hold).
  index_t span() const {
    return size() == 0 ? 0 : (nx - 1) + (ny - 1) * sy + (nz - 1) * sz + 1;
  }
};

// All lines of a box along one axis.
struct BoxLines {
  Box3 box;
  Axis axis = Axis::x;
};

// The canonical form. Lines are numbered l = l0 + l1*count0.
struct LineSet {
  index_t n = 0;        // elements per line
  index_t stride = 1;   // between consecutive elements of a line
  index_t count0 = 0;   // inner line index range
  index_t stride0 = 0;  // distance between lines l0 and l0+1
  index_t count1 = 1;   // outer line index range
  index_t stride1 = 0;  // distance between lines l1 and l1+1

  index_t lines() const { return count0 * count1; }
  index_t offset(index_t line) const {
    return (line % count0) * stride0 + (line / count0) * stride1;
  }
  // One past the furthest element touched, relative to the base pointer.
  index_t span() const {
    if (n == 0 || lines() == 0) return 0;
    return (n - 1) * stride + (count0 - 1) * stride0 + (count1 - 1) * stride1 + 1;
  }
};

namespace detail {
inline constexpr index_t kMaxIndex = INT64_MAX;

// Sizes and spans are products of extents and strides: each is checked against the
// 64-bit index range where a layout is built, so that a huge layout is refused with a
// layout error instead of wrapping around (and later faulting in a kernel).
inline index_t mul_size(index_t a, index_t b, const char* what) {
  if (a != 0 && b > kMaxIndex / a)
    throw InvalidArgument(std::string(what) + ": " + std::to_string(a) + " x " + std::to_string(b) +
                          " elements overflow a 64-bit index; the layout is too large");
  return a * b;
}
inline index_t add_size(index_t a, index_t b, const char* what) {
  if (b > kMaxIndex - a)
    throw InvalidArgument(std::string(what) + ": " + std::to_string(a) + " + " + std::to_string(b) +
                          " elements overflow a 64-bit index; the layout is too large");
  return a + b;
}

// One past the furthest element a (validated, non-negative) LineSet touches, checked.
inline index_t checked_span(const LineSet& l, const char* what) {
  if (l.n == 0 || mul_size(l.count0, l.count1, what) == 0) return 0;
  index_t s = mul_size(l.n - 1, l.stride, what);
  s = add_size(s, mul_size(l.count0 - 1, l.stride0, what), what);
  s = add_size(s, mul_size(l.count1 - 1, l.stride1, what), what);
  return add_size(s, 1, what);
}

// Whether arrays of np values at p and nq values at q share any byte: the one test the
// plans apply to their outputs against their inputs.
template <class T>
bool arrays_overlap(const T* p, index_t np, const T* q, index_t nq) {
  const auto p0 = reinterpret_cast<std::uintptr_t>(p), q0 = reinterpret_cast<std::uintptr_t>(q);
  return p0 < q0 + std::uintptr_t(nq) * sizeof(T) && q0 < p0 + std::uintptr_t(np) * sizeof(T);
}

// Two lines that share an element would be solved by two threads at once (a race, and a
// wrong answer): reject a LineSet unless its three (extent, stride) dimensions nest, each
// stride (in increasing order) beyond everything the smaller ones span.
inline void require_disjoint_lines(const LineSet& l, const char* what) {
  struct Dim {
    index_t extent, stride;
    const char* name;
  } d[3] = {{l.n, l.stride, "stride"}, {l.count0, l.stride0, "stride0"}, {l.count1, l.stride1, "stride1"}};
  // Sort by stride (3 elements), ignoring dimensions of extent 1.
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j) {
      const bool ki = d[i].extent > 1, kj = d[j].extent > 1;
      if ((!ki && kj) || (ki && kj && d[j].stride < d[i].stride)) std::swap(d[i], d[j]);
    }
  index_t covered = 1;  // elements spanned by the smaller dimensions, plus one
  for (const Dim& x : d) {
    if (x.extent <= 1) break;
    if (x.stride < covered)
      throw InvalidArgument(std::string(what) + ": lines or elements overlap (" + x.name + " = " +
                            std::to_string(x.stride) + " is less than the " + std::to_string(covered) +
                            " elements the smaller strides span); every element of every line must have an "
                            "address of its own");
    covered = add_size(mul_size(x.extent - 1, x.stride, what), covered, what);
  }
}
}  // namespace detail

inline LineSet to_lines(const StridedLines& s) {
  detail::require(s.n >= 1, "StridedLines: line length n = " + std::to_string(s.n) + " must be >= 1");
  detail::require(s.count >= 0, "StridedLines: count = " + std::to_string(s.count) + " must be >= 0");
  detail::require(s.element_stride >= 1,
                  "StridedLines: element_stride = " + std::to_string(s.element_stride) + " must be >= 1");
  detail::require(s.count <= 1 || s.line_stride >= 1,
                  "StridedLines: line_stride = " + std::to_string(s.line_stride) +
                      " must be >= 1 when there is more than one line");
  const LineSet l{s.n, s.element_stride, s.count, s.line_stride, 1, 0};
  detail::checked_span(l, "StridedLines");
  detail::require_disjoint_lines(l, "StridedLines");
  return l;
}

inline LineSet to_lines(const InterleavedBatch& s) {
  detail::require(s.n >= 1, "InterleavedBatch: n = " + std::to_string(s.n) + " must be >= 1");
  detail::require(s.batch >= 0, "InterleavedBatch: batch = " + std::to_string(s.batch) + " must be >= 0");
  const LineSet l{s.n, s.batch, s.batch, 1, 1, 0};
  detail::checked_span(l, "InterleavedBatch");
  return l;
}

inline void validate(const Box3& b) {
  detail::require(b.nx >= 1 && b.ny >= 1 && b.nz >= 1,
                  "Box3: extents (" + std::to_string(b.nx) + ", " + std::to_string(b.ny) + ", " +
                      std::to_string(b.nz) + ") must all be >= 1");
  detail::require(b.sy >= b.nx, "Box3: row stride sy = " + std::to_string(b.sy) + " must be >= nx = " +
                                    std::to_string(b.nx));
  const index_t plane = detail::mul_size(b.sy, b.ny, "Box3");
  detail::require(b.sz >= plane, "Box3: plane stride sz = " + std::to_string(b.sz) + " must be >= sy*ny = " +
                                     std::to_string(plane));
  detail::mul_size(detail::mul_size(b.nx, b.ny, "Box3"), b.nz, "Box3");  // size()
  detail::checked_span(LineSet{b.nx, 1, b.ny, b.sy, b.nz, b.sz}, "Box3");  // span()
}

inline LineSet to_lines(const BoxLines& l) {
  detail::require(l.axis == Axis::x || l.axis == Axis::y || l.axis == Axis::z,
                  "BoxLines: axis = " + std::to_string(static_cast<int>(l.axis)) +
                      " is not Axis::x, Axis::y or Axis::z");
  validate(l.box);
  const Box3& b = l.box;
  switch (l.axis) {
    case Axis::x: return {b.nx, 1, b.ny, b.sy, b.nz, b.sz};
    case Axis::y: return {b.ny, b.sy, b.nx, 1, b.nz, b.sz};
    default: return {b.nz, b.sz, b.nx, 1, b.ny, b.sy};
  }
}

// The same lines under one line index where the outer index continues the inner one
// (stride1 == count0 * stride0: the X and Z lines of a dense box, an interleaved batch
// written as rows of lines), or where the inner index has one value: every line keeps its
// number and its offset, so a kernel that tiles lines along count0 sees one run of
// count0 * count1 lines instead of count1 runs of count0 (the Z lines of a 240x256x256 box:
// no tile of 32 lines straddles two rows). TridiagonalPlan solves these (plan.lines() stays
// the caller's).
inline LineSet merged_line_indices(const LineSet& l) {
  if (l.count1 <= 1 || l.count0 == 0) return l;
  if (l.count0 == 1) return {l.n, l.stride, l.count1, l.stride1, 1, 0};
  if (l.stride1 == l.count0 * l.stride0) return {l.n, l.stride, l.count0 * l.count1, l.stride0, 1, 0};
  return l;
}

inline LineSet to_lines(const LineSet& l) {
  detail::require(l.n >= 1, "LineSet: n = " + std::to_string(l.n) + " must be >= 1");
  detail::require(l.stride >= 1 && l.count0 >= 0 && l.count1 >= 0,
                  "LineSet: stride must be >= 1 and counts >= 0");
  // Lines a stride of 0 or less apart would overlap (or lie before the base pointer).
  detail::require(l.count0 <= 1 || l.stride0 >= 1, "LineSet: stride0 = " + std::to_string(l.stride0) +
                                                       " must be >= 1 when count0 > 1");
  detail::require(l.count1 <= 1 || l.stride1 >= 1, "LineSet: stride1 = " + std::to_string(l.stride1) +
                                                       " must be >= 1 when count1 > 1");
  detail::checked_span(l, "LineSet");
  detail::require_disjoint_lines(l, "LineSet");
  return l;
}

}  // namespace adi
