#pragma once
// A parallel VTK time series of a decomposed field: every rank writes its piece
// (DIR/NAME_SSSSS_pRRRR.vti), rank 0 writes DIR/NAME_SSSSS.pvti joining them and
// rewrites DIR/NAME.pvd after each frame; ParaView opens the .pvd as one dataset.
//
//   adi::mpi::PvtiSeries out(procs, dec, grid, "heat_out", "heat3d");
//   heat.exchange();                                 // pieces share their hi layer: ghosts needed
//   out.write({{"u", &heat.u()}, {"error", &err}}, t, step);
//
// Pieces are the rank's nodes plus one layer beyond the hi side of every axis that does
// not end there (the neighbour's first layer, from the ghosts), so the cells between
// pieces are drawn. Collective; a failure on any rank (e.g. an unwritable folder) throws
// the same error on every rank. Without VTK: Unsupported (adi/io/vtk_parallel.hpp).
#include <string>
#include <utility>
#include <vector>

#include "adi/grid.hpp"
#include "adi/io/vtk_parallel.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/halo.hpp"

namespace adi::mpi {

class PvtiSeries {
 public:
  // Collective. Creates `directory` (rank 0) if needed.
  PvtiSeries(const ProcessGrid& procs, const Decomposition& dec, const Grid& grid, std::string directory,
             std::string name);
  // Collective: writes one frame of the named fields (each with ghost layers >= 1 along
  // every axis with more than one node, filled). Returns the .pvti path.
  template <class T>
  std::string write(const std::vector<std::pair<std::string, const LocalField<T>*>>& fields, double time, long index);

  const std::string& pvd_path() const { return pvd_; }
  std::size_t frames() const { return frames_.size(); }

 private:
  const ProcessGrid* procs_;
  Grid grid_;
  std::string dir_, name_, pvd_;
  io::PieceExtent mine_;
  std::vector<io::PieceExtent> all_;
  std::vector<std::pair<double, std::string>> frames_;
};

}  // namespace adi::mpi
