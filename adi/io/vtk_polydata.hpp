#pragma once
// VTK XML PolyData output of trees (neurons: points from the morphology, a line from every
// node to its parent, per-point arrays such as radius and membrane voltage), and a .pvd time
// series in which every time step lists one file per tree (ParaView shows them as the parts
// of one multiblock and plays the series). No VTK header leaks from here; without VTK
// (ADI_HAVE_VTK undefined) every call throws adi::Unsupported, like adi/io/vtk.hpp.
#include <string>
#include <vector>

namespace adi::io {

// Points of a tree: node i at (x[i], y[i], z[i]); parent[i] < i, -1 for the root(s).
struct TreeGeometry {
  std::vector<double> x, y, z;
  std::vector<int> parent;
};

// A named per-point array (one value per node).
struct PointArray {
  std::string name;
  std::vector<double> values;
};

// Writes `tree` and `arrays` as VTK PolyData (binary, appended, zlib) with `time` as the field
// array "TimeValue". Throws InvalidArgument on mismatched lengths, an empty or repeated array
// name, or a parent out of range; Error when `path` cannot be written; Unsupported without VTK.
void write_vtp(const std::string& path, const TreeGeometry& tree, const std::vector<PointArray>& arrays,
               double time = 0.0);

// A series `directory`/`name`.pvd whose time steps each hold several parts (trees), written
// as `directory`/`name`_tNNNNN_pNNNN.vtp. The .pvd is rewritten (atomically) after every
// file, so a run that stops half-way leaves a readable series.
class PolyDataSeries {
 public:
  // Creates `directory` if needed; throws Error when it cannot, Unsupported without VTK.
  PolyDataSeries(std::string directory, std::string name);

  // Writes part `part` of time step `step` at `time`; returns the file's path.
  std::string write(long step, int part, double time, const TreeGeometry& tree, const std::vector<PointArray>& arrays);

  const std::string& pvd_path() const { return pvd_path_; }
  std::size_t files() const { return entries_.size(); }
  std::size_t steps() const;  // distinct time steps written

 private:
  struct Entry {
    long step;
    int part;
    double time;
    std::string file;  // relative to the .pvd's directory
  };
  void flush() const;

  std::string directory_, name_, pvd_path_;
  std::vector<Entry> entries_;
};

}  // namespace adi::io
