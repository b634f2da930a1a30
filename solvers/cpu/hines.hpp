#pragma once
// Host kernels of the batched Hines solver (adi/hines.hpp). They assume validated input
// (HinesPlan validates). Each returns the smallest neuron index with a zero or non-finite
// pivot, or -1.
#include "adi/base/hines_view.hpp"

namespace adi::cpu {

using detail::HinesLayoutKind;
using detail::HinesView;

// Thread slot <-> neuron: slots follow the sorted order for SortedInterleaved.
inline index_t hines_neuron(const HinesView& v, index_t slot) {
  return v.layout == HinesLayoutKind::sorted ? v.order[slot] : slot;
}
inline index_t hines_slot(const HinesView& v, index_t neuron) {
  return v.layout == HinesLayoutKind::sorted ? v.position[neuron] : neuron;
}
// Every layout is affine in k: element k of the neuron at `slot` is at base + k * step.
inline index_t hines_base(const HinesView& v, index_t slot) {
  switch (v.layout) {
    case HinesLayoutKind::compact: return v.offsets[slot];
    case HinesLayoutKind::padded: return slot;
    default: return v.chunk_offsets[slot / v.chunk_width] + slot % v.chunk_width;
  }
}
inline index_t hines_step(const HinesView& v) {
  return v.layout == HinesLayoutKind::compact ? 1 : v.layout == HinesLayoutKind::padded ? v.stride : v.chunk_width;
}
inline index_t hines_address(const HinesView& v, index_t slot, int k) {
  return hines_base(v, slot) + k * hines_step(v);
}

// Algorithm 1 of the paper in double, one neuron after the other: the oracle.
template <class T>
index_t hines_reference(const HinesView& v, const T* offdiag, T* diag, T* rhs);
// Hines per neuron in T, OpenMP across neurons (threads 0: all); diag keeps 1/pivot.
template <class T>
index_t hines_scalar(const HinesView& v, const T* offdiag, T* diag, T* rhs, int threads);
// SortedInterleaved: the chunk's neurons in SIMD lanes when they share one tree, lane by
// lane otherwise; OpenMP across chunks.
template <class T>
index_t hines_vector(const HinesView& v, const T* offdiag, T* diag, T* rhs, int threads);

// Implicit Euler assembly over `span` values: diag = d0; v = cdt * v + ge; then
// v[stim_pos[k]] += stim_amp[k].
template <class T>
void hines_assemble(index_t span, const T* d0, const T* cdt, const T* ge, T* diag, T* v, const index_t* stim_pos,
                    const T* stim_amp, int nstim, int threads);

}  // namespace adi::cpu
