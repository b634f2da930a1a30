#pragma once
// Test machinery for the CUDA stencil kernels (solvers/cuda/stencil_*.cu): a random
// StencilView on a padded box (per axis shared or per-node bands, periodic or not,
// Dirichlet ends or not, mixed pairs), built once on the host and copied to the device,
// so that each CUDA kernel can be run beside its host version (solvers/cpu/stencil_*)
// on the same data. Outputs start NaN-poisoned on both sides.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "adi/base/stencil.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/layout.hpp"


namespace adi::test_cuda {

struct AxisSpec {
  bool shared = true;
  bool periodic = false;
  bool dirichlet = true;  // both ends (ignored when periodic)
};

struct StencilSpec {
  Box3 box;
  std::array<AxisSpec, 3> axis{};
  bool mixed = false;  // every pair of active axes
  std::uint32_t seed = 1;
  std::string describe() const {
    std::string s = std::to_string(box.nx) + "x" + std::to_string(box.ny) + "x" + std::to_string(box.nz) +
                    " (sy " + std::to_string(box.sy) + ", sz " + std::to_string(box.sz) + ")";
    for (int a = 0; a < 3; ++a)
      s += std::string(" ") + "xyz"[a] + ":" + (axis[a].shared ? "shared" : "full") +
           (axis[a].periodic ? ",periodic" : axis[a].dirichlet ? ",dirichlet" : ",open");
    return s + (mixed ? " mixed" : "");
  }
};

// A box with padded rows and planes.
inline Box3 padded(index_t nx, index_t ny, index_t nz) {
  const index_t sy = nx + 3;
  return Box3{nx, ny, nz, sy, sy * ny + 5};
}

inline index_t field_values(const Box3& b) { return b.sz * b.nz + 7; }

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> U(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(U(rng));
  return v;
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// The view's arrays on the host and on the device, and a view for each.
template <class T>
struct StencilData {
  StencilSpec spec;
  std::array<std::vector<T>, 3> a, d, c, fm, f0, fp;
  std::array<std::vector<index_t>, 3> prev, next;
  std::array<std::vector<T>, 3> mixed;
  detail::StencilView<T> host;
  detail::StencilView<T> dev;
  // Device copies.
  std::array<Array<T>, 3> da, dd, dc, dfm, df0, dfp, dmixed;
  std::array<Array<index_t>, 3> dprev, dnext;

  explicit StencilData(const StencilSpec& s) : spec(s) {
    std::mt19937 rng(s.seed);
    const Box3& b = s.box;
    host.box = dev.box = b;
    const index_t total = field_values(b);
    const Executor gpu = Executor::cuda();
    for (int ax = 0; ax < 3; ++ax) {
      const index_t n = b.extent(static_cast<Axis>(ax));
      const AxisSpec& A = s.axis[ax];
      const bool dir = !A.periodic && A.dirichlet && n >= 3;
      host.lo[ax] = dir ? 1 : 0;
      host.hi[ax] = dir ? n - 2 : n - 1;
      if (n == 1) continue;
      const std::size_t bands = A.shared ? static_cast<std::size_t>(n) : static_cast<std::size_t>(total);
      a[ax] = random_values<T>(bands, rng);
      d[ax] = random_values<T>(bands, rng);
      c[ax] = random_values<T>(bands, rng);
      fm[ax] = random_values<T>(n, rng);
      f0[ax] = random_values<T>(n, rng);
      fp[ax] = random_values<T>(n, rng);
      prev[ax].resize(n);
      next[ax].resize(n);
      for (index_t i = 0; i < n; ++i) {
        prev[ax][i] = i > 0 ? i - 1 : (A.periodic ? n - 1 : i);
        next[ax][i] = i < n - 1 ? i + 1 : (A.periodic ? 0 : i);
      }
      auto up = [&](Array<T>& dst, const std::vector<T>& src) {
        dst = Array<T>(static_cast<index_t>(src.size()), gpu);
        dst.copy_from_host(src.data());
      };
      up(da[ax], a[ax]);
      up(dd[ax], d[ax]);
      up(dc[ax], c[ax]);
      up(dfm[ax], fm[ax]);
      up(df0[ax], f0[ax]);
      up(dfp[ax], fp[ax]);
      dprev[ax] = Array<index_t>(n, gpu);
      dnext[ax] = Array<index_t>(n, gpu);
      dprev[ax].copy_from_host(prev[ax].data());
      dnext[ax].copy_from_host(next[ax].data());
      auto set = [&](detail::AxisStencil<T>& S, bool device) {
        S.active = true;
        S.shared = A.shared;
        S.periodic = A.periodic;
        S.n = n;
        S.a = device ? da[ax].data() : a[ax].data();
        S.d = device ? dd[ax].data() : d[ax].data();
        S.c = device ? dc[ax].data() : c[ax].data();
        S.prev = device ? dprev[ax].data() : prev[ax].data();
        S.next = device ? dnext[ax].data() : next[ax].data();
        S.fm = device ? dfm[ax].data() : fm[ax].data();
        S.f0 = device ? df0[ax].data() : f0[ax].data();
        S.fp = device ? dfp[ax].data() : fp[ax].data();
      };
      set(host.axis[ax], false);
      set(dev.axis[ax], true);
    }
    dev.lo = host.lo;
    dev.hi = host.hi;
    const int P[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int m = 0; m < 3 && s.mixed; ++m) {
      if (!host.axis[P[m][0]].active || !host.axis[P[m][1]].active) continue;
      mixed[m] = random_values<T>(static_cast<std::size_t>(total), rng);
      dmixed[m] = Array<T>(total, gpu);
      dmixed[m].copy_from_host(mixed[m].data());
      host.mixed[m] = {true, P[m][0], P[m][1], mixed[m].data()};
      dev.mixed[m] = {true, P[m][0], P[m][1], dmixed[m].data()};
    }
  }

  bool unknown(index_t i, index_t j, index_t k) const {
    return i >= host.lo[0] && i <= host.hi[0] && j >= host.lo[1] && j <= host.hi[1] && k >= host.lo[2] &&
           k <= host.hi[2];
  }
};

// A host vector on the device and back.
template <class T>
Array<T> to_device(const std::vector<T>& h) {
  Array<T> d(static_cast<index_t>(h.size()), Executor::cuda());
  d.copy_from_host(h.data());
  return d;
}
template <class T>
std::vector<T> to_host(const Array<T>& d) {
  std::vector<T> h(static_cast<std::size_t>(d.size()));
  d.copy_to_host(h.data());
  return h;
}

// Every element: written ones finite and within tol of the host's, the others
// bit-identical (both sides started from the same poisoned or random values).
template <class T>
void expect_same(const std::vector<T>& gpu, const std::vector<T>& cpu, double tol, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  std::size_t wrong = 0, first = 0;
  for (std::size_t k = 0; k < gpu.size(); ++k) {
    bool ok;
    if (std::isnan(double(cpu[k])))
      ok = same_bits(gpu[k], cpu[k]);
    else
      ok = std::isfinite(double(gpu[k])) && std::abs(double(gpu[k]) - double(cpu[k])) <= tol;
    if (!ok && wrong++ == 0) first = k;
  }
  EXPECT_EQ(wrong, 0u) << what << ": first bad element " << first << ": gpu " << double(gpu[first]) << ", host "
                       << double(cpu[first]);
}

template <class T>
constexpr double tolerance() {
  return sizeof(T) == 4 ? 2e-4 : 1e-12;
}

}  // namespace adi::test_cuda
