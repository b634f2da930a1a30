#pragma once
// Sherman-Morrison for a periodic (cyclic) tridiagonal line, A = A' + v w^T: the solution
// is y - (w.y / (1 + w.z)) z with A' y = d, A' z = v. The denominator den = 1 + w.z =
// 1 + z_0 + q z_{n-1} vanishes exactly when A is singular (det A = det A' * den), e.g. the
// periodic Laplacian b = 2, a = c = -1. In floating point it then comes out as rounding
// noise instead of 0, and an unchecked solve returns values of 1e12..1e15: every backend
// applies this one test instead, flagging the line like a zero pivot. It is relative to
// the size of the terms that cancel, so it fires only where the cancellation has left no
// correct digits (cond(A) beyond ~1/(64 eps)), never on the diagonally dominant lines of
// the ADI sweeps (den ~ 1 there). Measured |den| / (eps (1 + |z_0| + |q z_{n-1}|)): the
// singular periodic Laplacian 0 .. 2.3 for n = 3 .. 1000 (fp32 and fp64); a dominant line
// (b = 2.5) 1e6 in fp32, 5e14 in fp64. Scalars (host, CUDA) and GCC vectors (host lanes).
#if defined(__CUDACC__)
#define ADI_CYCLIC_HD __host__ __device__ __forceinline__
#else
#define ADI_CYCLIC_HD inline
#endif

namespace adi::common {

template <class T>
struct CyclicEpsilon;
template <>
struct CyclicEpsilon<float> {
  static constexpr float value = 1.1920929e-07f;
};
template <>
struct CyclicEpsilon<double> {
  static constexpr double value = 2.220446049250313e-16;
};

// True (all-ones lanes for vectors) where `value`, a sum of terms whose magnitudes add up
// to `scale`, is zero, not a number, or below 64 eps of `scale`: cancelled to rounding noise.
template <class T, class V>
ADI_CYCLIC_HD auto cancelled(V value, V scale) {
  const V av = value < V(value - value) ? -value : value;
  return (av <= scale * (T(64) * CyclicEpsilon<T>::value)) | (av != av);
}

// den = 1 + z0 + qzl (qzl = q z_{n-1}), the Sherman-Morrison denominator.
template <class T, class V>
ADI_CYCLIC_HD auto singular_cyclic(V den, V z0, V qzl) {
  const V a0 = z0 < V(z0 - z0) ? -z0 : z0;
  const V al = qzl < V(qzl - qzl) ? -qzl : qzl;
  return cancelled<T>(den, T(1) + a0 + al);
}

// A cyclic system of one unknown (x couples to itself on both sides): a + b + c.
template <class T, class V>
ADI_CYCLIC_HD auto singular_self_coupled(V a, V b, V c) {
  const V s = a + b + c;
  const V aa = a < V(a - a) ? -a : a, ab = b < V(b - b) ? -b : b, ac = c < V(c - c) ? -c : c;
  return cancelled<T>(s, aa + ab + ac);
}

}  // namespace adi::common
