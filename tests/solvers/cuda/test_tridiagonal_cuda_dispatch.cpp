// The CUDA branch of the tridiagonal dispatch table (adi/tridiagonal_dispatch.cpp) and
// the public entry points on a device: the automatic choice per axis and layout, its
// results against the reference, forced kernels that cannot run, wrong memory spaces.
#include "cuda_tridiagonal_check.hpp"
#include "scoped_env.hpp"
#include "solvers/cuda/device_memory_rate.hpp"

namespace {
using adi::Axis;
using adi::Executor;
using adi::Kernel;
using adi::LineSet;
using adi::TridiagonalPlan;
using adi::test_cuda::Case;

template <class T>
Kernel chosen(const LineSet& l, bool periodic = false) {
  adi::TridiagonalOptions o;
  o.periodic = periodic;
  return TridiagonalPlan<T>(Executor::cuda(), l, o).kernel();
}

TEST(CudaDispatch, AutomaticPerAxisOfABox) {
  ADI_REQUIRE_CUDA();
  const adi::Box3 box = adi::test_cuda::padded_box();
  EXPECT_EQ(chosen<float>(adi::to_lines(adi::BoxLines{box, Axis::x})), Kernel::cuda_thomas_pcr);
  EXPECT_EQ(chosen<double>(adi::to_lines(adi::BoxLines{box, Axis::y})), Kernel::cuda_thomas_pcr_strided);
  EXPECT_EQ(chosen<double>(adi::to_lines(adi::BoxLines{box, Axis::z})), Kernel::cuda_thomas_pcr_strided);
  std::uint32_t seed = 5;
  for (Axis ax : {Axis::x, Axis::y, Axis::z})
    for (int p = 0; p < 2; ++p) {
      Case c;
      c.lines = adi::to_lines(adi::BoxLines{box, ax});
      c.periodic = p;
      c.shared = !p;
      c.base = 1;
      c.seed = seed++;
      adi::test_cuda::check<float>(Kernel::automatic, c);
      adi::test_cuda::check<double>(Kernel::automatic, c);
    }
}

// cuThomasBatch layout: element k of system s at k*batch + s.
TEST(CudaDispatch, InterleavedBatch) {
  ADI_REQUIRE_CUDA();
  const LineSet l = adi::to_lines(adi::InterleavedBatch{100, 333});
  EXPECT_EQ(chosen<float>(l), Kernel::cuda_thomas_pcr_strided);
  Case c;
  c.lines = l;
  adi::test_cuda::check<float>(Kernel::automatic, c);
  c.periodic = true;
  adi::test_cuda::check<double>(Kernel::automatic, c);
}

// Past the hybrids' shared-memory limit the chunked Thomas kernels take over along X; along
// Y/Z the long-line kernel (a block per tile of lines), and past its limit (more than 512
// segments of 32 rows) the coalesced Thomas.
TEST(CudaDispatch, LongLinesFallBackToThomas) {
  ADI_REQUIRE_CUDA();
  const LineSet x = adi::test_cuda::contiguous(5000, 7), y = adi::test_cuda::adjacent(5000, 40);
  const LineSet longest = adi::test_cuda::adjacent(20000, 5);
  EXPECT_EQ(chosen<double>(x), Kernel::cuda_thomas_shared_transpose);
  EXPECT_EQ(chosen<double>(y), Kernel::cuda_thomas_pcr_long);
  EXPECT_EQ(chosen<double>(longest), Kernel::cuda_thomas_strided);
  Case c;
  c.lines = x;
  adi::test_cuda::check<double>(Kernel::automatic, c);
  c.lines = y;
  c.shared = true;
  adi::test_cuda::check<float>(Kernel::automatic, c);
  c.lines = longest;
  c.shared = false;
  adi::test_cuda::check<double>(Kernel::automatic, c);
}

// Neither the elements nor neighbouring lines are adjacent: only the naive kernel fits.
TEST(CudaDispatch, GeneralStridesUseTheNaiveKernel) {
  ADI_REQUIRE_CUDA();
  const LineSet l{50, 2, 10, 100, 3, 1001};
  EXPECT_EQ(chosen<float>(l), Kernel::cuda_thomas_naive);
  Case c;
  c.lines = l;
  c.periodic = true;
  adi::test_cuda::check<float>(Kernel::automatic, c);
}

TEST(CudaDispatch, ForcedKernelThatCannotRunThrows) {
  ADI_REQUIRE_CUDA();
  const Executor gpu = Executor::cuda();
  auto forced = [](Kernel k) {
    adi::TridiagonalOptions o;
    o.kernel = k;
    return o;
  };
  const LineSet y = adi::test_cuda::adjacent(64, 64), x = adi::test_cuda::contiguous(64, 64);
  EXPECT_THROW(TridiagonalPlan<float>(gpu, y, forced(Kernel::cuda_thomas_shuffle_transpose)),
               adi::InvalidArgument);
  EXPECT_THROW(TridiagonalPlan<float>(gpu, y, forced(Kernel::cuda_thomas_pcr)), adi::InvalidArgument);
  EXPECT_THROW(TridiagonalPlan<float>(gpu, x, forced(Kernel::cuda_thomas_pcr_strided)), adi::InvalidArgument);
  EXPECT_THROW(TridiagonalPlan<float>(gpu, x, forced(Kernel::cpu_thomas)), adi::InvalidArgument);
  EXPECT_THROW(
      TridiagonalPlan<double>(gpu, adi::test_cuda::contiguous(5000, 2), forced(Kernel::cuda_thomas_pcr)),
      adi::InvalidArgument);
  EXPECT_NO_THROW(TridiagonalPlan<float>(gpu, x, forced(Kernel::cuda_thomas_naive)));
}

TEST(CudaDispatch, HostArraysOnADevicePlanThrow) {
  ADI_REQUIRE_CUDA();
  const LineSet l = adi::test_cuda::contiguous(16, 4);
  std::vector<float> h(static_cast<std::size_t>(l.span()), 1.0f);
  TridiagonalPlan<float> plan(Executor::cuda(), l);
  EXPECT_THROW(plan.solve(adi::Bands<float>{h.data(), h.data(), h.data()}, h.data(), h.data()),
               adi::InvalidArgument);
}
}  // namespace

// The rows that depend on the card (adi/tridiagonal_dispatch.cpp): by the peak memory bandwidth
// it reports (H100 SXM 3352 GB/s, H200 4915), not by its name. fp64 per-line bands, n = 512
// with many lines: the long-line kernel on an sm_90 card with H100-class memory; on faster memory
// the register hybrid in whole aligned tiles, else the coalesced Thomas; fp32 n = 256: the
// register hybrid on both.
TEST(CudaDispatch, RowsPerCard) {
  ADI_REQUIRE_CUDA();
  const double gbs = adi::cuda_backend::device_memory_gbs(0);
  const adi::cuda_backend::DeviceInfo info = adi::cuda_backend::device_info(0);
  std::printf("device %s: peak memory %.0f GB/s, cc %d.%d\n", info.name, gbs, info.cc_major, info.cc_minor);
  EXPECT_GT(gbs, 0.0);
  // (adjacent(512, 4096): rows of 4,101 values, not whole 16-byte tiles.)
  const LineSet l512 = adi::test_cuda::adjacent(512, 4096);
  const Kernel k512 = chosen<double>(l512);
  if (gbs >= 4000)
    EXPECT_EQ(k512, Kernel::cuda_thomas_strided);
  else if (info.cc_major >= 9)
    EXPECT_EQ(k512, Kernel::cuda_thomas_pcr_long);
  // fp64 per-line bands of 512 rows in whole aligned tiles (a 512 x 512 x 64 box's Y lines): on fast
  // memory the register hybrid's 16-row segments in the exact table (stop 54), which automatic
  // replaces by the truncated sweeps (16.8 million elements); H100-class memory the long kernel.
  {
    adi::test::ScopedEnv exact_table("ADI_LONG_TRUNCATED", "0");
    const Kernel box512 = chosen<double>(LineSet{512, 512, 512, 1, 64, 512 * 512});
    if (gbs >= 4000)
      EXPECT_EQ(box512, Kernel::cuda_thomas_pcr_strided);
    else if (info.cc_major >= 9)
      EXPECT_EQ(box512, Kernel::cuda_thomas_pcr_long);
  }
  EXPECT_EQ(chosen<float>(adi::test_cuda::adjacent(256, 4096)), Kernel::cuda_thomas_pcr_strided);
  // fp32 per-line bands of 512 rows in whole aligned tiles (a 512 x 512 x 64 box's Y lines): the
  // register hybrid on both cards in the exact table since its warp copy stream (stop 31), which
  // automatic replaces by the truncated sweeps since stop 43 (16.8 million elements); past 512
  // rows, up to 16,384 lines of 1024, the long-line kernel on sm_90 in the exact table, which
  // automatic replaces by the truncated sweeps (stop 42; periodic lines keep the table's pick).
  {
    adi::test::ScopedEnv exact_table("ADI_LONG_TRUNCATED", "0");
    EXPECT_EQ(chosen<float>(LineSet{512, 512, 512, 1, 64, 512 * 512}), Kernel::cuda_thomas_pcr_strided);
  }
  EXPECT_EQ(chosen<float>(LineSet{512, 512, 512, 1, 64, 512 * 512}), Kernel::cuda_thomas_truncated);
  if (info.cc_major >= 9) {
    {
      adi::test::ScopedEnv exact_table("ADI_LONG_TRUNCATED", "0");
      EXPECT_EQ(chosen<float>(adi::test_cuda::adjacent(1024, 16384)), Kernel::cuda_thomas_pcr_long);
    }
    EXPECT_EQ(chosen<float>(adi::test_cuda::adjacent(1024, 16384)), Kernel::cuda_thomas_truncated);
    EXPECT_EQ(chosen<double>(adi::test_cuda::adjacent(2048, 16384)), Kernel::cuda_thomas_truncated);
    EXPECT_EQ(chosen<double>(adi::test_cuda::adjacent(2048, 16384), true), Kernel::cuda_thomas_pcr_long);
  }
  Case c;
  c.lines = l512;
  adi::test_cuda::check<double>(Kernel::automatic, c);
}
