#pragma once
// Parallel VTK output of a decomposed uniform grid, for ParaView: one .vti piece per
// rank, a .pvti that joins the pieces into one dataset, and a .pvd time series of the
// .pvti files. No MPI here: each rank writes its piece, one rank writes the .pvti and
// the .pvd from the gathered piece extents (adi/mpi/ does the gathering). Without VTK
// (ADI_HAVE_VTK undefined) every call throws adi::Unsupported, like adi/io/vtk.hpp.
//
// Pieces are point data: neighbouring pieces must share their boundary layer of nodes
// (hi of one = lo of the next) for ParaView to draw the cells between them.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "adi/grid.hpp"
#include "adi/layout.hpp"

namespace adi::io {

// Global node indices lo..hi (inclusive) of one piece.
struct PieceExtent {
  std::array<index_t, 3> lo{}, hi{};
};

// One named array of a piece, in host memory: the piece's nodes at data + i + j*sy + k*sz
// (box.nx etc. must equal the extent's node counts). Float or double.
struct PieceArray {
  std::string name;
  const float* f32 = nullptr;
  const double* f64 = nullptr;
  Box3 box;
};

// Writes one piece of uniform `grid` (the global grid: its origin and spacing) as .vti.
// Throws InvalidArgument for a stretched grid, an extent outside the grid or a box that
// does not match it, Error when `path` cannot be written.
void write_vti_piece(const std::string& path, const Grid& grid, const PieceExtent& extent,
                     const std::vector<PieceArray>& arrays, double time = 0.0);

// Writes the .pvti joining `pieces` (file names relative to the .pvti's folder, one
// per extent). `arrays` names each point array and whether it is double (else float).
void write_pvti(const std::string& path, const Grid& grid, const std::vector<PieceExtent>& extents,
                const std::vector<std::string>& pieces, const std::vector<std::pair<std::string, bool>>& arrays);

// Writes (atomically, by rename) a .pvd listing (time, file) frames, files relative to
// the .pvd's folder.
void write_pvd(const std::string& path, const std::vector<std::pair<double, std::string>>& frames);

}  // namespace adi::io
