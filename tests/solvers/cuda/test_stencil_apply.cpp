// cuda_backend::stencil_apply (solvers/cuda/stencil_apply.cu) against the host kernel
// cpu::stencil_apply on the same random stencils: padded boxes of odd extents, shared and
// per-node bands, periodic and Dirichlet axes, mixed terms, sources, in place and not.
#include <gtest/gtest.h>

#include "cuda_stencil_check.hpp"
#include "solvers/cpu/stencil_apply.hpp"
#include "solvers/cuda/backend.hpp"

using namespace adi;
using namespace adi::test_cuda;

namespace {

struct ApplySpec {
  std::array<double, 4> w{};
  double alpha = 0.0;
  bool base = true;
  bool in_place = false;  // base == out
  int sources = 0;
};

template <class T>
void check_apply(const StencilSpec& s, const ApplySpec& p) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") + s.describe() + " w=(" +
               std::to_string(p.w[0]) + "," + std::to_string(p.w[1]) + "," + std::to_string(p.w[2]) + "," +
               std::to_string(p.w[3]) + ")" + (p.in_place ? " in place" : ""));
  StencilData<T> data(s);
  std::mt19937 rng(s.seed + 17);
  const std::size_t total = static_cast<std::size_t>(field_values(s.box));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> v = random_values<T>(total, rng);
  const std::vector<T> base = random_values<T>(total, rng);
  const std::vector<T> src0 = random_values<T>(total, rng), src1 = random_values<T>(total, rng);
  std::vector<T> out_host = p.in_place ? base : std::vector<T>(total, nan);
  if (p.in_place)  // the nodes that are not written keep NaN on both sides
    for (index_t k = 0; k < s.box.nz; ++k)
      for (index_t j = 0; j < s.box.ny; ++j)
        for (index_t i = 0; i < s.box.nx; ++i)
          if (!data.unknown(i, j, k)) out_host[i + j * s.box.sy + k * s.box.sz] = nan;
  const std::vector<T> out_init = out_host;

  Array<T> dv = to_device(v), dbase = to_device(out_init), dsrc0 = to_device(src0), dsrc1 = to_device(src1);
  Array<T> dout = to_device(out_init);
  if (!p.in_place) dbase = to_device(base);
  std::vector<T> host_base = p.in_place ? out_init : base;

  detail::ApplyArgs<T> h, g;
  for (int q = 0; q < 4; ++q) h.w[q] = g.w[q] = T(p.w[q]);
  h.alpha = g.alpha = T(p.alpha);
  h.v = v.data();
  g.v = dv.data();
  if (p.base) {
    h.base = p.in_place ? out_host.data() : host_base.data();
    g.base = p.in_place ? dout.data() : dbase.data();
  }
  if (p.sources > 0) {
    h.src[0] = src0.data();
    g.src[0] = dsrc0.data();
    h.src_scale[0] = g.src_scale[0] = T(0.25);
  }
  if (p.sources > 1) {
    h.src[1] = src1.data();
    g.src[1] = dsrc1.data();
    h.src_scale[1] = g.src_scale[1] = T(-0.5);
  }
  h.out = out_host.data();
  g.out = dout.data();
  cpu::stencil_apply<T>(data.host, h, 1);
  cuda_backend::stencil_apply<T>(data.dev, g, nullptr);
  Executor::cuda().synchronize();
  expect_same(to_host(dout), out_host, tolerance<T>(), "stencil_apply");
}

template <class T>
void all_cases() {
  std::uint32_t seed = 1;
  const ApplySpec explicit_step{{0.0, 0.7, -0.4, 1.3}, 1.0, true, false, 0};
  const ApplySpec stage_rhs{{0.0, -1.0, 0.0, 0.0}, 2.5, true, true, 2};
  const ApplySpec mixed_only{{0.6, 0.0, 0.0, 0.0}, 0.0, false, false, 1};
  const ApplySpec everything{{0.3, -0.8, 0.5, 0.9}, -1.5, true, false, 2};
  // Odd extents on every axis, each axis in turn with per-node bands and periodic.
  const index_t ext[][3] = {{37, 20, 11}, {33, 31, 3}, {2, 65, 7}, {1, 33, 19}, {31, 1, 1}, {64, 3, 33}};
  for (const auto& e : ext)
    for (int variant = 0; variant < 4; ++variant) {
      StencilSpec s;
      s.box = padded(e[0], e[1], e[2]);
      s.seed = seed++;
      for (int a = 0; a < 3; ++a) {
        s.axis[a].shared = variant != a + 1;
        s.axis[a].periodic = variant == ((a + 2) % 4) && s.box.extent(static_cast<Axis>(a)) >= 3;
        s.axis[a].dirichlet = variant != 3 || a != 0;
      }
      s.mixed = variant >= 2;
      for (const ApplySpec& p : {explicit_step, stage_rhs, mixed_only, everything}) {
        check_apply<T>(s, p);
        if (::testing::Test::HasFailure()) return;
      }
    }
}

}  // namespace

TEST(CudaStencilApply, MatchesHostFloat) {
  ADI_REQUIRE_CUDA();
  all_cases<float>();
}

TEST(CudaStencilApply, MatchesHostDouble) {
  ADI_REQUIRE_CUDA();
  all_cases<double>();
}

// With every weight zero v is not read: NaN in v must not reach the output.
TEST(CudaStencilApply, ZeroWeightsDoNotReadV) {
  ADI_REQUIRE_CUDA();
  StencilSpec s;
  s.box = padded(19, 9, 5);
  StencilData<double> data(s);
  const std::size_t total = static_cast<std::size_t>(field_values(s.box));
  Array<double> v = to_device(std::vector<double>(total, std::numeric_limits<double>::quiet_NaN()));
  Array<double> base = to_device(std::vector<double>(total, 2.0)), out = to_device(std::vector<double>(total, 0.0));
  detail::ApplyArgs<double> g;
  g.v = v.data();
  g.base = base.data();
  g.alpha = 0.5;
  g.out = out.data();
  cuda_backend::stencil_apply<double>(data.dev, g, nullptr);
  const std::vector<double> h = to_host(out);
  for (index_t k = 0; k < s.box.nz; ++k)
    for (index_t j = 0; j < s.box.ny; ++j)
      for (index_t i = 0; i < s.box.nx; ++i)
        EXPECT_EQ(h[i + j * s.box.sy + k * s.box.sz], data.unknown(i, j, k) ? 1.0 : 0.0);
}

// The sanitizer's case: one small box with everything on.
TEST(CudaStencilApply, Small) {
  ADI_REQUIRE_CUDA();
  StencilSpec s;
  s.box = padded(9, 7, 5);
  s.mixed = true;
  s.axis[1].shared = false;
  s.axis[0].periodic = true;
  check_apply<float>(s, {{0.3, -0.8, 0.5, 0.9}, -1.5, true, false, 2});
  check_apply<double>(s, {{0.0, -1.0, 0.0, 0.0}, 2.5, true, true, 2});
}
