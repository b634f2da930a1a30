// The rolled form of the device block partition passes (M = kRolled: runtime block size,
// solvers/cuda/block_partition_local_passes.cuh; compiled for M = 6..8 by default, issue 15
// item 8) against the compile-time form of the same M, run as host code: one call per line
// and sub-segment, both levels (S = 1 and S > 1), M = 2..8, both precisions, odd segment
// lengths, a singular pivot block. The compile-time form is checked against the reference
// solve by tests/mpi/test_distributed_block_tridiagonal.cpp (on the GPU too).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "solvers/cuda/block_partition_local_passes.cuh"

namespace {

using adi::index_t;
namespace bp = adi::cuda_backend::block_partition;

template <class T>
struct Problem {
  int M;
  index_t L, n;
  int S;
  std::vector<T> a, b, c, d, sol;
  // Per form: u, alpha, gamma, red, red1, alpha2, gamma2, x2.
  struct Out {
    std::vector<T> u, alpha, gamma, red, red1, alpha2, gamma2, x2;
  };
  Problem(int M_, index_t L_, index_t n_, int S_, unsigned seed) : M(M_), L(L_), n(n_), S(S_) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const std::size_t nb = std::size_t(n * L * M * M), nv = std::size_t(n * L * M);
    a.resize(nb), b.resize(nb), c.resize(nb), d.resize(nv), sol.resize(std::size_t(L * 2 * M));
    const double off = 1.0 / M;
    for (std::size_t i = 0; i < nb; ++i) {
      a[i] = T(off * u(rng)), c[i] = T(off * u(rng));
      b[i] = T((i % std::size_t(M * M)) % std::size_t(M + 1) == 0 ? 4.0 + u(rng) : off * u(rng));
    }
    for (auto& x : d) x = T(u(rng));
    for (auto& x : sol) x = T(u(rng));
  }
  Out fresh() const {
    const index_t MM = index_t(M) * M, R = 3 * MM + M;
    Out o;
    const T nan = T(NAN);
    o.u.assign(d.size(), nan);
    o.alpha.assign(a.size(), nan);
    o.gamma.assign(a.size(), nan);
    o.red.assign(std::size_t(L * 2 * R), nan);
    o.red1.assign(std::size_t(2 * R * S * L), nan);
    o.alpha2.assign(std::size_t(2 * S * MM * L), nan);
    o.gamma2.assign(o.alpha2.size(), nan);
    o.x2.assign(std::size_t(2 * S * M * L), nan);
    return o;
  }
  bp::Args<T> args(Out& o) const {
    adi::BlockLineSet ls;
    ls.m = M;
    ls.n = n;
    ls.count0 = L;
    ls.count1 = 1;
    ls.blocks = {L * M * M, index_t(M) * M, 0, 1};  // interleaved lines (a split z axis)
    ls.vectors = {L * M, M, 0, 1};
    const index_t R = 3 * index_t(M) * M + M;
    return bp::Args<T>{ls,     a.data(), b.data(), c.data(), d.data(), o.u.data(), o.alpha.data(), o.gamma.data(),
                       o.red.data(), sol.data(), 2 * R, R, 2 * index_t(M), M, T(1e-12), true, false, S,
                       o.red1.data(), o.alpha2.data(), o.gamma2.data(), o.x2.data()};
  }
};

// Both phases for every line, as the kernels run them (reduce, chain, back chain, back).
template <class T, int K>
void run_passes(const Problem<T>& p, typename Problem<T>::Out& o) {
  const bp::Args<T> g = p.args(o);
  for (index_t l = 0; l < p.L; ++l)
    for (int s = 0; s < p.S; ++s) bp::reduce_line<T, K>(g, l, s);
  if (p.S > 1)
    for (index_t l = 0; l < p.L; ++l) bp::reduce_chain<T, K>(g, l);
  if (p.S > 1)
    for (index_t l = 0; l < p.L; ++l) bp::back_chain<T, K>(g, l);
  for (index_t l = 0; l < p.L; ++l)
    for (int s = 0; s < p.S; ++s) bp::back_line<T, K>(g, l, s);
}

template <class T>
void run_fixed(int M, const Problem<T>& p, typename Problem<T>::Out& o) {
  switch (M) {
    case 2: run_passes<T, 2>(p, o); break;
    case 3: run_passes<T, 3>(p, o); break;
    case 4: run_passes<T, 4>(p, o); break;
    case 5: run_passes<T, 5>(p, o); break;
    case 6: run_passes<T, 6>(p, o); break;
    case 7: run_passes<T, 7>(p, o); break;
    default: run_passes<T, 8>(p, o); break;
  }
}

// max |x - y| / max(1, |y|) over two arrays (NaN in the same places counts as equal).
template <class T>
double diff(const std::vector<T>& x, const std::vector<T>& y) {
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(double(x[i])) && std::isnan(double(y[i]))) continue;
    const double e = std::abs(double(x[i]) - double(y[i])) / std::max(1.0, std::abs(double(y[i])));
    m = std::isnan(e) ? INFINITY : std::max(m, e);
  }
  return m;
}

template <class T>
void compare(int M, index_t n, int S, unsigned seed, double tol, bool singular = false) {
  Problem<T> p(M, 7, n, S, seed);
  if (singular)  // line 3, block row 2: B = 0 (a zero pivot block where the sub-segment eliminates)
    for (int v = 0; v < M * M; ++v) p.b[std::size_t((2 * p.L + 3) * M * M + v)] = T(0), p.a[std::size_t((2 * p.L + 3) * M * M + v)] = T(0);
  auto fixed = p.fresh(), rolled = p.fresh();
  run_fixed<T>(M, p, fixed);
  run_passes<T, bp::kRolled>(p, rolled);
  const std::string what = "M " + std::to_string(M) + ", n " + std::to_string(n) + ", S " + std::to_string(S) +
                           (sizeof(T) == 4 ? " fp32" : " fp64") + (singular ? " singular" : "");
  EXPECT_LE(diff(rolled.u, fixed.u), tol) << what;
  EXPECT_LE(diff(rolled.red, fixed.red), tol) << what;
  EXPECT_LE(diff(rolled.alpha, fixed.alpha), tol) << what;
  EXPECT_LE(diff(rolled.gamma, fixed.gamma), tol) << what;
  if (S > 1) {
    EXPECT_LE(diff(rolled.red1, fixed.red1), tol) << what;
    EXPECT_LE(diff(rolled.x2, fixed.x2), tol) << what;
  }
  if (!singular) {
    for (const T x : rolled.u) ASSERT_TRUE(std::isfinite(double(x))) << what;
  }
}

TEST(BlockPartitionRolled, EqualsTheCompileTimeFormFp64) {
  for (int M = 2; M <= 8; ++M)
    for (index_t n : {2, 3, 9, 31})
      for (int S : {1, 2, 3}) {
        if (S > 1 && n < 2 * S) continue;
        compare<double>(M, n, S, 100u + unsigned(M * 7 + S), 1e-13);
      }
}

TEST(BlockPartitionRolled, EqualsTheCompileTimeFormFp32) {
  for (int M : {2, 5, 6, 7, 8})
    for (index_t n : {2, 33})
      for (int S : {1, 4}) {
        if (S > 1 && n < 2 * S) continue;
        compare<float>(M, n, S, 200u + unsigned(M), 1e-5);
      }
}

TEST(BlockPartitionRolled, SingularBlockGivesNaNRowsInBothForms) {
  for (int M : {3, 6, 8}) compare<double>(M, 9, 1, 300u + unsigned(M), 1e-13, true);
}

}  // namespace
