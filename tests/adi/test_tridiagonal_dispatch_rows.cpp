// The CUDA rows of the tridiagonal dispatch table (adi/tridiagonal_dispatch.cpp) for the two
// cards they were measured on, without a GPU: choose_cuda_kernel with an H100's and an H200's
// device facts (compute capability 9.0, 227 KB of shared memory a block, peak memory 3352 /
// 4915 GB/s as the device reports it). Each expectation is the kernel the row's measurement
// found fastest (or within 5% of it) on that card; the measurements are in the source beside
// each row and in solvers/cuda/README.md ("Long-line crossover": stop 36's sweep, runs s36/4-6).
// The GPU suites (test_tridiagonal_cuda_dispatch, test_thomas_pcr_long's Dispatch) check the
// same rows on the card they run on; this one runs in CI.
#include <gtest/gtest.h>

#include <string>

#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/layout.hpp"

namespace {
using adi::Kernel;
using adi::LineSet;
using adi::detail::CudaDeviceTraits;

constexpr std::size_t kSmem = 227 * 1024;
const CudaDeviceTraits kH100{9, 3352, kSmem};
const CudaDeviceTraits kH200{9, 4915, kSmem};

LineSet batch(adi::index_t n, adi::index_t lines) { return adi::to_lines(adi::InterleavedBatch{n, lines}); }

// The kernel's name (failures then print names, not bytes).
std::string pick(const CudaDeviceTraits& dev, const LineSet& l, std::size_t value_size, bool shared,
                 adi::Pivoting pivoting = adi::Pivoting::none) {
  adi::detail::DispatchQuery q;
  q.lines = l;
  q.value_size = value_size;
  q.shared_bands = shared;
  q.pivoting = pivoting;
  return adi::kernel_name(adi::detail::choose_cuda_kernel(dev, q));
}
std::string name(Kernel k) { return adi::kernel_name(k); }

constexpr Kernel kLong = Kernel::cuda_thomas_pcr_long;
constexpr Kernel kTile = Kernel::cuda_thomas_pcr_strided;
constexpr Kernel kStrided = Kernel::cuda_thomas_strided;

struct Row {
  adi::index_t n, lines;
  std::size_t value_size;
  bool shared;
  Kernel h100, h200;
};

class DispatchRows : public ::testing::Test {
 protected:
  void SetUp() override {
#if !ADI_HAVE_CUDA
    GTEST_SKIP() << "built without CUDA: the hybrids' shared-memory sizes (solvers/cuda) are not compiled, "
                    "so the table's fit checks cannot be evaluated; configure with ADI_WITH_CUDA=ON";
#endif
  }
};

// Stop 36's rows: lines of 1025-4096 rows, adjacent (Z sweeps, interleaved batches).
TEST_F(DispatchRows, LongLineCrossover) {
  const Row rows[] = {
      // per-line bands, fp64: the cluster form up to 16,384 lines; 32,768 on H100-class memory only
      {1536, 16384, 8, false, kLong, kLong},
      {2048, 16384, 8, false, kLong, kLong},  // one rank's box of the public case on 2 GPUs
      {3072, 16384, 8, false, kLong, kLong},
      {4096, 16384, 8, false, kLong, kLong},  // the public case
      {2048, 32768, 8, false, kLong, kStrided},
      {4096, 65536, 8, false, kStrided, kStrided},
      // per-line bands, fp32: the tile form up to 1536 rows and 8,192 lines, the cluster form past
      // 2048 rows, the coalesced Thomas for 1536-2048 rows with many lines
      {1536, 4096, 4, false, kTile, kTile},
      {1536, 8192, 4, false, kTile, kTile},
      {2048, 4096, 4, false, kLong, kLong},
      {1536, 16384, 4, false, kStrided, kStrided},
      {2048, 16384, 4, false, kStrided, kStrided},
      {3072, 16384, 4, false, kLong, kLong},
      {4096, 32768, 4, false, kStrided, kStrided},
      // shared bands, fp32: the tile form up to 16,384 lines, 32,768 of at most 2048 rows
      {2048, 8192, 4, true, kTile, kTile},
      {4096, 16384, 4, true, kTile, kTile},
      {2048, 32768, 4, true, kTile, kTile},
      {3072, 32768, 4, true, kStrided, kStrided},
      // shared bands, fp64: the tile form below 4096 rows up to 8,192 lines (16,384 past 2048
      // rows), else the long kernel up to 16,384 lines
      {2048, 8192, 8, true, kTile, kTile},
      {3072, 16384, 8, true, kTile, kTile},
      {2048, 16384, 8, true, kLong, kLong},
      {4096, 8192, 8, true, kLong, kLong},
      {4096, 16384, 8, true, kLong, kLong},
      {2048, 32768, 8, true, kStrided, kStrided},
  };
  for (const Row& r : rows) {
    const LineSet l = batch(r.n, r.lines);
    const std::string what = std::to_string(r.n) + " x " + std::to_string(r.lines) +
                             (r.value_size == 8 ? " fp64 " : " fp32 ") + (r.shared ? "shared" : "per-line");
    EXPECT_EQ(pick(kH100, l, r.value_size, r.shared), name(r.h100)) << "H100, " << what;
    EXPECT_EQ(pick(kH200, l, r.value_size, r.shared), name(r.h200)) << "H200, " << what;
  }
}

// The rows before stop 36 that differ per card or per precision (test_tridiagonal_cuda_dispatch's
// RowsPerCard on the GPU), X lines and the rows every card shares.
TEST_F(DispatchRows, EarlierRows) {
  // fp64 per-line bands of 512 rows, 4,096 lines: the long kernel on H100-class memory, the
  // register hybrid's 16-row segments on faster memory (stop 54; the coalesced Thomas before),
  // and there the coalesced Thomas where the rows are not whole 16-byte tiles; fp32 256 rows:
  // the register hybrid on both
  EXPECT_EQ(pick(kH100, batch(512, 4096), 8, false), name(kLong));
  EXPECT_EQ(pick(kH200, batch(512, 4096), 8, false), name(kTile));
  EXPECT_EQ(pick(kH200, batch(300, 4096), 8, false), name(kTile));
  EXPECT_EQ(pick(kH200, LineSet{512, 4101, 4096, 1, 1, 0}, 8, false), name(kStrided));
  EXPECT_EQ(pick(kH100, batch(300, 4096), 8, false), name(kLong));
  // past 512 rows the long kernel on both (n = 1024, 16,384 lines)
  EXPECT_EQ(pick(kH200, batch(1024, 16384), 8, false), name(kLong));
  EXPECT_EQ(pick(kH100, batch(1024, 16384), 8, false), name(kLong));
  EXPECT_EQ(pick(kH100, batch(256, 4096), 4, false), name(kTile));
  EXPECT_EQ(pick(kH200, batch(256, 4096), 4, false), name(kTile));
  // fp32 per-line bands, 512 < n <= 1024, up to 16,384 lines: the long kernel on sm_90
  EXPECT_EQ(pick(kH100, batch(1024, 16384), 4, false), name(kLong));
  EXPECT_EQ(pick(kH200, batch(1024, 16384), 4, false), name(kLong));
  // X (contiguous lines): the warp hybrid up to its shared-memory limit, then the transpose
  const LineSet x1024 = adi::to_lines(adi::StridedLines::contiguous(1024, 1000));
  const LineSet x5000 = adi::to_lines(adi::StridedLines::contiguous(5000, 7));
  for (const CudaDeviceTraits& dev : {kH100, kH200}) {
    EXPECT_EQ(pick(dev, x1024, 4, false), name(Kernel::cuda_thomas_pcr));
    EXPECT_EQ(pick(dev, x5000, 8, false), name(Kernel::cuda_thomas_shared_transpose));
    // longer than the long kernel takes (more than 512 segments): the coalesced Thomas
    EXPECT_EQ(pick(dev, batch(20000, 5), 8, false), name(kStrided));
    // partial pivoting: the pivoting kernels whatever the layout
    EXPECT_EQ(pick(dev, batch(2048, 16384), 8, false, adi::Pivoting::partial), name(Kernel::cuda_pivoting));
    // neither the elements nor neighbouring lines adjacent: the naive kernel
    EXPECT_EQ(pick(dev, LineSet{50, 2, 10, 100, 3, 1001}, 4, false), name(Kernel::cuda_thomas_naive));
  }
}

// Without thread-block clusters (compute capability 8.x) none of the sm_90 rows apply: the
// public case takes the coalesced Thomas, few long lines the long kernel's plain form.
TEST_F(DispatchRows, NoClustersBeforeSm90) {
  const CudaDeviceTraits a100{8, 2039, 163 * 1024};
  EXPECT_EQ(pick(a100, batch(4096, 16384), 8, false), name(kStrided));
  EXPECT_EQ(pick(a100, batch(2048, 16384), 8, false), name(kStrided));
  EXPECT_EQ(pick(a100, batch(2048, 16384), 4, true), name(kStrided));
  EXPECT_EQ(pick(a100, batch(2048, 4096), 8, false), name(kLong));
  // fp64 per-line lines of 257 .. 512 rows: the register hybrid is measured only on fast memory
  EXPECT_EQ(pick(a100, batch(512, 4096), 8, false), name(kStrided));
}
}  // namespace
