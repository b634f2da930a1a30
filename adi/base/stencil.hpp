#pragma once
// Internal: what the stencil kernels of every backend (solvers/cpu/stencil_*,
// later solvers/cuda/stencil_*) receive from adi::Operator: raw pointers in the
// executor's memory space, the field's Box3 and index ranges. C++17 (CUDA includes it).
#include <array>

#include "adi/base/layout.hpp"

namespace adi::detail {

// Axis j's part A_j. Row i (index along the axis) reads
//   (A_j u)_i = -a[i] u[prev[i]] + d[i] u[i] - c[i] u[next[i]]
// so a, c are the sub/super bands of (I/s - A_j) and b = 1/s - d its diagonal.
// prev/next wrap on periodic axes and point at i itself where the weight is 0
// (Neumann rows after ghost elimination, Dirichlet identity rows).
template <class T>
struct AxisStencil {
  bool active = false;    // extent > 1
  bool shared = true;     // a, d, c: length-n arrays (true) or shaped like the field (false)
  bool periodic = false;
  index_t n = 1;
  const T* a = nullptr;
  const T* d = nullptr;
  const T* c = nullptr;
  const index_t* prev = nullptr;  // length n
  const index_t* next = nullptr;
  // First-derivative weights for the mixed terms: u'(i) ~ fm[i] u[prev] + f0[i] u[i] + fp[i] u[next].
  const T* fm = nullptr;
  const T* f0 = nullptr;
  const T* fp = nullptr;
};

// M_pq u_{x_p x_q} as the tensor product of the two 1D first-derivative stencils.
template <class T>
struct MixedStencil {
  bool active = false;
  int p = 0, q = 1;          // axes, p < q
  const T* coef = nullptr;   // M shaped like the field
};

template <class T>
struct StencilView {
  Box3 box;                           // the whole field: extents and strides
  std::array<index_t, 3> lo{}, hi{};  // the unknowns, inclusive ranges per axis
  std::array<AxisStencil<T>, 3> axis{};
  std::array<MixedStencil<T>, 3> mixed{};  // xy, xz, yz
};

// out = alpha*base + sum_p w[p] (A_p v) + src_scale[0]*src[0] + src_scale[1]*src[1]
// at the unknown nodes. Null base / src are skipped; v is not read when all w are 0.
template <class T>
struct ApplyArgs {
  const T* v = nullptr;
  const T* base = nullptr;
  T alpha = T(1);
  std::array<T, 4> w{};  // 0: mixed, 1..3: x, y, z
  std::array<const T*, 2> src{};
  std::array<T, 2> src_scale{};
  T* out = nullptr;
};

// One face of a box: plane index `plane` along `axis`; the other two axes (in order
// x, y, z) range over [lo, hi] of `range` and index the face values as c1 + c2*n1
// with n1 the box extent of the first of them.
struct FaceRegion {
  Axis axis = Axis::x;
  index_t plane = 0;
  std::array<index_t, 3> lo{}, hi{};
};

}  // namespace adi::detail
