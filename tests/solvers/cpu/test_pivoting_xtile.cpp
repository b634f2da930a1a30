// The X-tile route of partial pivoting (issue 23, stop 39, branch h-pivx:
// solvers/common/pivoting_xtile.hpp, the CUDA kernel solvers/cuda/pivoting_xtile.cuh) on the
// host: the kernel's warp program (XtileIo through common::pivot_line) run by 32 threads a warp
// with a barrier for __syncwarp, so its tile index math (which lane copies which row of which
// line into which slot, chunk edges, the backward stages, the tile of u) runs here. The
// asynchronous copies are emulated at both ends of what the device allows: lazily (copy() only
// records shared <- global, and the copies of a group land when a wait says so: a read of a
// buffer before its wait sees the poison, NaN, the shared region starts with, and an in-place
// solve whose u stores overtook the reads of d would read them) and eagerly (each copy lands at
// once: a read of a buffer after copies into it were issued sees the new rows). Checked, both
// forms (U stored; U recomputed, pivot_line_recompute): bit for bit against pivot_line run
// directly on each line (the device's thread route computes the same; the device test compares
// the kernels), the whole output array bit for bit (nothing outside the lines written; u poisoned
// with NaN), within 10x of LAPACKE ?gtsv (tests/solvers/pivoting_cases.hpp), a singular line
// flagged alone.
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "solvers/common/pivoting_partition_regs.hpp"
#include "solvers/common/pivoting_xtile.hpp"
#include "tests/solvers/pivoting_cases.hpp"

namespace {

using adi::index_t;
using adi::LineSet;
namespace tp = adi::test_pivoting;
namespace cm = adi::common;

// One lane of the emulated warp (the device's is cuda_backend::kernels::XtileDeviceWarp).
template <class T>
struct HostWarp {
  struct Copy {
    T* s;
    const T* g;
  };
  int lane = 0;
  std::barrier<>* bar = nullptr;
  std::vector<std::vector<Copy>> groups;  // committed, oldest first
  std::vector<Copy> open;
  long long copies = 0;

  static inline bool eager = false;  // copies land when issued (else when waited for)

  void copy(T* s, const T* g) {
    if (eager)
      *s = *g;
    else
      open.push_back({s, g});
  }
  void commit() {
    groups.push_back(std::move(open));
    open.clear();
  }
  void land(std::size_t keep) {
    while (groups.size() > keep) {
      for (const Copy& c : groups.front()) *c.s = *c.g;
      copies += static_cast<long long>(groups.front().size());
      groups.erase(groups.begin());
    }
  }
  void wait_prior1() { land(1); }
  void wait_all() { land(0); }
  void sync() { bar->arrive_and_wait(); }
  void fence() {}
  T ldg(const T* g) const { return *g; }
};

// The kernel's work on every tile of 32 lines of l, one warp of 32 threads a tile; returns
// the lines flagged (zero or non-finite pivot). u may be d (in place).
template <class T, int K, bool Recompute>
std::vector<char> xtile_solve(const LineSet& l, bool shared, const T* a, const T* b, const T* c, const T* d, T* u) {
  const index_t nl = l.lines(), n = l.n, tiles = (nl + 31) / 32;
  std::vector<T> ws(static_cast<std::size_t>(3 * n * 32 * tiles), std::numeric_limits<T>::quiet_NaN());
  std::vector<char> flagged(static_cast<std::size_t>(tiles * 32), 0);
  for (index_t tile = 0; tile < tiles; ++tile) {
    std::vector<long long> off(32);
    for (int p = 0; p < 32; ++p) off[p] = tile * 32 + p < nl ? l.offset(tile * 32 + p) : -1;
    std::vector<T> s(static_cast<std::size_t>(cm::xtile_warp_elements<K>(shared, Recompute)),
                     std::numeric_limits<T>::quiet_NaN());
    std::barrier<> bar(32);
    std::vector<std::thread> lanes;
    for (int lane = 0; lane < 32; ++lane)
      lanes.emplace_back([&, lane] {
        HostWarp<T> w;
        w.lane = lane;
        w.bar = &bar;
        T* const wt = ws.data() + tile * 3 * n * 32;
        const bool bad =
            shared ? cm::xtile_warp_solve<T, K, true, Recompute>(w, off.data(), n, a, b, c, d, u, wt, s.data())
                   : cm::xtile_warp_solve<T, K, false, Recompute>(w, off.data(), n, a, b, c, d, u, wt, s.data());
        EXPECT_TRUE(w.groups.empty() && w.open.empty()) << "lane " << lane << ": copies never waited for";
        flagged[static_cast<std::size_t>(tile * 32 + lane)] = bad;
      });
    for (std::thread& t : lanes) t.join();
  }
  flagged.resize(static_cast<std::size_t>(nl));
  return flagged;
}

// pivot_line on each line directly (the thread route's elimination), into u.
template <class T>
std::vector<char> line_solve(const tp::Case<T>& k, std::vector<T>& u) {
  const LineSet& l = k.lines;
  std::vector<char> flagged(static_cast<std::size_t>(l.lines()));
  const index_t n = l.n;
  std::vector<T> v1(n), v2(n);
  for (index_t line = 0; line < l.lines(); ++line) {
    const index_t o = l.offset(line);
    const index_t bo = k.shared ? 0 : o;
    cm::StridedReducedIo<T> io{k.a.data() + bo, k.b.data() + bo, k.c.data() + bo, k.d.data() + o, u.data() + o,
                               v1.data(), v2.data(), 1};
    flagged[static_cast<std::size_t>(line)] = cm::pivot_line<T>(io, n);
  }
  return flagged;
}

template <class T, int K, bool Recompute>
void xtile_case(int layout, tp::Family f, index_t n, index_t count, bool shared, bool in_place) {
  const LineSet l = tp::x_lines(layout, n, count);
  auto k = tp::make_case<T>(l, f, false, shared, 1000 * n + 10 * count + layout + 100000 * shared);
  std::vector<T> ref = k.u;
  const std::vector<char> ref_flag = line_solve(k, ref);
  std::vector<T> dd = k.d;  // in place: u = d
  T* out = in_place ? dd.data() : k.u.data();
  const std::vector<char> flag =
      xtile_solve<T, K, Recompute>(l, shared, k.a.data(), k.b.data(), k.c.data(), dd.data(), out);
  // In place, outside the lines d's poison stays: the same NaN as u's (make_case).
  const std::vector<T>& got = in_place ? dd : k.u;
  const std::string what = std::string(sizeof(T) == 4 ? "fp32" : "fp64") + " K " + std::to_string(K) +
                           (Recompute ? " recompute" : "") + " layout " + std::to_string(layout) + " " +
                           tp::family_name(f) + " n " + std::to_string(n) + " x " + std::to_string(l.lines()) +
                           (shared ? " shared" : "") + (in_place ? " in place" : "");
  std::size_t differ = 0;
  for (std::size_t e = 0; e < ref.size(); ++e) differ += std::memcmp(&ref[e], &got[e], sizeof(T)) != 0;
  EXPECT_EQ(differ, 0u) << what << ": against pivot_line line by line, bit for bit (whole array)";
  EXPECT_EQ(flag, ref_flag) << what << ": flagged lines";
  std::string detail;
  EXPECT_LE(tp::worst_ratio(k, got, detail), 10.0) << what << ": " << detail;
}

template <class T, int K, bool Recompute>
void xtile_sweep() {
  for (index_t n : {1, 2, 3, 4, 8, 9, 16, 17, 31, 33, 255, 257})
    for (bool shared : {false, true}) {
      const bool big = n > 100;
      for (index_t count : {1, 31, 33, 70}) {
        if (big && count == 31) continue;
        xtile_case<T, K, Recompute>(0, tp::Family::random_signs, n, count, shared, false);
      }
      xtile_case<T, K, Recompute>(1, tp::Family::tiny_diagonal, n, 40, shared, false);
      xtile_case<T, K, Recompute>(0, tp::Family::toeplitz, n, 33, shared, true);
      if (!big) xtile_case<T, K, Recompute>(1, tp::Family::dominant, n, 7, shared, true);
    }
}

// Every case twice: copies landing when waited for, then when issued.
struct PivotingXtile : ::testing::Test {
  template <class F>
  static void both(F f) {
    for (bool eager : {false, true}) {
      SCOPED_TRACE(eager ? "copies land when issued" : "copies land when waited for");
      HostWarp<float>::eager = HostWarp<double>::eager = eager;
      f();
    }
    HostWarp<float>::eager = HostWarp<double>::eager = false;
  }
};

// Both precisions and chunk widths (64 and 32 bytes of a line).
template <bool Recompute>
void xtile_sweeps() {
  xtile_sweep<float, cm::xtile_rows<float, 64>(), Recompute>();
  xtile_sweep<double, cm::xtile_rows<double, 64>(), Recompute>();
  xtile_sweep<float, cm::xtile_rows<float, 32>(), Recompute>();
  xtile_sweep<double, cm::xtile_rows<double, 32>(), Recompute>();
}

TEST_F(PivotingXtile, BitIdenticalToPivotLine) { both(xtile_sweeps<false>); }

// The recompute form (pivot_line_recompute: U recomputed from checkpoints, not stored).
TEST_F(PivotingXtile, RecomputeBitIdenticalToPivotLine) { both(xtile_sweeps<true>); }

// A singular line (a zero row) is flagged, alone; the other lines' answers are unchanged.
TEST_F(PivotingXtile, SingularLineFlaggedAlone) {
  for (index_t n : {2, 33, 257}) {
    const LineSet l = tp::x_lines(0, n, 40);
    auto k = tp::make_case<double>(l, tp::Family::dominant, false, false, 3 + n);
    const std::size_t e = static_cast<std::size_t>(l.offset(34) + n / 2);
    k.a[e] = k.b[e] = k.c[e] = 0;
    std::vector<double> ref = k.u;
    line_solve(k, ref);
    const std::vector<char> flag =
        xtile_solve<double, 8, false>(l, false, k.a.data(), k.b.data(), k.c.data(), k.d.data(), k.u.data());
    for (index_t line = 0; line < l.lines(); ++line) {
      EXPECT_EQ(flag[static_cast<std::size_t>(line)] != 0, line == 34) << "n " << n << " line " << line;
      if (line == 34) continue;
      for (index_t i = 0; i < n; ++i) {
        const std::size_t g = static_cast<std::size_t>(l.offset(line) + i);
        EXPECT_EQ(std::memcmp(&ref[g], &k.u[g], sizeof(double)), 0) << "n " << n << " line " << line << " row " << i;
      }
    }
  }
}

}  // namespace
