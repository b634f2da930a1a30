#pragma once
// The device kernels of the active neuron population (adi/hines_active.cpp), seen from plain
// C++ (no CUDA header). Implemented in solvers/cuda/hines_active.cu; without CUDA the same list
// (ADI_CUDA_KERNEL) throws Unsupported (never reached: a build without CUDA has no device
// executor). Pointers are device memory, positions are in the HinesPlan's layout; every call
// is enqueued on `stream` and returns without waiting. The formulas are those of the host
// (solvers/common/hh_membrane.hpp).
#include "adi/base/layout.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace adi::cuda_backend::hines_active {
ADI_CUDA_KERNELS_BEGIN

// The hh instances: instance q sits at position pos[q] of a cell whose rate table (6 x 201
// values, solvers/common/hh_membrane.hpp) starts at tables + table_of[q] * kHHTableSize.
// hh_of[i] (per position, span values) is the instance at position i, or -1.
template <class T>
struct HH {
  index_t count = 0;
  const index_t* pos = nullptr;
  const int* hh_of = nullptr;
  const int* table_of = nullptr;
  const T* tables = nullptr;
  const T *gna = nullptr, *gk = nullptr, *gl = nullptr, *gel = nullptr, *ena = nullptr, *ek = nullptr;
  T *m = nullptr, *h = nullptr, *n = nullptr;
};

// Point processes: IClamps (pos, amp, del, dur) and ExpSyns (pos, g, e, decay; g in double as
// on the host), detectors (pos, threshold, above flag).
struct Points {
  int clamps = 0;
  const index_t* clamp_pos = nullptr;
  const double *clamp_amp = nullptr, *clamp_del = nullptr, *clamp_dur = nullptr;
  int synapses = 0;
  const index_t* syn_pos = nullptr;
  double* syn_g = nullptr;
  const double *syn_e = nullptr, *syn_decay = nullptr;
  int detectors = 0;
  const index_t* det_pos = nullptr;
  const double* det_threshold = nullptr;
  int* det_above = nullptr;
};

// Before the solve, per compartment i: diag = d0 + gpas, rhs = cdt v + gepas, plus hh's
// conductances and currents at the gates' state.
template <class T>
ADI_CUDA_KERNEL(void active_assemble(index_t span, const T* d0, const T* cdt, const T* gpas, const T* gepas, const T* v,
                                     T* diag, T* rhs, const HH<T>& hh, void* stream))
// Events of this step: syn_g[event_syn[k]] += event_weight[k] for k < events.
ADI_CUDA_KERNEL(void active_deliver(int events, const int* event_syn, const double* event_weight, double* syn_g,
                                    void* stream))
// Clamps active at tm (del <= tm < del + dur) add amp to rhs; synapses add g to diag, g e to rhs.
template <class T>
ADI_CUDA_KERNEL(void active_points(double tm, const Points& points, T* diag, T* rhs, void* stream))
// After the solve (v = v(t + dt)): hh gates by cnexp, synapses decay, and each detector whose
// voltage rises above its threshold appends {step, detector} to `record` (count in *recorded;
// capacity never exceeded: a detector records at most once a step).
template <class T>
ADI_CUDA_KERNEL(void active_advance(const T* v, T dt, const HH<T>& hh, const Points& points, int step, int* record,
                                    int* recorded, void* stream))
// *bad = the smallest position of a non-finite value in v[0, span) (left alone when none).
template <class T>
ADI_CUDA_KERNEL(void active_first_nonfinite(index_t span, const T* v, unsigned long long* bad, void* stream))

ADI_CUDA_KERNELS_END
}  // namespace adi::cuda_backend::hines_active
