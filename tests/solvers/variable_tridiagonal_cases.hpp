#pragma once
// Test machinery for variable-size tridiagonal batches (adi/variable_tridiagonal.hpp),
// shared by the host and CUDA tests: size distributions (uniform [1, N], Gaussian around
// N/2, with 0, 1 and sizes past a warp or a block mixed in), random diagonally dominant
// systems laid out in every layout, outputs NaN-poisoned (padding included), and a check
// of every system against the plain fp64 reference (solvers/reference/thomas.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "adi/field.hpp"
#include "adi/variable_tridiagonal.hpp"
#include "solvers/reference/thomas.hpp"

namespace adi::test_variable {

enum class Dist { uniform, gaussian };
inline const char* dist_name(Dist d) { return d == Dist::uniform ? "uniform" : "gaussian"; }

// `count` sizes in [1, N]: uniform, or Gaussian around N/2 (sigma N/6, clamped), as in the
// vbatched paper (section IV-B). `extras` (0, 1, 33, 129, ...) overwrite evenly spread slots
// so that every batch holds them wherever they would sort.
inline std::vector<int> make_sizes(Dist dist, int N, int count, std::uint32_t seed, std::vector<int> extras = {}) {
  std::mt19937 rng(seed);
  std::vector<int> n(static_cast<std::size_t>(count));
  std::uniform_int_distribution<int> uni(1, std::max(1, N));
  std::normal_distribution<double> gauss(N / 2.0, std::max(1.0, N / 6.0));
  for (int& x : n)
    x = dist == Dist::uniform ? uni(rng) : std::clamp(static_cast<int>(std::lround(gauss(rng))), 1, std::max(1, N));
  for (std::size_t i = 0; i < extras.size() && !n.empty(); ++i)
    n[(i * 7919 + 3) % n.size()] = extras[i];
  return n;
}

enum class Layout { padded, sorted, compact, compact_gaps, pointers };
inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::padded: return "padded";
    case Layout::sorted: return "sorted";
    case Layout::compact: return "compact";
    case Layout::compact_gaps: return "compact_gaps";
    default: return "pointers";
  }
}

// Host copies of one batch: per-system a, b, c, d (diagonally dominant) and the reference x.
template <class T>
struct Systems {
  std::vector<int> n;
  std::vector<std::vector<T>> a, b, c, d;
  std::vector<std::vector<double>> x;  // fp64 reference, from the T-rounded inputs
};

template <class T>
Systems<T> make_systems(const std::vector<int>& n, bool periodic, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> off(-1.0, 1.0), extra(0.5, 2.0), rhs(-1.0, 1.0);
  Systems<T> s;
  s.n = n;
  for (int m : n) {
    std::vector<T> a(m), b(m), c(m), d(m);
    for (int k = 0; k < m; ++k) {
      a[k] = static_cast<T>(off(rng));
      c[k] = static_cast<T>(off(rng));
      b[k] = static_cast<T>(std::abs(double(a[k])) + std::abs(double(c[k])) + extra(rng));
      d[k] = static_cast<T>(rhs(rng));
    }
    std::vector<double> x, cs;
    auto at = [](const std::vector<T>& v) { return [&v](index_t k) { return double(v[k]); }; };
    if (m > 0) {
      const bool ok = periodic ? reference::cyclic_line(m, at(a), at(b), at(c), at(d), x)
                               : reference::thomas_line(m, at(a), at(b), at(c), at(d), x, cs);
      EXPECT_TRUE(ok);
    }
    s.a.push_back(std::move(a));
    s.b.push_back(std::move(b));
    s.c.push_back(std::move(c));
    s.d.push_back(std::move(d));
    s.x.push_back(std::move(x));
  }
  return s;
}

template <class T>
T tolerance() {
  return std::is_same_v<T, float> ? T(2e-4) : T(1e-11);
}

struct Case {
  Layout layout = Layout::padded;
  VariableKernel kernel = VariableKernel::automatic;
  bool periodic = false;
  bool in_place = false;
  Pivoting pivoting = Pivoting::automatic;  // stop 37: partial runs solvers/cuda/pivoting_variable.cuh on CUDA
  std::string describe() const {
    return std::string(layout_name(layout)) + " " + variable_kernel_name(kernel) + (periodic ? " periodic" : "") +
           (in_place ? " in-place" : "") + (pivoting == Pivoting::partial ? " partial pivoting" : "");
  }
};

// Lays the systems out in `c.layout` in exec's memory, solves with a VariableTridiagonalPlan,
// copies back and compares each system with the reference. Padding and gaps start NaN
// and must stay NaN (never written).
template <class T>
void run_case(const Executor& exec, const Systems<T>& sys, const Case& c, std::uint32_t seed = 5) {
  SCOPED_TRACE(c.describe() + " on " + exec.name() + " (" + (sizeof(T) == 4 ? "float" : "double") + ", " +
               std::to_string(sys.n.size()) + " systems)");
  const index_t count = static_cast<index_t>(sys.n.size());
  VariableBatchPlan batch(exec, BatchSizes{sys.n.data(), count});
  const T nan = std::numeric_limits<T>::quiet_NaN();
  VariableTridiagonalOptions opt;
  opt.periodic = c.periodic;
  opt.kernel = c.kernel;
  opt.pivoting = c.pivoting;

  // Host index of element k of system s, per layout.
  std::vector<index_t> offsets(static_cast<std::size_t>(count));
  index_t span = 0;
  const int maxn = batch.max_size();
  const index_t stride = count + 3;  // padded: a stride larger than the count
  const index_t rows = maxn + 2;     // and more rows than the largest system
  std::mt19937 rng(seed);
  if (c.layout == Layout::compact || c.layout == Layout::compact_gaps || c.layout == Layout::pointers) {
    for (index_t s = 0; s < count; ++s) {
      // Gaps: systems stored in reverse order with holes between them.
      const index_t gap = c.layout == Layout::compact_gaps ? 1 + rng() % 5 : 0;
      offsets[s] = span + gap;
      span += gap + sys.n[s];
    }
    if (c.layout == Layout::compact_gaps) {
      // Reverse the placement so that offsets are not increasing with s.
      for (index_t s = 0; s < count; ++s) offsets[s] = span - offsets[s] - sys.n[s];
    }
  }
  auto index = [&](index_t s, int k) -> index_t {
    switch (c.layout) {
      case Layout::padded: return k * stride + s;
      case Layout::sorted: {
        const VariableBatchView& v = batch.host_view();
        const index_t p = v.position[s];
        return v.chunk_offsets[p / v.chunk_width] + static_cast<index_t>(k) * v.chunk_width + p % v.chunk_width;
      }
      default: return offsets[s] + k;
    }
  };
  if (c.layout == Layout::padded) span = batch.span(PaddedInterleaved{stride, rows});
  if (c.layout == Layout::sorted) span = batch.span(SortedInterleaved{});
  span = std::max<index_t>(span, 1);

  // Host images: inputs NaN outside the systems (CP reads padding and must not care).
  std::vector<T> ha(span, nan), hb(span, nan), hc(span, nan), hd(span, nan), hu(span, nan);
  for (index_t s = 0; s < count; ++s)
    for (int k = 0; k < sys.n[s]; ++k) {
      const index_t i = index(s, k);
      ha[i] = sys.a[s][k];
      hb[i] = sys.b[s][k];
      hc[i] = sys.c[s][k];
      hd[i] = sys.d[s][k];
    }
  Array<T> da(span, exec), db(span, exec), dc(span, exec), dd(span, exec), du(span, exec);
  da.copy_from_host(ha.data());
  db.copy_from_host(hb.data());
  dc.copy_from_host(hc.data());
  dd.copy_from_host(hd.data());
  du.copy_from_host(hu.data());
  T* u = c.in_place ? dd.data() : du.data();

  if (c.layout == Layout::pointers) {
    VariableTridiagonalPlan<T> plan(batch, PointerBatch{}, opt);
    std::vector<const T*> pa(count), pb(count), pc(count), pd(count);
    std::vector<T*> pu(count);
    for (index_t s = 0; s < count; ++s) {
      pa[s] = da.data() + offsets[s];
      pb[s] = db.data() + offsets[s];
      pc[s] = dc.data() + offsets[s];
      pd[s] = dd.data() + offsets[s];
      pu[s] = u + offsets[s];
    }
    Array<const T*> qa(count, exec), qb(count, exec), qc(count, exec), qd(count, exec);
    Array<T*> qu(count, exec);
    qa.copy_from_host(pa.data());
    qb.copy_from_host(pb.data());
    qc.copy_from_host(pc.data());
    qd.copy_from_host(pd.data());
    qu.copy_from_host(pu.data());
    plan.solve(PointerBands<T>{qa.data(), qb.data(), qc.data()}, qd.data(), qu.data());
  } else {
    auto solve = [&](auto layout) {
      VariableTridiagonalPlan<T> plan(batch, layout, opt);
      plan.solve(Bands<T>{da.data(), db.data(), dc.data()}, dd.data(), u);
    };
    switch (c.layout) {
      case Layout::padded: solve(PaddedInterleaved{stride, rows}); break;
      case Layout::sorted: solve(SortedInterleaved{}); break;
      case Layout::compact: solve(CompactBatch{}); break;
      default: {
        Array<index_t> off(count, exec);
        off.copy_from_host(offsets.data());
        solve(CompactBatch{off.data()});
      }
    }
  }
  (c.in_place ? dd : du).copy_to_host(hu.data());

  std::vector<char> inside(span, 0);
  index_t checked = 0;
  for (index_t s = 0; s < count; ++s) {
    double scale = 1;
    for (double v : sys.x[s]) scale = std::max(scale, std::abs(v));
    for (int k = 0; k < sys.n[s]; ++k) {
      const index_t i = index(s, k);
      inside[i] = 1;
      ASSERT_NEAR(double(hu[i]), sys.x[s][k], tolerance<T>() * scale) << "system " << s << " (size " << sys.n[s]
                                                                        << ") row " << k;
      ++checked;
    }
  }
  EXPECT_EQ(checked, batch.total_size());
  if (!c.in_place)
    for (index_t i = 0; i < span; ++i)
      if (!inside[i]) {
        ASSERT_TRUE(std::isnan(double(hu[i]))) << "padding or gap element " << i << " was written";
      }
}

}  // namespace adi::test_variable
