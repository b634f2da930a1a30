#pragma once
// The register partition route of partial pivoting (issue 23, stop 38, branch h-regpart): the
// per-thread steps, host and device, so the host test runs what the CUDA kernel
// (solvers/cuda/pivoting_regpart.cuh) runs. A line of n rows is cut into P = ceil(n / M)
// partitions of M = 17 rows (a separator and an even block of 16, as the partition route);
// partition k is held by one thread in registers (RegPartition: its a, b, c, d), which
//   1. eliminates its block both ways with partial pivoting inside it (common::partition_first /
//      partition_last, three right-hand sides) -> RegPartitionEnds;
//   2. forms its separator's reduced row (needs partition k-1's last-row values) and tests it
//      (regpart_unsafe: a weak pivot, or a line that does not behave like a diagonally dominant
//      one: common::partition_dominance_unsafe, docs/pivoting.md "Stop 34");
// then the P reduced rows of the line are solved by exact partial pivoting (regpart_reduced_solve:
// common::pivot_line), and each thread solves its block again with its two separators known
// (common::partition_solve). A line with any unsafe partition is solved instead by exact partial
// pivoting along the whole line (the thread route's loop on the device; pivot_line on the host).
#include "solvers/common/pivoting_line.hpp"

namespace adi::common {

inline constexpr int kRegPartitionRows = 17;

template <class T, int M = kRegPartitionRows>
struct RegPartition {
  T a[M], b[M], c[M], d[M];
  ADI_PIVOT_HD PartitionRowValues<T> operator()(int i) const { return {a[i], b[i], c[i], d[i]}; }
};

// Partition k of a line of n rows: fetch(g) returns row g (0 <= g < n) as PartitionRowValues
// (a of row 0 and c of row n-1 are zeroed here, never used); rows past the line's end are the
// scale-neutral padding (common::partition_pad_rows).
template <class T, int M, class Fetch>
ADI_PIVOT_HD void regpart_load(RegPartition<T, M>& p, Fetch fetch, long long k, long long n) {
ADI_PIVOT_UNROLL
  for (int i = 0; i < M; ++i) {
    const long long g = k * M + i;
    PartitionRowValues<T> r{T(0), T(1), T(0), T(0)};
    if (g < n) r = fetch(g);
    p.a[i] = g == 0 || g >= n ? T(0) : r.a;
    p.b[i] = r.b;
    p.c[i] = g >= n - 1 ? T(0) : r.c;
    p.d[i] = r.d;
  }
  if (k * M + M > n) partition_pad_rows<T, M>(p.a, p.b, p.c, static_cast<int>(n - k * M));
}

template <class T>
struct RegPartitionEnds {
  T yF, vF, wF, yL, vL, wL;
  bool bad, weak;
};

// Step 1: the block's first and last rows (y, v, w); weak: a weak pivot (partition_weak_pivot).
template <class T, int M>
ADI_PIVOT_HD RegPartitionEnds<T> regpart_eliminate(const RegPartition<T, M>& p) {
  RegPartitionEnds<T> e{};
  e.bad = false;
  e.weak = false;
  partition_first<T, M>(p, e.yF, e.vF, e.wF, e.bad, e.weak);
  partition_last<T, M>(p, e.yL, e.vL, e.wL, e.bad, e.weak);
  return e;
}

// Step 2: separator k's reduced row; prev = partition k-1's ends (k = 0: none, pass first).
template <class T, int M>
ADI_PIVOT_HD PartitionRowValues<T> regpart_reduced(const RegPartition<T, M>& p, const RegPartitionEnds<T>& e, bool first,
                                                  T pyL, T pvL, T pwL) {
  return partition_reduced_row<T>(p(0), first ? T(0) : pyL, first ? T(0) : pvL, first ? T(0) : pwL, e.yF, e.vF,
                                  e.wF);
}

// The detector: this partition cannot be trusted (a weak pivot, a non-finite value, or the
// dominance test), so its line goes to exact partial pivoting.
template <class T>
ADI_PIVOT_HD bool regpart_unsafe(const RegPartitionEnds<T>& e, const PartitionRowValues<T>& r) {
  return e.weak || e.bad || partition_dominance_unsafe<T>(e.vF, e.wF, e.vL, e.wL, r);
}

// The reduced rows of a line as pivot_line's Io: A, B, C, D of row i at [i * stride], U's rows
// in w1, w2 and y, then the solution, in x (host: stride 1; the kernel: a column of shared
// memory, stride = its lines).
template <class T>
struct StridedReducedIo {
  const T *pa, *pb, *pc, *pd;
  T *px, *w1, *w2;
  int stride;
  ADI_PIVOT_HD T a(long long i) const { return pa[i * stride]; }
  ADI_PIVOT_HD T b(long long i) const { return pb[i * stride]; }
  ADI_PIVOT_HD T c(long long i) const { return pc[i * stride]; }
  ADI_PIVOT_HD T d(long long i) const { return pd[i * stride]; }
  ADI_PIVOT_HD void put(long long i, T u1, T u2, T y) {
    w1[i * stride] = u1;
    w2[i * stride] = u2;
    px[i * stride] = y;
  }
  ADI_PIVOT_HD void get(long long i, T& u1, T& u2, T& y) const {
    u1 = w1[i * stride];
    u2 = w2[i * stride];
    y = px[i * stride];
  }
  ADI_PIVOT_HD void store(long long i, T x) { px[i * stride] = x; }
};

// Step 3: the P reduced rows of a line by exact partial pivoting, in place through Io (as
// common::pivot_line's: a(i), b(i), c(i), d(i), put/get of U's rows, store(i, x)). Returns bad.
template <class T, class Io>
ADI_PIVOT_HD bool regpart_reduced_solve(Io& io, long long P) {
  return pivot_line<T>(io, P);
}

// Step 4: the block again with x at separators k and k+1 known (x1 = 0 for the last partition).
template <class T, int M>
ADI_PIVOT_HD void regpart_back(const RegPartition<T, M>& p, T x0, T x1, T (&x)[M], bool& bad) {
  partition_solve<T, M>(p, x0, x1, x, bad);
}

}  // namespace adi::common
