// The CUDA partition solver for one large system (solvers/cuda/partition_large.cu).
//
// Emulated*: the warp phases of partition_large_tile.hpp run on the host lane by lane, in
// the order the kernels run them, against a long-double oracle. These run everywhere and
// pin down the indexing (chunks, tiles, levels, partial tiles, periodic corners).
// Device*: the same through adi::LargeTridiagonalPlan on Executor::cuda(); they skip,
// loudly, without a device.
#include <gtest/gtest.h>

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
template <class T, int M>
unsigned long long emulate(const tl::Problem<T>& p, T* u, bool periodic, double tol, bool staged = false) {
  const LevelPlan plan = LevelPlan::make(p.n, M, sizeof(T));
  std::vector<char> raw(plan.bytes + 256);
  void* ws = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(raw.data()) + 255) / 256 * 256);
  unsigned long long flag = 0;
  const unsigned long long bias = static_cast<unsigned long long>(p.n);
  Level<T> L[LevelPlan::kMaxLevels];
  adi::large::make_levels<T>(plan, p.n, p.a.data(), p.b.data(), p.c.data(), p.d.data(), u, periodic, tol, &flag,
                             bias, ws, L);
  for (int l = 0; l + 1 < plan.levels; ++l) {
    const Chunks ch = Chunks::make(plan.N[l], M);
    for (i64 tile = 0; tile < adi::large::tile_count(ch); ++tile) {
      TileShared<T> sh;
      auto stage = std::make_unique<TileStage<T, M>>();
      TileStage<T, M>* st = staged ? stage.get() : nullptr;
      const Level<T> v = adi::large::checks(L[l]);  // what each warp does first
      if (staged)
        for (int lane = 0; lane < 32; ++lane) adi::large::stage_load<T, M>(v, ch, tile, lane, *st);
      bool lanes_bad = false, sub_bad = false;
      for (int lane = 0; lane < 32; ++lane)
        lanes_bad = adi::large::lane_reduce<T, M>(v, ch, tile, lane, sh, nullptr, st) || lanes_bad;
      for (int q = 0; q < adi::large::kSubLanes; ++q)
        sub_bad = adi::large::sub_reduce<T>(v, ch, tile, q, sh, false, !lanes_bad) || sub_bad;
      adi::large::tile_reduce<T>(v, ch, tile, sh, lanes_bad || sub_bad);
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
      for (int lane = 0; lane < 32; ++lane) adi::large::lane_reduce<T, M>(v, ch, tile, lane, sh, &keep[lane], st);
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

}  // namespace
