// The interleaved-batch public entry point on the GPU (cuThomasBatch layout: element k
// of system s at k*batch + s): TridiagonalPlan / solve_tridiagonal built from an
// InterleavedBatch, with the dispatch table's kernel, against the fp64 reference over
// the size sweep of the issue, Bands and SharedBands, periodic and not.
#include "cuda_tridiagonal_check.hpp"

using adi::index_t;
using adi::InterleavedBatch;
using adi::Kernel;

namespace {
template <class T>
void interleaved_sweep() {
  std::uint32_t seed = 3;
  for (index_t n : {1, 2, 3, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000})
    for (index_t batch : {1, 7, 33, 1000})
      for (int shared = 0; shared < 2; ++shared)
        for (int periodic = 0; periodic < 2; ++periodic) {
          adi::test_cuda::Case c;
          c.lines = adi::to_lines(InterleavedBatch{n, batch});
          c.shared = shared;
          c.periodic = periodic;
          c.base = seed % 3;
          c.seed = seed++;
          adi::test_cuda::check<T>(Kernel::automatic, c);
          if (::testing::Test::HasFailure()) return;
        }
}
}  // namespace

TEST(CudaInterleavedBatch, SizesAndBatchesFloat) {
  ADI_REQUIRE_CUDA();
  interleaved_sweep<float>();
}

TEST(CudaInterleavedBatch, SizesAndBatchesDouble) {
  ADI_REQUIRE_CUDA();
  interleaved_sweep<double>();
}

// The layout type itself through the one-shot entry point: rows 1 4 1 with d = 6 in the
// interior and 5 at the ends have u = 1 everywhere.
TEST(CudaInterleavedBatch, OneShotEntryPoint) {
  ADI_REQUIRE_CUDA();
  const index_t n = 300, batch = 77, total = n * batch;
  std::vector<double> a(total, 1.0), b(total, 4.0), c(total, 1.0), d(total, 6.0);
  for (index_t s = 0; s < batch; ++s) {
    d[s] = 5.0;                      // row 0 of system s
    d[(n - 1) * batch + s] = 5.0;    // row n-1
  }
  const adi::Executor gpu = adi::Executor::cuda();
  adi::Array<double> da(total, gpu), db(total, gpu), dc(total, gpu), dd(total, gpu), du(total, gpu);
  da.copy_from_host(a.data());
  db.copy_from_host(b.data());
  dc.copy_from_host(c.data());
  dd.copy_from_host(d.data());
  adi::solve_tridiagonal(gpu, InterleavedBatch{n, batch}, adi::Bands<double>{da.data(), db.data(), dc.data()},
                         dd.data(), du.data());
  std::vector<double> u(total);
  du.copy_to_host(u.data());
  for (index_t k = 0; k < total; ++k) ASSERT_NEAR(u[k], 1.0, 1e-12) << "element " << k;
  adi::TridiagonalPlan<float> plan(gpu, InterleavedBatch{n, batch});
  // The hybrid; on an H200 the coalesced Thomas from n = 256 on (adi/tridiagonal_dispatch.cpp).
  EXPECT_TRUE(plan.kernel() == Kernel::cuda_thomas_pcr_strided || plan.kernel() == Kernel::cuda_thomas_strided)
      << adi::kernel_name(plan.kernel());
}
