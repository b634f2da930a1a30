#pragma once
// y of the per-line SPIKE form by truncated sweeps (stop 40, h-publocal): host loops of
// adi/mpi/distributed_tridiagonal.cpp and the device kernel of solvers/cuda/partition_local_passes.cu
// run this one function. Apart from partition_core.hpp (included by most CUDA units) so that a
// change here rebuilds two units.
#include <type_traits>

#include "solvers/common/partition_core.hpp"

namespace adi::common {

// y of the per-line SPIKE form by truncated sweeps, in parts (DistributedOptions::spike_y_stream,
// ADI_SPIKE_Y_STREAM; stop 40, h-publocal): A y = d on a segment of m rows whose ends are cut
// (a_0, c_{m-1} not read), one caller (a GPU thread) per part [r0, r1) of a line, u written there
// only. The same decay that truncates the spikes truncates Thomas's sweeps: the forward sweep
// starts G rows before r0 from a cut (c*, y* of the row before taken as 0), whose error dies by
// prod |a_i / pivot_i| over those G rows; the backward sweep runs in chunks of C rows, each from
// G rows past the chunk's end with x = 0 there, whose error dies by prod |c*_i| over those G rows.
// (c*, y*) live in a ring of K >= C + G rows (ring.put(slot, cs, ys) / ring.get(slot, cs, ys);
// a GPU thread's slots in shared memory), so a, b, c, d are read on (r1 - r0 + 2G) rows and u
// written once: per line (1 + 2G S / m) x 4 reads + 1 write for S parts, against the single-
// device kernels' 5 arrays at best (or 9 with c*, y* through memory). Checked, as the spike
// windows are: each truncation's product must be below kSpikeTol (1e-3 epsilon, relative to the
// line's values) and every value finite; false otherwise (the caller must not use u: the plan
// falls back to the partition passes). A truncation that reaches the segment's end is exact.
// D rows' loads are issued before their rows are made (hint(i): the caller's look-ahead, e.g. an
// L2 request); Pipe: and the next D rows' loads before those rows are made (two register
// buffers). u must not alias d (a part reads G rows past its ends, which its neighbours write).
template <class T>
struct SpikeYShape {
  static constexpr int K = 48;                          // ring rows
  static constexpr int G = sizeof(T) >= 8 ? 40 : 24;  // rows of decay at each truncation
  static constexpr int C = K - G;                       // rows emitted per backward chunk
};
// Parts per line: as many as `resident` threads give every line (the device fills one wave), at
// most one per 4G rows, at least 1.
template <class I>
ADI_THOMAS_HD I spike_y_parts(I m, I lines, I resident, I G) {
  I s = lines > 0 ? resident / lines : I(1);
  const I most = m / (4 * G);
  s = s < most ? s : most;
  return s > 0 ? s : I(1);
}
#if defined(__CUDACC__)
#define ADI_SPIKE_UNROLL _Pragma("unroll")
#else
#define ADI_SPIKE_UNROLL
#endif
// The pipelined path's batch loads: row by row through the bands (with hint) unless the caller
// passes a loader with `enabled` true, which loads a whole batch of D rows from `row` on itself in
// two steps: batch.load(row, ra, rb, rc, rd) when the batch is fetched (the loads in flight while
// the batch before is made) and batch.arrange(row, ra, rb, rc, rd) just before the batch is made
// (the values to the lanes they belong to, or to what they stand for: anything that consumes a
// loaded value belongs there, not in load, or the loads wait at once). Both are called by every
// GPU lane of a warp together where the parts of a warp have the same shape: the single-system
// kernel's coalesced warp loads (thomas_truncated.cuh, WarpRows); the variable batches' lanes in
// step (thomas_variable.cuh, LaneRows: identity rows past a system chosen at arrange).
struct RowLoads {
  static constexpr bool enabled = false;
  static constexpr bool stores = false;  // true: a whole group's u too (batch.put(j, x), batch.store(row))
  template <class... A>
  ADI_THOMAS_HD void load(A&&...) const {}
  template <class... A>
  ADI_THOMAS_HD void arrange(A&&...) const {}
};

// One system of n rows solved in parts of P rows as a padded system of G + S P + G rows (S parts;
// padded row p is the system's row p - pad, pad = G): rows outside [pad, pad + n) are identity rows
// (b = 1, a = c = d = 0, so their x is 0 and they couple to nothing) and a_0, c_{n-1} read as 0 (a
// non-periodic system ignores them). Every part then has the same shape (the first one's forward
// sweep starts at padded row 0, a cut that is exact; the last one's end reaches the padded end),
// so the lanes of a warp run the same steps: thomas_truncated.cuh's single-system kernel. Which:
// 0 a, 1 b, 2 c, 3 d.
template <class T, int Which, class I>
struct PaddedBand {
  const T* p;
  I n, pad;
  ADI_THOMAS_HD bool holds(I o) const {  // o: the system's row
    return Which == 0 ? o >= 1 && o < n : Which == 2 ? o >= 0 && o < n - 1 : o >= 0 && o < n;
  }
  static ADI_THOMAS_HD T fill() { return Which == 1 ? T(1) : T(0); }
  ADI_THOMAS_HD T operator[](I r) const {
    const I o = r - pad;
    return holds(o) ? p[o] : fill();
  }
};
// u of the padded system: the system's rows written, the padding's x (0) dropped into `sink`.
template <class T, class I>
struct PaddedOut {
  T* p;
  I n, pad;
  T* sink;  // one scratch value of the caller's
  ADI_THOMAS_HD T& operator[](I r) const {
    const I o = r - pad;
    return o >= 0 && o < n ? p[o] : *sink;
  }
};
// Parts of the padded form: P rows each (a multiple of D, at least 4G), about `parts` of them.
template <class I>
ADI_THOMAS_HD I spike_padded_rows(I n, I parts, I G, I D) {
  I P = parts > 0 ? (n + parts - 1) / parts : n;
  if (P < 4 * G) P = 4 * G;
  return (P + D - 1) / D * D;
}

// Growth (the single-device cuda_thomas_truncated): also refuse where a row's multiplier |c*_i|
// exceeds kThomasGrowth (thomas_check.hpp's device test, the one the exact kernels apply), so a
// line Thomas without pivoting would not take is refused too, not only one that decays slowly.
template <int D = 8, bool Pipe = false, bool Growth = false, class I, class Band, class DBand, class Out,
          class Ring, class Hint, class Batch = RowLoads, class BandB = Band, class BandC = Band>
ADI_THOMAS_HD bool spike_y_part(I m, I r0, I r1, I G, I C, I K, const Band& a, const BandB& b, const BandC& c,
                                const DBand& d, const Out& u, const Ring& ring, const Hint& hint,
                                const Batch& batch = Batch{}) {
  using T = std::remove_cv_t<std::remove_reference_t<decltype(u[0])>>;
  auto mag = [](T v) { return v < T(0) ? -v : v; };
  const T tol = kSpikeTol<T>;
  const I f0 = r0 > G ? r0 - G : I(0);
  T cs = T(0), ys = T(0), fprod = T(1), sum = T(0);
  bool ok = true;
  I i = f0, slot = f0 % K;  // the next row of the forward sweep and its ring slot
  // One step of the forward sweep: row `row` into ring slot s. Interior (std::true_type): not the
  // cut, past the forward decay check, before the line's last row, so none of those tests.
  auto step = [&](auto interior, I row, auto s, T ar, T br, T cr, T dr) {
    constexpr bool in = decltype(interior)::value;
    const T ak = !in && row == f0 ? T(0) : ar;  // the cut (row 0: the segment's own end)
    const T r = T(1) / thomas_pivot(ak, br, cs);
    if constexpr (!in)
      if (f0 > 0 && row <= r0) fprod = fprod * mag(ar * r);  // (row f0: the dropped coupling's own factor)
    cs = in || row < m - 1 ? cr * r : T(0);
    if constexpr (Growth)
      if (thomas_unsafe_multiplier(cs)) ok = false;
    ys = thomas_eliminate(dr, ak, ys, r);
    ring.put(s, cs, ys);
  };
  auto forward = [&](I row, T ar, T br, T cr, T dr) {  // row of the forward sweep into the ring
    step(std::false_type{}, row, slot, ar, br, cr, dr);
    slot = slot + 1 == K ? I(0) : slot + 1;
  };
  // One step of a backward sweep: row `row` from ring slot s; past the chunk's end (decay) the
  // truncation's decay product taken, else u written.
  // (emit(row, x): where u's row goes; u[row] but for the warp-stored groups of the pipelined path)
  auto back_step_to = [&](T& x, T& bprod, auto s, bool decay, I row, const auto& emit) {
    T csk, ysk;
    ring.get(s, csk, ysk);
    x = thomas_substitute(ysk, csk, x);
    if (decay) {
      bprod = bprod * mag(csk);
    } else {
      emit(row, x);
      sum = sum + x;
    }
  };
  auto back_step = [&](T& x, T& bprod, auto s, bool decay, I row) {
    back_step_to(x, bprod, s, decay, row, [&](I r, T v) { u[r] = v; });
  };
  auto backward = [&](I q, I qe, I h) {  // rows [q, qe) from row h back (x_{h+1} taken as 0)
    T x = T(0), bprod = T(1);
    I s = slot == 0 ? K - 1 : slot - 1;  // row h's slot (the forward sweep has just made row h)
    for (I k = h; k >= q; --k) {
      back_step(x, bprod, s, k >= qe, k);
      s = s == 0 ? K - 1 : s - 1;
    }
    if (h < m - 1 && !(bprod <= tol)) ok = false;
  };
  auto chunk_end = [&](I q, I& qe, I& h) {  // chunk [q, qe) and the row its backward sweep starts from
    qe = q + C < r1 ? q + C : r1;
    h = qe + G < m ? qe + G - 1 : m - 1;
  };
  const I hend = (r1 + G < m ? r1 + G : m) - 1;  // the last row any chunk reads
  // Pipe: batches of D rows double-buffered (the next batch's loads in flight while this one is
  // made), each chunk's backward sweep right after the batch that completes it; needs every chunk
  // to end on a batch's end (its rows then still in the ring): f0, C and G aligned to D. Rows are
  // counted from f0 in int (t = row - f0; parts below 2^30 rows) and row t's ring slot is t mod K:
  // with K = C + G a multiple of D, a batch's D rows (and a backward group's) have D consecutive
  // slots, so the unrolled bodies address the ring at constant offsets from one base a batch, and
  // an interior batch (not the cut, not in the forward decay check, not the line's last row,
  // full) and a backward group wholly past or before the chunk's end test nothing per row: the
  // plain path's step and back_step, their tests dropped at compile time (stop 43: the kernel
  // issued ~270 instructions a row and was bound by issue, not by memory, on the H200).
  if (Pipe && (r0 - f0) % D == 0 && C % D == 0 && G % D == 0 && r1 > r0 && m - f0 < (I(1) << 30)) {
    constexpr int NB = 2;  // (NB = 3, 16 rows ahead, was form 5 at stop 42: 255 registers in fp64,
                           // 17% slower than NB = 2 on an H200 at stop 43, docs/mpi.md)
    const int KK = int(K), tend = int(hend - f0), tr0 = int(r0 - f0), tlast = int(m - 1 - f0);
    I q = r0, qe = 0, h = 0;
    chunk_end(q, qe, h);
    T ba[NB][D] = {}, bb[NB][D] = {}, bc[NB][D] = {}, bd[NB][D] = {};  // (indices constant once unrolled)
    int t = 0;  // the next forward row, from f0
    auto load = [&](int s, int k, int from) {  // row from + k into buffer s
      const I row = f0 + I(from + k);
      hint(row);
      ba[s][k] = a[row], bb[s][k] = b[row], bc[s][k] = c[row], bd[s][k] = d[row];
    };
    auto fetch = [&](int from, int s) {
      if (from + D - 1 <= tend) {
        if constexpr (Batch::enabled) {
          batch.load(f0 + I(from), ba[s], bb[s], bc[s], bd[s]);
        } else {
          ADI_SPIKE_UNROLL
          for (int k = 0; k < D; ++k) load(s, k, from);
        }
      } else {
        ADI_SPIKE_UNROLL
        for (int k = 0; k < D; ++k)
          if (from + k <= tend) load(s, k, from);
      }
    };
    auto back = [&](int tq, int te, int th) {  // backward(q, qe, h) from f0: rows th .. tq, u below te
      T x = T(0), bprod = T(1);
      auto one = [&](int tr) { back_step(x, bprod, tr % KK, tr >= te, f0 + I(tr)); };
      int tt = th;
      for (; tt >= tq && (tt + 1) % D != 0; --tt) one(tt);  // (th below a batch's end: the part's last chunk)
      for (; tt >= tq; tt -= D) {  // rows g0 .. tt, slots base .. base + D - 1 (tq is aligned)
        const int g0 = tt + 1 - D, base = g0 % KK;
        if (g0 >= te) {
          ADI_SPIKE_UNROLL
          for (int j = D - 1; j >= 0; --j) back_step(x, bprod, base + j, true, f0 + I(g0 + j));
        } else if (tt < te) {
          if constexpr (Batch::stores) {  // the group's D rows of u stored by the warp together
            ADI_SPIKE_UNROLL
            for (int j = D - 1; j >= 0; --j)
              back_step_to(x, bprod, base + j, false, f0 + I(g0 + j), [&](I, T v) { batch.put(j, v); });
            batch.store(f0 + I(g0));
          } else {
            ADI_SPIKE_UNROLL
            for (int j = D - 1; j >= 0; --j) back_step(x, bprod, base + j, false, f0 + I(g0 + j));
          }
        } else {
          for (int j = D - 1; j >= 0; --j) one(g0 + j);
        }
      }
      if (th < tlast && !(bprod <= tol)) ok = false;
    };
    auto make = [&](int s) {
      const int base = t % KK;
      if constexpr (Batch::enabled)
        if (t + D - 1 <= tend) batch.arrange(f0 + I(t), ba[s], bb[s], bc[s], bd[s]);  // (fetched by batch.load)
      if (t > 0 && t + D - 1 <= tend && (f0 == 0 || t > tr0) && t + D - 1 < tlast) {
        ADI_SPIKE_UNROLL
        for (int k = 0; k < D; ++k)
          step(std::true_type{}, f0 + I(t + k), base + k, ba[s][k], bb[s][k], bc[s][k], bd[s][k]);
      } else {
        ADI_SPIKE_UNROLL
        for (int k = 0; k < D; ++k)
          if (t + k <= tend)
            step(std::false_type{}, f0 + I(t + k), base + k, ba[s][k], bb[s][k], bc[s][k], bd[s][k]);
      }
      t = tend - t + 1 < D ? tend + 1 : t + D;
      while (q < r1 && f0 + I(t) > h) {  // (at most one chunk after the first: C >= D)
        back(int(q - f0), int(qe - f0), int(h - f0));
        q = qe;
        chunk_end(q, qe, h);
      }
    };
    ADI_SPIKE_UNROLL
    for (int s = 0; s + 1 < NB; ++s) fetch(t + s * D, s);  // NB - 1 batches ahead
    while (t <= tend) {
      ADI_SPIKE_UNROLL
      for (int s = 0; s < NB; ++s) {  // make batch s while the batch NB - 1 ahead loads into the slot before
        fetch(t + (NB - 1) * D, (s + NB - 1) % NB);
        make(s);
        if (t > tend) break;
      }
    }
  } else {
    auto advance = [&](I h) {  // the forward sweep through row h, D rows' loads at a time
      while (i <= h) {
        T ra[D], rb[D], rc[D], rd[D];
        ADI_SPIKE_UNROLL
        for (int k = 0; k < D; ++k)
          if (i + k <= h) {
            hint(i + k);
            ra[k] = a[i + k], rb[k] = b[i + k], rc[k] = c[i + k], rd[k] = d[i + k];
          }
        ADI_SPIKE_UNROLL
        for (int k = 0; k < D; ++k)
          if (i + k <= h) forward(i + k, ra[k], rb[k], rc[k], rd[k]);
        i = h - i + 1 < I(D) ? h + 1 : i + D;
      }
    };
    for (I q = r0; q < r1; q += C) {
      I qe = 0, h = 0;
      chunk_end(q, qe, h);
      advance(h);
      backward(q, qe, h);
    }
  }
  if (f0 > 0 && !(fprod <= tol)) ok = false;
  return ok && sum - sum == T(0);
}
#undef ADI_SPIKE_UNROLL

}  // namespace adi::common
