#pragma once
// CUDA kernels of the batched Hines solver (adi/hines.hpp), after cuHinesBatch (Valero-Lara
// et al., ICCS 2017). Symmetric storage: offdiag[i] couples node i and its parent; one parent
// array per tree (read through the read-only cache, shared by every neuron of the tree).
//
//   paper_kernel     one thread per neuron, algorithm 1 in global memory (flat,
//                    full-interleaved or block-interleaved by the view's layout)
//   shared_kernel    paper section 3.1: the block's right-hand sides in shared memory
//   stack_kernel     one thread per neuron that reads diag, offdiag and rhs once and writes x
//                    once: the elimination keeps 2 values per node (factor l/d', partial
//                    solution r'/d') in shared memory for the substitution
//   branch_kernel    one block per neuron: branches of one level in parallel (elimination
//                    by height, substitution by depth), the neuron staged in shared memory
#include <cuda_runtime.h>

#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/tridiagonal_common.cuh"  // recip

namespace adi::cuda_backend::hines {

using adi::detail::HinesLayoutKind;
using adi::detail::HinesTreeSchedule;
using adi::detail::HinesView;

// Where a thread's neuron lives: element k at base + k * step.
struct Slot {
  index_t neuron;
  index_t base;
  index_t step;
  int n;
  const int* parent;
};

__device__ __forceinline__ Slot slot_of(const HinesView& v, index_t t) {
  Slot s;
  s.neuron = v.layout == HinesLayoutKind::sorted ? v.order[t] : t;
  s.n = v.sizes[s.neuron];
  s.parent = v.parents + v.parent_base[s.neuron];
  if (v.layout == HinesLayoutKind::compact) {
    s.base = v.offsets[s.neuron];
    s.step = 1;
  } else if (v.layout == HinesLayoutKind::padded) {
    s.base = t;
    s.step = v.stride;
  } else {
    s.base = v.chunk_offsets[t / v.chunk_width] + t % v.chunk_width;
    s.step = v.chunk_width;
  }
  return s;
}

// 1/pivot is 0 for an infinite pivot, inf for a zero one, NaN for a NaN one.
template <class T>
__device__ __forceinline__ bool bad_pivot(T inv) {
  return !(inv - inv == T(0)) || inv == T(0);
}

__device__ __forceinline__ void report(int* bad, bool b, index_t neuron) {
  if (b && bad) atomicMin(bad, static_cast<int>(neuron));
}

// Algorithm 1 of the paper, one thread per neuron, in global memory, with two changes (stop 52) that keep
// its operations but not their memory traffic and latency:
// - The elimination stores each node's factor f_i = l_i / d'_i over d_i and y_i = r'_i / d'_i over r_i
//   (one reciprocal of the pivot), so the substitution x_i = y_i - f_i x_p(i) reads 2 values a node instead
//   of l, d', r' and divides nothing: 8 values of traffic a compartment instead of 9 (the minimum is 4).
// - Each sweep reads kPaperAhead + 1 nodes ahead of the node it works on (registers q[0] = the next node,
//   ..., and the one read in this step). In the elimination a node's values are read before its last
//   children are eliminated: node i's update of a parent already read (p(i) >= i - 1 - kPaperAhead: a
//   chain, the common case, or a near branch point) goes to that parent's registers, any other to memory
//   (a parent not read yet, whose other children are all done by the time it is). The substitution reads
//   x of node i - 1 from a register where it is the parent, and a branch point's x one step before the node
//   that needs it (H200 run s52/5: -0.4 .. -0.7% at 256,000 neurons, -2% on average in smaller batches).
// Nodes are numbered as HinesBatch requires: parent(i) < i.
// Read-ahead depth: H200 run s52/2 (bench_cuda_hines, 256,000 neurons), against 1 and 4: 2 the fastest in
// every row of one tree a batch (1: up to 4% slower; 4: fp64 11-15% slower, 70 registers against 56).
constexpr int kPaperAhead = 2;

template <class T>
__global__ void paper_kernel(HinesView v, const T* __restrict__ l, T* __restrict__ d, T* __restrict__ r, index_t first,
                             index_t last, int* bad) {
  constexpr int D = kPaperAhead;
  const index_t t = first + blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (t >= last) return;
  const Slot s = slot_of(v, t);
  const index_t st = s.step;
  const int n = s.n;
  bool b = false;
  auto at = [&](int i) { return s.base + static_cast<index_t>(i) * st; };
  // Elimination, leaves first: node i in (li, di, ri), nodes i - 1 - k in (ql, qd, qr)[k] (offdiag[0] is
  // never read).
  T li = n > 1 ? l[at(n - 1)] : T(0), di = d[at(n - 1)], ri = r[at(n - 1)];
  T ql[D], qd[D], qr[D];
#pragma unroll
  for (int k = 0; k < D; ++k) {
    const int j = n - 2 - k;
    ql[k] = j >= 1 ? l[at(j)] : T(0), qd[k] = j >= 0 ? d[at(j)] : T(0), qr[k] = j >= 0 ? r[at(j)] : T(0);
  }
  for (int i = n - 1; i >= 1; --i) {
    const int p = __ldg(s.parent + i), j = i - 1 - D;
    const T nl = j >= 1 ? l[at(j)] : T(0);
    T nd = j >= 0 ? d[at(j)] : T(0), nr = j >= 0 ? r[at(j)] : T(0);
    b |= di == T(0) || !(di - di == T(0));
    const T inv = kernels::recip(di), f = li * inv;  // (correctly rounded: T(1) / di's value)
    d[at(i)] = f;
    r[at(i)] = ri * inv;
    const T ud = f * li, ur = f * ri;  // the parent's d and r lose these
#pragma unroll
    for (int k = 0; k < D; ++k)
      if (p == i - 1 - k) qd[k] -= ud, qr[k] -= ur;
    if (p == j) {
      nd -= ud, nr -= ur;
    } else if (p < j) {
      d[at(p)] -= ud;
      r[at(p)] -= ur;
    }
    li = ql[0], di = qd[0], ri = qr[0];
#pragma unroll
    for (int k = 0; k + 1 < D; ++k) ql[k] = ql[k + 1], qd[k] = qd[k + 1], qr[k] = qr[k + 1];
    ql[D - 1] = nl, qd[D - 1] = nd, qr[D - 1] = nr;
  }
  b |= di == T(0) || !(di - di == T(0));  // the root's pivot
  T xp = ri / di;
  r[s.base] = xp;
  // Substitution, root first: x_i = y_i - f_i x_p(i); xp is x of node i - 1, node i in (fi, yi), nodes
  // i + 1 + k in (qf, qy)[k].
  T fi = n > 1 ? d[at(1)] : T(0), yi = n > 1 ? r[at(1)] : T(0), qf[D], qy[D];
#pragma unroll
  for (int k = 0; k < D; ++k) {
    const int j = 2 + k;
    qf[k] = j < n ? d[at(j)] : T(0), qy[k] = j < n ? r[at(j)] : T(0);
  }
  int p = 0;    // node i's parent (node 1's is the root)
  T xr = T(0);  // x of node i's parent where that is not node i - 1, read one step ahead
  for (int i = 1; i < n; ++i) {
    const int j = i + 1 + D, pn = i + 1 < n ? __ldg(s.parent + i + 1) : i;  // node i + 1's parent
    const T nf = j < n ? d[at(j)] : T(0), ny = j < n ? r[at(j)] : T(0);
    T xrn = T(0);
    if (pn < i) xrn = r[at(pn)];  // x of node pn < i: stored at step pn
    const T xq = p == i - 1 ? xp : xr;
    xp = yi - fi * xq;
    r[at(i)] = xp;
    p = pn, xr = xrn;
    fi = qf[0], yi = qy[0];
#pragma unroll
    for (int k = 0; k + 1 < D; ++k) qf[k] = qf[k + 1], qy[k] = qy[k + 1];
    qf[D - 1] = nf, qy[D - 1] = ny;
  }
  report(bad, b, s.neuron);
}

// Paper section 3.1: the thread's right-hand side lives in shared memory for the whole solve
// (element k of thread j at sr[k * blockDim + j]); d stays in global memory.
template <class T>
__global__ void shared_kernel(HinesView v, const T* __restrict__ l, T* __restrict__ d, T* __restrict__ r, index_t first,
                              index_t last, int* bad) {
  extern __shared__ unsigned char smem_raw[];
  T* sr = reinterpret_cast<T*>(smem_raw);
  const index_t t = first + blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (t >= last) return;
  const Slot s = slot_of(v, t);
  const int B = blockDim.x, j = threadIdx.x;
  for (int k = 0; k < s.n; ++k) sr[k * B + j] = r[s.base + k * s.step];
  bool b = false;
  for (int i = s.n - 1; i >= 1; --i) {
    const index_t a = s.base + i * s.step;
    const int p = __ldg(s.parent + i);
    const index_t ap = s.base + p * s.step;
    const T li = l[a], di = d[a];
    b |= di == T(0) || !(di - di == T(0));
    const T f = li / di;
    d[ap] -= f * li;
    sr[p * B + j] -= f * sr[i * B + j];
  }
  const T d0 = d[s.base];
  b |= d0 == T(0) || !(d0 - d0 == T(0));
  sr[j] /= d0;
  r[s.base] = sr[j];
  for (int i = 1; i < s.n; ++i) {
    const index_t a = s.base + i * s.step;
    const T x = (sr[i * B + j] - l[a] * sr[__ldg(s.parent + i) * B + j]) / d[a];
    sr[i * B + j] = x;
    r[a] = x;
  }
  report(bad, b, s.neuron);
}

// Elements a thread loads ahead of its elimination (registers): enough independent loads in
// flight per thread to cover the memory latency with the few threads shared memory allows.
constexpr int kAhead = 8;

// One thread per neuron reading l, d, r once and writing x once. The elimination walks the
// rows of the thread's chunk from the last (lanes whose neuron is shorter idle there), so a
// warp's loads stay coalesced in a size-sorted batch of different trees. Per node it leaves
// f = l/d' in sf and y = r'/d' in sy (shared, [k * blockDim + j]); before a node is reached
// those slots accumulate its children's contributions (sum f_c l_c and sum l_c y_c). The
// contribution of the chain child (parent == i - 1, the common case) travels in registers.
template <class T>
__global__ void stack_kernel(HinesView v, const T* __restrict__ l, const T* __restrict__ d, T* __restrict__ r,
                             index_t first, index_t last, int smem_rows, int* bad) {
  extern __shared__ unsigned char smem_raw[];
  const int B = blockDim.x, j = threadIdx.x;
  T* sf = reinterpret_cast<T*>(smem_raw);
  const index_t t = first + blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (t >= last) return;
  const Slot s = slot_of(v, t);
  // Rows of the thread's chunk (its first neuron is the chunk's largest); other layouts: own.
  const int rows = v.layout == HinesLayoutKind::sorted ? v.sizes[v.order[t - t % v.chunk_width]] : s.n;
  T* sy = sf + static_cast<index_t>(B) * smem_rows;  // the launch's largest neuron: one offset per block
  // The children sums start at zero: only the rows this neuron has.
  for (int k = 0; k < s.n; ++k) {
    sf[k * B + j] = T(0);
    sy[k * B + j] = T(0);
  }
  T lq[kAhead], dq[kAhead], rq[kAhead];
#pragma unroll
  for (int u = 0; u < kAhead; ++u) {
    const int k = rows - 1 - u;
    if (k >= 0) {
      const index_t a = s.base + k * s.step;
      lq[u] = __ldg(l + a);
      dq[u] = __ldg(d + a);
      rq[u] = r[a];
    }
  }
  bool b = false;
  T carry_f = T(0), carry_y = T(0);  // chain child's contribution to node k
  for (int top = rows - 1; top >= 0; top -= kAhead) {
#pragma unroll
    for (int u = 0; u < kAhead; ++u) {
      const int k = top - u;
      if (k < 0) break;
      const T lk = lq[u], dk = dq[u], rk = rq[u];
      const int next = k - kAhead;
      if (next >= 0) {
        const index_t a = s.base + next * s.step;
        lq[u] = __ldg(l + a);
        dq[u] = __ldg(d + a);
        rq[u] = r[a];
      }
      if (k < s.n) {
        const T dp = dk - sf[k * B + j] - carry_f;
        const T rp = rk - sy[k * B + j] - carry_y;
        const T inv = kernels::recip(dp);
        b |= bad_pivot(inv);
        const T lk0 = k > 0 ? lk : T(0);  // offdiag[0] is never read into the result
        const T f = lk0 * inv, y = rp * inv;
        sf[k * B + j] = f;
        sy[k * B + j] = y;
        carry_f = T(0);
        carry_y = T(0);
        if (k > 0) {
          const int p = __ldg(s.parent + k);
          if (p == k - 1) {
            carry_f = f * lk0;
            carry_y = lk0 * y;
          } else {
            sf[p * B + j] += f * lk0;
            sy[p * B + j] += lk0 * y;
          }
        }
      }
    }
  }
  // Substitution from the root: x_0 = y_0, x_k = y_k - f_k x_parent (x overwrites sy).
  T x_prev = sy[j];
  r[s.base] = x_prev;
  for (int k = 1; k < rows; ++k) {
    if (k < s.n) {
      const int p = __ldg(s.parent + k);
      const T xp = p == k - 1 ? x_prev : sy[p * B + j];
      const T x = sy[k * B + j] - sf[k * B + j] * xp;
      sy[k * B + j] = x;
      r[s.base + k * s.step] = x;
      x_prev = x;
    }
  }
  report(bad, b, s.neuron);
}

// One block per neuron (CompactBatch: the neuron's elements contiguous, so the block stages
// them with coalesced loads). Elimination level by level of branch height, substitution
// level by level of depth; a thread takes a whole branch (an unbranched run of nodes) and
// gathers its tip's children from the branches of lower levels. Staged: l, d', r' in shared
// memory; otherwise they are worked on in place in global memory (d holds f, r holds y, x).
template <class T, bool Staged>
__global__ void branch_kernel(HinesView v, const T* __restrict__ l_all, T* __restrict__ d_all, T* __restrict__ r_all,
                              int* bad) {
  extern __shared__ unsigned char smem_raw[];
  const index_t s = blockIdx.x;
  if (s >= v.count) return;
  const int n = v.sizes[s];
  const index_t base = v.offsets[s];
  const int* parent = v.parents + v.parent_base[s];
  const HinesTreeSchedule sch = v.schedules[v.tree_of[s]];
  const int* start = v.branch_start + sch.branch_base;
  const int* end = v.branch_end + sch.branch_base;
  const int* child_first = v.child_first + sch.child_first_base;
  const int* child_node = v.child_node + sch.child_base;
  const int* up_level = v.up_level + sch.up_level_base;
  const int* down_order = v.down_order + sch.branch_base;
  const int* down_level = v.down_level + sch.down_level_base;
  const T* L;
  T *D, *R;
  if (Staged) {
    T* sl = reinterpret_cast<T*>(smem_raw);
    D = sl + n;
    R = D + n;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
      sl[k] = k > 0 ? l_all[base + k] : T(0);
      D[k] = d_all[base + k];
      R[k] = r_all[base + k];
    }
    L = sl;
    __syncthreads();
  } else {
    L = l_all + base;
    D = d_all + base;
    R = r_all + base;
  }
  bool b = false;
  for (int h = 0; h < sch.up_levels; ++h) {
    for (int bi = up_level[h] + threadIdx.x; bi < up_level[h + 1]; bi += blockDim.x) {
      const int st = __ldg(start + bi), en = __ldg(end + bi);
      T acc_f = T(0), acc_y = T(0);
      for (int c = __ldg(child_first + bi); c < __ldg(child_first + bi + 1); ++c) {
        const int cn = __ldg(child_node + c);
        const T lc = L[cn];
        acc_f += D[cn] * lc;  // D holds f_c = l_c / d'_c
        acc_y += lc * R[cn];  // R holds y_c = r'_c / d'_c
      }
      for (int i = en - 1; i >= st; --i) {
        const T inv = kernels::recip(D[i] - acc_f);
        b |= bad_pivot(inv);
        const T li = i > 0 ? L[i] : T(0);
        const T f = li * inv, y = (R[i] - acc_y) * inv;
        D[i] = f;
        R[i] = y;
        acc_f = f * li;
        acc_y = li * y;
      }
    }
    __syncthreads();
  }
  for (int dl = 0; dl < sch.down_levels; ++dl) {
    for (int k = down_level[dl] + threadIdx.x; k < down_level[dl + 1]; k += blockDim.x) {
      const int bi = __ldg(down_order + k);
      const int st = __ldg(start + bi), en = __ldg(end + bi);
      T xp = st > 0 ? R[__ldg(parent + st)] : T(0);
      for (int i = st; i < en; ++i) {
        xp = R[i] - D[i] * xp;
        R[i] = xp;
      }
    }
    __syncthreads();
  }
  if (Staged)
    for (int k = threadIdx.x; k < n; k += blockDim.x) r_all[base + k] = R[k];
  if (b && bad) atomicMin(bad, static_cast<int>(s));
}

template <class T>
__global__ void assemble_kernel(index_t span, const T* __restrict__ d0, const T* __restrict__ cdt,
                                const T* __restrict__ ge, T* __restrict__ diag, T* __restrict__ v) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < span;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    diag[i] = d0[i];
    v[i] = cdt[i] * v[i] + ge[i];
  }
}

template <class T>
__global__ void stimulus_kernel(const index_t* pos, const T* amp, int nstim, T* v) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < nstim) v[pos[k]] += amp[k];
}

}  // namespace adi::cuda_backend::hines
