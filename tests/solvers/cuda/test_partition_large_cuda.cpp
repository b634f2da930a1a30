// The CUDA partition solver for one large system (solvers/cuda/partition_large.cu).
//
// Emulated*: the warp phases of partition_large_tile.hpp run on the host lane by lane, in
// the order the kernels run them, against a long-double oracle. These run everywhere and
// pin down the indexing (chunks, tiles, levels, partial tiles, periodic corners).
// Device*: the same through adi::LargeTridiagonalPlan on Executor::cuda(); they skip,
// loudly, without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/large_tridiagonal.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/common/partition_large_tile.hpp"
#include "tests/comparison_forms_skip.hpp"
#include "tests/scoped_env.hpp"
#include "tests/solvers/large_tridiagonal_check.hpp"

namespace {

namespace tl = adi::test_large;
using adi::large::Chunks;
using adi::large::i64;
using adi::large::LaneRows;
using adi::large::Level;
using adi::large::LevelPlan;
using adi::large::TileShared;
using adi::large::TileStage;

// Runs the solve exactly as partition_large.cu enqueues it, one warp (tile) after another,
// lanes one after another between the warp's synchronisation points.
// staged: the tiles go through the shared-memory stage (partition_pass1/2<..., true>).
// C: the check's form of pass 1 (LaneCheck: runtime, stop 32's kernels; fused, stop 37's checked
// kernels, pass 2 then off; off, the unchecked kernels: no flag).
template <class T, int M, adi::large::LaneCheck C = adi::large::LaneCheck::runtime>
unsigned long long emulate(const tl::Problem<T>& p, T* u, bool periodic, double tol, bool staged = false) {
  using adi::large::LaneCheck;
  constexpr bool fused = C == LaneCheck::fused;
  constexpr LaneCheck C2 = C == LaneCheck::runtime ? LaneCheck::runtime : LaneCheck::off;
  const LevelPlan plan = LevelPlan::make(p.n, M, sizeof(T));
  std::vector<char> raw(plan.bytes + 256);
  void* ws = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw.data()) + 255) / 256 * 256);
  unsigned long long flag = 0;
  const unsigned long long bias = static_cast<unsigned long long>(p.n);
  Level<T> L[LevelPlan::kMaxLevels];
  adi::large::make_levels<T>(plan, p.n, p.a.data(), p.b.data(), p.c.data(), p.d.data(), u, periodic, tol,
                             C == LaneCheck::off ? nullptr : &flag, bias, ws, L);
  for (int l = 0; l + 1 < plan.levels; ++l) {
    const Chunks ch = Chunks::make(plan.N[l], M);
    for (i64 tile = 0; tile < adi::large::tile_count(ch); ++tile) {
      TileShared<T> sh;
      auto stage = std::make_unique<TileStage<T, M>>();
      TileStage<T, M>* st = staged ? stage.get() : nullptr;
      const Level<T> v = C == LaneCheck::off ? L[l] : adi::large::checks(L[l]);  // what each warp does first
      if (staged)
        for (int lane = 0; lane < 32; ++lane) adi::large::stage_load<T, M>(v, ch, tile, lane, *st);
      bool lanes_bad = false, sub_bad = false;
      for (int lane = 0; lane < 32; ++lane)
        lanes_bad = adi::large::lane_reduce<T, M, C>(v, ch, tile, lane, sh, nullptr, st) || lanes_bad;
      for (int q = 0; q < adi::large::kSubLanes; ++q)
        sub_bad = adi::large::sub_reduce<T, fused>(v, ch, tile, q, sh, false, C != LaneCheck::off && !lanes_bad) ||
                  sub_bad;
      adi::large::tile_reduce<T, fused>(v, ch, tile, sh, C == LaneCheck::off || lanes_bad || sub_bad);
    }
  }
  const int last = plan.levels - 1;
  adi::large::direct_solve<T>(adi::large::checks(L[last]), adi::large::direct_scratch<T>(plan, ws, 0),
                              adi::large::direct_scratch<T>(plan, ws, 1));
  for (int l = last - 1; l >= 0; --l) {
    Level<T> v = L[l];
    v.flag = nullptr;
    const Chunks ch = Chunks::make(plan.N[l], M);
    for (i64 tile = 0; tile < adi::large::tile_count(ch); ++tile) {
      TileShared<T> sh;
      auto stage = std::make_unique<TileStage<T, M>>();
      TileStage<T, M>* st = staged ? stage.get() : nullptr;
      if (staged)
        for (int lane = 0; lane < 32; ++lane) adi::large::stage_load<T, M>(v, ch, tile, lane, *st);
      LaneRows<T, M> keep[32];
      for (int lane = 0; lane < 32; ++lane)
        adi::large::lane_reduce<T, M, C2>(v, ch, tile, lane, sh, &keep[lane], st);
      for (int q = 0; q < adi::large::kSubLanes; ++q) adi::large::sub_reduce<T>(v, ch, tile, q, sh, true, false);
      adi::large::tile_solve<T>(v, ch, tile, sh);
      for (int q = 0; q < adi::large::kSubLanes; ++q) adi::large::sub_solve<T>(ch, tile, q, sh);
      for (int lane = 0; lane < 32; ++lane) adi::large::lane_solve<T, M>(v, ch, tile, lane, sh, keep[lane], st);
      if (staged)
        for (int lane = 0; lane < 32; ++lane) adi::large::stage_store<T, M>(v, ch, tile, lane, *st);
    }
  }
  return flag == 0 ? 0 : bias - flag + 1;  // 1 + the reported row, 0 if none
}

template <class T, int M>
void emulated_sizes(const std::vector<std::int64_t>& sizes) {
  for (bool periodic : {false, true})
    for (std::int64_t n : sizes) {
      auto p = tl::make<T>(n, periodic, 31 + unsigned(n) + M);
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      for (bool staged : {false, true}) {
        const std::string what = "n=" + std::to_string(n) + " M=" + std::to_string(M) + (staged ? " staged" : "") +
                                 (periodic ? " periodic" : "");
        std::vector<T> u(n, std::numeric_limits<T>::quiet_NaN());
        ASSERT_EQ((emulate<T, M>(p, u.data(), periodic, 0.0, staged)), 0u) << what;
        EXPECT_LE(tl::rel_error(p.x, u.data(), n), tol) << what;
        // In place.
        std::vector<T> v = p.d;
        ASSERT_EQ((emulate<T, M>(p, v.data(), periodic, 0.0, staged)), 0u);
        EXPECT_LE(tl::rel_error(p.x, v.data(), n), tol) << "in place " << what;
      }
    }
}

template <class T>
class LargeCuda : public ::testing::Test {};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LargeCuda, Types);

std::vector<std::int64_t> emulated_sizes_list() {
  std::vector<std::int64_t> s = tl::sizes_upto(15);
  for (std::int64_t n : {31, 33, 63, 64, 65, 66, 255, 257, 2049, 8191, 8193, 70001}) s.push_back(n);
  return s;
}

TYPED_TEST(LargeCuda, EmulatedChunk8) { emulated_sizes<TypeParam, 8>(emulated_sizes_list()); }
TYPED_TEST(LargeCuda, EmulatedChunk16) { emulated_sizes<TypeParam, 16>(emulated_sizes_list()); }
TYPED_TEST(LargeCuda, EmulatedChunk32) { emulated_sizes<TypeParam, 32>(tl::sizes_upto(12)); }

TYPED_TEST(LargeCuda, EmulatedTwoLevelsOfRecursion) {
  // 2^20 + 5 rows with M = 8: 4098 tiles -> 8196 rows -> 2 levels of reduction + direct.
  emulated_sizes<TypeParam, 8>({(std::int64_t(1) << 20) + 5});
}

TYPED_TEST(LargeCuda, EmulatedZeroPivotReported) {
  using T = TypeParam;
  const std::int64_t n = 20000;
  for (std::int64_t r : {std::int64_t(1003), std::int64_t(15997)}) {  // inside chunks of 8
    auto p = tl::make<T>(n, false, 77);
    p.a[r] = 0;
    p.b[r] = 0;
    std::vector<T> u(n);
    EXPECT_EQ((emulate<T, 8>(p, u.data(), false, 0.0)), static_cast<unsigned long long>(r) + 1);
    EXPECT_EQ((emulate<T, 8>(p, u.data(), false, 0.0, true)), static_cast<unsigned long long>(r) + 1);
  }
  // A tiny pivot: with a tolerance at its row; without, the stability check (growth |a c*|
  // against the row, solvers/common/thomas_check.hpp) flags the next row.
  auto p = tl::make<T>(n, false, 78);
  p.a[4321] = 0;
  p.b[4321] = T(1e-6);
  p.c[4321] = T(0.5);
  std::vector<T> u(n);
  EXPECT_EQ((emulate<T, 8>(p, u.data(), false, 0.0)), 4322u + 1);
  EXPECT_EQ((emulate<T, 8>(p, u.data(), false, 1e-3)), 4321u + 1);
}

// Stop 37: the fused check (ADI_LARGE_CHECK_FORM=1, the default: one predicate per lane, the
// row found again on the failure path) raises the flag exactly where stop 32's runtime form does,
// with the same row, and the unchecked kernels (off) never do; the answers are bit for bit the
// same. Unsafe rows inside chunks, at a chunk's first and last rows (where the reduced rows of
// sub_reduce / tile_reduce carry them), at the system's last row (c[n-1] outside the system:
// left out of the scale), zero, tiny (with a tolerance), NaN and infinite entries; periodic
// systems; both chunk lengths of the defaults; staged and direct loads.
// flags: 1 the case must raise the flag, 0 must not, -1 either (the forms agree all the same).
template <class T, int M>
void forms_agree(tl::Problem<T> p, bool periodic, double tol, const std::string& what, int flags = 1) {
  using adi::large::LaneCheck;
  const std::int64_t n = p.n;
  for (bool staged : {false, true}) {
    std::vector<T> u0(n, std::numeric_limits<T>::quiet_NaN()), u1 = u0, u2 = u0;
    const unsigned long long r0 = emulate<T, M, LaneCheck::runtime>(p, u0.data(), periodic, tol, staged);
    const unsigned long long r1 = emulate<T, M, LaneCheck::fused>(p, u1.data(), periodic, tol, staged);
    const unsigned long long r2 = emulate<T, M, LaneCheck::off>(p, u2.data(), periodic, tol, staged);
    const std::string w = what + " M=" + std::to_string(M) + (staged ? " staged" : "") + (periodic ? " periodic" : "");
    EXPECT_EQ(r1, r0) << w;
    EXPECT_EQ(r2, 0u) << w;
    if (flags >= 0) EXPECT_EQ(r0 != 0, flags == 1) << w << ": flagged row " << r0;
    if (r0 == 0) {  // the same arithmetic: the same bits (NaN where both are NaN)
      for (std::int64_t i = 0; i < n; ++i) {
        const bool same = u1[i] == u0[i] || (u1[i] != u1[i] && u0[i] != u0[i]);
        const bool same2 = u2[i] == u0[i] || (u2[i] != u2[i] && u0[i] != u0[i]);
        if (!same || !same2) {
          ADD_FAILURE() << w << ": row " << i << " runtime " << u0[i] << " fused " << u1[i] << " off " << u2[i];
          break;
        }
      }
    }
  }
}

TYPED_TEST(LargeCuda, EmulatedCheckFormsAgree) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  for (bool periodic : {false, true})
    for (std::int64_t n : {std::int64_t(700), std::int64_t(20000), std::int64_t(70001)}) {
      auto base = tl::make<T>(n, periodic, 91 + unsigned(n));
      // Must a bad row r flag? Inside a chunk of M rows, yes (the next row's growth, or its own
      // pivot); a chunk's first or last row, or the system's end, passes its trouble to the
      // reduced rows, which may or may not flag it (-1: either).
      auto inside = [&](std::int64_t r, int M) { return r % M != 0 && r % M != M - 1 && r < n - 2 * M ? 1 : -1; };
      const std::string sz = "n=" + std::to_string(n);
      forms_agree<T, 8>(base, periodic, 0.0, sz + " dominant", 0);
      forms_agree<T, 16>(base, periodic, 0.0, sz + " dominant", 0);
      // Rows inside a chunk, a chunk's first / last row (8 and 16), a tile's edge (32 * M), the end.
      for (std::int64_t r : {std::int64_t(3), std::int64_t(8), std::int64_t(15), std::int64_t(16), std::int64_t(255),
                             std::int64_t(256), std::int64_t(511), std::int64_t(512), n / 2 + 1, n - 2, n - 1}) {
        const std::string at = sz + " row " + std::to_string(r);
        {
          auto p = base;  // a tiny pivot (a = 0): unsafe growth |a c*| at the next row
          p.a[r] = 0;
          p.b[r] = T(1e-6);
          p.c[r] = T(0.5);
          forms_agree<T, 8>(p, periodic, 0.0, at + " tiny pivot", inside(r, 8));
          forms_agree<T, 16>(p, periodic, 0.0, at + " tiny pivot", inside(r, 16));
          forms_agree<T, 8>(p, periodic, 1e-3, at + " tiny pivot, tolerance", inside(r, 8));
          p = base;  // a tiny diagonal between unit off-diagonals: unsafe or not, as the pivots fall
          p.a[r] = T(1);
          p.b[r] = T(1e-7);
          p.c[r] = T(1);
          forms_agree<T, 8>(p, periodic, 0.0, at + " tiny b", -1);
          forms_agree<T, 16>(p, periodic, 0.0, at + " tiny b", -1);
        }
        {
          auto p = base;  // zero pivot
          p.a[r] = 0;
          p.b[r] = 0;
          forms_agree<T, 16>(p, periodic, 0.0, at + " zero", inside(r, 16));
        }
        {
          auto p = base;
          p.c[r] = nan;  // NaN in c only: fmax drops it, so does the fused test
          forms_agree<T, 8>(p, periodic, 0.0, at + " NaN c", -1);
          p = base;
          p.a[r] = nan;
          forms_agree<T, 16>(p, periodic, 0.0, at + " NaN a");
          p = base;
          p.b[r] = inf;
          forms_agree<T, 8>(p, periodic, 0.0, at + " inf b");
          p = base;
          p.c[r] = T(1e30);  // huge c: the next row's growth
          forms_agree<T, 16>(p, periodic, 0.0, at + " huge c", -1);
        }
      }
      if (!periodic) {  // c[n-1] is not part of a non-periodic system: never flagged for it
        auto p = base;
        p.c[n - 1] = T(1e30);
        forms_agree<T, 8>(p, periodic, 0.0, sz + " huge c[n-1]", 0);
        forms_agree<T, 16>(p, periodic, 0.0, sz + " huge c[n-1]", 0);
        EXPECT_EQ((emulate<T, 16, adi::large::LaneCheck::fused>(p, std::vector<T>(n).data(), false, 0.0)), 0u) << sz;
      }
    }
}

TEST(LargeCudaPlan, WorkspaceIsSmall) {
  // <= 10% of the system's 5 arrays at every size the benchmark runs (it is ~1%).
  for (int l = 10; l <= 27; ++l)
    for (int M : {8, 16, 32}) {
      const i64 n = i64(1) << l;
      const LevelPlan p = LevelPlan::make(n, M, 8);
      EXPECT_LE(double(p.bytes), 0.1 * 5.0 * 8.0 * double(n)) << "n=2^" << l << " M=" << M;
    }
}

// --- on the device, through the public API ----------------------------------------------


template <class T>
struct DeviceSystem {
  adi::Executor ex = adi::Executor::cuda();
  adi::Array<T> a, b, c, d, u;
  DeviceSystem(const tl::Problem<T>& p, std::int64_t count = 1)
      : a(p.n * count, ex), b(p.n * count, ex), c(p.n * count, ex), d(p.n * count, ex), u(p.n * count, ex) {
    std::vector<T> ha, hb, hc, hd;
    for (std::int64_t s = 0; s < count; ++s) {
      ha.insert(ha.end(), p.a.begin(), p.a.end());
      hb.insert(hb.end(), p.b.begin(), p.b.end());
      hc.insert(hc.end(), p.c.begin(), p.c.end());
      hd.insert(hd.end(), p.d.begin(), p.d.end());
    }
    a.copy_from_host(ha.data());
    b.copy_from_host(hb.data());
    c.copy_from_host(hc.data());
    d.copy_from_host(hd.data());
    std::vector<T> nan(p.n * count, std::numeric_limits<T>::quiet_NaN());
    u.copy_from_host(nan.data());
  }
  adi::Bands<T> bands() { return {a.data(), b.data(), c.data()}; }
  std::vector<T> result(adi::Array<T>& x) {
    std::vector<T> h(x.size());
    x.copy_to_host(h.data());
    return h;
  }
};

// Small sizes only: the one compute-sanitizer runs (memcheck, racecheck).
TYPED_TEST(LargeCuda, DeviceSmall) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  std::vector<std::int64_t> sizes = tl::sizes_upto(12);
  sizes.push_back(70001);
  for (bool periodic : {false, true})
    for (std::int64_t n : sizes) {
      auto p = tl::make<T>(n, periodic, 61 + unsigned(n));
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      DeviceSystem<T> ds(p);
      for (int chunk : {8, 16, 32}) {
        adi::LargeTridiagonalOptions o;
        o.periodic = periodic;
        o.chunk = chunk;
        adi::LargeTridiagonalPlan<T> plan(ds.ex, n, 1, 0, o);
        plan.solve(ds.bands(), ds.d.data(), ds.u.data());
        EXPECT_LE(tl::rel_error(p.x, ds.result(ds.u).data(), n), tol)
            << "n=" << n << " chunk=" << chunk << (periodic ? " periodic" : "");
      }
    }
}

TYPED_TEST(LargeCuda, DeviceSizesChunksPeriodic) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  std::vector<std::int64_t> sizes = tl::sizes_upto(21);
  for (bool periodic : {false, true})
    for (std::int64_t n : sizes) {
      auto p = tl::make<T>(n, periodic, 51 + unsigned(n));
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      DeviceSystem<T> ds(p);
      for (int chunk : {0, 8, 16, 32}) {
        adi::LargeTridiagonalOptions o;
        o.periodic = periodic;
        o.chunk = chunk;
        adi::LargeTridiagonalPlan<T> plan(ds.ex, n, 1, 0, o);
        plan.solve(ds.bands(), ds.d.data(), ds.u.data());
        EXPECT_LE(tl::rel_error(p.x, ds.result(ds.u).data(), n), tol)
            << "n=" << n << " chunk=" << plan.chunk() << (periodic ? " periodic" : "");
      }
    }
}

TYPED_TEST(LargeCuda, DeviceInPlaceSharedBandsFewSystemsOwnWorkspace) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  const std::int64_t n = 100003, count = 3;
  auto p = tl::make<T>(n, false, 5);
  p.x = tl::oracle(p, false);
  const double tol = tl::bound<T>(tl::thomas_error(p, false));
  DeviceSystem<T> ds(p, count);
  adi::LargeTridiagonalPlan<T> plan(ds.ex, adi::StridedLines::contiguous(n, count));
  plan.solve(adi::SharedBands<T>{ds.a.data(), ds.b.data(), ds.c.data()}, ds.d.data(), ds.d.data());  // in place
  const std::vector<T> h = ds.result(ds.d);
  for (std::int64_t s = 0; s < count; ++s) EXPECT_LE(tl::rel_error(p.x, h.data() + s * n, n), tol) << "system " << s;
  // The caller's workspace.
  DeviceSystem<T> ds2(p, count);
  adi::Array<char> ws(static_cast<adi::index_t>(plan.workspace_bytes()), ds2.ex);
  plan.solve(ds2.bands(), ds2.d.data(), ds2.u.data(), ws.data(), plan.workspace_bytes());
  const std::vector<T> h2 = ds2.result(ds2.u);
  for (std::int64_t s = 0; s < count; ++s) EXPECT_LE(tl::rel_error(p.x, h2.data() + s * n, n), tol) << "system " << s;
  EXPECT_LE(double(plan.workspace_bytes()), 0.1 * 5.0 * sizeof(T) * double(n));
}

// Both ways of loading (1: lanes straight from global memory, 2: tiles staged in shared
// memory), every chunk length, arrays 16-byte aligned and not (one element in: the
// vector paths step aside), through the backend entry point.
TYPED_TEST(LargeCuda, DeviceLoadModesAndUnalignedArrays) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  for (std::int64_t n : {std::int64_t(100), std::int64_t(65537), std::int64_t(1) << 20})
    for (bool periodic : {false, true}) {
      auto p = tl::make<T>(n, periodic, 71 + unsigned(n));
      p.x = tl::oracle(p, periodic);
      const double tol = tl::bound<T>(tl::thomas_error(p, periodic));
      for (std::int64_t shift : {0, 1}) {
        tl::Problem<T> q = p;  // shifted copies: element 0 at index `shift`
        for (auto* v : {&q.a, &q.b, &q.c, &q.d}) v->insert(v->begin(), shift, T(7));
        q.n = n + shift;
        DeviceSystem<T> ds(q);
        for (int chunk : {8, 16, 32})
          for (int load : {1, 2}) {
            const std::size_t bytes = adi::cuda_backend::large_workspace_bytes(n, periodic, chunk, sizeof(T));
            adi::Array<char> ws(static_cast<adi::index_t>(bytes + 256), ds.ex);
            adi::cuda_backend::large_solve<T>(n, ds.a.data() + shift, ds.b.data() + shift, ds.c.data() + shift,
                                              ds.d.data() + shift, ds.u.data() + shift, periodic, chunk, 0.0,
                                              ws.data(), nullptr, 0, nullptr, load);
            adi::cuda_backend::synchronize(nullptr);
            const std::vector<T> h = ds.result(ds.u);
            EXPECT_LE(tl::rel_error(p.x, h.data() + shift, n), tol)
                << "n=" << n << " chunk=" << chunk << " load=" << load << " shift=" << shift
                << (periodic ? " periodic" : "");
          }
      }
    }
}

TEST(LargeCudaDevice, FourMillionRowsDouble) {
  ADI_REQUIRE_CUDA("the device large-system test");
  const std::int64_t n = std::int64_t(1) << 22;
  auto p = tl::make<double>(n, false, 3);
  p.x = tl::oracle(p, false);
  DeviceSystem<double> ds(p);
  adi::LargeTridiagonalPlan<double>(ds.ex, n).solve(ds.bands(), ds.d.data(), ds.u.data());
  EXPECT_LE(tl::rel_error(p.x, ds.result(ds.u).data(), n), tl::bound<double>(tl::thomas_error(p, false)));
}

TYPED_TEST(LargeCuda, DeviceZeroPivotNamesTheRow) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  const std::int64_t n = 50000, r = 12345;
  auto p = tl::make<T>(n, false, 8);
  p.a[r] = 0;
  p.b[r] = 0;
  DeviceSystem<T> ds(p);
  adi::LargeTridiagonalOptions o;
  o.pivoting = adi::Pivoting::none;  // automatic would solve it by pivoting (docs/pivoting.md)
  adi::LargeTridiagonalPlan<T> plan(ds.ex, n, 1, 0, o);
  try {
    plan.solve(ds.bands(), ds.d.data(), ds.u.data());
    ADD_FAILURE() << "no SingularSystem";
  } catch (const adi::SingularSystem& e) {
    EXPECT_NE(std::string(e.what()).find("row " + std::to_string(r) + " "), std::string::npos) << e.what();
  }
}

// Stop 37, on the device: each form of the large plan's check (ADI_LARGE_CHECK_FORM, read at each
// solve: 0 stop 32's kernels, 1 the fused check, the default, 2 fused without pass 1's register
// hold) names the same row with pivoting none (UnstableSystem) and re-solves the same unsafe
// system with pivoting under automatic, out of place (the result against the long-double oracle:
// within 10x of what partial pivoting is bound to give, tl::bound of the pivoting solve's error,
// as the dominant cases are; LAPACK's comparison is test_pivoting_cuda's LargePlanAutomaticFlag,
// which the check script runs under each form); a singular system under automatic throws
// SingularSystem naming system 0 (the pivoting fall-back's failure; the row where the host's
// pivoting names it).
// (Forms 0 and 2 are compiled only with -DADI_CUDA_UNROLL_ALL=ON: other builds check form 1 and
// then skip, naming them.)
const bool kCheckForms02 = adi::cuda_backend::timing_forms_compiled();

TYPED_TEST(LargeCuda, DeviceCheckFormsAgree) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  const std::int64_t n = 70001;
  // Rows inside chunks of 8 and of 16 (EmulatedCheckFormsAgree: there the check must fire).
  for (std::int64_t r : {std::int64_t(5), std::int64_t(4099), std::int64_t(40001), std::int64_t(60003)}) {
    auto p = tl::make<T>(n, false, 5 + unsigned(r));
    p.a[r] = 0;  // a tiny pivot: unsafe growth |a c*| at the next row
    p.b[r] = T(1e-6);
    p.c[r] = T(0.5);
    DeviceSystem<T> ds(p);
    std::string rows[3];
    for (int f = 0; f < 3; ++f) {
      if (f != 1 && !kCheckForms02) continue;
      const char* form[3] = {"0", "1", "2"};
      const adi::test::ScopedEnv env("ADI_LARGE_CHECK_FORM", form[f]);
      const std::string w = "row " + std::to_string(r) + ", ADI_LARGE_CHECK_FORM=" + form[f];
      adi::LargeTridiagonalOptions o;
      o.pivoting = adi::Pivoting::none;
      adi::LargeTridiagonalPlan<T> none(ds.ex, n, 1, 0, o);
      try {
        none.solve(ds.bands(), ds.d.data(), ds.u.data());
        ADD_FAILURE() << "none: no UnstableSystem, " << w;
      } catch (const adi::UnstableSystem& e) {
        EXPECT_EQ(e.system(), 0) << w << ": " << e.what();
        rows[f] = std::to_string(e.row());
        EXPECT_LE(std::abs(static_cast<double>(e.row() - r)), 2.0 * 32 * 32) << w << ": " << e.what();
      }
      // Automatic, out of place: re-solved with pivoting; NaN-poisoned output first.
      std::vector<T> nan(static_cast<std::size_t>(n), std::numeric_limits<T>::quiet_NaN());
      ds.u.copy_from_host(nan.data());
      adi::LargeTridiagonalPlan<T> automatic(ds.ex, n);
      automatic.solve(ds.bands(), ds.d.data(), ds.u.data());
      const auto x = tl::pivoting_oracle(p);  // (Thomas meets the tiny pivot)
      const std::vector<T> got = ds.result(ds.u);
      double worst = 0, scale = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(static_cast<long double>(got[i]) - x[i])));
        scale = std::max(scale, std::abs(static_cast<double>(x[i])));
      }
      // cond(A) stays modest (one tiny diagonal among dominant rows): a few thousand eps.
      EXPECT_LE(worst, 1e4 * std::numeric_limits<T>::epsilon() * scale) << "automatic, " << w;
    }
    if (kCheckForms02) {
      EXPECT_EQ(rows[1], rows[0]) << "row " << r << ": fused and stop 32's forms name different rows";
      EXPECT_EQ(rows[2], rows[0]) << "row " << r;
    }
  }
  // Singular (a zero row): the pivoting fall-back fails too, SingularSystem names system 0.
  auto p = tl::make<T>(n, false, 9);
  p.a[777] = p.b[777] = p.c[777] = 0;
  DeviceSystem<T> ds(p);
  for (const char* form : {"0", "1", "2"}) {
    if (form[0] != '1' && !kCheckForms02) continue;
    const adi::test::ScopedEnv env("ADI_LARGE_CHECK_FORM", form);
    adi::LargeTridiagonalPlan<T> automatic(ds.ex, n);
    try {
      automatic.solve(ds.bands(), ds.d.data(), ds.u.data());
      ADD_FAILURE() << "singular, automatic: no SingularSystem, ADI_LARGE_CHECK_FORM=" << form;
    } catch (const adi::SingularSystem& e) {
      // The system; the row as the host's pivoting names it (-1 where its SIMD kernel cannot: as
      // PivotingCuda.AutomaticFallBackErrors expects).
      EXPECT_EQ(e.system(), 0) << form << ": " << e.what();
    }
  }
  ADI_REQUIRE_COMPARISON_FORMS("ADI_LARGE_CHECK_FORM=0 and 2 (form 1 checked)");
}

// Stop 37, opt-in: ADI_PIVOTING_FALLBACK=device when the plan is made: automatic out of place
// decides the fall-back on the device (one graph launch; ADI_LARGE_FALLBACK_TRACE=1 prints each
// graph built, so the check script's log shows the path ran). One plan reused over unsafe and
// safe batches of 3 systems (a flag left raised would send a safe batch through pivoting: still
// right, but the unsafe batch after it must still be re-solved), with check_pivots off (nothing
// waited for) and on; u rotating over 6 arrays (more than the 4 graphs a plan keeps: rebuilt);
// in place takes the host's path (UnstableSystem); a singular system throws SingularSystem naming
// the system (and the row where the host's pivoting names it) with check_pivots, and comes back
// without an error without it.

TYPED_TEST(LargeCuda, DeviceFallbackDecidedOnDevice) {
  ADI_REQUIRE_CUDA("the device large-system test");
  using T = TypeParam;
  const std::int64_t n = 20000, count = 3;
  const adi::test::ScopedEnv trace("ADI_LARGE_FALLBACK_TRACE", "1");
  auto base = tl::make<T>(n, false, 41);
  auto unsafe = base;
  unsafe.a[4099] = 0;  // a tiny pivot inside a chunk: the check fires (EmulatedCheckFormsAgree)
  unsafe.b[4099] = T(1e-6);
  unsafe.c[4099] = T(0.5);
  const auto x_base = tl::oracle(base, false), x_unsafe = tl::pivoting_oracle(unsafe);  // (Thomas: a tiny pivot)
  // 3 systems: system 1 unsafe or not.
  auto batch = [&](bool bad) {
    tl::Problem<T> p = base;
    p.n = n * count;
    p.a.clear(), p.b.clear(), p.c.clear(), p.d.clear();
    for (std::int64_t s = 0; s < count; ++s) {
      const auto& q = s == 1 && bad ? unsafe : base;
      p.a.insert(p.a.end(), q.a.begin(), q.a.end());
      p.b.insert(p.b.end(), q.b.begin(), q.b.end());
      p.c.insert(p.c.end(), q.c.begin(), q.c.end());
      p.d.insert(p.d.end(), q.d.begin(), q.d.end());
    }
    return p;
  };
  auto check = [&](const std::vector<T>& got, bool bad, const std::string& w) {
    for (std::int64_t s = 0; s < count; ++s) {
      const auto& x = s == 1 && bad ? x_unsafe : x_base;
      double worst = 0, scale = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        worst = std::max(worst, std::abs(static_cast<double>(static_cast<long double>(got[s * n + i]) - x[i])));
        scale = std::max(scale, std::abs(static_cast<double>(x[i])));
      }
      EXPECT_LE(worst, 1e4 * std::numeric_limits<T>::epsilon() * scale) << w << ", system " << s;
    }
  };
  const tl::Problem<T> good = batch(false), bad = batch(true);
  DeviceSystem<T> dg(good), db(bad);
  std::vector<std::unique_ptr<adi::Array<T>>> outs;
  for (int k = 0; k < 6; ++k) outs.push_back(std::make_unique<adi::Array<T>>(n * count, dg.ex));
  std::vector<T> nan(static_cast<std::size_t>(n * count), std::numeric_limits<T>::quiet_NaN());
  // The trace (stderr) says whether the device path ran: the results alone cannot tell it from the
  // host's fall-back.
  testing::internal::CaptureStderr();
  for (bool checks : {false, true}) {
    const adi::test::ScopedEnv fb("ADI_PIVOTING_FALLBACK", "device");  // read when the plan is made
    adi::LargeTridiagonalOptions o;
    o.check_pivots = checks;
    adi::LargeTridiagonalPlan<T> plan(dg.ex, n, count, n, o);
    int k = 0;
    for (bool unsafe_batch : {true, false, true, true, false, false, true, false, true}) {
      DeviceSystem<T>& ds = unsafe_batch ? db : dg;
      adi::Array<T>& u = *outs[static_cast<std::size_t>(k++ % 6)];
      u.copy_from_host(nan.data());
      plan.solve(ds.bands(), ds.d.data(), u.data());
      check(ds.result(u), unsafe_batch,
            std::string(checks ? "check_pivots" : "no check_pivots") + (unsafe_batch ? ", unsafe" : ", safe") +
                " batch, solve " + std::to_string(k));
    }
    try {  // in place: the host's path, which cannot re-solve
      plan.solve(db.bands(), db.d.data(), db.d.data());
      ADD_FAILURE() << "in place: no UnstableSystem";
    } catch (const adi::UnstableSystem& e) {
      EXPECT_EQ(e.system(), 1) << e.what();
    }
    db.d.copy_from_host(bad.d.data());  // the in-place solve wrote over d
  }
  const std::string trace_log = testing::internal::GetCapturedStderr();
  std::fputs(trace_log.c_str(), stderr);  // (kept in the log: the check script counts the graphs built)
  if (trace_log.find("graph is unavailable") != std::string::npos)
    std::printf("device fall-back unavailable here (no conditional graph nodes): the host decided\n");
  else
    EXPECT_NE(trace_log.find("device fall-back graph built"), std::string::npos)
        << "ADI_PIVOTING_FALLBACK=device: no graph was built (the device path never ran)";
  // Singular: a zero row in system 2.
  tl::Problem<T> sing = batch(false);
  const std::int64_t zr = 2 * n + 777;
  sing.a[zr] = sing.b[zr] = sing.c[zr] = 0;
  DeviceSystem<T> dz(sing);
  for (bool checks : {true, false}) {
    const adi::test::ScopedEnv fb("ADI_PIVOTING_FALLBACK", "device");
    adi::LargeTridiagonalOptions o;
    o.check_pivots = checks;
    adi::LargeTridiagonalPlan<T> plan(dz.ex, n, count, n, o);
    try {
      plan.solve(dz.bands(), dz.d.data(), dz.u.data());
      adi::cuda_backend::synchronize(dz.ex.stream());
      if (checks) ADD_FAILURE() << "singular, check_pivots: no SingularSystem";
    } catch (const adi::SingularSystem& e) {
      EXPECT_TRUE(checks) << "singular without check_pivots threw: " << e.what();
      EXPECT_EQ(e.system(), 2) << e.what();  // the row: -1 where the host's pivoting cannot name it
    }
  }
}

}  // namespace
