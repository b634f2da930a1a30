#pragma once
// Shared pieces of the Hines tests: tree shapes, random symmetric diagonally dominant
// systems in any plan layout (padding poisoned with NaN), and the dense Eigen oracle.
#include <Eigen/Dense>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "adi/hines.hpp"
#include "adi/hines_active.hpp"

namespace hines_test {

// A path under tests/. __FILE__ is relative when the build rewrites paths (ccache's
// CCACHE_BASEDIR): then it is relative to the build directory, and ctest runs a test from a
// subdirectory of it, so look upwards.
inline std::string tests_path(const std::string& rel) {
  const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path() / rel;
  if (here.is_absolute()) return here.string();
  std::filesystem::path up = ".";
  for (int k = 0; k < 5; ++k, up /= "..")
    if (std::filesystem::exists(up / here)) return (up / here).lexically_normal().string();
  return here.string();
}
inline std::string data_dir() { return tests_path("data/morphologies"); }
// A python that imports NEURON ($ADI_PYTHON, python3, /usr/bin/python3), or "" when none does.
inline std::string python_with_neuron() {
  static const std::string found = [] {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("ADI_PYTHON")) candidates.push_back(env);
    candidates.push_back("python3");
    candidates.push_back("/usr/bin/python3");
    for (const std::string& py : candidates)
      if (std::system((py + " -c 'import neuron' > /dev/null 2>&1").c_str()) == 0) return py;
    return std::string();
  }();
  return found;
}
inline std::string dense_cell() { return data_dir() + "/10-2012-02-09-001.CNG.swc"; }
inline std::string sparse_cell() { return data_dir() + "/allen-177300.01.02.01.swc"; }

struct Rng {
  std::uint64_t s;
  double uniform() {  // [0, 1)
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * (1.0 / 9007199254740992.0);
  }
  int below(int n) { return static_cast<int>(uniform() * n); }
};

inline std::vector<int> cable(int n) {
  std::vector<int> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i - 1;
  return p;
}
inline std::vector<int> star(int n) {
  std::vector<int> p(static_cast<std::size_t>(n), 0);
  p[0] = -1;
  return p;
}
// A complete binary tree in heap order (node i's children 2i+1, 2i+2).
inline std::vector<int> binary(int n) {
  std::vector<int> p(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i == 0 ? -1 : (i - 1) / 2;
  return p;
}
// A deep binary tree: every branch point splits into two cables of `run` nodes, depth-first
// numbered (the children of a branch point are not adjacent, unlike heap order).
inline std::vector<int> deep_binary(int n, int run = 4) {
  std::vector<int> p{-1};
  std::vector<int> stack{0};
  while (static_cast<int>(p.size()) < n && !stack.empty()) {
    const int tip = stack.back();
    stack.pop_back();
    int last[2];
    for (int c = 0; c < 2; ++c) {
      int at = tip;
      for (int k = 0; k < run && static_cast<int>(p.size()) < n; ++k) {
        p.push_back(at);
        at = static_cast<int>(p.size()) - 1;
      }
      last[c] = at;
    }
    stack.push_back(last[1]);
    stack.push_back(last[0]);
  }
  return p;
}
inline std::vector<int> random_tree(int n, std::uint64_t seed) {
  Rng r{seed};
  std::vector<int> p(static_cast<std::size_t>(n));
  p[0] = -1;
  for (int i = 1; i < n; ++i) p[static_cast<std::size_t>(i)] = r.uniform() < 0.7 ? i - 1 : r.below(i);
  return p;
}

struct Shape {
  std::string name;
  std::vector<int> parent;
};
// Every shape at odd and awkward sizes.
inline std::vector<Shape> shapes() {
  std::vector<Shape> s;
  for (int n : {1, 2, 3, 31, 33, 255, 257}) {
    s.push_back({"cable" + std::to_string(n), cable(n)});
    s.push_back({"star" + std::to_string(n), star(n)});
    s.push_back({"binary" + std::to_string(n), binary(n)});
    s.push_back({"deep" + std::to_string(n), deep_binary(n)});
    s.push_back({"random" + std::to_string(n), random_tree(n, 100 + n)});
  }
  return s;
}

// One neuron's system in double (the values the solver saw, after rounding to T).
struct System {
  std::vector<int> parent;
  std::vector<double> off, diag, rhs;
};

inline Eigen::VectorXd dense_solve(const System& s) {
  const int n = static_cast<int>(s.parent.size());
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) {
    A(i, i) = s.diag[static_cast<std::size_t>(i)];
    b(i) = s.rhs[static_cast<std::size_t>(i)];
    if (i > 0) {
      const int p = s.parent[static_cast<std::size_t>(i)];
      A(i, p) = A(p, i) = s.off[static_cast<std::size_t>(i)];
    }
  }
  return A.llt().solve(b);  // symmetric positive definite (diagonally dominant, positive diagonal)
}

// Random symmetric diagonally dominant systems for every neuron of a batch, rounded to T
// (so that the dense fp64 solve sees exactly what the solver sees).
template <class T>
std::vector<System> random_systems(const adi::HinesBatch& nb, std::uint64_t seed) {
  Rng r{seed};
  std::vector<System> out;
  for (adi::index_t s = 0; s < nb.count(); ++s) {
    const std::vector<int>& parent =
        nb.topologies[static_cast<std::size_t>(nb.topology_of[static_cast<std::size_t>(s)])].parent();
    const std::size_t n = parent.size();
    System sys;
    sys.parent = parent;
    sys.off.assign(n, 0.0);
    sys.diag.assign(n, 0.0);
    sys.rhs.resize(n);
    std::vector<double> sum(n, 0.0);
    for (std::size_t i = 1; i < n; ++i) {
      sys.off[i] = static_cast<double>(static_cast<T>(-(0.1 + r.uniform())));
      sum[i] += std::fabs(sys.off[i]);
      sum[static_cast<std::size_t>(parent[i])] += std::fabs(sys.off[i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      sys.diag[i] = static_cast<double>(static_cast<T>(sum[i] + 0.2 + r.uniform()));
      sys.rhs[i] = static_cast<double>(static_cast<T>(2 * r.uniform() - 1));
    }
    out.push_back(std::move(sys));
  }
  return out;
}

inline std::vector<Eigen::VectorXd> dense_solutions(const std::vector<System>& systems) {
  std::vector<Eigen::VectorXd> x;
  for (const System& s : systems) x.push_back(dense_solve(s));
  return x;
}

// The systems written into span-sized arrays at the plan's positions. The padding of all
// three arrays holds NaN (a kernel that reads it into a result, or writes it, shows), and so
// does offdiag[0] of every neuron (never read).
template <class T>
struct Arrays {
  std::vector<T> off, diag, rhs;
};
template <class T>
Arrays<T> place(const adi::HinesPlan<T>& plan, const std::vector<System>& systems) {
  const std::size_t span = static_cast<std::size_t>(plan.span());
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Arrays<T> a{std::vector<T>(span, nan), std::vector<T>(span, nan), std::vector<T>(span, nan)};
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const System& sys = systems[s];
    for (std::size_t i = 0; i < sys.parent.size(); ++i) {
      const std::size_t at = static_cast<std::size_t>(plan.index(static_cast<adi::index_t>(s), static_cast<int>(i)));
      if (i > 0) a.off[at] = static_cast<T>(sys.off[i]);
      a.diag[at] = static_cast<T>(sys.diag[i]);
      a.rhs[at] = static_cast<T>(sys.rhs[i]);
    }
  }
  return a;
}

// Checks every neuron's solution (x, in the plan's layout) against the dense solutions and
// that the padding of x is still NaN. Returns the largest relative error.
template <class T>
double check(const adi::HinesPlan<T>& plan, const std::vector<Eigen::VectorXd>& ref, const std::vector<T>& x,
             double tol, const std::string& what) {
  double worst = 0;
  std::vector<char> real(x.size(), 0);
  for (std::size_t s = 0; s < ref.size(); ++s) {
    const double scale = std::max(1e-300, ref[s].cwiseAbs().maxCoeff());
    double err = 0;
    for (int i = 0; i < ref[s].size(); ++i) {
      const std::size_t at = static_cast<std::size_t>(plan.index(static_cast<adi::index_t>(s), i));
      real[at] = 1;
      const double v = static_cast<double>(x[at]);
      err = std::isfinite(v) ? std::max(err, std::fabs(v - ref[s](i)) / scale) : 1e300;
    }
    worst = std::max(worst, err);
    if (err > tol) {
      ADD_FAILURE() << what << ": neuron " << s << " (n = " << ref[s].size() << ") relative error " << err << " > "
                    << tol;
      return worst;
    }
  }
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!real[i] && !std::isnan(static_cast<double>(x[i]))) {
      ADD_FAILURE() << what << ": padding element " << i << " was written (" << x[i] << ")";
      break;
    }
  return worst;
}

// Relative tolerance against the dense fp64 solve of the rounded inputs.
template <class T>
constexpr double tolerance() {
  return sizeof(T) == 8 ? 1e-12 : 2e-5;
}

// A real cell made active as the active tests use it: hh in soma and axon sections, pas elsewhere.
inline adi::ActiveCell active_cell(const adi::Morphology& m) {
  adi::ActiveCell cell;
  adi::CableParameters p;
  p.ra = 100;
  p.g_leak = 5e-5;
  cell.compartments = adi::discretise(m, p);
  for (const adi::Section& s : m.sections())
    cell.membrane.push_back(s.type == 1 || s.type == 2 ? adi::Membrane::hh : adi::Membrane::pas);
  return cell;
}

}  // namespace hines_test
