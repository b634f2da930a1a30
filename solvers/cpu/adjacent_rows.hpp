#pragma once
// Row access for W lines that are neighbours in memory (lane j = line l0 + j at
// offset +j): row i of the group is one vector load at i*stride, no transpose.
// With W = 1 it reads a single line of any stride (the scalar kernel).
#include "adi/layout.hpp"
#include "solvers/cpu/simd.hpp"

namespace adi::cpu::detail {

template <class T, int W>
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
  V at(const T* q, int k) const { return simd::load<V>(q + (i0 + k) * stride); }
  V a(int k) const { return at(pa, k); }
  V b(int k) const { return at(pb, k); }
  V c(int k) const { return at(pc, k); }
  V d(int k) const { return at(pd, k); }
};

template <class T, int W>
struct AdjacentRowsOut {
  using V = simd::Vec<T, W>;
  static constexpr int block = 16;
  T* pu;
  index_t stride;
  index_t i0 = 0;

  void begin(index_t i, int) { i0 = i; }
  void put(int k, const V& v) { simd::store(pu + (i0 + k) * stride, v); }
  void flush() {}
};

}  // namespace adi::cpu::detail
