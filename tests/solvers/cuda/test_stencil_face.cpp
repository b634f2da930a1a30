// The CUDA face kernels (solvers/cuda/stencil_face.cu) against the host ones
// (solvers/cpu/stencil_face.cpp): face writes (whole face / unknown ranges, write / add),
// several faces in one launch (the later face wins on shared edges, as sequential host
// writes), and an intermediate stage's boundary values from face data (host and CUDA)
// against a plain two-field reference.
#include <gtest/gtest.h>

#include "cuda_stencil_check.hpp"
#include "solvers/cpu/stencil_face.hpp"
#include "solvers/cuda/backend.hpp"

using namespace adi;
using namespace adi::test_cuda;

namespace {


template <class T>
detail::FaceRegion region_of(int f, const Box3& b, const std::array<index_t, 3>& lo,
                             const std::array<index_t, 3>& hi, bool unknown) {
  detail::FaceRegion r;
  r.axis = static_cast<Axis>(f / 2);
  r.plane = f % 2 ? b.extent(r.axis) - 1 : 0;
  for (int d = 0; d < 3; ++d) {
    r.lo[d] = unknown ? lo[d] : 0;
    r.hi[d] = unknown ? hi[d] : b.extent(static_cast<Axis>(d)) - 1;
  }
  return r;
}

// Values of a whole face, indexed c1 + c2*n1.
inline index_t face_size(const Box3& b, int f) {
  const int a = f / 2, p = a == 0 ? 1 : 0, q = a == 2 ? 1 : 2;
  return b.extent(static_cast<Axis>(p)) * b.extent(static_cast<Axis>(q));
}

template <class T>
void face_writes(const Box3& box, std::uint32_t seed) {
  StencilSpec s;
  s.box = box;
  s.seed = seed;
  StencilData<T> data(s);
  std::mt19937 rng(seed);
  const std::size_t total = static_cast<std::size_t>(field_values(box));
  for (int f = 0; f < 6; ++f)
    for (int unknown = 0; unknown < 2; ++unknown)
      for (int add = 0; add < 2; ++add) {
        SCOPED_TRACE("face " + std::to_string(f) + (unknown ? " unknown ranges" : " whole") + (add ? " add" : ""));
        const detail::FaceRegion r = region_of<T>(f, box, data.host.lo, data.host.hi, unknown);
        const std::vector<T> vals = random_values<T>(static_cast<std::size_t>(face_size(box, f)), rng);
        std::vector<T> field = add ? random_values<T>(total, rng)
                                   : std::vector<T>(total, std::numeric_limits<T>::quiet_NaN());
        Array<T> dfield = to_device(field), dvals = to_device(vals);
        cpu::stencil_face<T>(field.data(), box, r, vals.data(), T(0.75), add, 1);
        cuda_backend::stencil_face<T>(dfield.data(), box, r, dvals.data(), T(0.75), add, nullptr);
        expect_same(to_host(dfield), field, tolerance<T>(), "stencil_face");
      }
}

// set_boundary's batch: all six whole faces, different data on each.
template <class T>
void batched_faces(const Box3& box, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const std::size_t total = static_cast<std::size_t>(field_values(box));
  std::vector<T> field(total, std::numeric_limits<T>::quiet_NaN());
  Array<T> dfield = to_device(field);
  std::array<index_t, 3> lo{}, hi{box.nx - 1, box.ny - 1, box.nz - 1};
  std::vector<std::vector<T>> vals;
  std::vector<Array<T>> dvals;
  std::vector<cuda_backend::FaceWrite<T>> writes;
  for (int f = 0; f < 6; ++f) {
    if (box.extent(static_cast<Axis>(f / 2)) == 1 && f % 2 == 1) continue;  // one plane: one face
    vals.push_back(random_values<T>(static_cast<std::size_t>(face_size(box, f)), rng));
    dvals.push_back(to_device(vals.back()));
    const detail::FaceRegion r = region_of<T>(f, box, lo, hi, false);
    cpu::stencil_face<T>(field.data(), box, r, vals.back().data(), T(1), false, 1);
    writes.push_back({r, dvals.back().data(), T(1)});
  }
  cuda_backend::stencil_faces<T>(dfield.data(), box, writes.data(), static_cast<int>(writes.size()), nullptr);
  expect_same(to_host(dfield), field, 0.0, "stencil_faces");
}

// The test's plain reference of the parts of the other axes along a face, reading a
// field: vals (+)= sum_i w[i] ((A_i v) + Neumann_i) + src_scale * src at the region's nodes.
template <class T>
void reference_along_face(const detail::StencilView<T>& s, const detail::FaceRegion& r, const T* v,
                          const std::array<T, 3>& w, const std::array<std::array<const T*, 2>, 3>& neumann,
                          const T* src, T src_scale, T* vals, bool add) {
  const Box3& box = s.box;
  const int a = static_cast<int>(r.axis), p = a == 0 ? 1 : 0, q = a == 2 ? 1 : 2;
  const index_t n1 = box.extent(static_cast<Axis>(p));
  const index_t st[3] = {1, box.sy, box.sz};
  for (index_t c2 = r.lo[q]; c2 <= r.hi[q]; ++c2)
    for (index_t c1 = r.lo[p]; c1 <= r.hi[p]; ++c1) {
      index_t idx[3];
      idx[a] = r.plane;
      idx[p] = c1;
      idx[q] = c2;
      const index_t node = idx[0] + idx[1] * box.sy + idx[2] * box.sz;
      T acc = src ? src_scale * src[node] : T(0);
      for (int i = 0; i < 3; ++i) {
        const detail::AxisStencil<T>& S = s.axis[i];
        if (i == a || !S.active || w[i] == T(0)) continue;
        const index_t l = idx[i], o = S.shared ? l : node;
        T sum = S.d[o] * v[node] - S.a[o] * v[node + (S.prev[l] - l) * st[i]] -
                S.c[o] * v[node + (S.next[l] - l) * st[i]];
        const int oi0 = i == 0 ? 1 : 0, oi1 = i == 2 ? 1 : 2;
        const index_t fi = idx[oi0] + idx[oi1] * box.extent(static_cast<Axis>(oi0));
        if (!S.periodic && l == 0 && neumann[i][0]) sum += neumann[i][0][fi];
        if (!S.periodic && l == S.n - 1 && neumann[i][1]) sum += neumann[i][1][fi];
        acc += w[i] * sum;
      }
      T& out = vals[c1 + c2 * n1];
      out = add ? out + acc : acc;
    }
}

template <class T>
void along_face(const StencilSpec& s) {
  SCOPED_TRACE(s.describe());
  StencilData<T> data(s);
  std::mt19937 rng(s.seed + 3);
  const Box3& box = s.box;
  const std::size_t total = static_cast<std::size_t>(field_values(box));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const std::vector<T> v = random_values<T>(total, rng), v_old = random_values<T>(total, rng);
  const std::vector<T> src = random_values<T>(total, rng), src_old = random_values<T>(total, rng);
  Array<T> dsrc = to_device(src), dsrc_old = to_device(src_old);
  for (int f = 0; f < 6; ++f) {
    const int a = f / 2;
    if (!data.host.axis[a].active) continue;
    SCOPED_TRACE("face " + std::to_string(f));
    const detail::FaceRegion r = region_of<T>(f, box, data.host.lo, data.host.hi, true);
    const std::size_t m = static_cast<std::size_t>(face_size(box, f));
    // Neumann data of the other axes' open faces, in their own face coordinates.
    std::array<std::array<std::vector<T>, 2>, 3> nh;
    std::array<std::array<Array<T>, 2>, 3> nd;
    std::array<std::array<const T*, 2>, 3> nhp{}, ndp{};
    for (int i = 0; i < 3; ++i)
      for (int side = 0; side < 2; ++side)
        if (i != a && data.host.axis[i].active && !s.axis[i].periodic && !s.axis[i].dirichlet) {
          nh[i][side] = random_values<T>(static_cast<std::size_t>(face_size(box, 2 * i + side)), rng);
          nd[i][side] = to_device(nh[i][side]);
          nhp[i][side] = nh[i][side].data();
          ndp[i][side] = nd[i][side].data();
        }
    // Intermediate stage values: the reference is the two-field form (this face's values
    // written into Y and V_old over the whole face, then the parts along the face of
    // each); the kernels (host and CUDA, one formula) read the face data only.
    const std::vector<T> g_new = random_values<T>(m, rng), g_old = random_values<T>(m, rng);
    std::vector<T> Y = v, V = v_old;
    const detail::FaceRegion whole = region_of<T>(f, box, data.host.lo, data.host.hi, false);
    cpu::stencil_face<T>(Y.data(), box, whole, g_new.data(), T(1), false, 1);
    cpu::stencil_face<T>(V.data(), box, whole, g_old.data(), T(1), false, 1);
    const T sv = T(0.01), ks = T(2) / T(3);
    std::array<T, 3> wn{}, wo{};
    for (int i = 0; i < 3; ++i)
      if (i != a && data.host.axis[i].active) {
        wn[i] = -sv;
        wo[i] = sv;
      }
    std::array<std::array<std::vector<T>, 2>, 3> oh;
    std::array<std::array<Array<T>, 2>, 3> od;
    std::array<std::array<const T*, 2>, 3> ohp{}, odp{};
    for (int i = 0; i < 3; ++i)
      for (int side = 0; side < 2; ++side)
        if (nhp[i][side]) {
          oh[i][side] = random_values<T>(nh[i][side].size(), rng);
          od[i][side] = to_device(oh[i][side]);
          ohp[i][side] = oh[i][side].data();
          odp[i][side] = od[i][side].data();
        }
    std::vector<T> corr(m, nan);
    reference_along_face<T>(data.host, r, Y.data(), wn, nhp, src.data(), -sv * ks, corr.data(), false);
    reference_along_face<T>(data.host, r, V.data(), wo, ohp, src_old.data(), sv * ks, corr.data(), true);
    std::vector<T> want(m, nan);
    const int p = a == 0 ? 1 : 0, q = a == 2 ? 1 : 2;
    const index_t n1 = box.extent(static_cast<Axis>(p));
    for (index_t c2 = r.lo[q]; c2 <= r.hi[q]; ++c2)
      for (index_t c1 = r.lo[p]; c1 <= r.hi[p]; ++c1) want[c1 + c2 * n1] = g_new[c1 + c2 * n1] + corr[c1 + c2 * n1];
    Array<T> dg_new = to_device(g_new), dg_old = to_device(g_old), dout = to_device(std::vector<T>(m, nan));
    cuda_backend::stage_face_values<T>(data.dev, r, dg_new.data(), dg_old.data(), wn, ndp, odp, dsrc.data(),
                                       dsrc_old.data(), -sv * ks, dout.data(), nullptr);
    expect_same(to_host(dout), want, tolerance<T>(), "stage_face_values (CUDA)");
    std::vector<T> hout(m, nan);
    cpu::stage_face_values<T>(data.host, r, g_new.data(), g_old.data(), wn, nhp, ohp, src.data(), src_old.data(),
                              -sv * ks, hout.data(), 1);
    expect_same(hout, want, tolerance<T>(), "stage_face_values (host)");
    if (::testing::Test::HasFailure()) return;
  }
}

template <class T>
void along_face_cases() {
  std::uint32_t seed = 50;
  const index_t ext[][3] = {{37, 20, 11}, {9, 31, 3}, {2, 33, 7}, {1, 17, 19}, {33, 1, 5}};
  for (const auto& e : ext)
    for (int variant = 0; variant < 4; ++variant) {
      StencilSpec s;
      s.box = padded(e[0], e[1], e[2]);
      s.seed = seed++;
      for (int a = 0; a < 3; ++a) {
        s.axis[a].shared = variant != a + 1;
        s.axis[a].periodic = variant == 3 && a == 1 && e[1] >= 3;
        s.axis[a].dirichlet = !(variant == 2 && a != 2) && !(variant == 0 && a == 0);
      }
      along_face<T>(s);
      if (::testing::Test::HasFailure()) return;
    }
}

}  // namespace

TEST(CudaStencilFace, WritesMatchHost) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 1;
  for (const Box3& b : {padded(37, 20, 11), padded(1, 33, 2), padded(31, 3, 1), padded(2, 2, 65)}) {
    face_writes<float>(b, seed++);
    face_writes<double>(b, seed++);
  }
}

TEST(CudaStencilFace, SeveralFacesInOneLaunchLaterWins) {
  ADI_REQUIRE_CUDA();
  std::uint32_t seed = 20;
  for (const Box3& b : {padded(37, 20, 11), padded(3, 3, 3), padded(33, 31, 1), padded(1, 5, 9)}) {
    batched_faces<float>(b, seed++);
    batched_faces<double>(b, seed++);
  }
}

TEST(CudaStencilFace, AlongFaceAndStageValuesMatchHostFloat) {
  ADI_REQUIRE_CUDA();
  along_face_cases<float>();
}

TEST(CudaStencilFace, AlongFaceAndStageValuesMatchHostDouble) {
  ADI_REQUIRE_CUDA();
  along_face_cases<double>();
}

TEST(CudaStencilFace, Small) {
  ADI_REQUIRE_CUDA();
  face_writes<float>(padded(5, 4, 3), 7);
  batched_faces<double>(padded(5, 4, 3), 8);
  StencilSpec s;
  s.box = padded(6, 5, 4);
  s.axis[0].dirichlet = false;
  s.axis[1].shared = false;
  along_face<double>(s);
}
