// cuda_thomas_pcr_long (solvers/cuda/thomas_pcr_long.cuh: a block per tile of lines, a
// thread per segment, the reduced systems by the warp hybrid) against the fp64 reference:
// lines adjacent in memory (Y/Z axes, interleaved batches), fresh random inputs, outputs
// NaN-poisoned, a[0] and c[n-1] of non-periodic lines NaN (never read).
#include "cuda_tridiagonal_check.hpp"
#include "scoped_env.hpp"
#include "solvers/cuda/device_memory_rate.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

namespace {
constexpr Kernel kLong = Kernel::cuda_thomas_pcr_long;
}  // namespace

// The shared suite: n 1..1000 x counts 1..1032, Bands and SharedBands, periodic or not;
// the padded box along Y and Z; in place; a zero pivot; the sanitizer's small case.
ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasPcrLong, kLong, Family::adjacent, Axis::y, Axis::z)

// The lengths the kernel is for, and around every segment and reduced-system boundary:
// the odd sizes (1, 2, 3, 31, 33, 255, 257, 4095, 4097) with batches of 1, 3 and 33
// lines, both precisions, per-line and shared bands, periodic or not.
TEST(CudaThomasPcrLong, LongAndOddLines) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 4000;
  for (adi::index_t n : {1, 2, 3, 31, 33, 255, 257, 511, 513, 1023, 2049, 4095, 4096, 4097})
    for (adi::index_t count : {1, 3, 33})
      for (int shared = 0; shared < 2; ++shared)
        for (int periodic = 0; periodic < 2; ++periodic) {
          adi::test_cuda::Case c;
          // count lines one element apart, rows padded by 5 (test_cuda::adjacent splits a count
          // divisible by 3 into 3 groups, and 3 lines become groups of one: not adjacent).
          c.lines = adi::LineSet{n, count + 5, count, 1, 1, n * (count + 5) + 2};
          c.shared = shared;
          c.periodic = periodic;
          c.base = 1 + seed % 3;
          c.seed = seed++;
          adi::test_cuda::check<float>(kLong, c);
          adi::test_cuda::check<double>(kLong, c);
          if (::testing::Test::HasFailure()) return;  // one failure explains the rest
        }
}

// The public case's layout (lines along z of a box: element stride nx*ny, neighbouring
// lines adjacent), smaller in x and y, and the same box along y.
TEST(CudaThomasPcrLong, BoxLongAxis) {
  ADI_REQUIRE_CUDA();
  const adi::Box3 box = adi::Box3::dense(16, 5, 4096);
  std::uint32_t seed = 5000;
  for (int periodic = 0; periodic < 2; ++periodic)
    for (int in_place = 0; in_place < 2; ++in_place) {
      adi::test_cuda::Case c;
      c.lines = adi::to_lines(adi::BoxLines{box, Axis::z});
      c.periodic = periodic;
      c.in_place = in_place;
      c.seed = seed++;
      adi::test_cuda::check<float>(kLong, c);
      adi::test_cuda::check<double>(kLong, c);
    }
  const adi::Box3 tall = adi::Box3::dense(16, 3000, 3);
  adi::test_cuda::Case c;
  c.lines = adi::to_lines(adi::BoxLines{tall, Axis::y});
  c.seed = seed++;
  adi::test_cuda::check<float>(kLong, c);
  adi::test_cuda::check<double>(kLong, c);
}

// Every launch shape the benchmark's tuning rows try (lines per tile, rows per segment,
// blocks per cluster), including one line per tile and more lines than the default, on long
// and short lines.
TEST(CudaThomasPcrLong, LaunchShapes) {
  ADI_REQUIRE_CUDA();
  std::vector<adi::cuda_backend::Tuning> shapes;
  for (int rows : {16, 32})
    for (int lines : {1, 2, 4, 8}) {
      adi::cuda_backend::Tuning t;
      t.lines_per_block = lines;
      t.rows_per_thread = rows;
      t.cluster = 1;
      shapes.push_back(t);
    }
  for (int cluster : {2, 4, 8})
    for (int lines : {0, 4, 16}) {
      adi::cuda_backend::Tuning t;
      t.cluster = cluster;
      t.lines_per_block = lines;
      shapes.push_back(t);
    }
  adi::test_cuda::launch_shapes<float>(kLong, Family::adjacent, shapes);
  adi::test_cuda::launch_shapes<double>(kLong, Family::adjacent, shapes);
  std::uint32_t seed = 6000;
  for (const adi::cuda_backend::Tuning& t : shapes)
    for (adi::index_t n : {1000, 4097})
      for (int periodic = 0; periodic < 2; ++periodic) {
        adi::test_cuda::Case c;
        c.lines = adi::test_cuda::adjacent(n, 11);
        c.periodic = periodic;
        c.base = 1;
        c.seed = seed++;
        c.tuning = &t;
        adi::test_cuda::check<float>(kLong, c);
        adi::test_cuda::check<double>(kLong, c);
        if (::testing::Test::HasFailure()) return;
      }
}

// Lines longer than any shape takes are refused at plan time, with the kernel named.
TEST(CudaThomasPcrLong, TooLongRefused) {
  ADI_REQUIRE_CUDA();
  const adi::LineSet l = adi::test_cuda::adjacent(40000, 3);
  adi::TridiagonalOptions opt;
  opt.kernel = kLong;
  EXPECT_THROW(adi::TridiagonalPlan<double>(adi::Executor::cuda(), l, opt), adi::InvalidArgument);
}

// The dispatch table takes it for few long Y/Z lines (4,096 lines of 4096) in both
// precisions, for the public case (16,384 lines: over clusters) on sm_90, not for more
// lines (65,536: the coalesced Thomas), not for contiguous (X) lines, and never with
// partial pivoting.
TEST(CudaThomasPcrLong, Dispatch) {
  ADI_REQUIRE_CUDA();
  // The exact table's rows (automatic replaces most of these picks by cuda_thomas_truncated since
  // stop 42: test_thomas_truncated.cpp, DispatchSwitch).
  adi::test::ScopedEnv exact_table("ADI_LONG_TRUNCATED", "0");
  const adi::Box3 box = adi::Box3::dense(64, 64, 4096);
  const adi::LineSet z = adi::to_lines(adi::BoxLines{box, Axis::z});
  const adi::Executor gpu = adi::Executor::cuda();
  EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, z).kernel(), kLong);
  EXPECT_EQ(adi::TridiagonalPlan<float>(gpu, z).kernel(), kLong);
  adi::TridiagonalOptions periodic;
  periodic.periodic = true;
  EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, z, periodic).kernel(), kLong);
  adi::TridiagonalOptions pivot;
  pivot.pivoting = adi::Pivoting::partial;
  EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, z, pivot).kernel(), Kernel::cuda_pivoting);
  const adi::LineSet x = adi::to_lines(adi::BoxLines{box, Axis::x});
  EXPECT_NE(adi::TridiagonalPlan<double>(gpu, x).kernel(), kLong);
  adi::TridiagonalOptions forced;
  forced.kernel = kLong;
  EXPECT_THROW(adi::TridiagonalPlan<double>(gpu, x, forced), adi::InvalidArgument);
  const adi::LineSet pub = adi::to_lines(adi::BoxLines{adi::Box3::dense(128, 128, 4096), Axis::z});
  const bool clusters = adi::cuda_backend::device_info(gpu.device()).cc_major >= 9;
  EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, pub).kernel(), clusters ? kLong : Kernel::cuda_thomas_strided);
  // Shared bands: the cluster form too since stop 36 (H100 1.90 against the coalesced Thomas's
  // 2.09 ms, H200 1.86 against 2.01; adi/tridiagonal_dispatch.cpp).
  EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, pub).shared_bands_kernel(),
            clusters ? kLong : Kernel::cuda_thomas_strided);
  // Stop 36's crossover rows (lines of 1025 .. 4096 rows, sm_90): one rank's box of the public
  // case split over two (128x128x2048, 16,384 fp64 lines of 2048) takes the cluster form with
  // per-line bands; fp32 shared bands take the hybrid's shared-memory tile form; fp32 per-line
  // bands of 2048 rows, 16,384 lines, stay with the coalesced Thomas.
  const adi::LineSet half = adi::to_lines(adi::BoxLines{adi::Box3::dense(128, 128, 2048), Axis::z});
  if (clusters) {
    EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, half).kernel(), kLong);
    EXPECT_EQ(adi::TridiagonalPlan<float>(gpu, half).shared_bands_kernel(), Kernel::cuda_thomas_pcr_strided);
    EXPECT_EQ(adi::TridiagonalPlan<float>(gpu, half).kernel(), Kernel::cuda_thomas_strided);
    // fp32 per-line bands of 1536 rows, 4,096 lines: the hybrid's tile form; fp64 shared bands,
    // 16,384 lines of 3072: the same; fp64 per-line bands, 32,768 lines of 2048: the cluster form
    // on H100-class memory, the coalesced Thomas on faster memory (the H200's).
    const auto batch = [](adi::index_t n, adi::index_t lines) { return adi::to_lines(adi::InterleavedBatch{n, lines}); };
    EXPECT_EQ(adi::TridiagonalPlan<float>(gpu, batch(1536, 4096)).kernel(), Kernel::cuda_thomas_pcr_strided);
    EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, batch(3072, 16384)).shared_bands_kernel(),
              Kernel::cuda_thomas_pcr_strided);
    const bool fast = adi::cuda_backend::device_memory_gbs(gpu.device()) >= 4000;
    EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, batch(2048, 32768)).kernel(),
              fast ? Kernel::cuda_thomas_strided : kLong);
  }
  const adi::LineSet many = adi::to_lines(adi::InterleavedBatch{4096, 65536});
  EXPECT_EQ(adi::TridiagonalPlan<double>(gpu, many).kernel(), Kernel::cuda_thomas_strided);
  // Short Y/Z lines stay with the register hybrid.
  const adi::Box3 cube = adi::Box3::dense(64, 64, 64);
  EXPECT_NE(adi::TridiagonalPlan<double>(gpu, adi::to_lines(adi::BoxLines{cube, Axis::z})).kernel(), kLong);
}

// More than 8,192 lines: the launcher's default is a cluster of 8 blocks per tile on sm_90
// (the plan path, no tuning), both precisions, per-line and shared bands, periodic or not.
TEST(CudaThomasPcrLong, ManyLinesDefaultClusters) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 7000;
  for (adi::index_t n : {600, 1500})
    for (int shared = 0; shared < 2; ++shared)
      for (int periodic = 0; periodic < 2; ++periodic) {
        adi::test_cuda::Case c;
        const adi::index_t count = n > 1000 ? 8197 : 9001;
        c.lines = adi::LineSet{n, count + 3, count, 1, 1, n * (count + 3) + 1};
        c.shared = shared;
        c.periodic = periodic;
        c.base = 1;
        c.seed = seed++;
        adi::test_cuda::check<float>(kLong, c);
        adi::test_cuda::check<double>(kLong, c);
        if (::testing::Test::HasFailure()) return;
      }
}
