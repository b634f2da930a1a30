#pragma once
// The local passes of the distributed partition method (adi/mpi/distributed_tridiagonal.cpp)
// on a CUDA device, seen from plain C++ (no CUDA header). Implemented in
// solvers/cuda/partition_local_passes.cu when adi is built with CUDA; without CUDA the same
// list (ADI_CUDA_KERNEL) throws Unsupported. Workspaces are row-major over lines (alpha[i*lines + l]) so
// that neighbouring lines' threads touch neighbouring words.
//
// Parallelism: one thread per line leaves a GPU mostly idle when a rank holds few, long
// segments (the public case: 16,384 lines of 2048 rows per GPU). With S > 1 every line's
// segment is cut into S sub-segments, one thread each (level 1: the same reduction to two
// interface rows), and one thread per line then reduces the 2S-row chain of sub-segment
// interface rows to the segment's two rows (level 2); back-substitution runs the levels
// in reverse. The result is the same partition method with S times the threads.
#include <cstddef>
#include <string>

#include "adi/base/layout.hpp"
#include "solvers/common/partition_core.hpp"
#include "solvers/common/partition_reduced.hpp"
#include "solvers/cuda/kernel_list.hpp"
#include <new>

namespace adi::cuda_backend::partition {
ADI_CUDA_KERNELS_BEGIN


// Device workspace of a plan (S sub-segments per line segment of m rows, L lines):
// alpha, gamma m*L each (shared bands use the first m); with S > 1 also red1 8*S*L, w2 3*2S*L and sol1 2S*L values.
template <class T>
struct Workspace {
  T* alpha = nullptr;
  T* gamma = nullptr;
  T* red1 = nullptr;
  T* w2 = nullptr;
  T* sol1 = nullptr;
  int S = 1;
  // Lines of stride > 1 (along Y and Z): each thread loads its rows a chunk ahead of their
  // stores (several loads in flight instead of one; kPrefetch in the .cu); stride-1 lines
  // (along X): the row tiles filled and stored a batch of lines at a time (kTileBatch).
  // false: one row / one line at a time, the kernels before stop 31 (kept for a same-run
  // comparison).
  bool prefetch = true;
  // With prefetch (stop 32): rows also requested into L2 well ahead of the register loads
  // (Y, Z: kL2Ahead rows ahead; X: each line's next tile, one bulk prefetch per line and
  // array), so that more of DRAM's latency is hidden than two register buffers can; and along
  // X the stage's v read once per row (its neighbours by warp shuffle, the row before a tile
  // carried from the previous one) instead of three times across tile edges, and the X tiles
  // aligned to 64 bytes of memory (no sector split between two tiles). false: the stop 31
  // kernels. Used where it measured faster (2 x H200, stop 32): the passes of lines along Y
  // and Z with shared bands (the ADI stages). Along X and with per-line bands it was slower
  // (x split step 6.79 against 6.71 ms, the public case 0.99 against 0.83 ms): there only
  // with l2_everywhere (kept for comparison).
  bool l2_prefetch = true;
  bool l2_everywhere = false;
};

// Phase 1: rows eliminated (delta into u, the rest into the workspace) and the two reduced
// rows of every line into red[l*8 .. l*8+7] (a, b, c, d of rows 0 and m-1). shared: a, b,
// c are length-m arrays. A zero or non-finite pivot writes NaN into the line's reduced
// rows. Enqueued on `stream`.
template <class T>
ADI_CUDA_KERNEL(void reduce(const LineSet& lines, const T* a, const T* b, const T* c, bool shared, const T* d, T* u,
            const Workspace<T>& w, T* red, bool first_open, bool last_open, void* stream))

// An ADI stage's right-hand side, formed by the reduce pass as it loads each row instead of
// read from d (reduce_stage): row i of a line (node o, relative to the sweep's first node)
//   base[o]*inv_s + sum_q src_scale[q]*src[q][o] - (d_i v[o] - a_i v[o-stride] - c_i v[o+stride])
// with A's line coefficients a, d, c of this rank's segment (row i: a[i]); at the line's
// global ends (first_open / last_open) the Dirichlet value end[side][fi]*inv_s, or the
// inner formula without the missing neighbour plus nadd[side][fi] - nsub[side][fi]
// (fi = face_base + l0 + l1*face_n1 for line l0 + l1*count0). The fused single-GPU stage's
// formula (solvers/cuda/thomas_pcr_fused_stage.cuh: stage_rhs_inner, stage_rhs_end), the
// fields named as in cuda_backend::FusedStage. v's neighbours beyond the segment are its
// ghost planes (exchanged). v null: no explicit part. u may equal base, and v on lines of
// stride > 1 (v is carried in registers along the line, and a sub-segment's end rows, which
// its neighbours read, are not written by the reduce; along x a tile reads the row before
// it, already stored).
template <class T>
struct StageRhs {
  const T* base = nullptr;
  const T* v = nullptr;
  T inv_s = T(1);
  const T* a = nullptr;
  const T* d = nullptr;
  const T* c = nullptr;
  // (plain arrays: read by device code)
  const T* end[2] = {nullptr, nullptr};
  const T* nadd[2] = {nullptr, nullptr};
  const T* nsub[2] = {nullptr, nullptr};
  index_t face_base = 0;
  index_t face_n1 = 0;
  const T* src[2] = {nullptr, nullptr};
  T src_scale[2] = {T(0), T(0)};
};

// Phase 1 of an ADI stage along a split axis with shared bands: reduce with the right-hand
// side formed from `rhs` (5 field arrays per stage with back_substitute instead of 7:
// the stage's separate right-hand-side pass writes d and the reduce reads it back). u may
// be rhs.base; u = rhs.v only on lines of stride > 1 (Y, Z): stage_supported says whether,
// reduce_stage throws Unsupported otherwise.
template <class T>
ADI_CUDA_KERNEL(void reduce_stage(const LineSet& lines, const T* a, const T* b, const T* c, const StageRhs<T>& rhs,
                                  T* u, const Workspace<T>& w, T* red, bool first_open, bool last_open, void* stream))
ADI_CUDA_KERNEL_OR(return false;, bool stage_supported(const LineSet& lines, int S, bool u_is_v))

// Phase 3: u_0 and u_{m-1} from sol[l*2], sol[l*2+1], then the interior rows. bad (a
// device int, may be null) is set to 1 when a line's u_0 or u_{m-1} is not finite (a
// zero pivot on some rank poisoned the reduced rows with NaN). shared: as in the reduce
// of this solve (with shared bands alpha and gamma are one row for all lines, not m*L).
template <class T>
ADI_CUDA_KERNEL(void back_substitute(const LineSet& lines, const Workspace<T>& w, bool shared, const T* sol, T* u, int* bad,
                     void* stream))

// Phase 2 on the device: the reduced systems (n = 2P rows) of `count` lines, one thread
// per line (solve_reduced_rows of partition_reduced.hpp). Row k of line l is
// rows[l*line_stride + (k/2)*rank_stride + (k%2)*4 + {0..3}] (a, b, c, d). pair >= 0:
// out[l*2], out[l*2+1] = x_{2 pair}, x_{2 pair+1} (one rank's two unknowns, the
// allgather layout); pair < 0: every rank's, out[p*out_rank_stride + l*out_line_stride
// + {0, 1}] (the alltoall layout). scratch: 3*n*count values. Enqueued on `stream`.
template <class T>
ADI_CUDA_KERNEL(void solve_reduced(index_t count, int n, bool periodic, const T* rows, index_t line_stride, index_t rank_stride,
                   T* scratch, int pair, T* out, index_t out_rank_stride, index_t out_line_stride, void* stream))

// The SPIKE form of a split solve with shared bands (DistributedOptions::device_spike, stop 33;
// lines along x): this rank's segment solved as a tridiagonal system of its own, A y = d (any
// single-device kernel: the rank's ends cut, a_0 = c_{m-1} = 0), then x = y - a_0 x_{-1} W -
// c_{m-1} x_m Z with the spikes W = A^{-1} e_0, Z = A^{-1} e_{m-1}: the same for every line.
// spike_prepare: W, Z (m each) and the cut bands a_cut, c_cut (a, c with a_0 = c_{m-1} = 0) on
// `stream` (one block: the spikes are two sequential Thomas sweeps, cp: 2m values of scratch),
// and how far the spikes reach (reach[0..1], device: common::spike_reach). Nothing but a
// comparison when a, b, c equal the bands of the last call (kept: 3m values; reach[2] = 0 before
// the first call: the caller zeroes it). parallel (DistributedOptions::spike_prepare_pcr) and
// m <= 512: the spikes by parallel cyclic reduction, a thread per row, and their reach by
// block-wide reductions (cp unused): a few microseconds instead of ~85 for m = 256 (equal to
// rounding, the same reach from the same W, Z); larger m: the sequential sweeps. tol: the
// reach's tolerance (common::spike_reach; common::kSpikeTol<T> = 1e-3 epsilon by default).
template <class T>
ADI_CUDA_KERNEL(void spike_prepare(index_t m, const T* a, const T* b, const T* c, T* a_cut, T* c_cut, T* W, T* Z,
                                   T* cp, T* kept, index_t* reach, bool parallel, T tol, void* stream))
// The reduced rows (as reduce's red, l*8 + 0..7) from y's end rows and the spikes' ends: row 0
// eliminates x_m with the equation of row m-1 and row m-1 eliminates x_{-1} with that of row 0
// (the same rows as the partition passes' up to scaling). y: the local solution (u).
template <class T>
ADI_CUDA_KERNEL(void spike_reduce(const LineSet& lines, const T* a, const T* c, const T* W, const T* Z, const T* y,
                                  T* red, bool first_open, bool last_open, void* stream))
// The back pass: from this rank's two unknowns per line (sol[l*2], sol[l*2+1]) the couplings
// a_0 x_{-1} and c_{m-1} x_m (a 2x2 solve per line into ends, 2L values), then every row
// x_i = y_i - W_i (a_0 x_{-1}) - Z_i (c_{m-1} x_m) in place (u = y) where the spikes reach
// (spike_prepare's reach; the other rows keep y): one read and one write per such row, no
// recurrence. bad: as back_substitute's.
template <class T>
ADI_CUDA_KERNEL(void spike_back(const LineSet& lines, const T* W, const T* Z, const index_t* reach, const T* sol,
                                T* ends, T* u, int* bad, bool first_open, bool last_open, void* stream))

// The compact tail of the SPIKE form with shared bands (DistributedOptions::spike_compact, stop
// 37): with shared bands the reduced rows of every line differ only in y's two end values, so a
// rank sends those (2L values) and its line-independent scalars once (kSpikeHeader: W_0,
// W_{m-1}, Z_0, Z_{m-1}, a_0, c_{m-1}), not 8 values per line, through one allgather; each rank
// then forms every rank's rows, solves the line's reduced system and its couplings in the
// correction's own launch (spike_compact_couplings below: the same functions, in the same
// order, as spike_reduce + the reduced solve + spike_back, so the same values).
// spike_compact_pack: send[0..kSpikeHeader) the scalars (a, c this rank's bands, W, Z its spikes
// from spike_prepare), send[kSpikeHeader + l] = y_0 and send[kSpikeHeader + L + l] = y_{m-1} of
// line l (y: the local solution, u). One thread per line; coalesced along the lines. half (or
// null; DistributedOptions::spike_half_exchange): also half[0..kSpikeHeader) the scalars and
// half[kSpikeHeader + l] line l's y_0 (half_end 0) or y_{m-1} (1): what the other rank of a
// 2-rank line needs.
template <class T>
ADI_CUDA_KERNEL(void spike_compact_pack(const LineSet& lines, const T* a, const T* c, const T* W, const T* Z,
                                        const T* y, T* send, T* half, int half_end, void* stream))
// spike_compact_back: from the gathered blocks (rank q's at gathered + q*(kSpikeHeader + 2L);
// P <= kSpikeCompactMaxRanks) this rank's two unknowns per line into sol (sol[2l], sol[2l+1], as
// the exchange leaves them), the couplings into ends, then every row the spikes reach corrected
// in place as spike_back does (lines of stride > 1: one thread per line, its rows loaded
// kSpikeCorrectBatch at a time before their stores; along x: spike_back's warp per line).
// bad: set where this rank's unknowns are not finite (as spike_back's). tail: 0 the rows after the
// last full batch one at a time; 1 (DistributedOptions::spike_back_batched) loaded as one
// predicated batch too; 2 (spike_back_spread, stop 39 h-splitwait; lines of stride > 1) batched,
// the correction in a second launch over (line, batch) items, about one wave of blocks
// (grid-stride; 1 along x). The same values in each.
template <class T>
ADI_CUDA_KERNEL(void spike_compact_back(const LineSet& lines, int P, int r, bool periodic, const T* gathered,
                                        const T* W, const T* Z, const index_t* reach, T* sol, T* ends, T* u,
                                        int* bad, int tail, void* stream))

// The SPIKE form of a split solve with per-line bands (Bands: the public case; stop 35), truncated:
// y = this rank's segments solved as lines of their own (any single-device kernel: a_0 and c_{m-1}
// of a non-periodic line are not read), then per line the spikes only on R rows at each end.
// spike_lines_prepare: line l's W on its first R rows into W[i*L + l] and Z on its last R rows
// into Z[i*L + l] (i < R; row m-R+i), each from its window alone (common::spike_window: cs 2*R*L
// values of scratch), their reach into reach[2l] (W: rows < reach) and reach[2l+1] (Z: rows >=),
// and *bad = 1 where a line's spikes have not decayed `spike_guard(R)` rows before a window's far
// end (R < m) or are not finite: then the truncated spikes must not be used (the plan runs the
// partition passes instead). R == m: the exact spikes. One thread per line and end.
template <class T>
ADI_CUDA_KERNEL(void spike_lines_prepare(const LineSet& lines, const T* a, const T* b, const T* c, index_t R, T* W,
                                         T* Z, T* cs, index_t* reach, int* bad, void* stream))
// y of this form by truncated sweeps (DistributedOptions::spike_y_stream; common::spike_y_part):
// each line cut into parts (common::spike_y_parts: one wave of threads), a thread per (line,
// part), its ring of (c*, y*) in shared memory; form (DistributedOptions::spike_y_stream) 1 plain,
// 2 rows requested into L2 ahead of their loads, 3 loads double-buffered, 4 both.
// *bad = 1 where a line's truncations did not decay (u then partly written: not to be used). u != d.
template <class T>
ADI_CUDA_KERNEL(void spike_lines_y(const LineSet& lines, const T* a, const T* b, const T* c, const T* d, T* u, int form,
                                   int* bad, void* stream))
// spike_reduce and spike_back of this form (the same kernels with the lines' own spikes: 0 outside
// their windows; a, c the per-line bands).
template <class T>
ADI_CUDA_KERNEL(void spike_lines_reduce(const LineSet& lines, const T* a, const T* c, index_t R, const T* W,
                                        const T* Z, const T* y, T* red, bool first_open, bool last_open,
                                        void* stream))
template <class T>
ADI_CUDA_KERNEL(void spike_lines_back(const LineSet& lines, index_t R, const T* W, const T* Z, const index_t* reach,
                                      const T* sol, T* ends, T* u, int* bad, bool first_open, bool last_open,
                                      void* stream))

// The SPIKE form of an ADI stage (the right-hand side formed by the single-device fused stage on
// the cut segments): at a cut end (an end inside the global line) the fused stage's end-row
// formula lacks v's neighbour beyond it; this writes that term per line into face-shaped arrays
// the stage adds as Neumann terms (index face_base + l0 + l1*face_n1 for line l0 +
// l1*lines.count0): nadd0[fi] = ga[0] v[row -1], nadd1[fi] = gc[m-1] v[row m] (v's ghost planes;
// ga, gc: A's line coefficients; a null nadd: that end not cut).
template <class T>
ADI_CUDA_KERNEL(void spike_ghost_terms(const LineSet& lines, const T* v, const T* ga, const T* gc, index_t face_base,
                                       index_t face_n1, T* nadd0, T* nadd1, void* stream))

// Asynchronous copy between any two of device / page-locked host memory, on `stream`.
ADI_CUDA_KERNEL(void copy_async(void* dst, const void* src, std::size_t bytes, void* stream))
// *flag = 0 on `stream`.
ADI_CUDA_KERNEL(void clear_flag_async(int* flag, void* stream))

// Timing events (cudaEvent_t behind void*): recorded on a stream, read after it is done.
ADI_CUDA_KERNEL(void* event_create())
ADI_CUDA_KERNEL_OR(, void event_destroy(void* e) noexcept)
ADI_CUDA_KERNEL(void event_record(void* e, void* stream))
// The host waits until the work before a recorded event is done (not the work queued after it).
ADI_CUDA_KERNEL(void event_synchronize(void* e))
// 0 when either was not recorded
ADI_CUDA_KERNEL_OR(return 0.0;, double event_seconds(void* from, void* to))

// The PCI bus id of a device ("0000:3b:00.0"); empty on any error.
ADI_CUDA_KERNEL_OR(return {};, std::string pci_bus_id(int device))

// Page-locked host memory for the staged reduced rows (cudaMallocHost): the copies to and
// from the device then run at full speed instead of through a bounce buffer.
// pinned_free(nullptr) does nothing.
ADI_CUDA_KERNEL_OR(return ::operator new(bytes);, void* pinned_alloc(std::size_t bytes))
ADI_CUDA_KERNEL_OR(::operator delete(p);, void pinned_free(void* p) noexcept)

ADI_CUDA_KERNELS_END

// The compact SPIKE tail's per-line arithmetic (host and device: spike_compact_back, and
// DistributedTridiagonalPlan's host loops): rank q's block g + q*K holds its scalars
// (kSpikeHeader: W_0, W_{m-1}, Z_0, Z_{m-1}, a_0, c_{m-1}) and its y ends of L lines (y_0 at
// kSpikeHeader + l, y_{m-1} at kSpikeHeader + L + l). Forms the 2P reduced rows of line l
// (common::spike_rows), solves them (solve_reduced_rows) and gives rank r's couplings A, C
// (common::spike_couplings) and unknowns x0, x1; false where x0 or x1 is not finite.
// rows: 8P values, scr: 6P values of scratch (the caller's).
constexpr int kSpikeHeader = 8;
constexpr int kSpikeCompactMaxRanks = 8;
// A rank's block header, the one place its order is written (spike_compact_pack's kernel and the
// host plans' loop; spike_compact_couplings reads it): W_0, W_{m-1}, Z_0, Z_{m-1}, a_0, c_{m-1}, 0, 0.
template <class T>
ADI_PARTITION_HD void spike_compact_header(index_t m, const T* a, const T* c, const T* W, const T* Z, T* send) {
  const T h[kSpikeHeader] = {W[0], W[m - 1], Z[0], Z[m - 1], a[0], c[m - 1], T(0), T(0)};
  for (int k = 0; k < kSpikeHeader; ++k) send[k] = h[k];
}
template <class T>
ADI_PARTITION_HD bool spike_compact_couplings(int P, int r, bool periodic, const T* g, index_t K, index_t L,
                                              index_t l, T* rows, T* scr, T& x0, T& x1, T& A, T& C) {
  for (int q = 0; q < P; ++q) {
    const T* h = g + q * K;
    common::spike_rows(h[0], h[1], h[2], h[3], h[4], h[5], h[kSpikeHeader + l], h[kSpikeHeader + L + l],
                       q == 0 && !periodic, q == P - 1 && !periodic, rows + 8 * q);
  }
  const int n = 2 * P;
  solve_reduced_rows<T>(
      n, periodic, [&](int k) -> const T* { return rows + 4 * k; }, [&](int j, int k) -> T& { return scr[j * n + k]; });
  x0 = scr[n + 2 * r];
  x1 = scr[n + 2 * r + 1];
  const T* h = g + r * K;
  common::spike_couplings(h[0], h[1], h[2], h[3], h[kSpikeHeader + l] - x0, h[kSpikeHeader + L + l] - x1,
                          r == 0 && !periodic, r == P - 1 && !periodic, A, C);
  // finite: x - x is 0 (NaN for an infinity or a NaN)
  return x0 - x0 == T(0) && x1 - x1 == T(0);
}
}  // namespace adi::cuda_backend::partition
