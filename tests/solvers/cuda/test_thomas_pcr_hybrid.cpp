// cuda_thomas_pcr (solvers/cuda/thomas_pcr_hybrid.cuh + pcr_warp_core.cuh, paper 2.3
// and algorithm 10) against the fp64 reference: contiguous lines (X axis).
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_tridiagonal_check.hpp"
#include "scoped_env.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasPcr, Kernel::cuda_thomas_pcr, Family::contiguous, Axis::x)

// Lines up to the hybrid's limit (m = 128 rows per lane) and just past a power of two.
TEST(CudaThomasPcr, LongLines) {
  ADI_REQUIRE_CUDA();
  for (adi::index_t n : {1025, 2049, 4096})
    for (int p = 0; p < 2; ++p) {
      adi::test_cuda::Case c;
      c.lines = adi::test_cuda::contiguous(n, 35);
      c.periodic = p;
      c.shared = p;
      c.base = 1;
      adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr, c);
      adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr, c);
    }
}

// The launch shapes of bench_cuda_tridiagonal's tuning rows (warps per block, cp.async).
TEST(CudaThomasPcr, LaunchShapes) {
  ADI_REQUIRE_CUDA();
  std::vector<adi::cuda_backend::Tuning> shapes;
  for (int prefetch : {0, 1})
    for (int warps : {2, 8}) {
      adi::cuda_backend::Tuning t;
      t.warps_per_block = warps;
      t.prefetch = prefetch;
      shapes.push_back(t);
    }
  adi::test_cuda::launch_shapes<float>(Kernel::cuda_thomas_pcr, Family::contiguous, shapes);
  adi::test_cuda::launch_shapes<double>(Kernel::cuda_thomas_pcr, Family::contiguous, shapes);
}

// The lean form for lines of exactly 256 rows (thomas_pcr_lean_kernel; the default since stop 38,
// ADI_PCR_X_LEAN=0 runs the general kernel): the same checks with the switch on (LeanForm*, whatever
// the process was started with) and off (GeneralForm*: the general kernel on lines of 256). Lines
// of 256 with per-line bands take the lean kernel (counts 1 .. 1032, unaligned bases, periodic or
// not, in place, warps per block 2 / 8 and, below, more lines than one pass of the persistent grid
// holds); every other case (shared bands, the odd sizes 1, 2, 3, 31, 33, 255, 257, ...) must still
// take the general kernel.
namespace {
template <class T>
void lean_cases(const char* lean = "1") {
  const adi::test::ScopedEnv on("ADI_PCR_X_LEAN", lean);
  adi::test_cuda::sweep<T>(Kernel::cuda_thomas_pcr, Family::contiguous);
  if (::testing::Test::HasFailure()) return;
  adi::test_cuda::in_place<T>(Kernel::cuda_thomas_pcr, Family::contiguous);
  std::vector<adi::cuda_backend::Tuning> shapes(2);
  shapes[0].warps_per_block = 2;
  shapes[1].warps_per_block = 8;
  adi::test_cuda::launch_shapes<T>(Kernel::cuda_thomas_pcr, Family::contiguous, shapes);
  // Several lines per warp: more lines than the persistent grid has warps (132 SMs x <= 36 warps).
  for (int p = 0; p < 2; ++p) {
    adi::test_cuda::Case c;
    c.lines = adi::test_cuda::contiguous(256, 12000);
    c.periodic = p;
    c.base = 3;
    c.seed = 900 + p;
    adi::test_cuda::check<T>(Kernel::cuda_thomas_pcr, c);
  }
}
}  // namespace

TEST(CudaThomasPcr, LeanFormFloat) {
  ADI_REQUIRE_CUDA();
  lean_cases<float>();
}

TEST(CudaThomasPcr, LeanFormDouble) {
  ADI_REQUIRE_CUDA();
  lean_cases<double>();
}

TEST(CudaThomasPcr, GeneralFormFloat) {
  ADI_REQUIRE_CUDA();
  lean_cases<float>("0");
}

TEST(CudaThomasPcr, GeneralFormDouble) {
  ADI_REQUIRE_CUDA();
  lean_cases<double>("0");
}

// The lean forms' sweeps (stops 46, 47): contiguous lines of each of `sizes` rows, each line count,
// periodic or not, out of place and in place, unaligned bases (1 + seed % 3), NaN-poisoned outputs
// (check()), under ADI_PCR_X_LEAN = lean; skip() drops cases; then each size of `tuned` again with
// 5000 lines at 2 and 8 warps per block.
namespace {
struct LeanSweep {
  std::vector<adi::index_t> sizes, counts;
  bool shared = false;
  std::uint32_t seed = 1;
  bool (*skip)(adi::index_t n, adi::index_t count, int in_place) = nullptr;
  std::vector<adi::index_t> tuned;
};

template <class T>
void lean_sweep(const char* lean, const LeanSweep& s) {
  const adi::test::ScopedEnv on("ADI_PCR_X_LEAN", lean);
  std::uint32_t seed = s.seed;
  for (adi::index_t n : s.sizes)
    for (adi::index_t count : s.counts)
      for (int p = 0; p < 2; ++p)
        for (int in_place = 0; in_place < 2; ++in_place) {
          if (s.skip && s.skip(n, count, in_place)) continue;
          adi::test_cuda::Case c;
          c.lines = adi::test_cuda::contiguous(n, count);
          c.shared = s.shared;
          c.periodic = p;
          c.in_place = in_place;
          c.base = 1 + seed % 3;
          c.seed = seed++;
          adi::test_cuda::check<T>(Kernel::cuda_thomas_pcr, c);
          if (::testing::Test::HasFailure()) return;
        }
  std::vector<adi::cuda_backend::Tuning> shapes(2);
  shapes[0].warps_per_block = 2;
  shapes[1].warps_per_block = 8;
  for (const auto& t : shapes)
    for (adi::index_t n : s.tuned) {
      adi::test_cuda::Case c;
      c.lines = adi::test_cuda::contiguous(n, 5000);
      c.shared = s.shared;
      c.tuning = &t;
      c.seed = seed++;
      adi::test_cuda::check<T>(Kernel::cuda_thomas_pcr, c);
    }
}
}  // namespace

// The lean form's tail (stop 46; stop 47: 481 .. 511 rows as 512): non-periodic lines of 225 .. 255
// rows solved as 256 with identity rows past n (periodic ones keep the general kernel), per-line
// bands, both switch settings: sizes at both ends and between, 1 .. 12,000 lines (partial and
// several warps per block, more lines than the persistent grid holds), unaligned bases, in place,
// NaN-poisoned outputs (check()).
namespace {
template <class T>
void lean_tail_cases(const char* lean) {
  LeanSweep s;
  s.sizes = {225, 226, 231, 240, 248, 254, 255, 481, 482, 500, 510, 511};
  s.counts = {1, 7, 33, 1032, 12000};
  s.seed = 1200;
  // (the long batches: a few sizes)
  s.skip = [](adi::index_t n, adi::index_t count, int in_place) { return count == 12000 && (n % 3 != 0 || in_place); };
  lean_sweep<T>(lean, s);
}
}  // namespace

TEST(CudaThomasPcr, LeanTailFloat) {
  ADI_REQUIRE_CUDA();
  lean_tail_cases<float>("1");
  lean_tail_cases<float>("0");
}

TEST(CudaThomasPcr, LeanTailDouble) {
  ADI_REQUIRE_CUDA();
  lean_tail_cases<double>("1");
  lean_tail_cases<double>("0");
}

// The sanitizer's case of the lean form: a few lines of 256, 240, 512 and 500 (the tails), per-line bands.
TEST(CudaThomasPcr, LeanFormSmall) {
  ADI_REQUIRE_CUDA();
  const adi::test::ScopedEnv on("ADI_PCR_X_LEAN", "1");
  adi::test_cuda::Case c;
  c.base = 1;
  for (adi::index_t n : {256, 240, 512, 500})
    for (int p = 0; p < 2; ++p) {
      c.lines = adi::test_cuda::contiguous(n, 9);
      c.periodic = p;
      adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr, c);
      adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr, c);
    }
}

// The lean form for lines of 512 rows with per-line bands (stop 47, thomas_pcr_lean_kernel<T, false,
// 16>): periodic or not, 1 .. 12,000 lines, unaligned bases, in place, warps per block 2 / 8,
// NaN-poisoned outputs, both switch settings; 511 and 513 keep the general kernel.
namespace {
template <class T>
void lean512_cases(const char* lean) {
  LeanSweep s;
  s.sizes = {512, 511, 513};
  s.counts = {1, 2, 7, 33, 1032, 12000};
  s.seed = 2100;
  // (the neighbours: a few cases)
  s.skip = [](adi::index_t n, adi::index_t count, int in_place) { return n != 512 && (count > 33 || in_place); };
  s.tuned = {512};
  lean_sweep<T>(lean, s);
}
}  // namespace

TEST(CudaThomasPcr, Lean512Float) {
  ADI_REQUIRE_CUDA();
  lean512_cases<float>("1");
  lean512_cases<float>("0");
}

TEST(CudaThomasPcr, Lean512Double) {
  ADI_REQUIRE_CUDA();
  lean512_cases<double>("1");
  lean512_cases<double>("0");
}

// The lean form with shared bands (stop 47, thomas_pcr_lean_shared_kernel): lines of 256 and 512 rows,
// periodic or not, 1 .. 12,000 lines (partial blocks, several lines per warp, more lines than the
// persistent grid holds in flight), unaligned bases, in place, warps per block 2 / 8,
// NaN-poisoned outputs (check()), with the switch on and off (the general kernel on the same cases);
// the tails (non-periodic 225 .. 255 and 481 .. 511 rows: 240, 500 and both ends) and the neighbours
// that keep the general kernel (224, 257, 480, 513; periodic tails).
namespace {
template <class T>
void lean_shared_cases(const char* lean) {
  LeanSweep s;
  s.sizes = {256, 512, 240, 500, 225, 255, 481, 511, 224, 257, 480, 513};
  s.counts = {1, 2, 7, 33, 1032, 12000};
  s.shared = true;
  s.seed = 1700;
  // (the others: a few cases)
  s.skip = [](adi::index_t n, adi::index_t count, int in_place) {
    return n != 256 && n != 512 && (count > 33 || in_place);
  };
  s.tuned = {256, 512};
  lean_sweep<T>(lean, s);
}
}  // namespace

TEST(CudaThomasPcr, LeanSharedFloat) {
  ADI_REQUIRE_CUDA();
  lean_shared_cases<float>("1");
  lean_shared_cases<float>("0");
}

TEST(CudaThomasPcr, LeanSharedDouble) {
  ADI_REQUIRE_CUDA();
  lean_shared_cases<double>("1");
  lean_shared_cases<double>("0");
}

// The sanitizer's case of the shared lean form: a few lines of 256, 512, 240 and 500 (the tails).
TEST(CudaThomasPcr, LeanSharedSmall) {
  ADI_REQUIRE_CUDA();
  const adi::test::ScopedEnv on("ADI_PCR_X_LEAN", "1");
  adi::test_cuda::Case c;
  c.base = 1;
  c.shared = true;
  for (int p = 0; p < 8; ++p) {
    const adi::index_t sizes[4] = {256, 512, 240, 500};
    c.lines = adi::test_cuda::contiguous(sizes[p / 2], 9 + p);
    c.periodic = p % 2;
    adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr, c);
    adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr, c);
  }
}
