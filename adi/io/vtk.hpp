#pragma once
// VTK XML output of fields on a grid, for ParaView/VisIt: .vti (uniform grids),
// .vtr (stretched grids) and a .pvd series of time steps. No VTK header leaks
// from here; without VTK (ADI_HAVE_VTK undefined) every call throws adi::Unsupported.
#include <string>
#include <vector>

#include "adi/field.hpp"
#include "adi/grid.hpp"

namespace adi::io {

// One named point array to write: a float or double field, host or device
// (device fields are copied to the host). Holds a reference: build it in the call.
class NamedField {
 public:
  NamedField(std::string name, const Field<float>& f) : name_(std::move(name)), f32_(&f) {}
  NamedField(std::string name, const Field<double>& f) : name_(std::move(name)), f64_(&f) {}
  const std::string& name() const { return name_; }
  const Field<float>* as_float() const { return f32_; }
  const Field<double>* as_double() const { return f64_; }

 private:
  std::string name_;
  const Field<float>* f32_ = nullptr;
  const Field<double>* f64_ = nullptr;
};

// True when adi was built with VTK output.
bool vtk_available();

// Writes `fields` on a uniform `grid` as VTK ImageData (binary, appended, zlib)
// with `time` as the field-data array "TimeValue". Throws InvalidArgument for a
// stretched grid (use write_vtr) or mismatched extents, Error when `path` cannot be written.
void write_vti(const std::string& path, const Grid& grid, const std::vector<NamedField>& fields,
               double time = 0.0);

// Same as write_vti for any grid (uniform or stretched) as VTK RectilinearGrid.
void write_vtr(const std::string& path, const Grid& grid, const std::vector<NamedField>& fields,
               double time = 0.0);

// Writes `stem` + ".vti" for a uniform grid, `stem` + ".vtr" otherwise; returns the path.
std::string write_vtk(const std::string& stem, const Grid& grid, const std::vector<NamedField>& fields,
                      double time = 0.0);

// A time series: `directory`/`name`.pvd listing `directory`/`name`_NNNNN.vti (or .vtr).
// The .pvd is rewritten (atomically, by rename) after every frame, so a run that
// dies half-way still leaves a readable series of the frames written so far.
class PvdWriter {
 public:
  // Creates `directory` if needed. Throws Error when it cannot be created.
  PvdWriter(std::string directory, std::string name);

  // Writes one frame labelled `index` (e.g. the step number; -1: the frame count)
  // and adds it to the series at `time`. Returns the frame's path.
  std::string write(const Grid& grid, const std::vector<NamedField>& fields, double time, long index = -1);

  const std::string& pvd_path() const { return pvd_path_; }
  std::size_t frames() const { return entries_.size(); }

 private:
  struct Entry {
    double time;
    std::string file;  // relative to the .pvd's directory
  };
  void flush() const;

  std::string directory_, name_, pvd_path_;
  std::vector<Entry> entries_;
};

}  // namespace adi::io
