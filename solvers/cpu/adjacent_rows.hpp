#pragma once
// Row access for K*W lines that are neighbours in memory (lane l = line l0 + l at
// offset +l): row i of the group is K vector loads at i*stride, no transpose.
// With W = K = 1 it reads a single line of any stride (the scalar kernel).
#include "adi/base/layout.hpp"
#include "solvers/cpu/simd.hpp"

namespace adi::cpu::detail {

template <class T, int W, int K>
struct AdjacentRows {
  using V = simd::Vec<T, W>;
  // Rows per block: only the loop structure (unrolling), nothing is buffered.
  static constexpr int block = 16;
  const T* pa;
  const T* pb;
  const T* pc;
  const T* pd;
  index_t stride;
  index_t i0 = 0;

  template <bool Bands>
  void load(index_t i, int) {
    i0 = i;
  }
  V at(const T* q, int k, int j) const { return simd::load<V>(q + (i0 + k) * stride + j * W); }
  V a(int k, int j) const { return at(pa, k, j); }
  V b(int k, int j) const { return at(pb, k, j); }
  V c(int k, int j) const { return at(pc, k, j); }
  V d(int k, int j) const { return at(pd, k, j); }
};

// Writes row i of the group at i*stride. With `stream` set the stores are non-temporal
// (simd::stream: the caller checks that every vector is aligned to its size): u is not
// read for ownership, so a solve moves 5 arrays instead of 6, and finish() orders them.
template <class T, int W, int K>
struct AdjacentRowsOut {
  using V = simd::Vec<T, W>;
  static constexpr int block = 16;
  T* pu;
  index_t stride;
  bool stream = false;
  index_t i0 = 0;

  void begin(index_t i, int) { i0 = i; }
  void put(int k, int j, const V& v) {
    T* p = pu + (i0 + k) * stride + j * W;
    if (stream)
      simd::stream(p, v);
    else
      simd::store(p, v);
  }
  void flush() {}
  void finish() const {
    if (stream) simd::store_fence();
  }
};

}  // namespace adi::cpu::detail
