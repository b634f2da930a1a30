#pragma once
// Host kernels of the variable-size batched Cholesky (adi/batched_cholesky.hpp). Called
// after validation: sizes 0..512, ld[s] >= max(1, n_s), non-null pointers of non-empty
// matrices. Matrices are taken in the batch plan's size order (largest first, dynamic
// schedule): matrices of size <= crossover in SIMD groups of similar sizes, one lane per
// matrix (cholesky_vbatched_vector.cpp), larger ones one per thread (cholesky_vbatched.cpp).
#include <cstddef>

#include "adi/base/variable_layout.hpp"

namespace adi::cpu {

// Scratch for `threads` threads (0: all) with the small path up to `crossover`.
std::size_t cholesky_workspace_bytes(int crossover, int threads, std::size_t value_size);

// potrf of every matrix; info[s] = 0 or failing column + 1. vector_small false runs every
// matrix on the scalar path.
template <class T>
void cholesky_factor(const VariableBatchView& v, T* const* A, const int* ld, int* info, int crossover,
                     bool vector_small, void* workspace, int threads);

// potrs; matrices with info[s] != 0 (info non-null) are skipped.
template <class T>
void cholesky_solve(const VariableBatchView& v, const T* const* L, const int* ld, T* const* B, const int* ldb,
                    int nrhs, const int* info, int threads);

// The reference (solvers/reference/cholesky.hpp), one matrix at a time, one thread.
template <class T>
void cholesky_factor_reference(const VariableBatchView& v, T* const* A, const int* ld, int* info);

namespace detail {
// One matrix on the calling thread (left-looking, 4 columns at a time); `v` is scratch of
// 4 * n values. Returns 0 or failing column + 1.
template <class T>
int cholesky_scalar(int n, T* A, int ld, T* v);
// SIMD group of W = simd::kWidth<T> matrices (sizes n[0..W), pointers null for absent
// lanes); scratch of m(m+1)/2 * W values, m = max n. Writes info of each lane.
template <class T>
void cholesky_vector(const int* n, T* const* A, const int* ld, int* info, T* scratch);
template <class T>
int vector_lanes();
}  // namespace detail

}  // namespace adi::cpu
