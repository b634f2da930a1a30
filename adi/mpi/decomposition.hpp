#pragma once
// Which box of a global nx x ny x nz grid each rank of a ProcessGrid owns.
//
// Along each axis the nodes are cut into dims(a) contiguous ranges, one per process
// coordinate. Extents need not divide evenly; with weights, range c gets a share
// proportional to the weight of the ranks at coordinate c (a slower rank, or a
// slice holding slower ranks, owns fewer rows).
//
//   adi::mpi::Decomposition dec(procs, {nx, ny, nz});        // even split (collective)
//   adi::mpi::Decomposition dec(procs, {nx, ny, nz}, 0.5);   // this rank weighs half
//   dec.lo(adi::Axis::x), dec.extent(adi::Axis::x)           // this rank's box
#include <array>
#include <vector>

#include "adi/layout.hpp"
#include "adi/mpi/process_grid.hpp"

namespace adi::mpi {

class Decomposition {
 public:
  // Collective over procs.comm(). Every rank passes the same global extents (checked:
  // "mismatched extents" otherwise) and its own weight (> 0; default 1). The share of
  // process coordinate c along axis a is proportional to the sum of the weights of the
  // ranks at that coordinate. Every axis split over P > 1 ranks must leave each rank at
  // least 2 nodes of it (the partition method's two interface rows). Every rank throws
  // the same InvalidArgument when any check fails.
  Decomposition(const ProcessGrid& procs, std::array<index_t, 3> global, double weight = 1.0);
  // The same with explicit per-axis weights (weights[a].size() == dims(a), or empty for even).
  Decomposition(const ProcessGrid& procs, std::array<index_t, 3> global,
                const std::array<std::vector<double>, 3>& axis_weights);

  const std::array<index_t, 3>& global() const { return global_; }
  // This rank's first global index and node count along a.
  index_t lo(Axis a) const { return starts_[int(a)][std::size_t(coord_[int(a)])]; }
  index_t extent(Axis a) const { return extent_of(a, coord_[int(a)]); }
  std::array<index_t, 3> lo() const { return {lo(Axis::x), lo(Axis::y), lo(Axis::z)}; }
  std::array<index_t, 3> extents() const { return {extent(Axis::x), extent(Axis::y), extent(Axis::z)}; }
  // Range of process coordinate c along a: [start(a, c), start(a, c+1)).
  index_t start(Axis a, int c) const { return starts_[int(a)][std::size_t(c)]; }
  index_t extent_of(Axis a, int c) const {
    return starts_[int(a)][std::size_t(c) + 1] - starts_[int(a)][std::size_t(c)];
  }
  int dims(Axis a) const { return int(starts_[int(a)].size()) - 1; }
  // The box of any rank given its coordinates.
  std::array<index_t, 3> lo_of(const std::array<int, 3>& c) const;
  std::array<index_t, 3> extents_of(const std::array<int, 3>& c) const;
  // A dense Box3 of this rank's extents.
  Box3 local_box() const { return Box3::dense(extent(Axis::x), extent(Axis::y), extent(Axis::z)); }

  // Splits n nodes into weights.size() ranges proportional to the weights (largest
  // remainders); returns the P+1 starts. Pure function (no MPI), exposed for tests.
  static std::vector<index_t> split(index_t n, const std::vector<double>& weights);

 private:
  void build(const ProcessGrid& procs, const std::array<std::vector<double>, 3>& w);
  std::array<index_t, 3> global_{};
  std::array<int, 3> coord_{};
  std::array<std::vector<index_t>, 3> starts_;
};

}  // namespace adi::mpi
