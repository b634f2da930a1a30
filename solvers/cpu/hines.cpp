// Host Hines kernels: algorithm 1 of cuHinesBatch (Valero-Lara et al. 2017) with symmetric
// storage (one off-diagonal per node couples it to its parent) and one parent array per tree.
#include "solvers/cpu/hines.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "solvers/cpu/simd.hpp"

namespace adi::cpu {
namespace {

// Below this many compartments per thread a parallel region costs more than it saves
// (the same threshold as the host tridiagonal kernels, solvers/cpu/tridiagonal_problem.hpp).
constexpr index_t kWorkPerThread = 32768;

int team_size(int threads, index_t work) {
  const int t = threads > 0 ? threads : omp_get_max_threads();
  const index_t useful = std::max<index_t>(1, work / kWorkPerThread);
  return static_cast<int>(std::min<index_t>(t, useful));
}

template <class T>
inline bool bad_pivot(T inv) {
  // 1/pivot is 0 for an infinite pivot, inf for a zero one, NaN for a NaN one.
  return inv - inv != T(0) || inv == T(0);
}

// One neuron in place: elimination towards the root (diag <- 1/pivot, rhs <- partial
// solution), then substitution away from it (rhs <- x). Returns true on a bad pivot.
template <class T>
bool hines_one(const T* l, T* d, T* r, const int* p, int n, index_t base, index_t step) {
  bool bad = false;
  for (int i = n - 1; i >= 1; --i) {
    const index_t a = base + i * step, ap = base + p[i] * step;
    const T inv = T(1) / d[a];
    bad |= bad_pivot(inv);
    const T f = l[a] * inv;
    d[a] = inv;
    d[ap] -= f * l[a];
    r[ap] -= f * r[a];
  }
  const T inv0 = T(1) / d[base];
  bad |= bad_pivot(inv0);
  r[base] *= inv0;
  for (int i = 1; i < n; ++i) {
    const index_t a = base + i * step;
    r[a] = (r[a] - l[a] * r[base + p[i] * step]) * d[a];
  }
  return bad;
}

// W lanes of neighbouring neurons (one tree), K vectors of the machine's width per row.
template <class T, int K>
int hines_lanes(const T* l, T* d, T* r, const int* p, int n, index_t base, index_t W) {
  constexpr int L = simd::kWidth<T>;
  using V = simd::Vec<T, L>;
  using M = simd::Mask<V>;
  M bad[K] = {};
  const V one = simd::broadcast<V>(T(1));
  for (int i = n - 1; i >= 1; --i) {
    T* da = d + base + i * W;
    T* dp = d + base + p[i] * W;
    const T* la = l + base + i * W;
    T* ra = r + base + i * W;
    T* rp = r + base + p[i] * W;
#pragma GCC unroll 8
    for (int g = 0; g < K; ++g) {
      const V dv = simd::load<V>(da + g * L), lv = simd::load<V>(la + g * L), rv = simd::load<V>(ra + g * L);
      const V inv = one / dv;
      bad[g] |= simd::not_finite_or_zero(inv);
      const V f = lv * inv;
      simd::store(da + g * L, inv);
      simd::store(dp + g * L, simd::load<V>(dp + g * L) - f * lv);
      simd::store(rp + g * L, simd::load<V>(rp + g * L) - f * rv);
    }
  }
#pragma GCC unroll 8
  for (int g = 0; g < K; ++g) {
    const V inv = one / simd::load<V>(d + base + g * L);
    bad[g] |= simd::not_finite_or_zero(inv);
    simd::store(r + base + g * L, simd::load<V>(r + base + g * L) * inv);
  }
  for (int i = 1; i < n; ++i) {
    const T* da = d + base + i * W;
    const T* la = l + base + i * W;
    T* ra = r + base + i * W;
    const T* rp = r + base + p[i] * W;
#pragma GCC unroll 8
    for (int g = 0; g < K; ++g)
      simd::store(ra + g * L, (simd::load<V>(ra + g * L) - simd::load<V>(la + g * L) * simd::load<V>(rp + g * L)) *
                                  simd::load<V>(da + g * L));
  }
  for (int g = 0; g < K; ++g) {
    const int j = simd::first_set<L>(bad[g]);
    if (j >= 0) return g * L + j;
  }
  return -1;
}

template <class T>
int run_lanes(int groups, const T* l, T* d, T* r, const int* p, int n, index_t base, index_t W) {
  switch (groups) {
    case 1: return hines_lanes<T, 1>(l, d, r, p, n, base, W);
    case 2: return hines_lanes<T, 2>(l, d, r, p, n, base, W);
    case 4: return hines_lanes<T, 4>(l, d, r, p, n, base, W);
    case 8: return hines_lanes<T, 8>(l, d, r, p, n, base, W);
    default: return -2;  // not a supported width: lane by lane
  }
}

index_t total_work(const HinesView& v) {
  index_t w = 0;
  for (index_t s = 0; s < v.count; ++s) w += v.sizes[s];
  return w;
}

}  // namespace

template <class T>
index_t hines_reference(const HinesView& v, const T* offdiag, T* diag, T* rhs) {
  index_t bad = -1;
  std::vector<double> l, d, r;
  const index_t step = hines_step(v);
  for (index_t slot = 0; slot < v.count; ++slot) {
    const index_t s = hines_neuron(v, slot);
    const int n = v.sizes[s];
    const int* p = v.parents + v.parent_base[s];
    const index_t base = hines_base(v, slot);
    l.resize(static_cast<std::size_t>(n));
    d.resize(static_cast<std::size_t>(n));
    r.resize(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      l[static_cast<std::size_t>(k)] = offdiag[base + k * step];
      d[static_cast<std::size_t>(k)] = diag[base + k * step];
      r[static_cast<std::size_t>(k)] = rhs[base + k * step];
    }
    bool b = false;
    for (int i = n - 1; i >= 1; --i) {
      const std::size_t a = static_cast<std::size_t>(i), ap = static_cast<std::size_t>(p[i]);
      b |= !(d[a] != 0 && d[a] - d[a] == 0);
      const double f = l[a] / d[a];
      d[ap] -= f * l[a];
      r[ap] -= f * r[a];
    }
    b |= !(d[0] != 0 && d[0] - d[0] == 0);
    r[0] /= d[0];
    for (int i = 1; i < n; ++i) {
      const std::size_t a = static_cast<std::size_t>(i);
      r[a] = (r[a] - l[a] * r[static_cast<std::size_t>(p[i])]) / d[a];
    }
    for (int k = 0; k < n; ++k) rhs[base + k * step] = static_cast<T>(r[static_cast<std::size_t>(k)]);
    if (b && (bad < 0 || s < bad)) bad = s;
  }
  return bad;
}

template <class T>
index_t hines_scalar(const HinesView& v, const T* offdiag, T* diag, T* rhs, int threads) {
  index_t bad = v.count;
  const index_t step = hines_step(v);
  const int team = team_size(threads, total_work(v));
  auto one = [&](index_t slot) {
    const index_t s = hines_neuron(v, slot);
    return hines_one(offdiag, diag, rhs, v.parents + v.parent_base[s], v.sizes[s], hines_base(v, slot), step)
               ? s
               : v.count;
  };
  if (team > 1) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(team) reduction(min : bad)
    for (index_t slot = 0; slot < v.count; ++slot) bad = std::min(bad, one(slot));
  } else {
    for (index_t slot = 0; slot < v.count; ++slot) bad = std::min(bad, one(slot));
  }
  return bad == v.count ? -1 : bad;
}

template <class T>
index_t hines_vector(const HinesView& v, const T* offdiag, T* diag, T* rhs, int threads) {
  const index_t W = v.chunk_width;
  const index_t chunks = (v.count + W - 1) / W;
  constexpr int L = simd::kWidth<T>;
  index_t bad = v.count;
  const int team = team_size(threads, total_work(v));
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(min : bad) if (team > 1)
  for (index_t c = 0; c < chunks; ++c) {
    const index_t first = c * W, lanes = std::min(W, v.count - first);
    const index_t base = v.chunk_offsets[c];
    // Runs of whole SIMD groups (L lanes) whose neurons share one tree go through the vector
    // kernel, up to 8 groups at a time (independent vectors hide the division latency); the
    // rest lane by lane. A full chunk of one tree is one run; a partial chunk (a batch of 16
    // cells in chunks of 32) or a chunk mixing trees still vectorises its uniform groups.
    index_t j = 0;
    while (j < lanes) {
      const index_t s0 = v.order[first + j];
      const int tree = v.tree_of[s0];
      index_t end = j;
      while (end + L <= lanes) {
        bool same = true;
        for (index_t q = end; q < end + L && same; ++q) same = v.tree_of[v.order[first + q]] == tree;
        if (!same) break;
        end += L;
      }
      if (end == j) {
        if (hines_one(offdiag, diag, rhs, v.parents + v.parent_base[s0], v.sizes[s0], base + j, W))
          bad = std::min(bad, s0);
        ++j;
        continue;
      }
      for (index_t groups = (end - j) / L; groups > 0;) {
        const int k = groups >= 8 ? 8 : groups >= 4 ? 4 : groups >= 2 ? 2 : 1;
        // The first bad lane of the first bad vector; lanes are size-sorted, not
        // index-sorted, so this is one bad neuron (not necessarily the smallest index).
        const int lane = run_lanes<T>(k, offdiag, diag, rhs, v.parents + v.parent_base[s0], v.sizes[s0], base + j, W);
        if (lane >= 0) bad = std::min(bad, v.order[first + j + lane]);
        j += static_cast<index_t>(k) * L;
        groups -= k;
      }
    }
  }
  return bad == v.count ? -1 : bad;
}

template <class T>
void hines_assemble(index_t span, const T* d0, const T* cdt, const T* ge, T* diag, T* v, const index_t* stim_pos,
                    const T* stim_amp, int nstim, int threads) {
  const int team = team_size(threads, span / 4);
  if (team > 1) {
#pragma omp parallel for simd schedule(static) num_threads(team)
    for (index_t i = 0; i < span; ++i) {
      diag[i] = d0[i];
      v[i] = cdt[i] * v[i] + ge[i];
    }
  } else {  // no parallel region at all: even a team of one costs as much as a small cell's step
#pragma omp simd
    for (index_t i = 0; i < span; ++i) {
      diag[i] = d0[i];
      v[i] = cdt[i] * v[i] + ge[i];
    }
  }
  for (int k = 0; k < nstim; ++k) v[stim_pos[k]] += stim_amp[k];
}

#define ADI_HINES_CPU(T)                                                                                         \
  template index_t hines_reference<T>(const HinesView&, const T*, T*, T*);                                       \
  template index_t hines_scalar<T>(const HinesView&, const T*, T*, T*, int);                                     \
  template index_t hines_vector<T>(const HinesView&, const T*, T*, T*, int);                                     \
  template void hines_assemble<T>(index_t, const T*, const T*, const T*, T*, T*, const index_t*, const T*, int, \
                                  int);
ADI_HINES_CPU(float)
ADI_HINES_CPU(double)
#undef ADI_HINES_CPU

}  // namespace adi::cpu
