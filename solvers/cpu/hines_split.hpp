#pragma once
// Host Hines solve for populations advanced in time (PassiveNeurons, ActiveNeurons): the part
// of each tree's matrix that never changes is factored once.
//
// The implicit-Euler matrix of a cell is constant except on the diagonal of nodes with a
// varying membrane (hh, a synapse). A node's pivot depends only on the diagonal of its own
// subtree, so every node whose subtree holds no varying node ("fixed") keeps the same pivot
// step after step: its 1/pivot and multiplier l/pivot are computed once (in fp64). Per step
// the fixed nodes only carry the right-hand side (one multiply-add per node, no division);
// the varying nodes (those with a varying node in their subtree: the varying ones and their
// ancestors) are eliminated as usual. A passive cell has no varying node at all: its step is
// two sweeps of multiply-adds. Fixed nodes are closed under descent and varying ones under
// ascent, so eliminating every fixed node (children first) before the varying ones keeps
// Hines' order. Several neurons of one tree are solved together (G chains in flight: the
// sweeps are latency-bound in one cell).
//
// Header-only templates: adi/hines.cpp and adi/hines_active.cpp instantiate them.
#include <algorithm>
#include <cmath>
#include <vector>

#include "adi/base/layout.hpp"

namespace adi::cpu {

template <class T>
struct HinesSplit {
  int n = 0;
  std::vector<int> parent;
  std::vector<int> fixed;    // fixed nodes but the root, descending (children before parents)
  std::vector<int> varying;  // varying nodes but the root, descending
  bool root_varies = false;
  std::vector<char> vary;    // per node: 1 when varying
  std::vector<T> l, l2;      // off-diagonal (node, parent) and its square
  std::vector<T> inv, f;     // fixed nodes: 1/pivot, l/pivot (varying nodes: scratch per solve)
  // Varying nodes: the constant part of the diagonal less what the elimination of its fixed
  // children removes; a solve starts from it plus the node's varying membrane terms.
  std::vector<T> base;
  bool bad = false;          // a fixed pivot is zero or not finite
  bool all_fixed() const { return varying.empty() && !root_varies; }
};

// parent[k] < k; offdiag and diag of the constant matrix (diag: everything constant on it,
// C/dt + axial + the constant membrane terms); varies[k]: node k's diagonal changes per step.
template <class T>
HinesSplit<T> hines_split(const std::vector<int>& parent, const std::vector<double>& offdiag,
                          const std::vector<double>& diag, const std::vector<char>& varies) {
  HinesSplit<T> s;
  const int n = static_cast<int>(parent.size());
  s.n = n;
  s.parent = parent;
  std::vector<char> var(varies.begin(), varies.end());
  var.resize(static_cast<std::size_t>(n), 0);
  for (int i = n - 1; i >= 1; --i)
    if (var[static_cast<std::size_t>(i)]) var[static_cast<std::size_t>(parent[static_cast<std::size_t>(i)])] = 1;
  std::vector<double> d(diag);
  s.l.assign(static_cast<std::size_t>(n), T(0));
  s.l2.assign(static_cast<std::size_t>(n), T(0));
  s.inv.assign(static_cast<std::size_t>(n), T(0));
  s.f.assign(static_cast<std::size_t>(n), T(0));
  s.base.assign(static_cast<std::size_t>(n), T(0));
  for (int i = n - 1; i >= 1; --i) {
    const std::size_t a = static_cast<std::size_t>(i), ap = static_cast<std::size_t>(parent[a]);
    s.l[a] = static_cast<T>(offdiag[a]);
    s.l2[a] = s.l[a] * s.l[a];
    if (var[a]) {
      s.varying.push_back(i);
      continue;
    }
    s.fixed.push_back(i);
    const double inv = 1 / d[a];
    s.bad |= !(std::isfinite(inv) && inv != 0);
    s.inv[a] = static_cast<T>(inv);
    s.f[a] = static_cast<T>(offdiag[a] * inv);
    d[ap] -= offdiag[a] * offdiag[a] * inv;
  }
  s.root_varies = n > 0 && var[0];
  s.vary = var;
  if (n > 0 && !var[0]) {
    const double inv = 1 / d[0];
    s.bad |= !(std::isfinite(inv) && inv != 0);
    s.inv[0] = static_cast<T>(inv);
  }
  for (int i = 0; i < n; ++i)
    if (var[static_cast<std::size_t>(i)]) s.base[static_cast<std::size_t>(i)] = static_cast<T>(d[static_cast<std::size_t>(i)]);
  return s;
}

namespace split_detail {

template <class T>
inline bool bad_inverse(T inv) {
  return inv - inv != T(0) || inv == T(0);
}

// G neurons of one tree: r[g] its rhs (in: assembled, out: the solution), d[g] its diagonal
// (read on varying nodes only: base + the membrane terms), inv[g]/f[g] n values each (scratch:
// the varying nodes' 1/pivot and multiplier of this solve). Returns a mask of bad g.
//
// The sweeps are chains of multiply-adds (divisions on varying nodes). Along a branch (the
// next node eliminated is the parent, the node substituted before is the parent) the running
// values stay in registers: going through memory, a store and the load that forwards from it
// would double each link of the chain.
template <class T, int G>
unsigned solve_group(const HinesSplit<T>& s, T* const* d, T* const* r, T* const* inv, T* const* f) {
  const int* p = s.parent.data();
  const int n = s.n;
  T x[G], dx[G];
  bool bad[G] = {};
  if (s.all_fixed()) {
    const T* sf = s.f.data();
    if (n > 1) {
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) x[g] = r[g][n - 1];
      for (int i = n - 1; i >= 1; --i) {
        const int pi = p[i];
        const T fi = sf[i];
        if (pi == i - 1) {
#pragma GCC unroll 8
          for (int g = 0; g < G; ++g) {
            r[g][i] = x[g];
            x[g] = std::fma(-fi, x[g], r[g][i - 1]);
          }
        } else {
#pragma GCC unroll 8
          for (int g = 0; g < G; ++g) {
            r[g][i] = x[g];
            r[g][pi] -= fi * x[g];
            x[g] = r[g][i - 1];
          }
        }
      }
    } else {
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) x[g] = r[g][0];
    }
  } else {
    // Fixed nodes (their pivots known), then the varying ones with divisions; a varying root
    // ends the list of varying nodes.
    const T* sf = s.f.data();
    const int nf = static_cast<int>(s.fixed.size());
    if (nf > 0) {
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) x[g] = r[g][s.fixed[0]];
    }
    for (int q = 0; q < nf; ++q) {
      const int i = s.fixed[static_cast<std::size_t>(q)], pi = p[i];
      const int next = q + 1 < nf ? s.fixed[static_cast<std::size_t>(q) + 1] : -1;
      const T fi = sf[i];
      if (pi == next) {
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
          r[g][i] = x[g];
          x[g] = std::fma(-fi, x[g], r[g][next]);
        }
      } else {
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
          r[g][i] = x[g];
          r[g][pi] -= fi * x[g];
          if (next >= 0) x[g] = r[g][next];
        }
      }
    }
    const T* l = s.l.data();
    const T* l2 = s.l2.data();
    const int nv = static_cast<int>(s.varying.size());
    const int first = nv > 0 ? s.varying[0] : 0;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      x[g] = r[g][first];
      dx[g] = d[g][first];
    }
    for (int q = 0; q < nv; ++q) {
      const int i = s.varying[static_cast<std::size_t>(q)], pi = p[i];
      const int next = q + 1 < nv ? s.varying[static_cast<std::size_t>(q) + 1] : 0;
      const T li = l[i];
      T fv[G], iv[G];
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) {
        iv[g] = T(1) / dx[g];
        bad[g] |= bad_inverse(iv[g]);
        fv[g] = li * iv[g];
        inv[g][i] = iv[g];
        f[g][i] = fv[g];
        r[g][i] = x[g];
      }
      if (pi == next) {
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
          x[g] = std::fma(-fv[g], x[g], r[g][next]);
          dx[g] = std::fma(-l2[i], iv[g], d[g][next]);
        }
      } else {
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
          r[g][pi] -= fv[g] * x[g];
          d[g][pi] -= fv[g] * li;
          x[g] = r[g][next];
          dx[g] = d[g][next];
        }
      }
    }
    // x, dx: the root's (the root varies whenever a node does).
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      if (s.root_varies) {
        inv[g][0] = T(1) / dx[g];
        bad[g] |= bad_inverse(inv[g][0]);
      }
    }
  }
  // Substitution: the fixed nodes' 1/pivot and multiplier are the tree's, the varying ones'
  // this solve's.
  const T* si = s.inv.data();
  const T* sf = s.f.data();
  const char* vary = s.vary.data();
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g) {
    x[g] *= s.root_varies ? inv[g][0] : si[0];
    r[g][0] = x[g];
  }
  for (int i = 1; i < n; ++i) {
    const int pi = p[i];
    if (!vary[i]) {
      const T ii = si[i], fi = sf[i];
      if (pi == i - 1) {
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) r[g][i] = x[g] = std::fma(-fi, x[g], r[g][i] * ii);
      } else {
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) r[g][i] = x[g] = r[g][i] * ii - fi * r[g][pi];
      }
    } else if (pi == i - 1) {
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) r[g][i] = x[g] = std::fma(-f[g][i], x[g], r[g][i] * inv[g][i]);
    } else {
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) r[g][i] = x[g] = r[g][i] * inv[g][i] - f[g][i] * r[g][pi];
    }
  }
  unsigned mask = 0;
  for (int g = 0; g < G; ++g) mask |= bad[g] ? 1u << g : 0u;
  return mask;
}

}  // namespace split_detail

// Per-thread scratch of the varying nodes' pivots (kGroup copies of each tree's inv and f).
template <class T>
struct HinesSplitWork {
  static constexpr int kGroup = 8;
  std::vector<std::vector<T>> inv, f;  // per tree: kGroup * n
  long generation = -1;                // of the trees copied
  // Copies the trees' fixed pivots (again when `gen` differs from the last call's).
  void prepare(const std::vector<HinesSplit<T>>& trees, long gen = 0) {
    if (generation == gen && inv.size() == trees.size()) return;
    generation = gen;
    inv.resize(trees.size());
    f.resize(trees.size());
    for (std::size_t t = 0; t < trees.size(); ++t) {
      inv[t].clear();
      f[t].clear();
      for (int g = 0; g < kGroup; ++g) {
        inv[t].insert(inv[t].end(), trees[t].inv.begin(), trees[t].inv.end());
        f[t].insert(f[t].end(), trees[t].f.begin(), trees[t].f.end());
      }
    }
  }
};

// The compact layout of a population for the split solve: neurons grouped by tree (stable), so
// that neighbours share a tree and sweep together. order[j]: the neuron at place j; offsets[s]:
// where neuron s starts (for CompactBatch{offsets}).
inline void hines_tree_order(const std::vector<int>& tree_of, const std::vector<int>& tree_size,
                             std::vector<index_t>& order, std::vector<index_t>& offsets) {
  const index_t count = static_cast<index_t>(tree_of.size());
  order.resize(static_cast<std::size_t>(count));
  for (index_t s = 0; s < count; ++s) order[static_cast<std::size_t>(s)] = s;
  std::stable_sort(order.begin(), order.end(), [&](index_t a, index_t b) {
    return tree_of[static_cast<std::size_t>(a)] < tree_of[static_cast<std::size_t>(b)];
  });
  offsets.assign(static_cast<std::size_t>(count), 0);
  index_t at = 0;
  for (const index_t s : order) {
    offsets[static_cast<std::size_t>(s)] = at;
    at += tree_size[static_cast<std::size_t>(tree_of[static_cast<std::size_t>(s)])];
  }
}

// Solves the neurons at places [first, last) of `order` (neuron s at offsets[s], tree
// tree_of[s]): runs of one tree in groups of up to 8. d: the diagonal (varying nodes only),
// r: rhs in, solution out. Returns a neuron with a bad pivot (fixed or varying; the first of
// its group), or -1.
template <class T>
index_t hines_split_solve(const std::vector<HinesSplit<T>>& trees, HinesSplitWork<T>& work, const int* tree_of,
                          const index_t* order, const index_t* offsets, index_t first, index_t last, T* d, T* r) {
  constexpr int K = HinesSplitWork<T>::kGroup;
  index_t bad = -1;
  index_t j = first;
  while (j < last) {
    const int t = tree_of[order[j]];
    const HinesSplit<T>& tr = trees[static_cast<std::size_t>(t)];
    int g = 1;
    while (g < K && j + g < last && tree_of[order[j + g]] == t) ++g;
    const int G = g >= 8 ? 8 : g >= 4 ? 4 : g >= 2 ? 2 : 1;
    T *dd[K], *rr[K], *ii[K], *ff[K];
    const std::size_t n = static_cast<std::size_t>(tr.n);
    for (int k = 0; k < G; ++k) {
      dd[k] = d + offsets[order[j + k]];
      rr[k] = r + offsets[order[j + k]];
      ii[k] = tr.all_fixed() ? nullptr : work.inv[static_cast<std::size_t>(t)].data() + k * n;
      ff[k] = tr.all_fixed() ? nullptr : work.f[static_cast<std::size_t>(t)].data() + k * n;
    }
    unsigned mask = 0;
    switch (G) {
      case 8: mask = split_detail::solve_group<T, 8>(tr, dd, rr, ii, ff); break;
      case 4: mask = split_detail::solve_group<T, 4>(tr, dd, rr, ii, ff); break;
      case 2: mask = split_detail::solve_group<T, 2>(tr, dd, rr, ii, ff); break;
      default: mask = split_detail::solve_group<T, 1>(tr, dd, rr, ii, ff); break;
    }
    if (tr.bad) mask |= (1u << G) - 1;
    if (mask && bad < 0)
      for (int k = 0; k < G; ++k)
        if (mask & (1u << k)) {
          bad = order[j + k];
          break;
        }
    j += G;
  }
  return bad;
}

}  // namespace adi::cpu
