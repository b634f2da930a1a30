// cuda_backend::stencil_diagonal (b = 1/s - d) against the host kernel, odd lengths.
#include <gtest/gtest.h>

#include "cuda_stencil_check.hpp"
#include "solvers/cpu/stencil_diagonal.hpp"
#include "solvers/cuda/backend.hpp"

using namespace adi;
using namespace adi::test_cuda;

namespace {
template <class T>
void check_diagonal(index_t n, std::uint32_t seed) {
  SCOPED_TRACE("n = " + std::to_string(n));
  std::mt19937 rng(seed);
  const std::vector<T> d = random_values<T>(static_cast<std::size_t>(n), rng, -50.0, 50.0);
  std::vector<T> b(static_cast<std::size_t>(n) + 3, std::numeric_limits<T>::quiet_NaN());
  Array<T> dd = to_device(d), db = to_device(b);
  cpu::stencil_diagonal<T>(d.data(), T(12.5), b.data(), n, 1);
  cuda_backend::stencil_diagonal<T>(dd.data(), T(12.5), db.data(), n, nullptr);
  expect_same(to_host(db), b, 0.0, "stencil_diagonal");  // one subtraction: exact on both
}
}  // namespace

TEST(CudaStencilDiagonal, MatchesHost) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 1;
  for (index_t n : {1, 2, 3, 31, 33, 255, 257, 1000, 1 << 20}) {
    check_diagonal<float>(n, seed++);
    check_diagonal<double>(n, seed++);
  }
}
