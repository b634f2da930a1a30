// Host variable-size batched Cholesky: the driver (size order, groups, OpenMP), the
// one-matrix-per-thread kernel, potrs and the reference loop.
#include "solvers/cpu/cholesky_vbatched.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "solvers/cpu/simd.hpp"
#include "solvers/reference/cholesky.hpp"

namespace adi::cpu {

namespace detail {

// Left-looking Cholesky, 4 columns per step (paper's Algorithm 1 with nb = 4): the four
// columns are first updated by all finished columns into the scratch v (n x 4), one
// vector load of L(i.., k) feeding four FMAs, then factored among themselves in v and
// copied to A. A failure leaves the step's columns untouched in A.
template <class T>
int cholesky_scalar(int n, T* A, int ld, T* v) {
  constexpr int W = simd::kWidth<T>;
  using V = simd::Vec<T, W>;
  auto at = [&](int i, int j) -> T& { return A[i + static_cast<long>(j) * ld]; };
  for (int j0 = 0; j0 < n; j0 += 4) {
    const int w = std::min(4, n - j0);
    // v(i, c) = A(i, j0+c) - sum_{k<j0} L(i,k) L(j0+c,k), rows i >= j0.
    int i = j0;
    if (w == 4) {
      // Two vectors of rows at once: per k, 2 loads and 4 broadcasts feed 8 FMAs.
      for (; i + 2 * W <= n; i += 2 * W) {
        V acc0[4], acc1[4];
        for (int c = 0; c < 4; ++c) {
          acc0[c] = simd::load<V>(&at(i, j0 + c));
          acc1[c] = simd::load<V>(&at(i + W, j0 + c));
        }
        for (int k = 0; k < j0; ++k) {
          const V l0 = simd::load<V>(&at(i, k)), l1 = simd::load<V>(&at(i + W, k));
          for (int c = 0; c < 4; ++c) {
            const T b = at(j0 + c, k);
            acc0[c] -= l0 * b;
            acc1[c] -= l1 * b;
          }
        }
        for (int c = 0; c < 4; ++c) {
          simd::store(v + c * n + i, acc0[c]);
          simd::store(v + c * n + i + W, acc1[c]);
        }
      }
    }
    for (; i + W <= n; i += W) {
      V acc[4];
      for (int c = 0; c < w; ++c) acc[c] = simd::load<V>(&at(i, j0 + c));
      for (int k = 0; k < j0; ++k) {
        const V l = simd::load<V>(&at(i, k));
        for (int c = 0; c < w; ++c) acc[c] -= l * at(j0 + c, k);
      }
      for (int c = 0; c < w; ++c) simd::store(v + c * n + i, acc[c]);
    }
    for (; i < n; ++i)
      for (int c = 0; c < w; ++c) {
        T s = at(i, j0 + c);
        for (int k = 0; k < j0; ++k) s -= at(i, k) * at(j0 + c, k);
        v[c * n + i] = s;
      }
    // Factor the w columns in v (right-looking inside the step).
    for (int c = 0; c < w; ++c) {
      const int j = j0 + c;
      const T d = v[c * n + j];
      if (!(d > T(0)) || !std::isfinite(d)) {
        for (int q = 0; q < c; ++q)
          for (int r = j0 + q; r < n; ++r) at(r, j0 + q) = v[q * n + r];
        return j + 1;
      }
      const T l = std::sqrt(d), rl = T(1) / l;
      v[c * n + j] = l;
      for (int r = j + 1; r < n; ++r) v[c * n + r] *= rl;
      for (int q = c + 1; q < w; ++q) {
        const T f = v[c * n + j0 + q];
        for (int r = j0 + q; r < n; ++r) v[q * n + r] -= v[c * n + r] * f;
      }
    }
    for (int c = 0; c < w; ++c)
      for (int r = j0 + c; r < n; ++r) at(r, j0 + c) = v[c * n + r];
  }
  return 0;
}

}  // namespace detail

namespace {

inline int threads_for(int threads) { return threads > 0 ? threads : std::max(1, omp_get_max_threads()); }

// Items of work in size order: a SIMD group of matrices of size <= crossover, or one
// larger matrix. Sorted descending, so the large matrices come first (and finish first).
struct Item {
  index_t first;  // sorted position
  int lanes;      // 1 for a scalar item
  bool vector;
};

std::vector<Item> make_items(const VariableBatchView& v, int crossover, bool vector_small, int lanes) {
  std::vector<Item> items;
  index_t p = 0;
  while (p < v.count) {
    const int n = v.sizes[v.order[p]];
    if (n == 0) break;  // the rest are empty
    if (vector_small && n <= crossover) {
      const int k = static_cast<int>(std::min<index_t>(lanes, v.count - p));
      items.push_back({p, k, true});
      p += k;
    } else {
      items.push_back({p, 1, false});
      ++p;
    }
  }
  return items;
}

}  // namespace

std::size_t cholesky_workspace_bytes(int crossover, int threads, std::size_t value_size) {
  const int lanes = value_size == 8 ? detail::vector_lanes<double>() : detail::vector_lanes<float>();
  const std::size_t m = static_cast<std::size_t>(std::max(crossover, 1));
  const std::size_t per = std::max(m * (m + 1) / 2 * lanes, std::size_t{4} * 512) * value_size;
  return per * threads_for(threads);
}

template <class T>
void cholesky_factor(const VariableBatchView& v, T* const* A, const int* ld, int* info, int crossover,
                     bool vector_small, void* workspace, int threads) {
  const int lanes = detail::vector_lanes<T>();
  const std::vector<Item> items = make_items(v, crossover, vector_small, lanes);
  // Empty matrices succeed trivially.
  for (index_t p = 0; p < v.count; ++p)
    if (v.sizes[v.order[p]] == 0) info[v.order[p]] = 0;
  const std::size_t per =
      cholesky_workspace_bytes(vector_small ? crossover : 0, 1, sizeof(T)) / sizeof(T);  // per thread
  const index_t nitems = static_cast<index_t>(items.size());
  const int nt = static_cast<int>(std::clamp<index_t>(nitems, 1, threads_for(threads)));
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    T* scratch = static_cast<T*>(workspace) + per * omp_get_thread_num();
    int n[64];
    T* ptr[64];
    int ldl[64];
    int inf[64];
#pragma omp for schedule(dynamic, 1)
    for (index_t it = 0; it < nitems; ++it) {
      const Item& item = items[it];
      if (!item.vector) {
        const index_t s = v.order[item.first];
        info[s] = detail::cholesky_scalar<T>(v.sizes[s], A[s], ld[s], scratch);
        continue;
      }
      for (int j = 0; j < lanes; ++j) {
        const bool here = j < item.lanes;
        const index_t s = here ? v.order[item.first + j] : 0;
        n[j] = here ? v.sizes[s] : 0;
        ptr[j] = here ? A[s] : nullptr;
        ldl[j] = here ? ld[s] : 1;
      }
      detail::cholesky_vector<T>(n, ptr, ldl, inf, scratch);
      for (int j = 0; j < item.lanes; ++j) info[v.order[item.first + j]] = inf[j];
    }
  }
}

template <class T>
void cholesky_solve(const VariableBatchView& v, const T* const* L, const int* ld, T* const* B, const int* ldb,
                    int nrhs, const int* info, int threads) {
  const int nt = static_cast<int>(std::clamp<index_t>(v.count / 16 + 1, 1, threads_for(threads)));
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 4)
  for (index_t p = 0; p < v.count; ++p) {
    const index_t s = v.order[p];
    const int n = v.sizes[s];
    if (n == 0 || (info && info[s] != 0)) continue;
    const T* l = L[s];
    const long lds = ld[s];
    for (int r = 0; r < nrhs; ++r) {
      T* b = B[s] + static_cast<long>(r) * ldb[s];
      // L y = b, column by column (axpy on contiguous columns).
      for (int j = 0; j < n; ++j) {
        const T y = b[j] / l[j + j * lds];
        b[j] = y;
        const T* col = l + j * lds;
        for (int i = j + 1; i < n; ++i) b[i] -= col[i] * y;
      }
      // L^T x = y, row by row of L^T (dots with contiguous columns of L).
      for (int j = n - 1; j >= 0; --j) {
        const T* col = l + j * lds;
        T s2 = b[j];
        for (int i = j + 1; i < n; ++i) s2 -= col[i] * b[i];
        b[j] = s2 / col[j];
      }
    }
  }
}

template <class T>
void cholesky_factor_reference(const VariableBatchView& v, T* const* A, const int* ld, int* info) {
  for (index_t s = 0; s < v.count; ++s) info[s] = reference::cholesky_factor(v.sizes[s], A[s], ld[s]);
}

#define ADI_CHOLESKY_CPU(T)                                                                                         \
  template void cholesky_factor<T>(const VariableBatchView&, T* const*, const int*, int*, int, bool, void*, int); \
  template void cholesky_solve<T>(const VariableBatchView&, const T* const*, const int*, T* const*, const int*,   \
                                  int, const int*, int);                                                          \
  template void cholesky_factor_reference<T>(const VariableBatchView&, T* const*, const int*, int*);              \
  template int detail::cholesky_scalar<T>(int, T*, int, T*);
ADI_CHOLESKY_CPU(float)
ADI_CHOLESKY_CPU(double)
#undef ADI_CHOLESKY_CPU

}  // namespace adi::cpu
