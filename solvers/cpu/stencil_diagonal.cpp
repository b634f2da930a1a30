#include "solvers/cpu/stencil_diagonal.hpp"

#include <omp.h>

namespace adi::cpu {

template <class T>
void stencil_diagonal(const T* d, T inv_s, T* b, index_t n, int threads) {
  const int nt = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for simd schedule(static) num_threads(nt) if (n > 65536)
  for (index_t i = 0; i < n; ++i) b[i] = inv_s - d[i];
}

template void stencil_diagonal<float>(const float*, float, float*, index_t, int);
template void stencil_diagonal<double>(const double*, double, double*, index_t, int);

}  // namespace adi::cpu
