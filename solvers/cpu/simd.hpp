#pragma once
// Portable fixed-width vectors for the host kernels: GCC/Clang vector extensions,
// so one source compiles to AVX-512, AVX2, SSE or NEON with -march=native. The
// width follows the vector unit this translation unit is compiled for.
#include <cstdint>
#include <cstring>
#include <utility>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace adi::cpu::simd {

#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;
#elif defined(__AVX__)
inline constexpr int kVectorBytes = 32;
#else
inline constexpr int kVectorBytes = 16;
#endif

// Lanes of one hardware vector of T (16 floats / 8 doubles with AVX-512).
template <class T>
inline constexpr int kWidth = kVectorBytes / static_cast<int>(sizeof(T));

template <class T, int W>
struct VecOf {
  static_assert(W >= 1 && (W & (W - 1)) == 0, "vector width must be a power of two");
  typedef T type __attribute__((vector_size(W * sizeof(T))));
};
// W lanes of T. W may be smaller than the hardware width (tails of a batch).
template <class T, int W>
using Vec = typename VecOf<T, W>::type;
// What a lane-wise comparison of two Vec returns (all-ones / zero integer lanes).
template <class V>
using Mask = decltype(V{} < V{});

template <class V, class T>
inline V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);  // an unaligned vector load
  return v;
}
template <class V, class T>
inline void store(T* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}
// Non-temporal store of a full hardware vector at an address aligned to its size
// (the caller checks); other widths and machines without one store normally.
template <class V, class T>
inline void stream(T* p, const V& v) {
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(p), (__m512i)v);
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (sizeof(V) == 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(p), (__m256i)v);
    return;
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(V) == 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(p), (__m128i)v);
    return;
  }
#endif
  store(p, v);
}
// Orders the non-temporal stores of this thread before what follows.
inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

template <class V, class T>
inline V broadcast(T x) {
  return V{} + x;
}

// Lanes that hold zero, an infinity or a NaN: r - r is 0 only for finite r.
// Applied to 1/pivot it flags zero, non-finite and overflowing pivots at once.
template <class V>
inline Mask<V> not_finite_or_zero(const V& r) {
  return (r - r != V{}) | (r == V{});
}

// Index of the first set lane of a mask, or -1.
template <int W, class M>
inline int first_set(const M& m) {
  for (int j = 0; j < W; ++j)
    if (m[j]) return j;
  return -1;
}

namespace detail {
// One butterfly stage of the in-register transpose: swaps bit K of the row index
// with bit K of the column index (paper section 5, figure 6), W log2 W shuffles in all.
template <int W, int K, int I>
constexpr int lo_index() {
  return (I & K) ? W + I - K : I;
}
template <int W, int K, int I>
constexpr int hi_index() {
  return (I & K) ? W + I : I + K;
}
template <int W, int K, class V, int... I>
inline void butterfly(V& x, V& y, std::integer_sequence<int, I...>) {
  const V lo = __builtin_shufflevector(x, y, lo_index<W, K, I>()...);
  const V hi = __builtin_shufflevector(x, y, hi_index<W, K, I>()...);
  x = lo;
  y = hi;
}
template <int W, int K, class V>
inline void stage(V* rows) {
  if constexpr (K < W) {
    for (int i = 0; i < W; ++i)
      if (!(i & K)) butterfly<W, K>(rows[i], rows[i + K], std::make_integer_sequence<int, W>{});
    stage<W, 2 * K>(rows);
  }
}
}  // namespace detail

// Transposes the W x W tile rows[0..W) in registers: afterwards rows[k][j] holds
// what rows[j][k] held.
template <int W, class V>
inline void transpose(V* rows) {
  detail::stage<W, 1>(rows);
}

}  // namespace adi::cpu::simd
