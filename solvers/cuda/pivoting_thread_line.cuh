#pragma once
// Partial (row) pivoting, one thread per line (Kernel::cuda_pivoting's general kernel; the
// family's choice is in pivoting_thread.cuh), for every layout the tridiagonal plan takes
// (strided lines along x/y/z, LineSet, shared bands), periodic too.
// The elimination is the host's and the reference's (solvers/common/pivoting_core.hpp);
// consecutive threads take consecutive lines, so where neighbouring lines are adjacent in
// memory (Y/Z sweeps, interleaved batches) every load and store is one coalesced row, like
// thomas_strided.cuh. y' goes to u (its final place), U's two super-diagonals u1', u2'
// (periodic lines: and its columns n-2, n-1) to the workspace laid out [row][line].
// Shared bands are read through the read-only cache by every thread (the pivots are the
// same for every line, but recomputing them costs no memory traffic).
#include "adi/base/error.hpp"
#include "solvers/common/cyclic_denominator.hpp"
#include "solvers/common/pivoting_core.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"

namespace adi::cuda_backend::kernels {

// One line, by one thread; returns whether a pivot was zero or not finite. Also the
// fall-back of the block route (pivoting_block.cuh) for the lines of a block with a weak
// partition. The steps are solvers/common/pivoting_line.hpp's (pivot_line / pivot_line_periodic),
// written out here: through that header (an access policy over these lines, its loops given
// Chunk-row loads) sm_90 code grew (stop 38: fp32 93 -> 126 registers, +5..12% instructions,
// the periodic and plain paths no longer sharing one load loop; the variable-batch kernels 8
// instructions more), so the loop stays; both run the core's pivot_step / cyclic_step.
template <class T, int Chunk, bool Shared>
__device__ bool pivoting_line(const DeviceLines& L, i64 line, const T* __restrict__ a, const T* __restrict__ b,
                              const T* __restrict__ c, const T* d, T* u, T* __restrict__ w1, T* __restrict__ w2,
                              T* __restrict__ w3, T* __restrict__ w4, bool periodic) {
  const i64 nl = L.lines();
  const i64 n = L.n, st = L.stride, off = L.offset(line);
  auto at = [&](i64 i) { return off + i * st; };
  auto co = [&](const T* q, i64 i) { return Shared ? ldg(q + i) : q[at(i)]; };
  auto ws = [&](i64 i) { return i * nl + line; };
  bool bad = false;

  if (periodic && n <= 2) {  // as the reference: (a+b+c) u = d, or the 2x2 with both couplings
    if (n == 1) {
      const T p = co(a, 0) + co(b, 0) + co(c, 0);
      bad |= bad_pivot(p) || common::singular_self_coupled<T>(co(a, 0), co(b, 0), co(c, 0));
      u[at(0)] = d[at(0)] / p;
    } else {
      const T m00 = co(b, 0), m01 = co(a, 0) + co(c, 0), m10 = co(a, 1) + co(c, 1), m11 = co(b, 1);
      const T det = m00 * m11 - m01 * m10;
      bad |= bad_pivot(det);
      const T d0 = d[at(0)], d1 = d[at(1)];
      u[at(0)] = (d0 * m11 - m01 * d1) / det;
      u[at(1)] = (m00 * d1 - m10 * d0) / det;
    }
    return bad;
  }
  // Forward elimination, rows loaded Chunk at a time (4*Chunk loads in flight). y' goes to u;
  // w1, w2 hold u1', u2' (periodic: w3, w4 U's columns n-2, n-1).
  common::PivotRow<T> cur{co(b, 0), n > 1 ? co(c, 0) : T(0), d[at(0)]};
  common::CyclicRow<T> C{}, Lr{};
  if (periodic)
    common::cyclic_start(n, co(a, 0), co(b, 0), co(c, 0), d[at(0)], co(a, n - 1), co(b, n - 1), co(c, n - 1),
                         d[at(n - 1)], C, Lr);
  const i64 rows = periodic ? n - 1 : n;  // rows 1 .. rows-1 meet the sweep
  for (i64 i0 = 1; i0 < rows; i0 += Chunk) {
    T va[Chunk], vb[Chunk], vc[Chunk], vd[Chunk];
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i0 + j;
      if (i < rows) {
        va[j] = co(a, i);
        vb[j] = co(b, i);
        vc[j] = co(c, i);
        vd[j] = d[at(i)];
      }
    }
#pragma unroll
    for (int j = 0; j < Chunk; ++j) {
      const i64 i = i0 + j;
      if (i >= rows) break;
      if (periodic) {
        const common::CyclicOut<T> o = common::cyclic_step<T>(
            C, Lr, common::cyclic_row(i + 1 == n - 1, va[j], vb[j], vc[j], vd[j]), i + 1 == n - 2);
        bad |= bad_pivot(o.r);
        w1[ws(i - 1)] = o.u1;
        w2[ws(i - 1)] = o.u2;
        w3[ws(i - 1)] = o.us;
        w4[ws(i - 1)] = o.ul;
        u[at(i - 1)] = o.y;
      } else {
        const common::PivotOut<T> o =
            common::pivot_step<T>(cur, va[j], vb[j], i == n - 1 ? T(0) : vc[j], vd[j]);
        bad |= bad_pivot(o.r);
        w1[ws(i - 1)] = o.u1;
        w2[ws(i - 1)] = o.u2;
        u[at(i - 1)] = o.y;
      }
    }
  }
  T x1 = T(0), x2 = T(0);
  i64 i = n - 1;
  if (periodic) {  // the last two rows, then the general back substitution with columns n-2, n-1
    common::CyclicOut<T> r2, r1;
    common::cyclic_finish<T>(C, Lr, r2, r1);
    bad |= bad_pivot(r2.r) || bad_pivot(r1.r);
    const T xl = r1.y, xs = r2.y - r2.ul * xl;
    u[at(n - 1)] = xl;
    u[at(n - 2)] = xs;
    x1 = xs;
    x2 = xl;
    for (i = n - 3; i >= 0; --i) {
      const T x = u[at(i)] - w1[ws(i)] * x1 - w2[ws(i)] * x2 - w3[ws(i)] * xs - w4[ws(i)] * xl;
      x2 = x1;
      x1 = x;
      u[at(i)] = x;
    }
  } else {
    const common::PivotOut<T> o = common::pivot_last<T>(cur);
    bad |= bad_pivot(o.r);
    x1 = o.y;
    u[at(n - 1)] = x1;
    for (i = n - 2; i >= 0; --i) {
      const T x = u[at(i)] - w1[ws(i)] * x1 - w2[ws(i)] * x2;
      x2 = x1;
      x1 = x;
      u[at(i)] = x;
    }
  }
  return bad;
}

// A fall-back decided on the device: the kernel is enqueued whatever happens before it and
// every block returns at once while *gate is zero, so the host reads nothing back. The
// partition route's weak blocks (gate: its weak flag, pivoting_partition.cuh) and, with
// ADI_PIVOTING_FALLBACK=device, automatic's re-solve after the Thomas kernel (gate: that
// kernel's flag; adi/tridiagonal.cpp, run_cuda). gate == nullptr: always solve.
__device__ __forceinline__ bool pivot_gate_closed(const int* gate) { return gate != nullptr && *gate == 0; }

template <class T, int Chunk, bool Shared>
__global__ void __launch_bounds__(128)
    pivoting_thread_per_line_kernel(DeviceLines L, const T* __restrict__ a, const T* __restrict__ b,
                                    const T* __restrict__ c, const T* d, T* u, T* __restrict__ w1,
                                    T* __restrict__ w2, T* __restrict__ w3, T* __restrict__ w4, bool periodic,
                                    int* flag, const int* gate) {
  const i64 line = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (line >= L.lines() || pivot_gate_closed(gate)) return;
  report(pivoting_line<T, Chunk, Shared>(L, line, a, b, c, d, u, w1, w2, w3, w4, periodic), flag);
}

// Workspace: u1', u2' (periodic: and U's columns n-2, n-1) per row and line.
inline std::size_t pivoting_thread_workspace(const LineSet& l, bool periodic, std::size_t value_size) {
  const std::size_t count = static_cast<std::size_t>(l.n) * static_cast<std::size_t>(l.lines());
  return slice_bytes(count, value_size) * (periodic ? 4 : 2);
}

template <class T, int Chunk>
void launch_pivoting_thread(const LineSet& ls, BandView<T> bands, const T* d, T* u, bool periodic,
                                     void* workspace, int* flag, cudaStream_t stream, const int* gate = nullptr) {
  const DeviceLines L = to_device(ls);
  const i64 nl = L.lines();
  constexpr int threads = 128;
  const unsigned blocks = static_cast<unsigned>((nl + threads - 1) / threads);
  ScratchCursor cur{static_cast<char*>(workspace)};
  const std::size_t count = static_cast<std::size_t>(L.n) * static_cast<std::size_t>(nl);
  T* w1 = cur.take<T>(count);
  T* w2 = cur.take<T>(count);
  T* w3 = periodic ? cur.take<T>(count) : nullptr;
  T* w4 = periodic ? cur.take<T>(count) : nullptr;
  if (bands.shared)
    pivoting_thread_per_line_kernel<T, Chunk, true><<<blocks, threads, 0, stream>>>(
        L, bands.a, bands.b, bands.c, d, u, w1, w2, w3, w4, periodic, flag, gate);
  else
    pivoting_thread_per_line_kernel<T, Chunk, false><<<blocks, threads, 0, stream>>>(
        L, bands.a, bands.b, bands.c, d, u, w1, w2, w3, w4, periodic, flag, gate);
  ADI_CUDA_CHECK(cudaGetLastError());
}

}  // namespace adi::cuda_backend::kernels
