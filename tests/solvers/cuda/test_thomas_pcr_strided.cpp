// cuda_thomas_pcr_strided (solvers/cuda/thomas_pcr_strided.cuh + pcr_warp_core.cuh,
// paper algorithm 11) against the fp64 reference: lines adjacent in memory (Y/Z axes).
#include "cuda_tridiagonal_check.hpp"

using adi::Axis;
using adi::Kernel;
using adi::test_cuda::Family;

ADI_CUDA_TRIDIAGONAL_SUITE(CudaThomasPcrStrided, Kernel::cuda_thomas_pcr_strided, Family::adjacent, Axis::y,
                           Axis::z)

TEST(CudaThomasPcrStrided, LongLines) {
  ADI_REQUIRE_CUDA();
  for (adi::index_t n : {1025, 2049, 4096})
    for (int p = 0; p < 2; ++p) {
      adi::test_cuda::Case c;
      c.lines = adi::test_cuda::adjacent(n, 37);
      c.periodic = p;
      c.shared = !p;
      c.base = 2;
      adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr_strided, c);
      adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr_strided, c);
    }
}

// The launch shapes of bench_cuda_tridiagonal's tuning rows (lines per tile, rows per thread).
// Rows 8 (where 16 is the default: shared bands, fp32) are compiled only with
// ADI_CUDA_UNROLL_ALL; other builds run the default for them, so only rows 16 are checked there.
TEST(CudaThomasPcrStrided, LaunchShapes) {
  ADI_REQUIRE_CUDA();
  std::vector<adi::cuda_backend::Tuning> shapes;
  for (int rows : {8, 16})
    for (int lines : {4, 8, 16, 32}) {
      if (rows == 8 && !adi::cuda_backend::timing_forms_compiled()) continue;
      adi::cuda_backend::Tuning t;
      t.lines_per_block = lines;
      t.rows_per_thread = rows;
      shapes.push_back(t);
    }
  adi::test_cuda::launch_shapes<float>(Kernel::cuda_thomas_pcr_strided, Family::adjacent, shapes);
  adi::test_cuda::launch_shapes<double>(Kernel::cuda_thomas_pcr_strided, Family::adjacent, shapes);
}

// The Y lines of a dense 64 x n x planes box: 64 adjacent lines per plane, rows of 64 values
// (whole 16-byte aligned tiles: the bulk copy form takes them).
adi::LineSet dense_y(adi::index_t n, adi::index_t planes) { return {n, 64, 64, 1, planes, 64 * n}; }

// The Z lines of a dense 64 x rows x n box: line (x, y) at x + 64 y, rows nx * ny apart.
adi::LineSet dense_z(adi::index_t n, adi::index_t rows) { return {n, 64 * rows, 64, 1, rows, 64}; }

// Every n, periodic or not, shared or per-line bands, both precisions, on `count` adjacent lines
// (count < 0: dense_y with -count planes; z: dense_z with -count rows).
void check_adjacent(std::initializer_list<adi::index_t> sizes, adi::index_t count, adi::index_t base,
                    bool z = false) {
  for (adi::index_t n : sizes)
    for (int p = 0; p < 2; ++p)
      for (int sh = 0; sh < 2; ++sh) {
        adi::test_cuda::Case c;
        c.lines = count > 0 ? adi::test_cuda::adjacent(n, count) : z ? dense_z(n, -count) : dense_y(n, -count);
        c.periodic = p;
        c.shared = sh;
        c.base = base;
        adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr_strided, c);
        adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr_strided, c);
      }
}

// The register kernel's unrolled path for full segments (m divides n: 16, 128, 256, 512 rows)
// beside the general one in the same tile: 37 lines leave the last tile part empty, n = 257
// and 255 mix full segments with a short last one.
TEST(CudaThomasPcrStrided, FullSegments) {
  ADI_REQUIRE_CUDA();
  check_adjacent({8, 16, 128, 255, 256, 257, 512}, 37, 1);
}

// Several tiles per block of the persistent grid (20,000 lines: ~625 tiles of 32 lines in
// fp32, ~1,250 of 16 in fp64, against ~132 blocks; the dense box 416 / 832), so that every
// block refills its stage for the next tile while it solves this one: the register kernel's
// copy stream (ADI_PCR_STRIDED_GROUPS; scripts/gpu_yz_check.sh runs this test at 1, 2, 4 and
// bulk: the unaligned 20,000 lines fall back to cp.async, the dense box takes bulk copies; 2, 4 and
// bulk from its ADI_CUDA_UNROLL_ALL build, the default build runs its default for them and says so).
TEST(CudaThomasPcrStrided, ManyTilesPerBlock) {
  ADI_REQUIRE_CUDA();
  check_adjacent({256}, 20000, 3);
  check_adjacent({255, 256, 257}, -208, 0);  // 13,312 lines
}

// The same on a small dense box (5,120 lines of 1 to 33 rows; 160 tiles in fp32, 320 in fp64):
// small enough for compute-sanitizer racecheck and memcheck on the bulk copy form.
TEST(CudaThomasPcrStrided, ManyTilesSmall) {
  ADI_REQUIRE_CUDA();
  check_adjacent({1, 2, 3, 16, 31, 33}, -80, 0);
}

// Dense Y and Z boxes in whole 16-byte aligned tiles, so that every copy stream form takes them
// (the warp's 16-byte cp.async, the bulk copies, 1, 2 and 4 commit groups; scripts/gpu_yz_check.sh
// runs this binary at each ADI_PCR_STRIDED_GROUPS, each from a build that has the form: bulk, 2
// and 4 only with ADI_CUDA_UNROLL_ALL): the odd sizes, 80 planes / rows of 64 lines
// (5,120 lines: 160 tiles in fp32, 320 in fp64 against ~132 blocks: several per block;
// ManyTilesPerBlock has ~6 per block).
TEST(CudaThomasPcrStrided, DenseBoxesEveryCopyStream) {
  ADI_REQUIRE_CUDA();
  check_adjacent({1, 2, 3, 31, 33, 255, 257}, -80, 0);
  check_adjacent({1, 2, 3, 31, 33, 255, 257}, -80, 0, true);
}

// Lines of 257 .. 512 rows with per-line bands in double precision (stop 54): 16-row segments in
// blocks of 256 threads (the register kernel's kPcrWideThreads instances, up to 255 registers a
// thread): dense Y and Z boxes (the warp's 16-byte stream, several tiles a block), adjacent lines
// from an unaligned start (one value a copy), odd and even sizes, periodic or not (check_adjacent
// runs fp32 and shared bands beside them, which keep their kernels).
TEST(CudaThomasPcrStrided, WideDoubleSegments) {
  ADI_REQUIRE_CUDA();
  const std::initializer_list<adi::index_t> sizes = {257, 258, 300, 383, 384, 449, 511, 512};
  check_adjacent(sizes, -40, 0);
  check_adjacent(sizes, -40, 0, true);
  check_adjacent(sizes, 37, 1);
}

// The same kernels on a small box, for compute-sanitizer memcheck and racecheck.
TEST(CudaThomasPcrStrided, WideDoubleSmall) {
  ADI_REQUIRE_CUDA();
  check_adjacent({257, 512}, -4, 0);
  check_adjacent({300}, 19, 1);
}

// Rows of lines that end in part of a tile (stop 46): the register kernel narrows its tile until
// whole tiles fit each row (down to 32 bytes of a row), else it streams one value a copy. The Y lines
// of nx x n x 3 boxes with nx = 240 (tiles of 16 lines in both precisions), 40 (fp32 8, fp64 8), 36
// (fp32 one value a copy, fp64 4), 12 (fp32 one value a copy, fp64 4), and the Z lines of nx x 5 x n boxes
// (the plan merges them into one run of 5 nx lines).
TEST(CudaThomasPcrStrided, RowsEndingInPartTiles) {
  ADI_REQUIRE_CUDA();
  for (adi::index_t nx : {240, 40, 36, 12})
    for (adi::index_t n : {1, 2, 3, 31, 33, 255, 257})
      for (int z = 0; z < 2; ++z)
        for (int sh = 0; sh < 2; ++sh) {
          adi::test_cuda::Case c;
          c.lines = z ? adi::LineSet{n, nx * 5, nx, 1, 5, nx} : adi::LineSet{n, nx, nx, 1, 3, nx * n};
          c.shared = sh;
          c.periodic = n % 2 == 0;
          c.base = 0;  // aligned starts: the tiled stream (an offset start streams one value a copy)
          adi::test_cuda::check<float>(Kernel::cuda_thomas_pcr_strided, c);
          adi::test_cuda::check<double>(Kernel::cuda_thomas_pcr_strided, c);
        }
}
