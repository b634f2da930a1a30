#pragma once
// The work of one warp in the CUDA partition solver (partition_large.cuh), written as
// plain C++17 phases so that the tests can run them on the host, lane by lane, exactly
// as a warp does (tests/solvers/cuda/test_partition_large_cuda.cpp); no CUDA header.
//
// A warp owns a tile of 32 chunks of at most M rows (one chunk per lane, its rows in
// registers, loaded straight from global memory as 16-byte vectors):
//   pass 1   lane_reduce: each lane reduces its chunk to 2 rows (partition_large_math.hpp)
//            into shared memory, 64 rows for the tile;
//            tile_reduce: the 64 rows reduced the same way to the tile's 2 rows of the next
//            level's system (2 rows per 32*M rows: the reduced traffic is ~1% of the
//            system's): lanes 0..3 reduce 16 rows each (sub_reduce), lane 0 the <= 8 rows
//            they give (a chain of 16 + 8 rows instead of 64: lane 0's serial work is what
//            the rest of its warp waits for);
//   level+1  the same on the reduced system, down to <= kDirectMax rows, solved by one
//            thread (Thomas, or Sherman-Morrison when periodic);
//   pass 2   lane_reduce again (keeping cp, dp, l of every row in registers), then the 64
//            rows solved with the tile's two ends known (sub_reduce keeping its rows' cp,
//            dp, l, tile_solve on lane 0, sub_solve on lanes 0..3), lane_solve: each lane
//            substitutes back through its chunk and stores u.
// Global traffic: a, b, c, d read twice, u written once (+ ~1% for the reduced levels).
#include <cstdint>

#include "solvers/common/partition_large_math.hpp"

namespace adi::large {

constexpr int kTileChunks = 32;           // chunks per tile: one per lane
constexpr int kTileRows = 2 * kTileChunks;  // rows of a tile's reduced system
constexpr i64 kDirectMax = 64;            // systems this short are solved by one thread
constexpr int kSubLanes = 4;              // lanes sharing the tile's 64 rows
constexpr int kSubRows = kTileRows / kSubLanes;
constexpr int kSubMax = 2 * kSubLanes;    // rows of the tile's innermost system

// One level of the recursion: its system, its solution, and the next level's system.
template <class T>
struct Level {
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  T* x;  // solution (written by pass 2; may equal d)
  i64 N;
  T* ra;  // the next level's system: 2 rows per tile (written by pass 1)
  T* rb;
  T* rc;
  T* rd;
  const T* rx;  // its solution (read by pass 2)
  bool periodic;
  T tol;
  unsigned long long* flag;  // null: pivots not checked
  unsigned long long bias;   // a bad pivot at (original) row r raises *flag to bias - r
  i64 row_scale;             // rows of the original system per row of this level (about)
  i64 n0;                    // rows of the original system
};

template <class T>
struct TileShared {
  T a[kTileRows], b[kTileRows], c[kTileRows], d[kTileRows];   // the tile's 64 rows
  T x[kTileRows], cs[kTileRows], ds[kTileRows], ls[kTileRows];  // pass 2: their solution, sweep
  T sa[kSubMax], sb[kSubMax], sc[kSubMax], sd[kSubMax];          // the innermost system
  T sx[kSubMax], scs[kSubMax], sds[kSubMax], sls[kSubMax];
};

// How pass 1 checks its rows (issue 23, stop 37; docs/pivoting.md "Stop 37"):
//   runtime (stop 32's form, kept for the A/B): the test behind a run-time test of L.flag
//     in every row, the first failing row kept row by row (an index, its compare and a
//     branch per row, on the elimination's chain; pass 2, which never checks, carries the
//     code too);
//   off: no test compiled in (the flag is not read; the unchecked solve and pass 2);
//   fused: each row's test (the same one: bad_pivot | unsafe_growth against the same scale)
//     OR-ed into one predicate, no index and no branch per row; on the failure path only,
//     the rows are swept again (first_failing_row) to name the same first row. The flag is
//     raised exactly where the runtime form raises it, with the same position.
// lane_reduce takes it as a template argument, reduce_rows (sub_reduce, tile_reduce) as
// Fused = (Check == fused).
enum class LaneCheck { runtime, off, fused };

// A row's test as a value (no short-circuit branch): bad_pivot(piv, r, scale, tol) ||
// unsafe_growth(piv, b, scale), scale = row_scale(a, b, c), the same verdict on every input,
// without the maximum: the growth g = |b - piv| exceeds k max(|a|, |b|, |c|) iff it is above
// k |a|, k |b| and k |c| (k x is exact or overflows alike), written !(g <= k |x|) so that a NaN
// coefficient drops out as fmax drops it (a NaN in a or b makes the pivot NaN: bad_pivot's).
// sm_90, fp64: the maximum's compares and selects were most of the test's instructions.
template <class T>
ADI_LARGE_HD bool row_fails(T piv, T r, T a, T b, T c, T tol, bool c_out = false) {
  bool f = !(r - r == T(0)) | (r == T(0));
  if (tol > T(0)) f = f || !(std::fabs(piv) > tol * row_scale(a, b, c_out ? T(0) : c));
#if ADI_THOMAS_CHECK
  const T g = std::fabs(b - piv), k = T(common::kThomasGrowth);
  f |= !(g <= k * std::fabs(a)) & !(g <= k * std::fabs(b)) & (c_out | !(g <= k * std::fabs(c)));
#endif
  return f;
}

// The failure path of the fused check: pass 1's sweep over rows [s, e) of (a, b, c) again
// (d is not needed: the pivots depend on a, b, c only), returning the first row whose test
// fails, as the runtime form finds it; row c_zero's c is left out of the scale (the last
// row of a non-periodic system or level; -1: none). s if no row fails (cannot happen: the
// same arithmetic on the same values; the flag is raised either way).
template <class T>
ADI_LARGE_HD i64 first_failing_row(const T* a, const T* b, const T* c, i64 s, i64 e, i64 c_zero, T tol) {
  Pass1<T, T> st;
  st.first_row(a[s], b[s], c[s], T(0));
#pragma unroll 1
  for (i64 i = s + 1; i < e; ++i) {
    const T ai = a[i], bi = b[i], ci = c[i];
    T r;
    const T piv = st.row(ai, bi, ci, T(0), i + 1 < e, r);
    if (row_fails(piv, r, ai, bi, ci, tol, i == c_zero)) return i;
  }
  return s;
}

// Pass 1 over rows [s, e) of (a, b, c, d) (e - s >= 2): the two reduced rows, and with
// kcp the sweep's cp, dp, l at each row's index. check: first bad pivot row or -1; the
// c of row e-1 is left out of the tiny-pivot scale when last_c_out.
// Fused: the check as LaneCheck::fused (one predicate, the row found again on failure).
template <class T, bool Fused = false>
ADI_LARGE_HD int reduce_rows(const T* a, const T* b, const T* c, const T* d, int s, int e, ReducedRows<T>& out,
                             T* kcp, T* kdp, T* kl, bool check, T tol, bool last_c_out) {
  Pass1<T, T> st;
  st.first_row(a[s], b[s], c[s], d[s]);
  int bad = -1;
  bool fails = false;  // Fused
  for (int i = s + 1; i < e; ++i) {
    T r;
    const T piv = st.row(a[i], b[i], c[i], d[i], i + 1 < e, r);
    if constexpr (Fused) {
      fails |= row_fails(piv, r, a[i], b[i], c[i], tol, last_c_out && i == e - 1);
    } else if (check && bad < 0) {
      const T ci = (last_c_out && i == e - 1) ? T(0) : c[i];
      const T scale = row_scale(a[i], b[i], ci);
      if (bad_pivot(piv, r, scale, tol) || unsafe_growth(piv, b[i], scale)) bad = i;
    }
    if (kcp != nullptr) {
      kcp[i] = st.cp;
      kdp[i] = st.dp;
      kl[i] = st.l;
    }
  }
  out = st.rows();
  if constexpr (Fused)
    if (check && fails) bad = static_cast<int>(first_failing_row<T>(a, b, c, s, e, last_c_out ? e - 1 : -1, tol));
  return bad;
}

// With rows [s, e) reduced by reduce_rows (keeping cp, dp, l) and the ends F = x_s,
// E = x_{e-1} known: every x_i.
template <class T>
ADI_LARGE_HD void back_rows(const T* kcp, const T* kdp, const T* kl, int s, int e, T F, T E, T* x) {
  T next = E;
  x[e - 1] = E;
  for (int i = e - 2; i > s; --i) {
    next = (kdp[i] - kl[i] * F) - kcp[i] * next;
    x[i] = next;
  }
  x[s] = F;
}

// What pass 2 keeps of each row of a lane's chunk.
template <class T, int M>
struct LaneRows {
  T cp[M], dp[M], l[M];
  int len;
};

ADI_LARGE_HD i64 tile_count(const Chunks& ch) { return (ch.count + kTileChunks - 1) / kTileChunks; }
// Rows of the tile's reduced system (2 per chunk; the last tile may be partial).
ADI_LARGE_HD int tile_rows(const Chunks& ch, i64 tile) {
  const i64 left = ch.count - tile * kTileChunks;
  return 2 * static_cast<int>(left < kTileChunks ? left : kTileChunks);
}

template <class T>
ADI_LARGE_HD void raise_flag(const Level<T>& L, i64 row) {
  if (L.flag == nullptr) return;
  i64 r = row * L.row_scale;
  if (r > L.n0 - 1) r = L.n0 - 1;
  const unsigned long long v = L.bias - static_cast<unsigned long long>(r);
#if defined(__CUDA_ARCH__)
  atomicMax(L.flag, v);
#else
  if (*L.flag < v) *L.flag = v;
#endif
}

// Loads rows [s, s+len) of p into r[0..len) (len <= M). 16-byte vector loads on the
// device when the chunk is full and aligned; `nc`: through the read-only cache (never for
// d, which pass 2 may overwrite in place).
template <class T, int M, bool NC>
ADI_LARGE_HD void load_rows(const T* p, i64 s, int len, T (&r)[M]) {
#if defined(__CUDA_ARCH__)
  constexpr int V = 16 / sizeof(T);
  const T* q = p + s;
  if (len == M && M % V == 0 && (reinterpret_cast<std::uintptr_t>(q) & 15) == 0) {
#pragma unroll
    for (int i = 0; i < M; i += V) {
      if constexpr (sizeof(T) == 8) {
        const double2 v = NC ? __ldg(reinterpret_cast<const double2*>(q + i)) : *reinterpret_cast<const double2*>(q + i);
        r[i] = v.x;
        r[i + 1] = v.y;
      } else {
        const float4 v = NC ? __ldg(reinterpret_cast<const float4*>(q + i)) : *reinterpret_cast<const float4*>(q + i);
        r[i] = v.x;
        r[i + 1] = v.y;
        r[i + 2] = v.z;
        r[i + 3] = v.w;
      }
    }
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < M; ++i) r[i] = i < len ? p[s + i] : T(0);
}

template <class T, int M>
ADI_LARGE_HD void store_rows(T* p, i64 s, int len, const T (&r)[M]) {
#if defined(__CUDA_ARCH__)
  constexpr int V = 16 / sizeof(T);
  T* q = p + s;
  if (len == M && M % V == 0 && (reinterpret_cast<std::uintptr_t>(q) & 15) == 0) {
#pragma unroll
    for (int i = 0; i < M; i += V) {
      if constexpr (sizeof(T) == 8) {
        *reinterpret_cast<double2*>(q + i) = make_double2(r[i], r[i + 1]);
      } else {
        *reinterpret_cast<float4*>(q + i) = make_float4(r[i], r[i + 1], r[i + 2], r[i + 3]);
      }
    }
    return;
  }
#endif
#pragma unroll
  for (int i = 0; i < M; ++i)
    if (i < len) p[s + i] = r[i];
}

// The staged form of the loads: the warp copies its tile's rows of a, b, c, d (and, in
// pass 2, u) between global memory and shared memory with coalesced 16-byte vectors,
// 512 contiguous bytes per instruction; lanes then read their chunks from shared memory.
// Each lane's direct 16-byte loads touch 32 separate 64-byte segments per instruction,
// which costs L1 a wavefront per lane (bench_cuda_large_tridiagonal: ~83% of copy
// bandwidth per pass). Row r of the tile sits at r + r / M: one pad per chunk, so 32
// lanes reading row i of their chunks hit 32 different banks.
template <class T, int M>
struct TileStage {
  static constexpr int kRows = kTileChunks * M;
  T v[4][kRows + kTileChunks];
  static ADI_LARGE_HD int at(int r) { return r + r / M; }
};

// Rows [t0, t1) of this level that the tile covers (its chunks are contiguous).
ADI_LARGE_HD void tile_span(const Chunks& ch, i64 tile, i64& t0, i64& t1) {
  const i64 first = tile * kTileChunks;
  const i64 last = first + kTileChunks - 1 < ch.count - 1 ? first + kTileChunks - 1 : ch.count - 1;
  t0 = ch.begin(first);
  t1 = ch.end(last);
}

template <class T>
ADI_LARGE_HD bool aligned16(const T* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0;
}

// Copies one array's rows [t0, t1) into the stage (lane's share of the copy).
template <class T, int M, bool NC>
ADI_LARGE_HD void stage_in(const T* p, i64 t0, int rows, int lane, T* v) {
  using St = TileStage<T, M>;
#if defined(__CUDA_ARCH__)
  constexpr int V = 16 / sizeof(T);
  if (rows == St::kRows && aligned16(p + t0)) {
#pragma unroll
    for (int k = 0; k < St::kRows / V / kTileChunks; ++k) {
      const int w = lane + kTileChunks * k;
      const T* q = p + t0 + w * V;
      if constexpr (sizeof(T) == 8) {
        const double2 x = NC ? __ldg(reinterpret_cast<const double2*>(q)) : *reinterpret_cast<const double2*>(q);
        v[St::at(w * V)] = x.x;
        v[St::at(w * V + 1)] = x.y;
      } else {
        const float4 x = NC ? __ldg(reinterpret_cast<const float4*>(q)) : *reinterpret_cast<const float4*>(q);
        v[St::at(w * V)] = x.x;
        v[St::at(w * V + 1)] = x.y;
        v[St::at(w * V + 2)] = x.z;
        v[St::at(w * V + 3)] = x.w;
      }
    }
    return;
  }
#endif
  for (int r = lane; r < rows; r += kTileChunks) v[St::at(r)] = p[t0 + r];
}

template <class T, int M>
ADI_LARGE_HD void stage_out(T* p, i64 t0, int rows, int lane, const T* v) {
  using St = TileStage<T, M>;
#if defined(__CUDA_ARCH__)
  constexpr int V = 16 / sizeof(T);
  if (rows == St::kRows && aligned16(p + t0)) {
#pragma unroll
    for (int k = 0; k < St::kRows / V / kTileChunks; ++k) {
      const int w = lane + kTileChunks * k;
      T* q = p + t0 + w * V;
      if constexpr (sizeof(T) == 8) {
        *reinterpret_cast<double2*>(q) = make_double2(v[St::at(w * V)], v[St::at(w * V + 1)]);
      } else {
        *reinterpret_cast<float4*>(q) =
            make_float4(v[St::at(w * V)], v[St::at(w * V + 1)], v[St::at(w * V + 2)], v[St::at(w * V + 3)]);
      }
    }
    return;
  }
#endif
  for (int r = lane; r < rows; r += kTileChunks) p[t0 + r] = v[St::at(r)];
}

// Staged pass 1 / pass 2, every lane: the tile's a, b, c, d into the stage.
template <class T, int M>
ADI_LARGE_HD void stage_load(const Level<T>& L, const Chunks& ch, i64 tile, int lane, TileStage<T, M>& st) {
  i64 t0, t1;
  tile_span(ch, tile, t0, t1);
  const int rows = static_cast<int>(t1 - t0);
  stage_in<T, M, true>(L.a, t0, rows, lane, st.v[0]);
  stage_in<T, M, true>(L.b, t0, rows, lane, st.v[1]);
  stage_in<T, M, true>(L.c, t0, rows, lane, st.v[2]);
  stage_in<T, M, false>(L.d, t0, rows, lane, st.v[3]);  // d may be u: not through the read-only path
}

// Staged pass 2, every lane (after lane_solve wrote the tile's solution to st.v[0]).
template <class T, int M>
ADI_LARGE_HD void stage_store(const Level<T>& L, const Chunks& ch, i64 tile, int lane, const TileStage<T, M>& st) {
  i64 t0, t1;
  tile_span(ch, tile, t0, t1);
  stage_out<T, M>(L.x, t0, static_cast<int>(t1 - t0), lane, st.v[0]);
}

// Only the first failure is reported: a bad pivot fills the rest of its chunk, and the
// reduced systems after it, with infinities and NaNs whose own "bad pivots" would name
// rows before the real one. So a level whose predecessors raised the flag reports nothing
// (checks(L)), nor does a tile reduction after one of its lanes failed.
template <class T>
ADI_LARGE_HD Level<T> checks(Level<T> L) {
  if (L.flag != nullptr && *L.flag != 0) L.flag = nullptr;
  return L;
}

// Pass 1 (and the first half of pass 2) for one lane: its chunk's two reduced rows into
// sh rows 2 lane, 2 lane + 1; with keep, cp, dp, l of every row. Lanes past the last
// chunk do nothing. Returns true if the lane met a bad pivot (and raised the flag).
// stage: the tile's rows staged in shared memory (null: loaded straight from global).
// Check: LaneCheck above (off: L.flag must be null or is ignored).
template <class T, int M, LaneCheck Check = LaneCheck::runtime>
ADI_LARGE_HD bool lane_reduce(const Level<T>& L, const Chunks& ch, i64 tile, int lane, TileShared<T>& sh,
                              LaneRows<T, M>* keep, const TileStage<T, M>* stage = nullptr) {
  const i64 j = tile * kTileChunks + lane;
  if (j >= ch.count) return false;
  const i64 s = ch.begin(j);
  const int len = static_cast<int>(ch.end(j) - s);
  T a[M], b[M], c[M], d[M];
  if (stage != nullptr) {
    i64 t0, t1;
    tile_span(ch, tile, t0, t1);
    const int r0 = static_cast<int>(s - t0);
#pragma unroll
    for (int i = 0; i < M; ++i) {
      const int at = TileStage<T, M>::at(r0 + i);
      a[i] = i < len ? stage->v[0][at] : T(0);
      b[i] = i < len ? stage->v[1][at] : T(0);
      c[i] = i < len ? stage->v[2][at] : T(0);
      d[i] = i < len ? stage->v[3][at] : T(0);
    }
  } else {
    load_rows<T, M, true>(L.a, s, len, a);
    load_rows<T, M, true>(L.b, s, len, b);
    load_rows<T, M, true>(L.c, s, len, c);
    load_rows<T, M, false>(L.d, s, len, d);
  }
  Pass1<T, T> st;
  st.first_row(a[0], b[0], c[0], d[0]);
  i64 bad = -1;
  bool fails = false;  // fused
  // fused: the row of this chunk that is the level's last (its c is not part of a
  // non-periodic system), found once: one int compare a row instead of a 64-bit one.
  int last = -1;
  if constexpr (Check == LaneCheck::fused)
    if (!L.periodic && L.N - s <= M) last = static_cast<int>(L.N - 1 - s);
#pragma unroll
  for (int i = 1; i < M; ++i) {
    if (i < len) {
      T r;
      const T piv = st.row(a[i], b[i], c[i], d[i], i + 1 < len, r);
      if constexpr (Check == LaneCheck::runtime) {
        if (L.flag != nullptr && bad < 0) {
          // c[N-1] of a non-periodic system is not part of it.
          const T ci = (s + i == L.N - 1 && !L.periodic) ? T(0) : c[i];
          const T scale = row_scale(a[i], b[i], ci);
          if (bad_pivot(piv, r, scale, L.tol) || unsafe_growth(piv, b[i], scale)) bad = s + i;
        }
      } else if constexpr (Check == LaneCheck::fused) {
        fails |= row_fails(piv, r, a[i], b[i], c[i], L.tol, i == last);
      }
      if (keep) {
        keep->cp[i] = st.cp;
        keep->dp[i] = st.dp;
        keep->l[i] = st.l;
      }
    }
  }
  if (keep) keep->len = len;
  if constexpr (Check == LaneCheck::fused)
    if (fails && L.flag != nullptr)  // the failure path only
      bad = first_failing_row<T>(L.a, L.b, L.c, s, s + len, L.periodic ? -1 : L.N - 1, L.tol);
  if (bad >= 0) raise_flag(L, bad);
  const ReducedRows<T> rr = st.rows();
  put_reduced_rows(sh.a, sh.b, sh.c, sh.d, lane, rr);
  return bad >= 0;
}

// The tile's rows split among lanes 0..kSubLanes-1 (Chunks of kSubRows over the tile's rows).
ADI_LARGE_HD Chunks sub_chunks(const Chunks& ch, i64 tile) { return Chunks::make(tile_rows(ch, tile), kSubRows); }

// Pass 1 and 2, lanes 0..3: sub-chunk q of the tile's rows reduced to rows 2q, 2q+1 of the
// innermost system (keep: with each row's cp, dp, l, for pass 2). check: report a bad
// pivot (pass 1, when no lane of the tile failed). Returns true if one was found.
template <class T, bool Fused = false>
ADI_LARGE_HD bool sub_reduce(const Level<T>& L, const Chunks& ch, i64 tile, int q, TileShared<T>& sh, bool keep,
                             bool check) {
  const Chunks sub = sub_chunks(ch, tile);
  if (q >= sub.count) return false;
  const int s = static_cast<int>(sub.begin(q)), e = static_cast<int>(sub.end(q));
  const bool last_row_of_level = tile == tile_count(ch) - 1 && q == sub.count - 1 && !L.periodic;
  ReducedRows<T> rr;
  const int bad = reduce_rows<T, Fused>(sh.a, sh.b, sh.c, sh.d, s, e, rr, keep ? sh.cs : nullptr, sh.ds, sh.ls,
                                 check && L.flag != nullptr, L.tol, last_row_of_level);
  put_reduced_rows(sh.sa, sh.sb, sh.sc, sh.sd, q, rr);
  if (bad >= 0) {  // tile row i is row F or E of chunk tile*32 + i/2 of this level
    const i64 j = tile * kTileChunks + bad / 2;
    raise_flag(L, bad % 2 == 0 ? ch.begin(j) : ch.end(j) - 1);
  }
  return bad >= 0;
}

// Pass 1, lane 0: the innermost system reduced to rows 2 tile, 2 tile + 1 of the next
// level. earlier_bad: some lane of the tile already failed (then this reports nothing).
template <class T, bool Fused = false>
ADI_LARGE_HD void tile_reduce(const Level<T>& L, const Chunks& ch, i64 tile, const TileShared<T>& sh,
                              bool earlier_bad) {
  const Chunks sub = sub_chunks(ch, tile);
  const int rows = 2 * static_cast<int>(sub.count);
  const bool last_row_of_level = tile == tile_count(ch) - 1 && !L.periodic;
  ReducedRows<T> rr;
  const int bad = reduce_rows<T, Fused>(sh.sa, sh.sb, sh.sc, sh.sd, 0, rows, rr, nullptr, nullptr, nullptr,
                                 L.flag != nullptr && !earlier_bad, L.tol, last_row_of_level);
  if (bad >= 0) {  // innermost row i is row F or E of sub-chunk i/2, a tile row
    const int q = bad / 2;
    const int trow = static_cast<int>(bad % 2 == 0 ? sub.begin(q) : sub.end(q) - 1);
    const i64 j = tile * kTileChunks + trow / 2;
    raise_flag(L, trow % 2 == 0 ? ch.begin(j) : ch.end(j) - 1);
  }
  put_reduced_rows(L.ra, L.rb, L.rc, L.rd, tile, rr);
}

// Pass 2, lane 0: the innermost system solved with the tile's first and last row known
// from the next level, into sh.sx.
template <class T>
ADI_LARGE_HD void tile_solve(const Level<T>& L, const Chunks& ch, i64 tile, TileShared<T>& sh) {
  const int rows = 2 * static_cast<int>(sub_chunks(ch, tile).count);
  ReducedRows<T> rr;
  reduce_rows<T>(sh.sa, sh.sb, sh.sc, sh.sd, 0, rows, rr, sh.scs, sh.sds, sh.sls, false, T(0), false);
  back_rows<T>(sh.scs, sh.sds, sh.sls, 0, rows, L.rx[2 * tile], L.rx[2 * tile + 1], sh.sx);
}

// Pass 2, lanes 0..3: sub-chunk q's rows from its ends, into sh.x.
template <class T>
ADI_LARGE_HD void sub_solve(const Chunks& ch, i64 tile, int q, TileShared<T>& sh) {
  const Chunks sub = sub_chunks(ch, tile);
  if (q >= sub.count) return;
  back_rows<T>(sh.cs, sh.ds, sh.ls, static_cast<int>(sub.begin(q)), static_cast<int>(sub.end(q)), sh.sx[2 * q],
               sh.sx[2 * q + 1], sh.x);
}

// Pass 2, every lane: back substitution through its chunk with its ends from sh.x.
// stage: write the rows to stage->v[0] for stage_store (null: straight to global).
template <class T, int M>
ADI_LARGE_HD void lane_solve(const Level<T>& L, const Chunks& ch, i64 tile, int lane, const TileShared<T>& sh,
                             const LaneRows<T, M>& keep, TileStage<T, M>* stage = nullptr) {
  const i64 j = tile * kTileChunks + lane;
  if (j >= ch.count) return;
  const i64 s = ch.begin(j);
  const int len = keep.len;
  const T F = sh.x[2 * lane], E = sh.x[2 * lane + 1];
  T x[M];
  T next = E;
#pragma unroll
  for (int i = M - 1; i >= 1; --i) {
    if (i == len - 1) {
      next = E;
    } else if (i < len - 1) {
      next = (keep.dp[i] - keep.l[i] * F) - keep.cp[i] * next;
    }
    x[i] = next;
  }
  x[0] = F;
  if (stage != nullptr) {
    i64 t0, t1;
    tile_span(ch, tile, t0, t1);
    const int r0 = static_cast<int>(s - t0);
#pragma unroll
    for (int i = 0; i < M; ++i)
      if (i < len) stage->v[0][TileStage<T, M>::at(r0 + i)] = x[i];
    return;
  }
  store_rows<T, M>(L.x, s, len, x);
}

// The last level: one thread.
template <class T>
ADI_LARGE_HD void direct_solve(const Level<T>& L, T* cp, T* z) {
  const i64 bad = solve_direct<T>(L.N, L.a, L.b, L.c, L.d, L.x, cp, z, L.periodic, L.tol);
  if (bad >= 0 && L.flag != nullptr) raise_flag(L, bad);
}

// The levels of one solve: sizes and where each level's arrays live in the workspace.
struct LevelPlan {
  static constexpr int kMaxLevels = 16;
  int levels = 0;             // levels[0] is the system itself; the last is solved directly
  i64 N[kMaxLevels] = {};     // rows per level
  i64 scale[kMaxLevels] = {};  // original rows per row (about)
  std::size_t offset[kMaxLevels] = {};  // level L >= 1: a, b, c, d, x of N[L] values each
  std::size_t direct_offset = 0;        // cp, z of N[last] values
  std::size_t bytes = 0;

  static std::size_t aligned(std::size_t b) { return (b + 255) / 256 * 256; }
  static LevelPlan make(i64 n, int M, std::size_t vs) {
    LevelPlan p;
    i64 N = n, scale = 1;
    std::size_t at = 0;
    for (;;) {
      p.N[p.levels] = N;
      p.scale[p.levels] = scale;
      if (p.levels > 0) {
        p.offset[p.levels] = at;
        at += 5 * aligned(static_cast<std::size_t>(N) * vs);
      }
      ++p.levels;
      if (N <= kDirectMax || p.levels == kMaxLevels) break;
      const Chunks ch = Chunks::make(N, M);
      const i64 next = 2 * tile_count(ch);
      scale = scale * (N / next > 1 ? N / next : 1);
      N = next;
    }
    p.direct_offset = at;
    at += 2 * aligned(static_cast<std::size_t>(p.N[p.levels - 1]) * vs);
    p.bytes = at;
    return p;
  }
};

// Fills L[0 .. plan.levels) for one solve: level 0 is the user's system (solution into u),
// level l >= 1 lives in the workspace at plan.offset[l]; each level's reduced system is
// the next level's. Shared by the CUDA driver and the host emulation in the tests.
template <class T>
inline void make_levels(const LevelPlan& plan, i64 n, const T* a, const T* b, const T* c, const T* d, T* u,
                        bool periodic, double tol, unsigned long long* flag, unsigned long long bias, void* workspace,
                        Level<T>* L) {
  char* base = static_cast<char*>(workspace);
  for (int l = 0; l < plan.levels; ++l) {
    const std::size_t arr = LevelPlan::aligned(static_cast<std::size_t>(plan.N[l]) * sizeof(T));
    Level<T>& v = L[l];
    if (l == 0) {
      v.a = a;
      v.b = b;
      v.c = c;
      v.d = d;
      v.x = u;
    } else {
      char* q = base + plan.offset[l];
      v.a = reinterpret_cast<T*>(q);
      v.b = reinterpret_cast<T*>(q + arr);
      v.c = reinterpret_cast<T*>(q + 2 * arr);
      v.d = reinterpret_cast<T*>(q + 3 * arr);
      v.x = reinterpret_cast<T*>(q + 4 * arr);
    }
    v.N = plan.N[l];
    v.periodic = periodic;
    v.tol = static_cast<T>(tol);
    v.flag = flag;
    v.bias = bias;
    v.row_scale = plan.scale[l];
    v.n0 = n;
    v.ra = v.rb = v.rc = v.rd = nullptr;
    v.rx = nullptr;
  }
  for (int l = 0; l + 1 < plan.levels; ++l) {
    L[l].ra = const_cast<T*>(L[l + 1].a);
    L[l].rb = const_cast<T*>(L[l + 1].b);
    L[l].rc = const_cast<T*>(L[l + 1].c);
    L[l].rd = const_cast<T*>(L[l + 1].d);
    L[l].rx = L[l + 1].x;
  }
}
// The direct level's scratch (cp, z).
template <class T>
inline T* direct_scratch(const LevelPlan& plan, void* workspace, int which) {
  const std::size_t arr = LevelPlan::aligned(static_cast<std::size_t>(plan.N[plan.levels - 1]) * sizeof(T));
  return reinterpret_cast<T*>(static_cast<char*>(workspace) + plan.direct_offset + which * arr);
}

}  // namespace adi::large
