// One large system on the host: plain Thomas on one core and the paper's PCR + Thomas
// variants (Valero-Lara et al., IEEE Access 2019, "A Fast Solver for Large Tridiagonal
// Systems on Multi-Core Processors"):
//   P+T   k PCR levels (section II) on all cores turn the system into 2^k independent
//         subsystems (rows r, r + 2^k, ...), which are gathered into contiguous buffers
//         (Thomas-Copy), solved by Thomas concurrently and scattered back (III, Alg. 1);
//   P+TO  the last PCR level writes straight into the gathered layout (IV-A);
//   SP+T  every level stores its even and odd rows as two contiguous halves, so each
//         level runs with stride 1 and no gather is needed, only the final unshuffle (IV-B).
// Periodic systems take Sherman-Morrison around the non-periodic solve (two solves: the
// right-hand side and the correction vector), as in solvers/reference/thomas.hpp.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "solvers/cpu/large_tridiagonal_cpu.hpp"
#include "solvers/common/partition_large_math.hpp"
#include "solvers/common/pcr_core.hpp"

namespace adi::cpu::large::detail {

namespace {

constexpr std::size_t kAlign = 64;
std::size_t rounded(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Carves 64-byte aligned arrays out of the workspace, in order.
struct Carver {
  char* p;
  template <class X>
  X* take(index_t n) {
    X* r = reinterpret_cast<X*>(p);
    p += rounded(static_cast<std::size_t>(n) * sizeof(X));
    return r;
  }
};

int threads_now(int threads) {
  return threads > 0 ? threads : std::clamp(omp_get_max_threads(), 1, std::max(1, omp_get_num_procs()));
}

// Below this many rows per thread a loop runs on one thread (a parallel region costs
// more than the work).
constexpr index_t kParallelMin = 16384;

template <class T>
struct Bands4 {
  T* a;
  T* b;
  T* c;
  T* d;
  Bands4 at(index_t o) const { return {a + o, b + o, c + o, d + o}; }
};
template <class T>
struct CBands4 {
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  CBands4 at(index_t o) const { return {a + o, b + o, c + o, d + o}; }
};
template <class T>
Bands4<T> take4(Carver& w, index_t n) {
  return {w.take<T>(n), w.take<T>(n), w.take<T>(n), w.take<T>(n)};
}

template <class T>
inline bool bad_reciprocal(T r) {
  return !(r - r == T(0)) || r == T(0);
}

// One PCR row (section II): row i of a system of len rows at distance s combined with
// rows i - s and i + s. First: the user's arrays, whose a[0] and c[len-1] are not part
// of the system (they are read as 0, never multiplied: they may hold anything).
template <class T, bool First>
inline void pcr_row(const CBands4<T>& in, index_t len, index_t s, index_t i, T& ao, T& bo, T& co, T& dox,
                    int& bad) {
  T bn = in.b[i], dn = in.d[i], an = 0, cn = 0;
  if (i >= s) {
    const T r = T(1) / in.b[i - s];
    bad |= bad_reciprocal(r);
    const T al = common::pcr_factor(in.a[i], r);
    an = First && i - s == 0 ? T(0) : al * in.a[i - s];
    bn = common::pcr_add(bn, al, in.c[i - s]);
    dn = common::pcr_add(dn, al, in.d[i - s]);
  }
  if (i + s < len) {
    const T r = T(1) / in.b[i + s];
    bad |= bad_reciprocal(r);
    const T be = common::pcr_factor(in.c[i], r);
    cn = First && i + s == len - 1 ? T(0) : be * in.c[i + s];
    bn = common::pcr_add(bn, be, in.a[i + s]);
    dn = common::pcr_add(dn, be, in.d[i + s]);
  }
  ao = an;
  bo = bn;
  co = cn;
  dox = dn;
}

// One PCR level over a block of len rows at distance s; row i goes to out[where(i)].
// The middle rows (both neighbours present, no first-level corner) run without
// branches so that the compiler vectorises them. Returns true on a bad pivot.
template <class T, bool First, class Where>
bool pcr_block(const CBands4<T>& in, const Bands4<T>& out, index_t len, index_t s, Where where, int nt) {
  const index_t lo = std::min(len, s + (First ? 1 : 0));
  const index_t hi = std::max(lo, len - s - (First ? 1 : 0));
  int bad = 0;
  auto edge = [&](index_t i) {
    const index_t o = where(i);
    pcr_row<T, First>(in, len, s, i, out.a[o], out.b[o], out.c[o], out.d[o], bad);
  };
  for (index_t i = 0; i < lo; ++i) edge(i);
  for (index_t i = hi; i < len; ++i) edge(i);
  const int t = (hi - lo) >= kParallelMin * 2 ? nt : 1;
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static) reduction(| : bad)
  for (index_t i = lo; i < hi; ++i) {
    const T rl = T(1) / in.b[i - s], rh = T(1) / in.b[i + s];
    bad |= bad_reciprocal(rl) | bad_reciprocal(rh);
    const T al = common::pcr_factor(in.a[i], rl), be = common::pcr_factor(in.c[i], rh);
    const index_t o = where(i);
    out.a[o] = al * in.a[i - s];
    out.b[o] = common::pcr_combine(in.b[i], al, in.c[i - s], be, in.a[i + s]);
    out.c[o] = be * in.c[i + s];
    out.d[o] = common::pcr_combine(in.d[i], al, in.d[i - s], be, in.d[i + s]);
  }
  return bad != 0;
}

// The first row whose b is used as a divisor at distance s and is bad (after a level
// reported failure; the error path, so plain).
template <class T>
index_t first_bad_divisor(const T* b, index_t len, index_t s) {
  for (index_t i = 0; i < len; ++i)
    if ((i + s < len || i >= s) && bad_reciprocal(T(1) / b[i])) return i;
  return 0;
}

// Rows of residue r modulo 2^k among n: (n - r + 2^k - 1) >> k.
inline index_t residue_count(index_t n, int k, index_t r) { return r < n ? (n - r + (index_t(1) << k) - 1) >> k : 0; }
// Start of residue r's subsystem in the gathered layout (residues in order).
inline index_t gathered_start(index_t n, int k, index_t r) {
  const index_t q = n >> k, rem = n - (q << k);
  return r * q + std::min(r, rem);
}

inline index_t bit_reverse(index_t x, int bits) {
  index_t y = 0;
  for (int i = 0; i < bits; ++i) y |= ((x >> i) & 1) << (bits - 1 - i);
  return y;
}

// Thomas on subsystem `len` rows in our buffers, in place (c* over c, solution over d),
// then row t of it to u[first + t * step]. Returns the bad row of the subsystem or -1.
template <class T>
index_t thomas_subsystem(const Bands4<T>& buf, index_t len, T* u, index_t first, index_t step, T tol) {
  const index_t bad = adi::large::solve_direct<T>(len, buf.a, buf.b, buf.c, buf.d, buf.d, buf.c, nullptr,
                                                  false, tol);
  if (bad >= 0) return bad;
  for (index_t t = 0; t < len; ++t) u[first + t * step] = buf.d[t];
  return -1;
}

// Solves subsystems 0 .. count-1 concurrently; sub(q) gives {buffer offset, length, first
// row, step}. Returns the original row of the first bad pivot, or -1.
template <class T, class Sub>
index_t thomas_all(const Bands4<T>& buf, index_t count, T* u, T tol, int nt, Sub sub) {
  index_t first_bad = -1;
  const int t = static_cast<int>(std::min<index_t>(nt, count));
#pragma omp parallel for num_threads(t) if (t > 1) schedule(dynamic, 1)
  for (index_t q = 0; q < count; ++q) {
    index_t off, len, first, step;
    sub(q, off, len, first, step);
    if (len == 0) continue;
    const index_t bad = thomas_subsystem(buf.at(off), len, u, first, step, tol);
    if (bad >= 0) {
#pragma omp critical(adi_large_pcr_bad)
      if (first_bad < 0 || first + bad * step < first_bad) first_bad = first + bad * step;
    }
  }
  return first_bad;
}

// The non-periodic solve of one PCR variant. ws holds 8 n values (two sets of 4 arrays)
// and 2^k + 1 block starts.
template <class T>
Failure pcr_core(const Settings& s, const CBands4<T>& in, T* u, index_t n, Carver ws) {
  const int nt = threads_now(s.threads);
  const T tol = static_cast<T>(s.tolerance);
  int k = s.k;
  while (k > 0 && (index_t(1) << (k - 1)) >= n) --k;  // past that every row is decoupled
  Bands4<T> buf[2] = {take4<T>(ws, n), take4<T>(ws, n)};
  index_t* starts = ws.take<index_t>((index_t(1) << k) + 1);
  const index_t K = index_t(1) << k;
  auto identity = [](index_t i) { return i; };
  auto gathered = [n, k](index_t i) { return gathered_start(n, k, i & ((index_t(1) << k) - 1)) + (i >> k); };
  Failure f;
  auto level_failed = [&](const T* b, index_t len, index_t dist, int level) {
    f.row = first_bad_divisor(b, len, dist);
    f.stage = "PCR";
    f.level = level;
    return f;
  };

  if (s.variant == LargeKernel::shuffled_pcr_thomas) {
    // SP+T: after level j the rows of residue bitrev_j(q) mod 2^j form block q.
    CBands4<T> cur = in;
    int dst = 0;
    for (int j = 1; j <= k; ++j) {
      const int prev_bits = j - 1;
      const index_t blocks = index_t(1) << prev_bits;
      index_t start = 0;
      for (index_t q = 0; q < blocks; ++q) {
        const index_t r = bit_reverse(q, prev_bits);
        const index_t len = residue_count(n, prev_bits, r);
        const index_t half = (len + 1) / 2;
        auto shuffled = [half](index_t p) { return (p & 1) ? half + (p >> 1) : (p >> 1); };
        const bool bad = j == 1 ? pcr_block<T, true>(cur.at(start), buf[dst].at(start), len, 1, shuffled, nt)
                                : pcr_block<T, false>(cur.at(start), buf[dst].at(start), len, 1, shuffled, nt);
        if (bad) {
          const Failure g = level_failed(cur.b + start, len, 1, j);
          f.row = r + (g.row << prev_bits);
          return f;
        }
        start += len;
      }
      cur = {buf[dst].a, buf[dst].b, buf[dst].c, buf[dst].d};
      dst ^= 1;
    }
    Bands4<T> fin = buf[dst ^ 1];
    if (k == 0) {  // nothing shuffled: copy the system into a buffer
      fin = buf[0];
      std::copy(in.a, in.a + n, fin.a);
      std::copy(in.b, in.b + n, fin.b);
      std::copy(in.c, in.c + n, fin.c);
      std::copy(in.d, in.d + n, fin.d);
    }
    starts[0] = 0;
    for (index_t q = 0; q < K; ++q) starts[q + 1] = starts[q] + residue_count(n, k, bit_reverse(q, k));
    const index_t bad = thomas_all(fin, K, u, tol, nt, [&](index_t q, index_t& off, index_t& len, index_t& first, index_t& step) {
      off = starts[q];
      len = starts[q + 1] - starts[q];
      first = bit_reverse(q, k);
      step = K;
    });
    if (bad >= 0) f = {bad, "Thomas", 0};
    return f;
  }

  // P+T and P+TO: levels at distance 2^(j-1) on the whole system.
  CBands4<T> cur = in;
  int dst = 0;
  const bool overlapped = s.variant == LargeKernel::pcr_thomas_overlapped;
  for (int j = 1; j <= k; ++j) {
    const index_t dist = index_t(1) << (j - 1);
    const bool last_fused = overlapped && j == k;
    bool bad;
    if (j == 1)
      bad = last_fused ? pcr_block<T, true>(cur, buf[dst], n, dist, gathered, nt)
                       : pcr_block<T, true>(cur, buf[dst], n, dist, identity, nt);
    else
      bad = last_fused ? pcr_block<T, false>(cur, buf[dst], n, dist, gathered, nt)
                       : pcr_block<T, false>(cur, buf[dst], n, dist, identity, nt);
    if (bad) return level_failed(cur.b, n, dist, j);
    cur = {buf[dst].a, buf[dst].b, buf[dst].c, buf[dst].d};
    dst ^= 1;
  }
  Bands4<T> fin;
  if (overlapped && k > 0) {
    fin = buf[dst ^ 1];  // the last level wrote the gathered layout
  } else {
    // Thomas-Copy: each subsystem's strided rows into consecutive buffer positions.
    fin = buf[dst];
    const int t = static_cast<int>(std::min<index_t>(nt, K));
#pragma omp parallel for num_threads(t) if (t > 1 && n >= kParallelMin) schedule(static)
    for (index_t r = 0; r < K; ++r) {
      const index_t o = gathered_start(n, k, r), len = residue_count(n, k, r);
      for (index_t q = 0; q < len; ++q) {
        const index_t i = r + (q << k);
        fin.a[o + q] = cur.a[i];
        fin.b[o + q] = cur.b[i];
        fin.c[o + q] = cur.c[i];
        fin.d[o + q] = cur.d[i];
      }
    }
  }
  const index_t bad = thomas_all(fin, K, u, tol, nt, [&](index_t r, index_t& off, index_t& len, index_t& first, index_t& step) {
    off = gathered_start(n, k, r);
    len = residue_count(n, k, r);
    first = r;
    step = K;
  });
  if (bad >= 0) f = {bad, "Thomas", 0};
  return f;
}

std::size_t core_bytes(const Settings& s, index_t n, std::size_t vs) {
  int k = s.k;
  while (k > 0 && (index_t(1) << (k - 1)) >= n) --k;
  return 8 * rounded(static_cast<std::size_t>(n) * vs) +
         rounded((static_cast<std::size_t>(1) << k) * sizeof(index_t) + sizeof(index_t));
}

template <class T>
Failure thomas_one_core(const Settings& s, const System<T>& sys, Carver ws) {
  T* cp = ws.take<T>(sys.n);
  T* z = s.periodic ? ws.take<T>(sys.n) : nullptr;
  const index_t bad = adi::large::solve_direct<T>(sys.n, sys.a, sys.b, sys.c, sys.d, sys.u, cp, z, s.periodic,
                                                  static_cast<T>(s.tolerance));
  return bad >= 0 ? Failure{bad, "Thomas", 0} : Failure{};
}

}  // namespace

std::size_t pcr_workspace_bytes(const Settings& s, index_t n, std::size_t vs) {
  const std::size_t arr = rounded(static_cast<std::size_t>(n) * vs);
  if (s.variant == LargeKernel::thomas) return (s.periodic ? 2 : 1) * arr;
  if (s.periodic && n <= 2) return 2 * arr;
  return core_bytes(s, n, vs) + (s.periodic ? 2 * arr : 0);
}

template <class T>
Failure pcr_solve(const Settings& s, const System<T>& sys, void* workspace) {
  Carver ws{static_cast<char*>(workspace)};
  const index_t n = sys.n;
  if (s.variant == LargeKernel::thomas || (s.periodic && n <= 2)) return thomas_one_core(s, sys, ws);
  const CBands4<T> in{sys.a, sys.b, sys.c, sys.d};
  if (!s.periodic) return pcr_core(s, in, sys.u, n, ws);

  // Sherman-Morrison: A = A' + v w^T with v = (gamma, 0.., alpha), w = (1, 0.., beta/gamma);
  // A' is A without corners and with b_0 - gamma, b_{n-1} - alpha beta / gamma.
  const int nt = threads_now(s.threads);
  const T gamma = -sys.b[0], alpha = sys.c[n - 1], bg = sys.a[0] / gamma;
  T* bm = ws.take<T>(n);
  T* z = ws.take<T>(n);
  const int t = n >= 2 * kParallelMin ? nt : 1;
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static)
  for (index_t i = 0; i < n; ++i) {
    bm[i] = sys.b[i];
    z[i] = T(0);
  }
  bm[0] -= gamma;
  bm[n - 1] -= alpha * bg;
  z[0] = gamma;
  z[n - 1] = alpha;
  Failure f = pcr_core(s, CBands4<T>{sys.a, bm, sys.c, sys.d}, sys.u, n, ws);
  if (f.failed()) return f;
  f = pcr_core(s, CBands4<T>{sys.a, bm, sys.c, z}, z, n, ws);
  if (f.failed()) return f;
  const T den = T(1) + z[0] + bg * z[n - 1];
  if (bad_reciprocal(T(1) / den)) return {n - 1, "Sherman-Morrison", 0};
  const T fac = (sys.u[0] + bg * sys.u[n - 1]) / den;
  T* u = sys.u;
#pragma omp parallel for num_threads(t) if (t > 1) schedule(static)
  for (index_t i = 0; i < n; ++i) u[i] -= fac * z[i];
  return {};
}

template Failure pcr_solve<float>(const Settings&, const System<float>&, void*);
template Failure pcr_solve<double>(const Settings&, const System<double>&, void*);

}  // namespace adi::cpu::large::detail
