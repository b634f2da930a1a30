#pragma once
// Host kernel: the diagonal band of (I/s - A_j), b[i] = inv_s - d[i], for n values.
#include "adi/base/layout.hpp"

namespace adi::cpu {

template <class T>
void stencil_diagonal(const T* d, T inv_s, T* b, index_t n, int threads);

}  // namespace adi::cpu
