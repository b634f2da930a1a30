#pragma once
// Partial pivoting along contiguous lines (X sweeps, StridedLines of element stride 1), not
// periodic: one thread per line, a warp owns 32 neighbouring lines, and every load and store
// goes through a shared-memory tile so that a warp's accesses are coalesced. For each chunk
// of K rows (32 bytes of a line: 8 floats or 4 doubles, one sector) the warp loads the 32 x K values
// of one array with consecutive lanes on consecutive addresses (K lanes per line: whole
// sectors), writes them to a [32][K+1] tile (the pad spreads a column over the banks) and
// each lane reads back its own line's K rows; then the lane runs K steps of
// common::pivot_step. U's rows (u1', u2', y') go to the workspace laid out
// [tile][row][lane] (coalesced); the backward pass reads them the same way and stores u
// through the tile. Shared bands are read by every lane from the read-only cache (the same
// address across the warp: one broadcast). Traffic: a, b, c, d read, u written, three
// values per row written and read back (11 per row against a copy's 5: at most ~45% of
// the copy bandwidth; the thread-per-line kernel moves the same bytes with scattered
// accesses on X lines).
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/pivoting_thread_line.cuh"

namespace adi::cuda_backend::kernels {

constexpr int kPivotTileWarps = 4;  // warps per block

template <class T>
constexpr int pivot_tile_rows() {
  return 32 / static_cast<int>(sizeof(T));  // 64 bytes: 255 registers (fp32), 158 (fp64)
}

inline bool pivoting_tile_fits(const LineSet& l, bool periodic) { return !periodic && l.stride == 1 && l.n >= 2; }

template <class T>
struct PivotTile {
  static constexpr int K = pivot_tile_rows<T>();
  T* tile;  // [kWarp][K + 1]
  // Rows i0 .. i0+K-1 of the warp's 32 lines of array q into v (this lane's line), fill
  // where the line or the row does not exist.
  template <class Off>
  __device__ void load(const T* q, Off off, i64 i0, i64 n, T fill, T (&v)[K]) const {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
#pragma unroll
    for (int t = 0; t < K; ++t) {
      const int idx = t * kWarp + lane, p = idx / K, r = idx % K;
      const i64 o = off(p);
      tile[p * (K + 1) + r] = (o >= 0 && i0 + r < n) ? q[o + i0 + r] : fill;
    }
    __syncwarp();
#pragma unroll
    for (int j = 0; j < K; ++j) v[j] = tile[lane * (K + 1) + j];
    __syncwarp();
  }
  template <class Off>
  __device__ void store(T* q, Off off, i64 i0, i64 n, const T (&v)[K]) const {
    const int lane = static_cast<int>(threadIdx.x) % kWarp;
#pragma unroll
    for (int j = 0; j < K; ++j) tile[lane * (K + 1) + j] = v[j];
    __syncwarp();
#pragma unroll
    for (int t = 0; t < K; ++t) {
      const int idx = t * kWarp + lane, p = idx / K, r = idx % K;
      const i64 o = off(p);
      if (o >= 0 && i0 + r < n) q[o + i0 + r] = tile[p * (K + 1) + r];
    }
    __syncwarp();
  }
};

template <class T, bool Shared>
__global__ void __launch_bounds__(kPivotTileWarps* kWarp)
    pivoting_tile_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c,
                         const T* d, T* u, T* __restrict__ w1, T* __restrict__ w2, T* __restrict__ wy, int* flag,
                         const int* gate) {
  constexpr int K = pivot_tile_rows<T>();
  __shared__ T tiles[kPivotTileWarps][kWarp * (K + 1)];
  const int lane = static_cast<int>(threadIdx.x) % kWarp, warp = static_cast<int>(threadIdx.x) / kWarp;
  const i64 nl = L.lines(), n = L.n;
  const i64 tile_id = static_cast<i64>(blockIdx.x) * kPivotTileWarps + warp;
  if (tile_id * kWarp >= nl || pivot_gate_closed(gate)) return;  // uniform per warp
  const PivotTile<T> tr{tiles[warp]};
  const i64 chunks = (n + K - 1) / K;
  // Offsets of the warp's lines (lane p keeps line p's: shuffled to the loading lanes).
  const i64 my_line = tile_id * kWarp + lane;
  const i64 my_off = my_line < nl ? L.offset(my_line) : i64(-1);
  auto off = [&](int p) { return __shfl_sync(kFullMask, my_off, p); };
  const bool valid = my_off >= 0;
  auto wsi = [&](i64 i) { return (tile_id * chunks * K + i) * kWarp + lane; };
  bool bad = false;

  common::PivotRow<T> cur{};
  for (i64 ch = 0; ch < chunks; ++ch) {
    const i64 i0 = ch * K;
    T va[K], vb[K], vc[K], vd[K];
    tr.load(d, off, i0, n, T(0), vd);
    if (!Shared) {
      tr.load(a, off, i0, n, T(0), va);
      tr.load(b, off, i0, n, T(1), vb);
      tr.load(c, off, i0, n, T(0), vc);
    }
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const i64 i = i0 + j;
      if (i >= n) break;
      const T ai = Shared ? ldg(a + i) : va[j];
      const T bi = Shared ? ldg(b + i) : vb[j];
      const T ci = i == n - 1 ? T(0) : (Shared ? ldg(c + i) : vc[j]);
      if (i == 0) {
        cur = common::PivotRow<T>{bi, ci, vd[j]};
        continue;
      }
      const common::PivotOut<T> o = common::pivot_step<T>(cur, ai, bi, ci, vd[j]);
      bad |= valid && bad_pivot(o.r);
      w1[wsi(i - 1)] = o.u1;
      w2[wsi(i - 1)] = o.u2;
      wy[wsi(i - 1)] = o.y;
    }
  }
  const common::PivotOut<T> last = common::pivot_last<T>(cur);
  bad |= valid && bad_pivot(last.r);

  T x1 = T(0), x2 = T(0);
  for (i64 ch = chunks - 1; ch >= 0; --ch) {
    const i64 i0 = ch * K;
    T vx[K];
#pragma unroll
    for (int j = K - 1; j >= 0; --j) {
      const i64 i = i0 + j;
      T x = T(0);
      if (i == n - 1) {
        x = last.y;
        x1 = x;
      } else if (i < n - 1) {
        x = wy[wsi(i)] - w1[wsi(i)] * x1 - w2[wsi(i)] * x2;
        x2 = x1;
        x1 = x;
      }
      vx[j] = x;
    }
    tr.store(u, off, i0, n, vx);
  }
  report(bad, flag);
}

// Workspace: u1', u2', y' per row (rounded up to whole chunks) and line (rounded up to tiles).
inline std::size_t pivoting_tile_workspace(const LineSet& l, std::size_t value_size) {
  const std::size_t k = 32 / value_size;
  const std::size_t tiles = static_cast<std::size_t>((l.lines() + kWarp - 1) / kWarp);
  const std::size_t rows = (static_cast<std::size_t>(l.n) + k - 1) / k * k;
  return 3 * slice_bytes(tiles * rows * kWarp, value_size);
}

template <class T>
void launch_pivoting_tile(const LineSet& ls, BandView<T> bands, const T* d, T* u, void* workspace, int* flag,
                          cudaStream_t stream, const int* gate = nullptr) {
  const DeviceLines L = to_device(ls);
  constexpr int K = pivot_tile_rows<T>();
  const i64 tiles = (L.lines() + kWarp - 1) / kWarp;
  const unsigned blocks = static_cast<unsigned>((tiles + kPivotTileWarps - 1) / kPivotTileWarps);
  const std::size_t per = static_cast<std::size_t>(tiles) * ((L.n + K - 1) / K * K) * kWarp;
  ScratchCursor cur{static_cast<char*>(workspace)};
  T* w1 = cur.take<T>(per);
  T* w2 = cur.take<T>(per);
  T* wy = cur.take<T>(per);
  if (bands.shared)
    pivoting_tile_kernel<T, true><<<blocks, kPivotTileWarps * kWarp, 0, stream>>>(L, bands.a, bands.b, bands.c, d,
                                                                                   u, w1, w2, wy, flag, gate);
  else
    pivoting_tile_kernel<T, false><<<blocks, kPivotTileWarps * kWarp, 0, stream>>>(L, bands.a, bands.b, bands.c,
                                                                                    d, u, w1, w2, wy, flag, gate);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
