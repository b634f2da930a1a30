#include "adi/mpi/decomposition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace adi::mpi {

std::vector<index_t> Decomposition::split(index_t n, const std::vector<double>& weights) {
  const std::size_t p = weights.size();
  std::vector<index_t> starts(p + 1, 0);
  if (p == 0) return starts;
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  // Floor of each exact share, then the leftover nodes to the largest remainders
  // (ties to the lower coordinate): deterministic on every rank.
  std::vector<index_t> count(p);
  std::vector<std::pair<double, std::size_t>> rem(p);
  index_t used = 0;
  for (std::size_t i = 0; i < p; ++i) {
    const double exact = double(n) * weights[i] / total;
    count[i] = index_t(std::floor(exact));
    rem[i] = {exact - double(count[i]), i};
    used += count[i];
  }
  std::stable_sort(rem.begin(), rem.end(), [](auto& x, auto& y) { return x.first > y.first; });
  for (index_t k = 0; k < n - used; ++k) ++count[rem[std::size_t(k) % p].second];
  for (std::size_t i = 0; i < p; ++i) starts[i + 1] = starts[i] + count[i];
  return starts;
}

Decomposition::Decomposition(const ProcessGrid& procs, std::array<index_t, 3> global, double weight)
    : global_(global) {
  MPI_Comm comm = procs.comm();
  std::string err;
  if (!(weight > 0) || !std::isfinite(weight))
    err = "Decomposition: weight = " + detail::number(weight) + " must be finite and > 0";
  agree(comm, err.empty(), err);
  // Weight of each process coordinate along each axis: the sum over the ranks there.
  std::array<std::vector<double>, 3> w;
  for (int a = 0; a < 3; ++a) {
    std::vector<double> mine(std::size_t(procs.dims(Axis(a))), 0.0);
    mine[std::size_t(procs.coord(Axis(a)))] = weight;
    w[a].resize(mine.size());
    check_mpi(MPI_Allreduce(mine.data(), w[a].data(), int(mine.size()), MPI_DOUBLE, MPI_SUM, comm),
              "MPI_Allreduce");
  }
  build(procs, w);
}

Decomposition::Decomposition(const ProcessGrid& procs, std::array<index_t, 3> global,
                             const std::array<std::vector<double>, 3>& axis_weights)
    : global_(global) {
  std::string err;
  std::array<std::vector<double>, 3> w;
  for (int a = 0; a < 3 && err.empty(); ++a) {
    const std::size_t p = std::size_t(procs.dims(Axis(a)));
    w[a] = axis_weights[a].empty() ? std::vector<double>(p, 1.0) : axis_weights[a];
    if (w[a].size() != p)
      err = std::string("Decomposition: ") + axis_name(Axis(a)) + " has " + detail::number(w[a].size()) +
            " weights but the process grid has " + detail::number(p) + " ranks along it";
    for (double x : w[a])
      if (err.empty() && (!(x > 0) || !std::isfinite(x)))
        err = std::string("Decomposition: weights along ") + axis_name(Axis(a)) + " must be finite and > 0";
  }
  agree(procs.comm(), err.empty(), err);
  build(procs, w);
}

void Decomposition::build(const ProcessGrid& procs, const std::array<std::vector<double>, 3>& w) {
  MPI_Comm comm = procs.comm();
  coord_ = procs.coords();
  // Mismatched extents: compare every rank's with rank 0's before anything else.
  long long mine[3] = {global_[0], global_[1], global_[2]}, root[3];
  std::copy(mine, mine + 3, root);
  check_mpi(MPI_Bcast(root, 3, MPI_LONG_LONG, 0, comm), "MPI_Bcast");
  auto text = [](const long long* e) {
    return detail::number(e[0]) + "x" + detail::number(e[1]) + "x" + detail::number(e[2]);
  };
  std::string err;
  if (mine[0] < 1 || mine[1] < 1 || mine[2] < 1)
    err = "Decomposition: global extents " + text(mine) + " must all be >= 1";
  else if (!std::equal(mine, mine + 3, root))
    err = "Decomposition: mismatched global extents, " + text(mine) + " here but " + text(root) +
          " on rank 0 (every rank must describe the same grid)";
  agree(comm, err.empty(), err);
  for (int a = 0; a < 3; ++a) {
    starts_[a] = split(global_[a], w[a]);
    const int p = procs.dims(Axis(a));
    for (int c = 0; c < p && err.empty() && p > 1; ++c)
      if (extent_of(Axis(a), c) < 2)
        err = std::string("Decomposition: ") + detail::number(p) + " ranks along " + axis_name(Axis(a)) +
              " leave process coordinate " + detail::number(c) + " with " +
              detail::number(extent_of(Axis(a), c)) + " node(s) of " + detail::number(global_[a]) +
              "; a split axis needs >= 2 nodes per rank: use fewer ranks along " + axis_name(Axis(a)) +
              " (at most " + detail::number(std::max<index_t>(1, global_[a] / 2)) + ") or a larger grid";
  }
  // The same starts are computed on every rank, so every rank reaches the same verdict;
  // agreeing anyway keeps the rule "no rank throws alone".
  agree(comm, err.empty(), err);
}

std::array<index_t, 3> Decomposition::lo_of(const std::array<int, 3>& c) const {
  return {start(Axis::x, c[0]), start(Axis::y, c[1]), start(Axis::z, c[2])};
}

std::array<index_t, 3> Decomposition::extents_of(const std::array<int, 3>& c) const {
  return {extent_of(Axis::x, c[0]), extent_of(Axis::y, c[1]), extent_of(Axis::z, c[2])};
}

}  // namespace adi::mpi
