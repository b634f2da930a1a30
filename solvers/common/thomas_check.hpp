#pragma once
// When Thomas without pivoting is unsafe: the test every non-pivoting elimination applies
// to each row, written once for host scalars, host SIMD lanes (GCC vectors) and CUDA.
//
// Thomas factorises A = L U with l_i = a_i / p_{i-1}, p_i = b_i - a_i c*_{i-1},
// c*_{i-1} = c_{i-1} / p_{i-1}. Its backward error is bounded by eps |L| |U| (Higham,
// "Accuracy and Stability", 9.5), and |L| |U| differs from |A| only on the diagonal, by
// |l_i c_{i-1}| = |a_i c*_{i-1}|: the growth of row i. Diagonally dominant rows, symmetric
// positive definite, M- and totally nonnegative matrices keep it below max(|a_i|, |b_i|,
// |c_i|) (there |L||U| = |A|), so
//
//     unsafe row i  <=>  |a_i c*_{i-1}| > kThomasGrowth * max(|a_i|, |b_i|, |c_i|)
//
// never fires on them, and a line that passes it is solved with a backward error within
// ~2 kThomasGrowth eps of |A| row by row (what LAPACK's pivoting gtsv guarantees up to a
// small constant). Measured (scripts in docs/pivoting.md): dominant random lines, fp32 and
// fp64, periodic or not, growth < 0.5 of the bound's scale; the issue-23 cases 5e7 (b = 1e-8,
// a = c = 1), 73 (Toeplitz b = 1, a = c = 0.6, n = 64) and 490 (the same periodic, n = 257).
// The product a_i c*_{i-1} is already computed by the elimination; the test adds three
// absolute values, two max, a multiply and a compare per row (no division, no branch).
#if defined(__CUDACC__)
#define ADI_CHECK_HD __host__ __device__ __forceinline__
#else
#define ADI_CHECK_HD inline
#endif

namespace adi::common {

// Growth |a_i c*_{i-1}| allowed, in units of the row's largest coefficient.
inline constexpr double kThomasGrowth = 4.0;

// Measurement only: compiled with -DADI_THOMAS_CHECK=0 the test is constant false, so the
// benchmarks can time the kernels without it (scripts/gpu_pivoting_check.sh --with-nocheck builds both; the
// library is never shipped that way: automatic then never falls back).
#ifndef ADI_THOMAS_CHECK
#define ADI_THOMAS_CHECK 1
#endif
// ADI_THOMAS_CHECK_HERE is the one switch every check reads: 1 where the test runs, 0
// where it is compiled out. In device code it is 0: measured on an H100
// (bench_cuda_tridiagonal, base aa95eb7 vs the check, same call) it cost the dispatch's
// kernels 17-46% at 256^3 (fp64 Y thomas_pcr_strided 0.299 -> 0.502 ms), against <= 5% asked;
// so on CUDA only zero and non-finite pivots are caught, as before (docs/pivoting.md). The
// host passes of the same .cu files keep it (no second meaning of an inline function).
#if defined(__CUDA_ARCH__)
#define ADI_THOMAS_CHECK_HERE 0
#else
#define ADI_THOMAS_CHECK_HERE ADI_THOMAS_CHECK
#endif

// |x| for scalars and GCC vectors alike (a vector ?: selects lane by lane).
template <class V>
ADI_CHECK_HD V magnitude(V x) {
  return x < V(x - x) ? -x : x;
}
template <class V>
ADI_CHECK_HD V larger(V x, V y) {
  return x < y ? y : x;
}

// True (all-ones lanes for vectors) where eliminating a row whose product a_i c*_{i-1} is
// `acs` grows the factors beyond the bound above. a, b, c are the row's coefficients (b
// as the elimination sees it: the periodic split's modified corners included). A NaN acs
// compares false here; the pivot test of each kernel (1/pivot not finite) catches it.
template <class T, class V>
ADI_CHECK_HD auto thomas_unsafe(V acs, V a, V b, V c) {
#if ADI_THOMAS_CHECK_HERE
  return magnitude(acs) > larger(magnitude(a), larger(magnitude(b), magnitude(c))) * T(kThomasGrowth);
#else
  // Compiled out (above): a constant false of the mask type (lanes all clear for vectors),
  // so nothing stays live for it.
  return decltype(acs > a){};
#endif
}
// The same where only the lane type is at hand: tau = kThomasGrowth as a V.
template <class V>
ADI_CHECK_HD auto thomas_unsafe_lanes(V acs, V a, V b, V c, V tau) {
#if ADI_THOMAS_CHECK_HERE
  return magnitude(acs) > larger(magnitude(a), larger(magnitude(b), magnitude(c))) * tau;
#else
  return decltype(acs > a){};
#endif
}

// The device check (issue 23): one compare per row, on a value the elimination has already
// computed, so nothing else stays live. The multiplier c*_i = c_i / p_i bounds the growth
// of the next row: |a_{i+1} c*_i| <= |c*_i| |a_{i+1}|, so a line whose |c*_i| stay within
// kThomasGrowth passes thomas_unsafe above (it is the stronger test: it may fire where
// thomas_unsafe would not, e.g. on SPD matrices with a tiny leading pivot, and never the
// other way round). Row diagonally dominant lines keep |c*_i| < 1 (by induction:
// |c*_i| <= |c_i| / (|b_i| - |a_i| |c*_{i-1}|) <= 1); the heat operator (1 + 2r, -r) stays
// below 1 for every r (0.99 at r = 1e4); the dominant random lines of the tests stay below
// 0.5. It fires on the issue-23 cases: |c*| reaches 1e8 (b = 1e-8, a = c = 1) and 268
// (Toeplitz b = 1, a = c = 0.6, n = 64).
// Where to call it (the CUDA Thomas loops): right after cp = c * r, fold it into the pivot
// test the kernel already has, `bad |= bad_pivot(piv) || thomas_unsafe_multiplier(cp);`
// (one FSETP/DSETP with an absolute-value operand, OR-ed into the predicate), in place of
// thomas_unsafe(ai * cp, ai, bi, ci); for shared bands once per solve where the factors are
// generated (thomas_factors.cuh), not per line. Unlike thomas_unsafe it is not compiled out
// of device code: only -DADI_THOMAS_CHECK=0 (the benchmarks' measurement build) removes it.
template <class V>
ADI_CHECK_HD auto thomas_unsafe_multiplier(V cs) {
#if ADI_THOMAS_CHECK
  return magnitude(cs) > V(kThomasGrowth);
#else
  return decltype(cs > cs){};
#endif
}

// The device form, as the CUDA Thomas loops call it right after c*_i = c_i / p_i:
// thomas_unsafe_multiplier in device code; nothing in the host passes of the same .cu files,
// which apply thomas_unsafe (so the host's meaning of a failing line does not change).
// On the device V is float or double, and the absolute value is the compare's operand
// modifier (one FSETP/DSETP): magnitude()'s generic form (x < x - x ? -x : x, for GCC vectors)
// costs an add and a select more per test, which nvcc cannot drop (x - x is NaN for an
// infinite x). Same answer for every input, NaN included (false).
template <class V>
ADI_CHECK_HD auto thomas_unsafe_on_device(V cs) {
#if defined(__CUDA_ARCH__)
#if ADI_THOMAS_CHECK
  if constexpr (sizeof(V) == sizeof(float))
    return fabsf(cs) > V(kThomasGrowth);
  else
    return fabs(cs) > V(kThomasGrowth);
#else
  return false;
#endif
#else
  return decltype(cs > cs){};
#endif
}
}  // namespace adi::common
