#pragma once
// Host kernels of variable-size tridiagonal batches (adi/variable_tridiagonal.hpp), one
// per layout; the sweep itself is thomas_variable_core.hpp. Called after validation.
// Each returns the smallest system index that met a zero or non-finite pivot, or -1.
#include <cstddef>

#include "adi/base/variable_layout.hpp"

namespace adi::cpu {

template <class T>
struct VariableArrays {
  const T* a;
  const T* b;
  const T* c;
  const T* d;
  T* u;
};
template <class T>
struct VariablePointers {
  const T* const* a;
  const T* const* b;
  const T* const* c;
  const T* const* d;
  T* const* u;
};

// Scratch for `threads` threads (0: all) and systems of up to `rows` rows.
std::size_t variable_workspace_bytes(int rows, int threads, std::size_t value_size);

// PaddedInterleaved (element k of s at k*stride + s): SIMD lanes on neighbouring systems.
// CP (stop_at_size false) runs `rows` rows in every group, reading the padding; NCP runs
// each group of lanes to its own largest size.
template <class T>
index_t variable_thomas_padded(const VariableBatchView& v, index_t stride, int rows, VariableArrays<T> x,
                               bool periodic, bool stop_at_size, void* workspace, int threads);
// SortedInterleaved: SIMD groups within a chunk, each to its largest size.
template <class T>
index_t variable_thomas_sorted(const VariableBatchView& v, VariableArrays<T> x, bool periodic, void* workspace,
                               int threads);
// CompactBatch (element k of s at offsets[s] + k): one system per thread, size order.
template <class T>
index_t variable_thomas_compact(const VariableBatchView& v, const index_t* offsets, VariableArrays<T> x,
                                bool periodic, void* workspace, int threads);
// PointerBatch.
template <class T>
index_t variable_thomas_pointers(const VariableBatchView& v, VariablePointers<T> x, bool periodic,
                                 void* workspace, int threads);

// The oracle: plain Thomas / Sherman-Morrison in double (solvers/reference/thomas.hpp),
// or with pivoting its partial-pivoting solve (the host route of Pivoting::partial), one
// system at a time; `index(s, k)` of the layout given as (offsets or stride).
// offsets != null: compact; otherwise element k of s at base(s) + k*stride with
// base(s) = s for padded or the sorted-layout slot when sorted is true.
template <class T>
index_t variable_thomas_reference(const VariableBatchView& v, const index_t* offsets, index_t stride,
                                  bool sorted, VariableArrays<T> x, bool periodic, bool pivoting = false);
template <class T>
index_t variable_thomas_reference(const VariableBatchView& v, VariablePointers<T> x, bool periodic,
                                  bool pivoting = false);

}  // namespace adi::cpu
