#pragma once
// Test machinery for the variable-size batched Cholesky (adi/batched_cholesky.hpp), shared
// by the host and CUDA tests: random SPD batches (diagonally dominant, so every pivot is
// comfortably positive), stored with leading dimensions larger than the sizes and NaN in
// the strict upper triangle and the rows past each size (never to be read into a result
// nor written), optional non-SPD matrices, and checks against the fp64 reference
// (solvers/reference/cholesky.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adi/batched_cholesky.hpp"
#include "adi/field.hpp"
#include "solvers/reference/cholesky.hpp"
#include "tests/solvers/variable_tridiagonal_cases.hpp"  // make_sizes, Dist

namespace adi::test_cholesky {

using test_variable::Dist;
using test_variable::make_sizes;

template <class T>
struct Batch {
  std::vector<int> n, ld;
  std::vector<std::vector<T>> A;      // input, column-major with ld[s], NaN outside the lower triangle
  std::vector<std::vector<T>> L;      // reference factor (same storage)
  std::vector<int> info;              // reference info
  std::vector<std::vector<T>> B, X;   // right-hand sides (ldb = ld) and reference solutions
  int nrhs = 2;
};

// Non-SPD matrices: `bad[s] = j` makes column j of matrix s fail (A(j, j) very negative).
template <class T>
Batch<T> make_batch(const std::vector<int>& n, std::uint32_t seed, const std::vector<std::pair<int, int>>& bad = {},
                    int nrhs = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Batch<T> b;
  b.n = n;
  b.nrhs = nrhs;
  for (std::size_t s = 0; s < n.size(); ++s) {
    const int m = n[s];
    const int ld = m + 1 + static_cast<int>(s % 3);
    std::vector<T> a(static_cast<std::size_t>(ld) * std::max(m, 1), nan);
    std::vector<double> rowsum(m, 0.0);
    for (int j = 0; j < m; ++j)
      for (int i = j + 1; i < m; ++i) {
        const T x = static_cast<T>(u(rng) / std::sqrt(double(m)));
        a[i + static_cast<long>(j) * ld] = x;
        rowsum[i] += std::abs(double(x));
        rowsum[j] += std::abs(double(x));
      }
    for (int j = 0; j < m; ++j) a[j + static_cast<long>(j) * ld] = static_cast<T>(rowsum[j] + 1.0 + 0.5 * (u(rng) + 1));
    for (const auto& [which, col] : bad)
      if (which == static_cast<int>(s) && col < m) a[col + static_cast<long>(col) * ld] = T(-100);
    std::vector<T> l = a;
    const int inf = reference::cholesky_factor(m, l.data(), ld);
    std::vector<T> rhs(static_cast<std::size_t>(ld) * nrhs, nan), x = rhs;
    for (int r = 0; r < nrhs; ++r)
      for (int i = 0; i < m; ++i) rhs[i + static_cast<long>(r) * ld] = static_cast<T>(u(rng));
    x = rhs;
    if (inf == 0) reference::cholesky_solve(m, l.data(), ld, nrhs, x.data(), ld);
    b.ld.push_back(ld);
    b.A.push_back(std::move(a));
    b.L.push_back(std::move(l));
    b.info.push_back(inf);
    b.B.push_back(std::move(rhs));
    b.X.push_back(std::move(x));
  }
  return b;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-4 : 1e-11;
}

// Compares a factored matrix with the reference: columns < good hold L (lower part), the
// rest of the stored matrix equals the input (NaN where the input was NaN).
template <class T>
void expect_factor(const Batch<T>& b, std::size_t s, const std::vector<T>& got) {
  const int m = b.n[s], ld = b.ld[s];
  const int good = b.info[s] ? b.info[s] - 1 : m;
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < ld; ++i) {
      const long k = i + static_cast<long>(j) * ld;
      const bool factored = j < good && i >= j && i < m;
      const T want = factored ? b.L[s][k] : b.A[s][k];
      if (std::isnan(double(want))) {
        ASSERT_TRUE(std::isnan(double(got[k]))) << "matrix " << s << " (n " << m << ") element (" << i << ", " << j
                                                << ") outside the lower triangle was written";
      } else {
        ASSERT_NEAR(double(got[k]), double(want), tolerance<T>() * (1 + std::abs(double(want))))
            << "matrix " << s << " (n " << m << ", info " << b.info[s] << ") element (" << i << ", " << j << ")";
      }
    }
}

enum class Layout { pointers, compact };

// Runs factor (+ solve) through the public plan on `exec` and checks every matrix.
template <class T>
void run_case(const Executor& exec, const Batch<T>& b, Layout layout, CholeskyOptions opt, bool solve = true) {
  SCOPED_TRACE(std::string(layout == Layout::pointers ? "pointers" : "compact") + " kernel " +
               cholesky_kernel_name(opt.kernel) + " on " + exec.name() + " (" + (sizeof(T) == 4 ? "float" : "double") +
               ", " + std::to_string(b.n.size()) + " matrices)");
  const index_t count = static_cast<index_t>(b.n.size());
  VariableBatchPlan batch(exec, BatchSizes{b.n.data(), count});
  std::vector<T> got_all;
  std::vector<int> info(static_cast<std::size_t>(std::max<index_t>(count, 1)), -7);
  Array<int> dinfo(std::max<index_t>(count, 1), exec);
  std::vector<std::vector<T>> got(b.n.size()), xs(b.n.size());
  if (layout == Layout::pointers) {
    // Each matrix in its own slot of one array, leading dimensions as made.
    std::vector<index_t> off(count + 1, 0), boff(count + 1, 0);
    for (index_t s = 0; s < count; ++s) {
      off[s + 1] = off[s] + static_cast<index_t>(b.A[s].size());
      boff[s + 1] = boff[s] + static_cast<index_t>(b.B[s].size());
    }
    std::vector<T> host(std::max<index_t>(off[count], 1)), hb(std::max<index_t>(boff[count], 1));
    for (index_t s = 0; s < count; ++s) {
      std::copy(b.A[s].begin(), b.A[s].end(), host.begin() + off[s]);
      std::copy(b.B[s].begin(), b.B[s].end(), hb.begin() + boff[s]);
    }
    Array<T> da(static_cast<index_t>(host.size()), exec), db(static_cast<index_t>(hb.size()), exec);
    da.copy_from_host(host.data());
    db.copy_from_host(hb.data());
    std::vector<T*> pa(std::max<index_t>(count, 1)), pb(std::max<index_t>(count, 1));
    for (index_t s = 0; s < count; ++s) {
      pa[s] = b.n[s] ? da.data() + off[s] : nullptr;  // null is allowed for empty matrices
      pb[s] = b.n[s] ? db.data() + boff[s] : nullptr;
    }
    Array<T*> qa(std::max<index_t>(count, 1), exec), qb(std::max<index_t>(count, 1), exec);
    Array<int> qld(std::max<index_t>(count, 1), exec);
    qa.copy_from_host(pa.data());
    qb.copy_from_host(pb.data());
    std::vector<int> lds = b.ld;
    lds.resize(std::max<index_t>(count, 1), 1);
    qld.copy_from_host(lds.data());
    BatchedCholeskyPlan<T> plan(batch, PointerBatch{qld.data()}, opt);
    plan.factor(qa.data(), dinfo.data());
    if (solve) plan.solve(qa.data(), qb.data(), b.nrhs, qld.data(), dinfo.data());
    da.copy_to_host(host.data());
    db.copy_to_host(hb.data());
    for (index_t s = 0; s < count; ++s) {
      got[s].assign(host.begin() + off[s], host.begin() + off[s + 1]);
      xs[s].assign(hb.begin() + boff[s], hb.begin() + boff[s + 1]);
    }
  } else {
    // Packed: n_s^2 values per matrix, ld = n_s; compared through a re-strided copy.
    index_t total = 0, btotal = 0;
    for (int m : b.n) total += static_cast<index_t>(m) * m, btotal += static_cast<index_t>(m) * b.nrhs;
    std::vector<T> host(std::max<index_t>(total, 1)), hb(std::max<index_t>(btotal, 1));
    index_t at = 0, bt = 0;
    for (index_t s = 0; s < count; ++s) {
      for (int j = 0; j < b.n[s]; ++j)
        for (int i = 0; i < b.n[s]; ++i) host[at + i + j * b.n[s]] = b.A[s][i + static_cast<long>(j) * b.ld[s]];
      for (int r = 0; r < b.nrhs; ++r)
        for (int i = 0; i < b.n[s]; ++i) hb[bt + i + r * b.n[s]] = b.B[s][i + static_cast<long>(r) * b.ld[s]];
      at += static_cast<index_t>(b.n[s]) * b.n[s];
      bt += static_cast<index_t>(b.n[s]) * b.nrhs;
    }
    Array<T> da(static_cast<index_t>(host.size()), exec), db(static_cast<index_t>(hb.size()), exec);
    da.copy_from_host(host.data());
    db.copy_from_host(hb.data());
    BatchedCholeskyPlan<T> plan(batch, CompactBatch{}, opt);
    plan.factor(da.data(), dinfo.data());
    if (solve) plan.solve(da.data(), db.data(), b.nrhs, dinfo.data());
    da.copy_to_host(host.data());
    db.copy_to_host(hb.data());
    at = bt = 0;
    for (index_t s = 0; s < count; ++s) {
      got[s] = b.A[s];  // NaN outside the n x n block, as in the reference storage
      xs[s] = b.B[s];
      for (int j = 0; j < b.n[s]; ++j)
        for (int i = 0; i < b.n[s]; ++i) got[s][i + static_cast<long>(j) * b.ld[s]] = host[at + i + j * b.n[s]];
      for (int r = 0; r < b.nrhs; ++r)
        for (int i = 0; i < b.n[s]; ++i) xs[s][i + static_cast<long>(r) * b.ld[s]] = hb[bt + i + r * b.n[s]];
      at += static_cast<index_t>(b.n[s]) * b.n[s];
      bt += static_cast<index_t>(b.n[s]) * b.nrhs;
    }
  }
  dinfo.copy_to_host(info.data());
  for (index_t s = 0; s < count; ++s) {
    ASSERT_EQ(info[s], b.info[s]) << "info of matrix " << s << " (n " << b.n[s] << ")";
    expect_factor(b, static_cast<std::size_t>(s), got[s]);
    if (!solve) continue;
    for (std::size_t k = 0; k < xs[s].size(); ++k) {
      const double want = double(b.X[s][k]);  // failed matrices: B untouched
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(double(xs[s][k]))) << "matrix " << s << ": B outside n x nrhs written";
      } else {
        ASSERT_NEAR(double(xs[s][k]), want, 20 * tolerance<T>() * (1 + std::abs(want)))
            << "solution of matrix " << s << " (n " << b.n[s] << ") element " << k;
      }
    }
  }
}

// Sizes for a (N, distribution) case: `count` sizes with 0, 1 and sizes past a warp / a
// block mixed in, capped at N.
inline std::vector<int> case_sizes(Dist dist, int N, int count, std::uint32_t seed) {
  return make_sizes(dist, N, count, seed, {0, 1, std::min(N, 33), 0, std::min(N, 129), N});
}

}  // namespace adi::test_cholesky
