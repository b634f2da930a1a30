// Device kernels of the active neuron population (solvers/cuda/hines_active.hpp): one thread
// per compartment for the assembly, one per hh instance, synapse, clamp or detector for the
// rest. The formulas are the host's (solvers/common/hh_membrane.hpp).
#include <algorithm>

#include "solvers/common/hh_membrane.hpp"
#include "solvers/cuda/check.cuh"
#include "solvers/cuda/hines_active.hpp"

namespace adi::cuda_backend::hines_active {

namespace {

constexpr int kThreads = 256;

unsigned blocks(index_t items) {
  return static_cast<unsigned>(std::min<index_t>((items + kThreads - 1) / kThreads, 1 << 20));
}

template <class T>
__global__ void assemble_kernel(index_t span, const T* __restrict__ d0, const T* __restrict__ cdt,
                                const T* __restrict__ gpas, const T* __restrict__ gepas, const T* __restrict__ v,
                                T* __restrict__ diag, T* __restrict__ rhs, HH<T> hh) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < span;
       i += static_cast<index_t>(gridDim.x) * blockDim.x) {
    T d = d0[i] + gpas[i];
    T r = cdt[i] * v[i] + gepas[i];
    const int q = hh.count ? hh.hh_of[i] : -1;
    if (q >= 0)
      membrane::hh_current(hh.gna[q], hh.gk[q], hh.gl[q], hh.gel[q], hh.ena[q], hh.ek[q], hh.m[q], hh.h[q], hh.n[q], d,
                           r);
    diag[i] = d;
    rhs[i] = r;
  }
}

__global__ void deliver_kernel(int events, const int* __restrict__ syn, const double* __restrict__ w, double* g) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < events) atomicAdd(g + syn[k], w[k]);
}

template <class T>
__global__ void points_kernel(double tm, Points p, T* diag, T* rhs) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < p.clamps) {
    if (tm >= p.clamp_del[k] && tm < p.clamp_del[k] + p.clamp_dur[k])
      atomicAdd(rhs + p.clamp_pos[k], static_cast<T>(p.clamp_amp[k]));
  } else if (k < p.clamps + p.synapses) {
    const int s = k - p.clamps;
    const double g = p.syn_g[s];
    atomicAdd(diag + p.syn_pos[s], static_cast<T>(g));
    atomicAdd(rhs + p.syn_pos[s], static_cast<T>(g * p.syn_e[s]));
  }
}

template <class T>
__global__ void advance_kernel(const T* __restrict__ v, T dt, HH<T> hh, Points p, int step, int* record, int* recorded) {
  const index_t k = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x;
  if (k < hh.count) {
    const index_t q = k;
    T m = hh.m[q], h = hh.h[q], n = hh.n[q];
    membrane::hh_gates(hh.tables + static_cast<index_t>(hh.table_of[q]) * membrane::kHHTableSize, v[hh.pos[q]], dt, m,
                       h, n);
    hh.m[q] = m, hh.h[q] = h, hh.n[q] = n;
    return;
  }
  index_t s = k - hh.count;
  if (s < p.synapses) {
    p.syn_g[s] *= p.syn_decay[s];
    return;
  }
  s -= p.synapses;
  if (s < p.detectors) {
    const double vd = static_cast<double>(v[p.det_pos[s]]);
    if (vd > p.det_threshold[s]) {
      if (!p.det_above[s]) {
        p.det_above[s] = 1;
        const int slot = atomicAdd(recorded, 1);
        record[2 * slot] = step;
        record[2 * slot + 1] = static_cast<int>(s);
      }
    } else {
      p.det_above[s] = 0;
    }
  }
}

template <class T>
__global__ void nonfinite_kernel(index_t span, const T* __restrict__ v, unsigned long long* bad) {
  for (index_t i = blockIdx.x * static_cast<index_t>(blockDim.x) + threadIdx.x; i < span;
       i += static_cast<index_t>(gridDim.x) * blockDim.x)
    if (!isfinite(v[i])) atomicMin(bad, static_cast<unsigned long long>(i));
}

}  // namespace

template <class T>
void active_assemble(index_t span, const T* d0, const T* cdt, const T* gpas, const T* gepas, const T* v, T* diag,
                     T* rhs, const HH<T>& hh, void* stream) {
  if (span <= 0) return;
  assemble_kernel<T><<<blocks(span), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(span, d0, cdt, gpas, gepas, v,
                                                                                        diag, rhs, hh);
  ADI_CUDA_CHECK(cudaGetLastError());
}

void active_deliver(int events, const int* event_syn, const double* event_weight, double* syn_g, void* stream) {
  if (events <= 0) return;
  deliver_kernel<<<blocks(events), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(events, event_syn, event_weight,
                                                                                      syn_g);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void active_points(double tm, const Points& points, T* diag, T* rhs, void* stream) {
  const index_t items = static_cast<index_t>(points.clamps) + points.synapses;
  if (items <= 0) return;
  points_kernel<T><<<blocks(items), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(tm, points, diag, rhs);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void active_advance(const T* v, T dt, const HH<T>& hh, const Points& points, int step, int* record, int* recorded,
                    void* stream) {
  const index_t items = hh.count + points.synapses + points.detectors;
  if (items <= 0) return;
  advance_kernel<T><<<static_cast<unsigned>((items + kThreads - 1) / kThreads), kThreads, 0,
                      static_cast<cudaStream_t>(stream)>>>(v, dt, hh, points, step, record, recorded);
  ADI_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void active_first_nonfinite(index_t span, const T* v, unsigned long long* bad, void* stream) {
  if (span <= 0) return;
  nonfinite_kernel<T><<<blocks(span), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(span, v, bad);
  ADI_CUDA_CHECK(cudaGetLastError());
}

#define ADI_ACTIVE_INSTANCE(T)                                                                                       \
  template void active_assemble<T>(index_t, const T*, const T*, const T*, const T*, const T*, T*, T*, const HH<T>&,   \
                                   void*);                                                                          \
  template void active_points<T>(double, const Points&, T*, T*, void*);                                              \
  template void active_advance<T>(const T*, T, const HH<T>&, const Points&, int, int*, int*, void*);                 \
  template void active_first_nonfinite<T>(index_t, const T*, unsigned long long*, void*);
ADI_ACTIVE_INSTANCE(float)
ADI_ACTIVE_INSTANCE(double)
#undef ADI_ACTIVE_INSTANCE

}  // namespace adi::cuda_backend::hines_active
