// cuda_backend::stencil_apply (solvers/cuda/stencil_apply.cu) against the host kernel
// cpu::stencil_apply on the same random stencils: padded boxes of odd extents, shared and
// per-node bands, periodic and Dirichlet axes, mixed terms, sources, in place and not.
#include <gtest/gtest.h>

#include <string>

#include "cuda_stencil_check.hpp"
#include "scoped_env.hpp"
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

// The lean column form of the shared-band kernel (the default since stop 38; ADI_STENCIL_LEAN,
// read at each stencil_apply call, 1 / 0) or the column kernel for this object's life (the
// process's own setting restored after).
struct LeanColumns : adi::test::ScopedEnv {
  LeanColumns() : ScopedEnv("ADI_STENCIL_LEAN", "1") {}
};
struct GeneralColumns : adi::test::ScopedEnv {
  GeneralColumns() : ScopedEnv("ADI_STENCIL_LEAN", "0") {}
};

// Where base comes from in a lean case: v itself (the explicit step, the stencil fold's first
// term), its own field, or out (in place, the stencil fold's second term).
enum class BaseIs { v, own, out };

// The lean column form against an fp64 reference of the shared-band operator (every axis
// shared, base given, no sources: the kernel's case), computed here from the same values:
// out = alpha base + sum_b w_b (d_b v - a_b v[prev_b] - c_b v[next_b]) at the unknowns, every
// other node as it was (NaN-poisoned, or base's value where in place).
template <class T>
void check_lean(const StencilSpec& s, const std::array<double, 4>& w, double alpha, BaseIs from) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "lean float " : "lean double ") + s.describe() + " base " +
               (from == BaseIs::v ? "v" : from == BaseIs::own ? "own" : "out") + " w=(" + std::to_string(w[1]) +
               "," + std::to_string(w[2]) + "," + std::to_string(w[3]) + ")");
  StencilData<T> data(s);
  std::mt19937 rng(s.seed + 29);
  const std::size_t total = static_cast<std::size_t>(field_values(s.box));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> v = random_values<T>(total, rng);
  const std::vector<T> base = from == BaseIs::v ? v : random_values<T>(total, rng);
  std::vector<T> out_init(total, nan);
  for (index_t k = 0; k < s.box.nz; ++k)
    for (index_t j = 0; j < s.box.ny; ++j)
      for (index_t i = 0; i < s.box.nx; ++i) {
        const std::size_t node = static_cast<std::size_t>(i + j * s.box.sy + k * s.box.sz);
        if (from == BaseIs::out && data.unknown(i, j, k)) out_init[node] = base[node];
      }
  std::vector<double> want(total);
  for (std::size_t q = 0; q < total; ++q) want[q] = double(out_init[q]);
  const auto& H = data.host;
  for (index_t k = H.lo[2]; k <= H.hi[2]; ++k)
    for (index_t j = H.lo[1]; j <= H.hi[1]; ++j)
      for (index_t i = H.lo[0]; i <= H.hi[0]; ++i) {
        const index_t c[3] = {i, j, k}, st[3] = {1, s.box.sy, s.box.sz};
        const index_t node = i + j * s.box.sy + k * s.box.sz;
        double r = alpha * double(base[static_cast<std::size_t>(node)]);
        for (int b = 0; b < 3; ++b) {
          const auto& S = H.axis[b];
          if (!S.active || w[b + 1] == 0.0) continue;
          const index_t x = c[b];
          const double vm = double(v[static_cast<std::size_t>(node + (S.prev[x] - x) * st[b])]);
          const double vp = double(v[static_cast<std::size_t>(node + (S.next[x] - x) * st[b])]);
          r += w[b + 1] * (double(S.d[x]) * double(v[static_cast<std::size_t>(node)]) - double(S.a[x]) * vm -
                           double(S.c[x]) * vp);
        }
        want[static_cast<std::size_t>(node)] = r;
      }
  Array<T> dv = to_device(v), dbase = to_device(base), dout = to_device(out_init);
  detail::ApplyArgs<T> g;
  for (int q = 0; q < 4; ++q) g.w[q] = T(w[q]);
  g.alpha = T(alpha);
  g.v = dv.data();
  g.base = from == BaseIs::v ? dv.data() : from == BaseIs::own ? dbase.data() : dout.data();
  g.out = dout.data();
  {
    LeanColumns lean;
    cuda_backend::stencil_apply<T>(data.dev, g, nullptr);
  }
  Executor::cuda().synchronize();
  const std::vector<T> got = to_host(dout);
  // Against the fp64 reference: NaN where it is NaN (bit for bit), else within the tolerance.
  std::vector<T> ref(total);
  for (std::size_t q = 0; q < total; ++q) ref[q] = std::isnan(want[q]) ? out_init[q] : T(want[q]);
  expect_same(got, ref, tolerance<T>(), "stencil_apply (lean columns) vs fp64");
}

// Every boundary kind along z (Dirichlet: the unknowns 1..n-2; open: 0..n-1, the ends'
// neighbour is the node itself; periodic: wrap) with columns longer than the ring (the launch
// gives each thread ceil(nk / chunks) nodes, chunks ~ 4096 / (x-blocks * y-blocks): 2200 rows
// along y make 15 chunks, so 255-257 planes give 17-18 nodes per thread, more than 2 rings of
// 8 (fp32) or 4 (fp64), and a shorter last chunk), short columns, odd extents 1, 2, 3, 31, 33,
// 255, 257, periodic and open x / y, a zero weight, base from v, its own field and out.
// A column case: the box's extents and its axes' kinds.
struct ColumnCase {
  index_t nx, ny, nz;
  int z;   // 0 Dirichlet, 1 open, 2 periodic
  int xy;  // 0 Dirichlet x y, 1 periodic x and open y, 2 open x and periodic y
};

StencilSpec column_spec(const ColumnCase& c, const Box3& box, std::uint32_t seed) {
  StencilSpec s;
  s.box = box;
  s.seed = seed;
  s.axis[0].periodic = c.xy == 1;
  s.axis[0].dirichlet = c.xy == 0;
  s.axis[1].periodic = c.xy == 2;
  s.axis[1].dirichlet = c.xy == 0;
  s.axis[2].periodic = c.z == 2;
  s.axis[2].dirichlet = c.z == 0;
  return s;
}

// check_lean with base from v, its own field and out, then a zero y weight; false after a failure.
template <class T>
bool column_checks(const StencilSpec& s) {
  const std::array<double, 4> all{0.0, 0.7, -0.4, 1.3}, no_y{0.0, 0.7, 0.0, 1.3};
  for (BaseIs from : {BaseIs::v, BaseIs::own, BaseIs::out}) {
    check_lean<T>(s, all, from == BaseIs::v ? 1.0 : -1.5, from);
    if (::testing::Test::HasFailure()) return false;
  }
  check_lean<T>(s, no_y, 0.5, BaseIs::v);
  return !::testing::Test::HasFailure();
}

template <class T>
void lean_cases() {
  std::uint32_t seed = 101;
  const ColumnCase cases[] = {{3, 2200, 257, 2, 0}, {3, 2200, 255, 0, 0}, {5, 2200, 257, 1, 1}, {2, 2200, 33, 0, 2},
                              {3, 2200, 31, 2, 1},  {33, 31, 33, 1, 0},  {31, 33, 255, 0, 2}, {257, 3, 2, 2, 0},
                              {255, 2, 3, 1, 1},    {1, 33, 257, 2, 0},  {37, 20, 1, 0, 0},   {2, 1, 31, 1, 2}};
  for (const ColumnCase& c : cases)
    if (!column_checks<T>(column_spec(c, padded(c.nx, c.ny, c.nz), seed++))) return;
}

// The pair form (ADI_STENCIL_PAIRS=1, the default since stop 48; stencil_pairs_ring_kernel) for this
// object's life. (The lean cases above keep the ring kernel whatever the switch says: their padded
// boxes have odd plane strides, which the pair form does not take.)
struct PairColumns : adi::test::ScopedEnv {
  PairColumns() : ScopedEnv("ADI_STENCIL_PAIRS", "1") {}
};

// A box the pair form takes: even rows, even row and plane strides (padded, so a pair's loads stay
// in its row).
inline Box3 pair_box(index_t nx, index_t ny, index_t nz) {
  const index_t sy = nx + 2;
  return Box3{nx, ny, nz, sy, sy * ny + 4};
}

// The pair form against the fp64 reference (check_lean) under ADI_STENCIL_PAIRS=1: rows of 2, 4, 32, 34, 64, 66 and 258 nodes (pairs
// half inside the unknowns at Dirichlet x ends, periodic x wrapping from a pair's outer node, open x),
// odd y / z extents 1, 2, 3, 31, 33, 255, 257, every z boundary kind with columns longer than the
// ring and shorter last chunks, base from v, its own field and out, a zero y weight; the launch
// counter says the pair kernel ran. A box with an odd row length must take the ring kernel.
template <class T>
void pair_cases() {
  PairColumns pairs;
  std::uint32_t seed = 301;
  const std::array<double, 4> all{0.0, 0.7, -0.4, 1.3};
  const ColumnCase cases[] = {{4, 2200, 257, 2, 0}, {2, 2200, 255, 0, 0}, {4, 2200, 257, 1, 1}, {2, 2200, 33, 0, 2},
                              {34, 31, 33, 1, 0},   {32, 33, 255, 0, 2},  {258, 3, 2, 2, 0},    {66, 2, 3, 1, 1},
                              {64, 33, 257, 2, 1},  {34, 20, 1, 0, 0},    {2, 1, 31, 1, 2},     {258, 31, 31, 0, 1}};
  for (const ColumnCase& c : cases) {
    const StencilSpec s = column_spec(c, pair_box(c.nx, c.ny, c.nz), seed++);
    const std::size_t before = cuda_backend::stencil_pair_launches();
    if (!column_checks<T>(s)) return;
    EXPECT_EQ(cuda_backend::stencil_pair_launches() - before, 4u) << "the pair kernel did not run on " << s.describe();
  }
  StencilSpec odd;
  odd.box = pair_box(33, 31, 33);
  odd.box.sy = 34;
  odd.box.sz = 34 * 31 + 4;
  const std::size_t before = cuda_backend::stencil_pair_launches();
  check_lean<T>(odd, all, 1.0, BaseIs::v);
  EXPECT_EQ(cuda_backend::stencil_pair_launches(), before) << "an odd row length took the pair kernel";
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

// The lean column form (ADI_STENCIL_LEAN=1, the default; stencil_columns_ring_kernel): every case
// above again under it (whatever the process was started with) (its kernel takes the shared-band cases without sources; the rest run the
// other kernels, so the switch changes nothing there), then its own cases against an fp64
// reference.
TEST(CudaStencilApply, LeanColumnsMatchFloat) {
  ADI_REQUIRE_CUDA();
  {
    LeanColumns lean;
    all_cases<float>();
  }
  lean_cases<float>();
}

TEST(CudaStencilApply, LeanColumnsMatchDouble) {
  ADI_REQUIRE_CUDA();
  {
    LeanColumns lean;
    all_cases<double>();
  }
  lean_cases<double>();
}

// The column kernel (ADI_STENCIL_LEAN=0, the default before stop 38, kept for A/B timings): every
// case above again under it.
TEST(CudaStencilApply, GeneralColumnsMatch) {
  ADI_REQUIRE_CUDA();
  GeneralColumns general;
  all_cases<float>();
  all_cases<double>();
}

// The sanitizer's case for the lean form: rings that wrap (18 nodes per column; the last chunk
// 5), open z (its last plane: the ring's reads ahead stop at the field's last plane).
TEST(CudaStencilApply, LeanColumnsSmall) {
  ADI_REQUIRE_CUDA();
  StencilSpec s;
  s.box = padded(3, 2200, 257);
  s.axis[2].dirichlet = false;
  s.axis[0].periodic = true;
  check_lean<float>(s, {0.0, 0.7, -0.4, 1.3}, 1.0, BaseIs::v);
  check_lean<double>(s, {0.0, 0.7, -0.4, 1.3}, -1.5, BaseIs::out);
}

// The pair form (ADI_STENCIL_PAIRS=1, the default since stop 48): every case above again under it
// (their boxes have odd plane strides: the ring kernel runs, nothing changes), then its own cases.
TEST(CudaStencilApply, PairColumnsMatchFloat) {
  ADI_REQUIRE_CUDA();
  {
    PairColumns pairs;
    all_cases<float>();
  }
  pair_cases<float>();
}

TEST(CudaStencilApply, PairColumnsMatchDouble) {
  ADI_REQUIRE_CUDA();
  {
    PairColumns pairs;
    all_cases<double>();
  }
  pair_cases<double>();
}

// The sanitizer's case for the pair form: a ring that wraps, open z, Dirichlet x (half pairs).
TEST(CudaStencilApply, PairColumnsSmall) {
  ADI_REQUIRE_CUDA();
  PairColumns pairs;
  StencilSpec s;
  s.box = pair_box(6, 2200, 257);
  s.axis[2].dirichlet = false;
  const std::size_t before = cuda_backend::stencil_pair_launches();
  check_lean<float>(s, {0.0, 0.7, -0.4, 1.3}, 1.0, BaseIs::v);
  check_lean<double>(s, {0.0, 0.7, -0.4, 1.3}, -1.5, BaseIs::out);
  EXPECT_EQ(cuda_backend::stencil_pair_launches() - before, 2u);
}
