// cuda_thomas_truncated (solvers/cuda/thomas_truncated.cuh: a thread per (line, part),
// common::spike_y_part's truncated sweeps; the plan re-solves with the exact kernel where a line
// is refused) against the fp64 reference: lines adjacent in memory, outputs NaN-poisoned, a[0] and
// c[n-1] NaN (never read). Host part (runs without a GPU): the whole-line form of spike_y_part,
// every part of a line as the device's threads run them, against Thomas.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <random>
#include <type_traits>
#include <vector>

#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/large_tridiagonal.hpp"
#include "cuda_tridiagonal_check.hpp"
#include "scoped_env.hpp"
#include "solvers/common/spike_y.hpp"

using adi::Kernel;
using adi::index_t;

namespace {
constexpr Kernel kTrunc = Kernel::cuda_thomas_truncated;

// Bands of one kind per line: dominant (|c*| <= 1/3: every truncation decays below kSpikeTol
// within G rows, taken), weak (b = 2, a = -1, c = -0.9: |c*| -> 0.68, refused wherever a line
// is cut) or non-dominant (every fourth row b = 1.5, a = c = 1: not dominant, Thomas still stable).
// Unstable: row i0 = min(5, n - 2) with a = c = 1 and b = c*_{i0-1} + 1e-8, so that Thomas's pivot there
// is 1e-8 (issue 23's case: |c*| reaches 1e8 whatever the random rows before it; the growth test refuses
// it even where the line is one part, plain Thomas). (Until stop 42 the row had b = 1e-8: its pivot
// b - c*_{i0-1} was then -c*_{i0-1}, |c*_{i0}| 3 to 30, refused only where it exceeded 4, by the seed.)
enum class Kind { dominant, weak, nondominant, unstable };

template <class T>
struct System {
  std::vector<T> a, b, c, d, ref;  // bands: n * L values (row stride L) or, shared, n
};

// L lines of n rows, lines adjacent (row stride L), kinds[l % kinds.size()] per line (shared
// bands: one set, kinds[0]); the reference by Thomas in fp64.
template <class T>
System<T> make_system(index_t n, index_t L, const std::vector<Kind>& kinds, bool shared, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  System<T> s;
  const std::size_t total = std::size_t(n * L), bands = shared ? std::size_t(n) : total;
  const index_t BL = shared ? 1 : L;
  s.a.assign(bands, nan), s.b.assign(bands, nan), s.c.assign(bands, nan), s.d.assign(total, nan);
  for (index_t l = 0; l < BL; ++l) {
    const Kind k = kinds[std::size_t(l) % kinds.size()];
    double csp = 0;  // c*_{i-1} of the stored (rounded) bands, in fp64
    for (index_t i = 0; i < n; ++i) {
      const std::size_t q = std::size_t(i * BL + l);
      double a = U(rng), c = U(rng), b = 4 + U(rng);
      if (k == Kind::weak) a = -1, c = -0.9, b = 2;
      if (k == Kind::nondominant && i % 4 == 1) b = 1.5 + 0.1 * U(rng), a = 1, c = 1;
      if (k == Kind::unstable && i == std::min<index_t>(5, n - 2)) a = 1, c = 1, b = csp + 1e-8;
      s.a[q] = i == 0 ? nan : T(a);
      s.c[q] = i == n - 1 ? nan : T(c);
      s.b[q] = T(b);
      const double piv = double(s.b[q]) - (i == 0 ? 0.0 : double(s.a[q]) * csp);
      csp = i == n - 1 ? 0.0 : double(s.c[q]) / piv;
    }
  }
  for (auto& v : s.d) v = T(U(rng));
  s.ref.assign(total, nan);
  std::vector<double> cs(static_cast<std::size_t>(n)), ys(static_cast<std::size_t>(n));
  for (index_t l = 0; l < L; ++l) {
    auto band = [&](const std::vector<T>& v, index_t i) {
      return double(v[std::size_t(shared ? i : i * L + l)]);
    };
    for (index_t i = 0; i < n; ++i) {
      const double ai = i == 0 ? 0.0 : band(s.a, i);
      const double p = band(s.b, i) - ai * (i == 0 ? 0.0 : cs[std::size_t(i - 1)]);
      cs[std::size_t(i)] = i == n - 1 ? 0.0 : band(s.c, i) / p;
      ys[std::size_t(i)] = (double(s.d[std::size_t(i * L + l)]) - ai * (i == 0 ? 0.0 : ys[std::size_t(i - 1)])) / p;
    }
    double x = 0;
    for (index_t i = n - 1; i >= 0; --i) {
      x = ys[std::size_t(i)] - cs[std::size_t(i)] * x;
      s.ref[std::size_t(i * L + l)] = T(x);
    }
  }
  return s;
}

// The largest |u - ref| over |ref|'s largest (per test), or infinity where u is not finite.
template <class T>
double error_of(const std::vector<T>& u, const std::vector<T>& ref) {
  double e = 0, scale = 1;
  for (std::size_t k = 0; k < u.size(); ++k) {
    if (!std::isfinite(double(u[k]))) return INFINITY;
    e = std::max(e, std::abs(double(u[k]) - double(ref[k])));
    scale = std::max(scale, std::abs(double(ref[k])));
  }
  return e / scale;
}
template <class T>
double tol() {
  return sizeof(T) == 4 ? 2e-5 : 1e-12;
}

// Host: every part of every line through spike_y_part (the device kernel's call, S parts).
template <class T, bool Pipe>
bool host_whole_lines(const System<T>& s, index_t n, index_t L, index_t S, std::vector<T>& u) {
  using Shape = adi::common::SpikeYShape<T>;
  using Band = adi::common::Strided<const T, index_t>;
  std::vector<T> ring(std::size_t(2 * Shape::K));
  struct Ring {
    T* p;
    void put(index_t q, T cs, T ys) const { p[2 * q] = cs, p[2 * q + 1] = ys; }
    void get(index_t q, T& cs, T& ys) const { cs = p[2 * q], ys = p[2 * q + 1]; }
  };
  bool ok = true;
  for (index_t l = 0; l < L; ++l)
    for (index_t q = 0; q < S; ++q)
      ok = adi::common::spike_y_part<8, Pipe, true>(n, n * q / S, n * (q + 1) / S, index_t(Shape::G), index_t(Shape::C),
                                              index_t(Shape::K), Band{s.a.data() + l, L}, Band{s.b.data() + l, L},
                                              Band{s.c.data() + l, L}, Band{s.d.data() + l, L},
                                              adi::common::Strided<T, index_t>{u.data() + l, L}, Ring{ring.data()},
                                              [](index_t) {}) &&
           ok;
  return ok;
}

template <class T>
void host_case(index_t n, index_t L, index_t S, const std::vector<Kind>& kinds, bool expect_taken) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float" : "double") + " n=" + std::to_string(n) +
               " L=" + std::to_string(L) + " S=" + std::to_string(S));
  const System<T> s = make_system<T>(n, L, kinds, false, std::uint32_t(n * 7 + S));
  std::vector<T> u1(s.d.size(), std::numeric_limits<T>::quiet_NaN()), u3 = u1;
  const bool ok1 = host_whole_lines<T, false>(s, n, L, S, u1);
  const bool ok3 = host_whole_lines<T, true>(s, n, L, S, u3);
  EXPECT_EQ(ok1, ok3);
  if (expect_taken) {
    EXPECT_TRUE(ok1) << "dominant lines refused";
    EXPECT_LE(error_of(u1, s.ref), tol<T>());
    for (std::size_t k = 0; k < u1.size(); ++k)
      if (std::memcmp(&u1[k], &u3[k], sizeof(T)) != 0) {
        ADD_FAILURE() << "forms 1 and 3 differ at " << k;
        break;
      }
  } else {
    EXPECT_FALSE(ok1) << "weak lines taken";
  }
}

// Host: one system (L = 1) in the padded form of the single-system kernel (spike_y.hpp,
// PaddedBand: parts of P rows, identity rows around the system), every part as the device's
// threads run them (S0: about how many parts; S parts, some wholly padding).
template <class T, bool Pipe>
bool host_padded(const System<T>& s, index_t n, index_t S0, std::vector<T>& u) {
  using Shape = adi::common::SpikeYShape<T>;
  using adi::common::PaddedBand;
  const index_t G = Shape::G, P = adi::common::spike_padded_rows<index_t>(n, S0, G, 8);
  const index_t S = ((n + P - 1) / P + 3) / 4 * 4;  // (whole groups of parts, as the kernel's blocks)
  std::vector<T> ring(std::size_t(2 * Shape::K));
  struct Ring {
    T* p;
    void put(index_t q, T cs, T ys) const { p[2 * q] = cs, p[2 * q + 1] = ys; }
    void get(index_t q, T& cs, T& ys) const { cs = p[2 * q], ys = p[2 * q + 1]; }
  };
  T sink = 0;
  bool ok = true;
  for (index_t q = 0; q < S; ++q)
    ok = adi::common::spike_y_part<8, Pipe, true>(
             2 * G + S * P, G + q * P, G + (q + 1) * P, G, index_t(Shape::C), index_t(Shape::K),
             PaddedBand<T, 0, index_t>{s.a.data(), n, G}, PaddedBand<T, 1, index_t>{s.b.data(), n, G},
             PaddedBand<T, 2, index_t>{s.c.data(), n, G}, PaddedBand<T, 3, index_t>{s.d.data(), n, G},
             adi::common::PaddedOut<T, index_t>{u.data(), n, G, &sink}, Ring{ring.data()}, [](index_t) {}) &&
         ok;
  return ok;
}

// A system's bands and d on the device, u NaN-poisoned; solve() runs a plan on them (the system's
// kind of bands) and returns u.
template <class T>
struct DeviceSystem {
  index_t nb, nt;
  adi::Array<T> a, b, c, d, u;
  std::vector<T> poison;
  DeviceSystem(const System<T>& s, const adi::Executor& gpu)
      : nb(index_t(s.a.size())), nt(index_t(s.d.size())), a(nb, gpu), b(nb, gpu), c(nb, gpu), d(nt, gpu),
        u(nt, gpu), poison(std::size_t(nt), std::numeric_limits<T>::quiet_NaN()) {
    a.copy_from_host(s.a.data()), b.copy_from_host(s.b.data()), c.copy_from_host(s.c.data());
    d.copy_from_host(s.d.data());
    u.copy_from_host(poison.data());
  }
  std::vector<T> solve(adi::TridiagonalPlan<T>& plan, bool shared) {
    if (shared)
      plan.solve(adi::SharedBands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
    else
      plan.solve(adi::Bands<T>{a.data(), b.data(), c.data()}, d.data(), u.data());
    std::vector<T> out(static_cast<std::size_t>(nt));
    u.copy_to_host(out.data());
    return out;
  }
};

// The plan (Kernel k: cuda_thomas_truncated by name, or automatic) against the reference, u
// NaN-poisoned; and the kernel alone through the backend entry point: its refusal flag.
template <class T>
int device_case(Kernel k, index_t n, index_t L, const std::vector<Kind>& kinds, bool shared,
                bool check_plan = true) {
  SCOPED_TRACE(std::string(kernel_name(k)) + (sizeof(T) == 4 ? " float" : " double") + " n=" + std::to_string(n) +
               " L=" + std::to_string(L) + (shared ? " shared" : " bands"));
  const System<T> s = make_system<T>(n, L, kinds, shared, std::uint32_t(n * 13 + L));
  const adi::Executor gpu = adi::Executor::cuda();
  DeviceSystem<T> ds(s, gpu);
  const adi::LineSet lines{n, L, L, 1, 1, n * L};
  adi::TridiagonalOptions opt;
  opt.kernel = k;
  adi::TridiagonalPlan<T> plan(gpu, lines, opt);
  std::vector<T> u = ds.solve(plan, shared);
  if (check_plan) EXPECT_LE(error_of(u, s.ref), tol<T>());
  // The kernel alone: u poisoned again, the flag a device int.
  ds.u.copy_from_host(ds.poison.data());
  adi::Array<int> flag(1, gpu);
  const int zero = 0;
  flag.copy_from_host(&zero);
  adi::cuda_backend::tridiagonal_solve<T>(kTrunc, lines,
                                          adi::cuda_backend::BandView<T>{ds.a.data(), ds.b.data(), ds.c.data(), shared},
                                          ds.d.data(), ds.u.data(), false, nullptr, flag.data(), nullptr);
  gpu.synchronize();
  int refused = -1;
  flag.copy_to_host(&refused);
  if (refused == 0) {  // taken: its own answer within the tolerance
    ds.u.copy_to_host(u.data());
    EXPECT_LE(error_of(u, s.ref), tol<T>()) << "the kernel's answer, not refused";
  }
  return refused;
}

}  // namespace

// Host: whole lines in 1..5 parts (a part of at least 4G rows) against Thomas, both precisions,
// forms 1 and 3 bitwise equal; weak lines refused wherever a line is cut, unstable ones always.
TEST(ThomasTruncatedHost, WholeLines) {
  for (index_t n : {1, 2, 3, 31, 33, 255, 257, 1031, 4096})
    for (index_t S : {1, 2, 3, 5}) {
      const index_t s64 = std::min<index_t>(S, std::max<index_t>(1, n / (4 * 40)));
      const index_t s32 = std::min<index_t>(S, std::max<index_t>(1, n / (4 * 24)));
      host_case<double>(n, 3, s64, {Kind::dominant}, true);
      host_case<float>(n, 3, s32, {Kind::dominant}, true);
      if (s64 > 1) host_case<double>(n, 3, s64, {Kind::dominant, Kind::weak}, false);
      if (s32 > 1) host_case<float>(n, 3, s32, {Kind::dominant, Kind::weak}, false);
      if (n >= 2) {  // the growth test, one part or several
        host_case<double>(n, 3, s64, {Kind::dominant, Kind::unstable}, false);
        host_case<float>(n, 3, s32, {Kind::dominant, Kind::unstable}, false);
      }
    }
}

// Host: one system in the padded form (the single-system kernel's parts, stop 44) against Thomas:
// odd sizes, both precisions, about 1 .. 64 parts, a[0] / c[n-1] NaN (read as 0), u NaN-poisoned;
// the plain and the pipelined path bitwise equal; weak systems refused where cut, unstable ones always.
TEST(ThomasTruncatedHost, PaddedSystem) {
  auto run = [](auto zero, index_t n, index_t S0, std::vector<Kind> kinds, bool expect_taken) {
    using T = decltype(zero);
    SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float" : "double") + " n=" + std::to_string(n) +
                 " parts~" + std::to_string(S0));
    const System<T> s = make_system<T>(n, 1, kinds, false, std::uint32_t(n * 5 + S0));
    std::vector<T> u1(s.d.size(), std::numeric_limits<T>::quiet_NaN()), u3 = u1;
    const bool ok1 = host_padded<T, false>(s, n, S0, u1), ok3 = host_padded<T, true>(s, n, S0, u3);
    EXPECT_EQ(ok1, ok3);
    if (!expect_taken) {
      EXPECT_FALSE(ok1) << "taken";
      return;
    }
    EXPECT_TRUE(ok1) << "refused";
    EXPECT_LE(error_of(u1, s.ref), tol<T>());
    EXPECT_EQ(std::memcmp(u1.data(), u3.data(), u1.size() * sizeof(T)), 0) << "plain and pipelined paths differ";
  };
  for (index_t n : {1, 2, 3, 31, 33, 255, 257, 1031, 4096, 10007})
    for (index_t S0 : {1, 3, 7, 64}) {
      run(0.0, n, S0, {Kind::dominant}, true);
      run(0.0f, n, S0, {Kind::dominant}, true);
      if (n >= 2) {
        run(0.0, n, S0, {Kind::unstable}, false);
        run(0.0f, n, S0, {Kind::unstable}, false);
      }
      if (n > 4 * 40 * 2 && S0 > 1) run(0.0, n, S0, {Kind::weak}, false);
      if (n > 4 * 24 * 2 && S0 > 1) run(0.0f, n, S0, {Kind::weak}, false);
    }
}

// Host: the rule (automatic, ADI_LONG_TRUNCATED) on the exact table's pick, and its strict reading.
TEST(ThomasTruncatedHost, SwitchRule) {
  using adi::detail::DispatchQuery;
  using adi::detail::LongTruncated;
  using adi::detail::with_long_truncated;
  const adi::LineSet pub = adi::to_lines(adi::BoxLines{adi::Box3::dense(128, 128, 4096), adi::Axis::z});
  DispatchQuery q{pub, 8, false, false, adi::Pivoting::automatic};
  for (LongTruncated m : {LongTruncated::automatic, LongTruncated::on})
    EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, q, m), kTrunc);
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, q, LongTruncated::off), Kernel::cuda_thomas_pcr_long);
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_strided, q, LongTruncated::on), Kernel::cuda_thomas_strided);
  DispatchQuery per = q;
  per.periodic = true;
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, per, LongTruncated::on), Kernel::cuda_thomas_pcr_long);
  DispatchQuery shorter = q;
  shorter.lines = adi::to_lines(adi::BoxLines{adi::Box3::dense(128, 128, 1023), adi::Axis::z});
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, shorter, LongTruncated::on), Kernel::cuda_thomas_pcr_long);
  shorter.lines.n = 1024;  // from 1024 rows; automatic up to 4096 rows, over the table's thread-per-line
                           // and hybrid picks too
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, shorter, LongTruncated::on), kTrunc);
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, shorter, LongTruncated::automatic), kTrunc);
  for (Kernel k : {Kernel::cuda_thomas_strided, Kernel::cuda_thomas_pcr_strided}) {
    EXPECT_EQ(with_long_truncated(k, shorter, LongTruncated::automatic), kTrunc);
    EXPECT_EQ(with_long_truncated(k, shorter, LongTruncated::on), k);
  }
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_naive, shorter, LongTruncated::automatic), Kernel::cuda_thomas_naive);
  DispatchQuery longer = q;
  longer.lines.n = 4097;
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, longer, LongTruncated::automatic),
            Kernel::cuda_thomas_pcr_long);
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, longer, LongTruncated::on), kTrunc);
  // Lines along x (contiguous: not adjacent to each other): never automatic.
  DispatchQuery along_x = q;
  along_x.lines = adi::to_lines(adi::BoxLines{adi::Box3::dense(2048, 32, 32), adi::Axis::x});
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_strided, along_x, LongTruncated::automatic),
            Kernel::cuda_thomas_strided);
  // A small batch (fewer than 1024 lines, 32 x 31 here): only when forced.
  DispatchQuery few = q;
  few.lines = adi::to_lines(adi::BoxLines{adi::Box3::dense(32, 31, 4096), adi::Axis::z});
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, few, LongTruncated::automatic),
            Kernel::cuda_thomas_pcr_long);
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, few, LongTruncated::on), kTrunc);
  few.lines = adi::to_lines(adi::BoxLines{adi::Box3::dense(32, 32, 4096), adi::Axis::z});
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, few, LongTruncated::automatic), kTrunc);
  // Stop 43: 256 to 1023 rows too, automatic only, per-line bands only, from 2^23 elements (256^3
  // and 128 x 128 x 512 in, 128 x 128 x 256 and 64 x 64 x 512 out).
  DispatchQuery mid = q;
  for (const auto& box : {std::array<adi::index_t, 3>{256, 256, 256}, {240, 256, 256}, {512, 512, 512},
                          {128, 128, 512}, {128, 128, 1023}, {128, 128, 256}, {64, 64, 512}, {512, 512, 255}}) {
    mid.lines = adi::to_lines(adi::BoxLines{adi::Box3::dense(box[0], box[1], box[2]), adi::Axis::z});
    const bool in = box[2] >= 256 && box[0] * box[1] * box[2] >= (adi::index_t(1) << 23);
    SCOPED_TRACE(std::to_string(box[0]) + "x" + std::to_string(box[1]) + "x" + std::to_string(box[2]));
    for (Kernel k : {Kernel::cuda_thomas_strided, Kernel::cuda_thomas_pcr_strided})
      for (bool sh : {false, true}) {
        mid.shared_bands = sh;
        EXPECT_EQ(with_long_truncated(k, mid, LongTruncated::automatic), in && !sh ? kTrunc : k);
        EXPECT_EQ(with_long_truncated(k, mid, LongTruncated::on), k);  // (forced: from 1024 rows, pcr_long only)
      }
    mid.shared_bands = false;
    EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, mid, LongTruncated::on), Kernel::cuda_thomas_pcr_long);
    mid.periodic = true;
    EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_strided, mid, LongTruncated::automatic),
              Kernel::cuda_thomas_strided);
    mid.periodic = false;
  }
  // Shared bands from 1024 rows: taken (stop 42's rule).
  DispatchQuery shared_long = q;
  shared_long.shared_bands = true;
  EXPECT_EQ(with_long_truncated(Kernel::cuda_thomas_pcr_long, shared_long, LongTruncated::automatic), kTrunc);
  {
    adi::test::ScopedEnv unset("ADI_LONG_TRUNCATED", "");
    EXPECT_EQ(adi::detail::long_truncated_mode(), LongTruncated::automatic);
  }
  {
    adi::test::ScopedEnv on("ADI_LONG_TRUNCATED", "1");
    EXPECT_EQ(adi::detail::long_truncated_mode(), LongTruncated::on);
  }
  {
    adi::test::ScopedEnv off("ADI_LONG_TRUNCATED", "0");
    EXPECT_EQ(adi::detail::long_truncated_mode(), LongTruncated::off);
  }
  {
    adi::test::ScopedEnv bad("ADI_LONG_TRUNCATED", "on");
    EXPECT_THROW(adi::detail::long_truncated_mode(), adi::InvalidArgument);
  }
}

// The plan's kernel by name: odd sizes, both precisions, per-line and shared bands; dominant
// lines taken (n = 1031 and 4096 cut into parts); weak and non-dominant lines among dominant ones
// refused and re-solved by the exact kernel, the answer within the reference's tolerance; an
// unstable line refused by the growth test at every size.
TEST(CudaThomasTruncated, SizesAndRefusals) {
  ADI_REQUIRE_CUDA();
  int after_failure = 0;
  for (index_t n : {1, 2, 3, 31, 33, 255, 257, 1031, 4096})
    for (index_t L : {1, 33, 64})
      for (int shared = 0; shared < 2; ++shared) {
        SCOPED_TRACE("n=" + std::to_string(n) + " L=" + std::to_string(L) + (shared ? " shared" : " bands"));
        EXPECT_EQ(device_case<double>(kTrunc, n, L, {Kind::dominant}, shared), 0);
        EXPECT_EQ(device_case<float>(kTrunc, n, L, {Kind::dominant}, shared), 0);
        if (n >= 1031) {  // cut into parts: the weak lines' truncations refused
          const std::vector<Kind> mix = shared ? std::vector<Kind>{Kind::weak}
                                               : std::vector<Kind>{Kind::weak, Kind::dominant, Kind::dominant};
          EXPECT_EQ(device_case<double>(kTrunc, n, L, mix, shared), 1);
          EXPECT_EQ(device_case<float>(kTrunc, n, L, mix, shared), 1);
          const std::vector<Kind> nd{Kind::nondominant, Kind::dominant};
          device_case<double>(kTrunc, n, L, nd, shared);  // (refused or not: the answer checked)
          device_case<float>(kTrunc, n, L, nd, shared);
        }
        if (n >= 2) {  // the growth test refuses an unstable line (the plan: pcr_long, pivoting; the
                       // fp64 reference is Thomas without pivoting, so the plan's answer is not compared)
          const std::vector<Kind> un = shared ? std::vector<Kind>{Kind::unstable}
                                              : std::vector<Kind>{Kind::unstable, Kind::dominant};
          EXPECT_EQ(device_case<double>(kTrunc, n, L, un, shared, false), 1);
          EXPECT_EQ(device_case<float>(kTrunc, n, L, un, shared, false), 1);
        }
        if (::testing::Test::HasFailure() && ++after_failure > 6) return;  // (the first failing case and 6 more)
      }
}

// The shared suite's checker (random dominant lines, a[0] / c[n-1] NaN, NaN-poisoned padding):
// the public case's layout smaller in x and y, in place (the exact kernel) and out of place.
TEST(CudaThomasTruncated, BoxLongAxis) {
  ADI_REQUIRE_CUDA();
  const adi::Box3 box = adi::Box3::dense(16, 5, 4096);
  std::uint32_t seed = 7000;
  for (int in_place = 0; in_place < 2; ++in_place) {
    adi::test_cuda::Case c;
    c.lines = adi::to_lines(adi::BoxLines{box, adi::Axis::z});
    c.in_place = in_place;
    c.seed = seed++;
    adi::test_cuda::check<float>(kTrunc, c);
    adi::test_cuda::check<double>(kTrunc, c);
  }
  for (index_t n : {1, 2, 3, 31, 33, 255, 257, 1031, 2048})
    for (int shared = 0; shared < 2; ++shared) {
      adi::test_cuda::Case c;
      c.lines = adi::test_cuda::adjacent(n, 33);
      c.shared = shared;
      c.base = 1;
      c.seed = seed++;
      adi::test_cuda::check<float>(kTrunc, c);
      adi::test_cuda::check<double>(kTrunc, c);
    }
}

// Refused where it cannot run: periodic lines, contiguous (X) lines.
TEST(CudaThomasTruncated, Refused) {
  ADI_REQUIRE_CUDA();
  adi::TridiagonalOptions opt;
  opt.kernel = kTrunc;
  opt.periodic = true;
  EXPECT_THROW(adi::TridiagonalPlan<double>(adi::Executor::cuda(), adi::test_cuda::adjacent(2048, 64), opt),
               adi::InvalidArgument);
  opt.periodic = false;
  EXPECT_THROW(adi::TridiagonalPlan<double>(adi::Executor::cuda(), adi::test_cuda::contiguous(2048, 64), opt),
               adi::InvalidArgument);
}

// The dispatch: automatic takes the truncated kernel on the public case (non-periodic only; not with
// check_pivots off, nor with ADI_LONG_TRUNCATED=0) and the answer holds; a plan that met a refused
// line stays on the exact kernel (kernel() says so) and keeps answering right; a bad value of the
// variable is an InvalidArgument.
TEST(CudaThomasTruncated, DispatchSwitch) {
  ADI_REQUIRE_CUDA();
  const adi::Box3 box = adi::Box3::dense(128, 128, 4096);
  const adi::LineSet pub = adi::to_lines(adi::BoxLines{box, adi::Axis::z});
  auto pick = [&](bool periodic, bool check = true) {
    adi::TridiagonalOptions opt;
    opt.periodic = periodic;
    opt.check_pivots = check;
    return adi::TridiagonalPlan<double>(adi::Executor::cuda(), pub, opt).kernel();
  };
  Kernel exact;
  {
    adi::test::ScopedEnv off("ADI_LONG_TRUNCATED", "0");
    exact = pick(false);
  }
  EXPECT_NE(exact, kTrunc);
  if (exact != Kernel::cuda_thomas_pcr_long) GTEST_SKIP() << "the exact table does not take cuda_thomas_pcr_long here";
  EXPECT_EQ(pick(false), kTrunc);
  EXPECT_NE(pick(true), kTrunc);
  EXPECT_EQ(pick(false, false), exact);  // check_pivots off: no synchronisation added
  {
    adi::test::ScopedEnv on("ADI_LONG_TRUNCATED", "1");
    EXPECT_EQ(pick(false, false), kTrunc);
  }
  EXPECT_EQ(device_case<double>(Kernel::automatic, 4096, 16384, {Kind::dominant}, false), 0);
  EXPECT_EQ(device_case<double>(Kernel::automatic, 4096, 16384, {Kind::dominant, Kind::weak}, false), 1);
  // Sticky: a weak batch refused once, then a dominant one; the answers right, kernel() exact after.
  for (int shared = 0; shared < 2; ++shared) {
    // (1024 lines of 4096: the exact table takes the long-line kernel for both kinds of bands on sm_90)
    const index_t n = 4096, L = 1024;
    const adi::LineSet lines{n, L, L, 1, 1, n * L};
    const adi::Executor gpu = adi::Executor::cuda();
    Kernel ex;
    {
      adi::test::ScopedEnv off("ADI_LONG_TRUNCATED", "0");
      const adi::TridiagonalPlan<double> p0(gpu, lines, adi::TridiagonalOptions{});
      ex = shared ? p0.shared_bands_kernel() : p0.kernel();
    }
    const System<double> weak = make_system<double>(n, L, {Kind::weak}, shared, 11);
    const System<double> dom = make_system<double>(n, L, {Kind::dominant}, shared, 12);
    adi::TridiagonalPlan<double> plan(gpu, lines, adi::TridiagonalOptions{});
    auto now = [&] { return shared ? plan.shared_bands_kernel() : plan.kernel(); };
    if (ex != Kernel::cuda_thomas_pcr_long) {
      ADD_FAILURE() << "the exact table's pick here is " << kernel_name(ex) << (shared ? " (shared bands)" : "");
      continue;
    }
    EXPECT_EQ(now(), kTrunc);
    for (const System<double>* s : {&weak, &dom}) {
      const std::vector<double> u = DeviceSystem<double>(*s, gpu).solve(plan, shared);
      EXPECT_LE(error_of(u, s->ref), tol<double>()) << (s == &weak ? "weak" : "dominant") << (shared ? " shared" : "");
      EXPECT_EQ(now(), ex) << "after the " << (s == &weak ? "weak" : "dominant") << " solve";
    }
  }
  {
    adi::test::ScopedEnv bad("ADI_LONG_TRUNCATED", "yes");
    EXPECT_THROW(pick(false), adi::InvalidArgument);
  }
}

// ADI_TRUNCATED_UNCHECKED=1 (stop 43, opt-in, not yet run on a GPU when written): with check_pivots
// off the truncated sweeps stay automatic's pick and a refused batch is re-solved on the device by
// the gated pivoting kernel, nothing read back; automatic's plan moves to the exact kernel at the
// solve after the one that met the refusal, a plan by name never does. Every answer right.
TEST(CudaThomasTruncated, Unchecked) {
  ADI_REQUIRE_CUDA();
  const index_t n = 4096, L = 1024;
  const adi::LineSet lines{n, L, L, 1, 1, n * L};
  const adi::Executor gpu = adi::Executor::cuda();
  adi::TridiagonalOptions unchecked;
  unchecked.check_pivots = false;
  EXPECT_NE(adi::TridiagonalPlan<double>(gpu, lines, unchecked).kernel(), kTrunc);  // (the variable unset)
  adi::test::ScopedEnv on("ADI_TRUNCATED_UNCHECKED", "1");
  for (int shared = 0; shared < 2; ++shared)
    for (bool by_name : {false, true}) {
      SCOPED_TRACE(std::string(shared ? "shared bands" : "per-line bands") + (by_name ? ", by name" : ", automatic"));
      adi::TridiagonalOptions o = unchecked;
      if (by_name) o.kernel = kTrunc;
      adi::TridiagonalPlan<double> plan(gpu, lines, o);
      auto now = [&] { return shared ? plan.shared_bands_kernel() : plan.kernel(); };
      ASSERT_EQ(now(), kTrunc);
      const System<double> dom = make_system<double>(n, L, {Kind::dominant}, shared, 21);
      const System<double> weak = make_system<double>(n, L, {Kind::weak}, shared, 22);
      int k = 0;
      for (const System<double>* sys : {&dom, &weak, &dom, &weak}) {
        const std::vector<double> u = DeviceSystem<double>(*sys, gpu).solve(plan, shared);  // (synchronised)
        EXPECT_LE(error_of(u, sys->ref), tol<double>()) << "solve " << k;
        // automatic: truncated until the solve after the first refused one (solve 1), exact from solve 2
        if (by_name || k < 2)
          EXPECT_EQ(now(), kTrunc) << "after solve " << k;
        else
          EXPECT_NE(now(), kTrunc) << "after solve " << k;
        ++k;
      }
    }
  adi::test::ScopedEnv bad("ADI_TRUNCATED_UNCHECKED", "yes");
  EXPECT_THROW((adi::TridiagonalPlan<double>(gpu, lines, unchecked)), adi::InvalidArgument);
}

// One large system by the single-system kernel (stop 44; LargeKernel::truncated): the backend entry
// point on odd sizes against the fp64 reference (u NaN-poisoned, a[0] / c[n-1] NaN), its refusal of
// weak and unstable systems; then LargeTridiagonalPlan: automatic picks it for fp64 from 2^21 rows and
// re-solves a refused system with the partition; ADI_LARGE_TRUNCATED=0 keeps the partition.
template <class T>
int large_case(index_t n, Kind kind, bool check = true) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float" : "double") + " n=" + std::to_string(n));
  const System<T> s = make_system<T>(n, 1, {kind}, false, std::uint32_t(n * 3 + int(kind)));
  const adi::Executor gpu = adi::Executor::cuda();
  DeviceSystem<T> ds(s, gpu);
  adi::Array<int> flag(1, gpu);
  const int zero = 0;
  flag.copy_from_host(&zero);
  adi::cuda_backend::large_truncated_solve<T>(n, ds.a.data(), ds.b.data(), ds.c.data(), ds.d.data(), ds.u.data(),
                                              flag.data(), nullptr);
  gpu.synchronize();
  int refused = -1;
  flag.copy_to_host(&refused);
  if (refused == 0 && check) {
    std::vector<T> u(s.d.size());
    ds.u.copy_to_host(u.data());
    EXPECT_LE(error_of(u, s.ref), tol<T>()) << "taken";
  }
  return refused;
}

// The plan on one system of 2^21 + 3 rows where automatic takes the truncated sweeps: a dominant system's
// answer, a weak one refused (the partition's answer, and the plan keeps the partition), a non-dominant one
// either way right, in place through the partition.
template <class T>
void large_plan_cases(std::uint32_t seed) {
  const index_t n = (1 << 21) + 3;
  const adi::Executor gpu = adi::Executor::cuda();
  for (Kind kind : {Kind::dominant, Kind::weak, Kind::nondominant}) {
    SCOPED_TRACE(std::string(sizeof(T) == 4 ? "float " : "double ") +
                 (kind == Kind::dominant ? "dominant" : kind == Kind::weak ? "weak (refused, the partition)" : "non-dominant"));
    const System<T> s = make_system<T>(n, 1, {kind}, false, seed);
    DeviceSystem<T> ds(s, gpu);
    adi::LargeTridiagonalPlan<T> plan(gpu, n);
    EXPECT_EQ(plan.kernel(), adi::LargeKernel::truncated);
    for (int rep = 0; rep < 2; ++rep) {
      ds.u.copy_from_host(ds.poison.data());
      plan.solve(adi::Bands<T>{ds.a.data(), ds.b.data(), ds.c.data()}, ds.d.data(), ds.u.data());
      std::vector<T> u(s.d.size());
      ds.u.copy_to_host(u.data());
      EXPECT_LE(error_of(u, s.ref), tol<T>()) << "solve " << rep;
      if (kind == Kind::weak) EXPECT_EQ(plan.kernel(), adi::LargeKernel::partition);
      if (kind == Kind::dominant) EXPECT_EQ(plan.kernel(), adi::LargeKernel::truncated);
    }
    std::vector<T> u(s.d.size());
    plan.solve(adi::Bands<T>{ds.a.data(), ds.b.data(), ds.c.data()}, ds.d.data(), ds.d.data());
    ds.d.copy_to_host(u.data());
    EXPECT_LE(error_of(u, s.ref), tol<T>()) << "in place";
  }
}

// large_truncated_solve alone on one system of each size, both precisions: dominant taken (and right),
// weak refused from `weak_from` rows on (where the system is cut), Thomas's unstable pivot always refused.
void large_kernel_cases(std::initializer_list<index_t> sizes, index_t weak_from) {
  for (index_t n : sizes) {
    EXPECT_EQ(large_case<double>(n, Kind::dominant), 0);
    EXPECT_EQ(large_case<float>(n, Kind::dominant), 0);
    if (n >= weak_from) {
      EXPECT_EQ(large_case<double>(n, Kind::weak), 1);
      EXPECT_EQ(large_case<float>(n, Kind::weak), 1);
    }
    if (n >= 2) {
      EXPECT_EQ(large_case<double>(n, Kind::unstable, false), 1);
      EXPECT_EQ(large_case<float>(n, Kind::unstable, false), 1);
    }
  }
}

// Stop 44's single-system kernel (a thread per part; since stop 51 ADI_LARGE_WINDOWS=0) and the plan on it.
TEST(CudaThomasTruncated, LargeSystem) {
  ADI_REQUIRE_CUDA();
  adi::test::ScopedEnv single("ADI_LARGE_WINDOWS", "0");
  large_kernel_cases({1, 2, 3, 31, 33, 255, 257, 4097, 100003, (1 << 20) + 3, (1 << 22) + 5}, 4097);
  const index_t n = (1 << 21) + 3;
  const adi::Executor gpu = adi::Executor::cuda();
  EXPECT_EQ(adi::LargeTridiagonalPlan<float>(gpu, n).kernel(), adi::LargeKernel::partition);  // (fp64 only in this form)
  EXPECT_EQ(adi::LargeTridiagonalPlan<double>(gpu, (1 << 21) - 1).kernel(), adi::LargeKernel::partition);
  large_plan_cases<double>(77);
  // TridiagonalPlan's few-long-lines route (Kernel::large_partition): two contiguous lines, the second
  // dominant; the first dominant (the truncated sweeps take both) or weak (refused: the partition).
  for (Kind kind : {Kind::dominant, Kind::weak}) {
    SCOPED_TRACE(kind == Kind::dominant ? "TridiagonalPlan, dominant lines" : "TridiagonalPlan, a weak line");
    const System<double> s0 = make_system<double>(n, 1, {kind}, false, 91);
    const System<double> s1 = make_system<double>(n, 1, {Kind::dominant}, false, 92);
    System<double> s;
    auto cat = [](const std::vector<double>& x, const std::vector<double>& y) {
      std::vector<double> v(x);
      v.insert(v.end(), y.begin(), y.end());
      return v;
    };
    s.a = cat(s0.a, s1.a), s.b = cat(s0.b, s1.b), s.c = cat(s0.c, s1.c), s.d = cat(s0.d, s1.d);
    s.ref = cat(s0.ref, s1.ref);
    DeviceSystem<double> ds(s, gpu);
    adi::TridiagonalPlan<double> plan(gpu, adi::LineSet{n, 1, 2, n, 1, 2 * n});
    EXPECT_EQ(plan.kernel(), Kernel::large_partition);
    for (int rep = 0; rep < 2; ++rep) {
      ds.u.copy_from_host(ds.poison.data());
      EXPECT_LE(error_of(ds.solve(plan, false), s.ref), tol<double>()) << "solve " << rep;
    }
  }
  {
    adi::test::ScopedEnv off("ADI_LARGE_TRUNCATED", "0");
    EXPECT_EQ(adi::LargeTridiagonalPlan<double>(gpu, n).kernel(), adi::LargeKernel::partition);
  }
  adi::LargeTridiagonalOptions o;
  o.pivoting = adi::Pivoting::partial;  // (every solve pivots)
  EXPECT_EQ(adi::LargeTridiagonalPlan<double>(gpu, n, 1, 0, o).kernel(), adi::LargeKernel::partition);
  o.pivoting = adi::Pivoting::automatic;
  o.periodic = true;
  EXPECT_EQ(adi::LargeTridiagonalPlan<double>(gpu, n, 1, 0, o).kernel(), adi::LargeKernel::partition);
  o.kernel = adi::LargeKernel::truncated;
  EXPECT_THROW(adi::LargeTridiagonalPlan<float>(gpu, n, 1, 0, o), adi::InvalidArgument);
  o.periodic = false;
  EXPECT_EQ(adi::LargeTridiagonalPlan<float>(gpu, 1000, 1, 0, o).kernel(), adi::LargeKernel::truncated);
  EXPECT_THROW(adi::LargeTridiagonalPlan<float>(adi::Executor::host(), 1000, 1, 0, o), adi::InvalidArgument);
}

// The window form of LargeKernel::truncated (the default since stop 51, thomas_pcr_window.cuh: windows of
// 512 rows overlapping by 2G, each solved by the lean X kernel's warp): sizes around one window's kept rows
// (K = 512 - 2G: 432 fp64, 464 fp32) and its multiples, lengths of one to thousands of windows; dominant
// systems taken (against the fp64 reference), weak ones refused wherever a window is cut, Thomas's
// unstable pivot refused (the hybrid's growth test) even in one window; and through the plan in both
// precisions (automatic takes fp32 too in this form), taken, refused (the partition) and in place.
TEST(CudaThomasTruncated, LargeSystemWindows) {
  ADI_REQUIRE_CUDA();
  adi::test::ScopedEnv windows("ADI_LARGE_WINDOWS", "1");
  EXPECT_TRUE(adi::cuda_backend::large_truncated_windows());
  large_kernel_cases({1, 2, 3, 31, 33, 255, 257, 431, 432, 433, 463, 464, 465, 511, 512, 513, 863, 864, 865, 929, 4097,
                      100003, (1 << 20) + 3, (1 << 22) + 5},
                     1000);
  large_plan_cases<double>(78);
  large_plan_cases<float>(78);
  const adi::Executor gpu = adi::Executor::cuda();
  EXPECT_EQ(adi::LargeTridiagonalPlan<float>(gpu, (1 << 21) - 1).kernel(), adi::LargeKernel::partition);
  adi::test::ScopedEnv single("ADI_LARGE_WINDOWS", "0");  // fp32: the partition without the windows
  EXPECT_EQ(adi::LargeTridiagonalPlan<float>(gpu, (1 << 21) + 3).kernel(), adi::LargeKernel::partition);
}

// compute-sanitizer's case (scripts/gpu_longy_ab.sh): lines cut into parts, dominant lines taken
// and weak ones refused (the re-solve by the exact kernel), both precisions.
TEST(CudaThomasTruncated, SanitizerSmall) {
  ADI_REQUIRE_CUDA();
  EXPECT_EQ(device_case<double>(kTrunc, 1031, 33, {Kind::dominant}, false), 0);
  EXPECT_EQ(device_case<float>(kTrunc, 1031, 33, {Kind::dominant}, true), 0);
  EXPECT_EQ(device_case<double>(kTrunc, 1031, 33, {Kind::dominant, Kind::weak}, false), 1);
  {
    adi::test::ScopedEnv single("ADI_LARGE_WINDOWS", "0");  // the single-system kernel (not the default since stop 51)
    EXPECT_EQ(large_case<double>(100003, Kind::dominant), 0);
    EXPECT_EQ(large_case<float>(4097, Kind::weak), 1);
  }
  adi::test::ScopedEnv windows("ADI_LARGE_WINDOWS", "1");  // and the window form
  EXPECT_EQ(large_case<double>(100003, Kind::dominant), 0);
  EXPECT_EQ(large_case<float>(4097, Kind::dominant), 0);
  EXPECT_EQ(large_case<float>(4097, Kind::weak), 1);
}
