#include "adi/io/vtk.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "adi/error.hpp"

#ifdef ADI_HAVE_VTK
#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkRectilinearGrid.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataWriter.h>
#include <vtkXMLRectilinearGridWriter.h>
#endif

namespace adi::io {
namespace {

[[maybe_unused]] const char* const kNoVtk =
    "adi was built without VTK; reconfigure with -DADI_WITH_VTK=ON (needs VTK 9, e.g. "
    "apt-get install libvtk9-dev) to write .vti/.vtr/.pvd files";

std::string extents(index_t nx, index_t ny, index_t nz) {
  return std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
}

[[maybe_unused]] void check_fields(const char* who, const Grid& grid, const std::vector<NamedField>& fields) {
  std::set<std::string> names;
  for (const NamedField& f : fields) {
    detail::require(!f.name().empty(), std::string(who) + ": a field has an empty name");
    detail::require(names.insert(f.name()).second,
                    std::string(who) + ": field name '" + f.name() + "' appears twice");
    const index_t nx = f.as_float() ? f.as_float()->nx() : f.as_double()->nx();
    const index_t ny = f.as_float() ? f.as_float()->ny() : f.as_double()->ny();
    const index_t nz = f.as_float() ? f.as_float()->nz() : f.as_double()->nz();
    const bool empty = f.as_float() ? f.as_float()->empty() : f.as_double()->empty();
    detail::require(!empty, std::string(who) + ": field '" + f.name() + "' is empty (never allocated)");
    detail::require(nx == grid.nx() && ny == grid.ny() && nz == grid.nz(),
                    std::string(who) + ": field '" + f.name() + "' is " + extents(nx, ny, nz) +
                        " but the grid is " + extents(grid.nx(), grid.ny(), grid.nz()));
  }
}

// VTK reports a file it cannot open only on stderr; opening it ourselves first
// turns that into an exception that names the path and the reason.
[[maybe_unused]] void require_writable(const char* who, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(std::string(who) + ": cannot write '" + path + "': " + std::strerror(errno));
  std::fclose(f);
}

#ifdef ADI_HAVE_VTK

template <class T, class VtkArray>
vtkSmartPointer<vtkDataArray> to_vtk(const std::string& name, const Field<T>& field) {
  const Field<T> host_copy = field.executor().is_host() ? Field<T>() : field.to_host();
  const Field<T>& f = field.executor().is_host() ? field : host_copy;
  auto a = vtkSmartPointer<VtkArray>::New();
  a->SetName(name.c_str());
  a->SetNumberOfComponents(1);
  a->SetNumberOfTuples(static_cast<vtkIdType>(f.size()));
  // VTK points are x fastest like ours; only the row padding is dropped.
  T* out = a->GetPointer(0);
  for (index_t k = 0; k < f.nz(); ++k)
    for (index_t j = 0; j < f.ny(); ++j, out += f.nx())
      std::memcpy(out, f.data() + f.index(0, j, k), static_cast<std::size_t>(f.nx()) * sizeof(T));
  return a;
}

void attach(vtkDataSet* ds, const std::vector<NamedField>& fields, double time) {
  for (const NamedField& f : fields) {
    auto a = f.as_float() ? to_vtk<float, vtkFloatArray>(f.name(), *f.as_float())
                          : to_vtk<double, vtkDoubleArray>(f.name(), *f.as_double());
    ds->GetPointData()->AddArray(a);
  }
  if (!fields.empty()) ds->GetPointData()->SetActiveScalars(fields.front().name().c_str());
  // "TimeValue" is the field-data name ParaView and VisIt read as the frame's time.
  auto t = vtkSmartPointer<vtkDoubleArray>::New();
  t->SetName("TimeValue");
  t->SetNumberOfTuples(1);
  t->SetValue(0, time);
  ds->GetFieldData()->AddArray(t);
}

template <class Writer>
void write_with(const char* who, vtkDataObject* data, const std::string& path) {
  require_writable(who, path);
  auto w = vtkSmartPointer<Writer>::New();
  w->SetInputData(data);
  w->SetFileName(path.c_str());
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();  // raw bytes, not base64: a third smaller and faster
  w->SetHeaderTypeToUInt64();  // blocks over 4 GiB (e.g. 1024^3 doubles) stay addressable
  w->SetCompressorTypeToZLib();
  w->SetCompressionLevel(1);  // the mantissas barely compress; level 1 keeps output cheap
  if (w->Write() != 1 || w->GetErrorCode() != 0)
    throw Error(std::string(who) + ": VTK failed to write '" + path + "' (vtkErrorCode " +
                std::to_string(w->GetErrorCode()) + ")");
}

#endif  // ADI_HAVE_VTK

std::string xml_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    const char* e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : nullptr;
    if (e)
      r += e;
    else
      r += c;
  }
  return r;
}

}  // namespace

#ifdef ADI_HAVE_VTK

bool vtk_available() { return true; }

void write_vti(const std::string& path, const Grid& grid, const std::vector<NamedField>& fields,
               double time) {
  for (int d = 0; d < 3; ++d)
    detail::require(grid.axis(Axis(d)).is_uniform(),
                    std::string("write_vti: axis ") + axis_name(Axis(d)) +
                        " is not uniform; .vti holds only uniform grids, use write_vtr or write_vtk");
  check_fields("write_vti", grid, fields);
  auto img = vtkSmartPointer<vtkImageData>::New();
  double origin[3], spacing[3];
  for (int d = 0; d < 3; ++d) {
    const AxisGrid& a = grid.axis(Axis(d));
    origin[d] = a.lo();
    // A single-node axis has no spacing; VTK wants a positive one anyway.
    spacing[d] = a.size() > 1 ? (a.hi() - a.lo()) / double(a.size() - 1) : 1.0;
  }
  img->SetOrigin(origin);
  img->SetSpacing(spacing);
  img->SetExtent(0, int(grid.nx() - 1), 0, int(grid.ny() - 1), 0, int(grid.nz() - 1));
  attach(img, fields, time);
  write_with<vtkXMLImageDataWriter>("write_vti", img, path);
}

void write_vtr(const std::string& path, const Grid& grid, const std::vector<NamedField>& fields,
               double time) {
  check_fields("write_vtr", grid, fields);
  auto rg = vtkSmartPointer<vtkRectilinearGrid>::New();
  rg->SetExtent(0, int(grid.nx() - 1), 0, int(grid.ny() - 1), 0, int(grid.nz() - 1));
  vtkSmartPointer<vtkDoubleArray> coords[3];
  for (int d = 0; d < 3; ++d) {
    const AxisGrid& a = grid.axis(Axis(d));
    coords[d] = vtkSmartPointer<vtkDoubleArray>::New();
    coords[d]->SetNumberOfTuples(a.size());
    for (index_t i = 0; i < a.size(); ++i) coords[d]->SetValue(i, a[i]);
  }
  rg->SetXCoordinates(coords[0]);
  rg->SetYCoordinates(coords[1]);
  rg->SetZCoordinates(coords[2]);
  attach(rg, fields, time);
  write_with<vtkXMLRectilinearGridWriter>("write_vtr", rg, path);
}

#else

bool vtk_available() { return false; }
void write_vti(const std::string&, const Grid&, const std::vector<NamedField>&, double) {
  throw Unsupported(std::string("write_vti: ") + kNoVtk);
}
void write_vtr(const std::string&, const Grid&, const std::vector<NamedField>&, double) {
  throw Unsupported(std::string("write_vtr: ") + kNoVtk);
}

#endif  // ADI_HAVE_VTK

std::string write_vtk(const std::string& stem, const Grid& grid, const std::vector<NamedField>& fields,
                      double time) {
  const bool uniform =
      grid.axis(Axis::x).is_uniform() && grid.axis(Axis::y).is_uniform() && grid.axis(Axis::z).is_uniform();
  if (uniform) {
    write_vti(stem + ".vti", grid, fields, time);
    return stem + ".vti";
  }
  write_vtr(stem + ".vtr", grid, fields, time);
  return stem + ".vtr";
}

PvdWriter::PvdWriter(std::string directory, std::string name)
    : directory_(directory.empty() ? std::string(".") : std::move(directory)), name_(std::move(name)) {
#ifndef ADI_HAVE_VTK
  throw Unsupported(std::string("PvdWriter: ") + kNoVtk);
#endif
  detail::require(!name_.empty() && name_.find('/') == std::string::npos,
                  "PvdWriter: name '" + name_ + "' must be non-empty and contain no '/'");
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec || !std::filesystem::is_directory(directory_))
    throw Error("PvdWriter: cannot create directory '" + directory_ +
                "': " + (ec ? ec.message() : std::string("a file of that name exists")));
  pvd_path_ = (std::filesystem::path(directory_) / (name_ + ".pvd")).string();
}

std::string PvdWriter::write(const Grid& grid, const std::vector<NamedField>& fields, double time,
                             long index) {
  if (index < 0) index = static_cast<long>(entries_.size());
  char label[32];
  std::snprintf(label, sizeof label, "_%05ld", index);
  const std::string stem = (std::filesystem::path(directory_) / (name_ + label)).string();
  const std::string path = write_vtk(stem, grid, fields, time);
  const std::string file = std::filesystem::path(path).filename().string();
  // Writing the same label again (a restart) replaces that frame rather than listing it twice.
  bool replaced = false;
  for (Entry& e : entries_)
    if (e.file == file) {
      e.time = time;
      replaced = true;
    }
  if (!replaced) entries_.push_back({time, file});
  flush();
  return path;
}

void PvdWriter::flush() const {
  std::ostringstream s;
  s << "<?xml version=\"1.0\"?>\n"
    << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
  for (const Entry& e : entries_) {
    // Shortest text that reads back as the same double (0.03, not 0.029999999999999999).
    char t[32];
    const auto r = std::to_chars(t, t + sizeof t, e.time);
    s << "    <DataSet timestep=\"" << std::string_view(t, std::size_t(r.ptr - t))
      << "\" group=\"\" part=\"0\" file=\"" << xml_escape(e.file) << "\"/>\n";
  }
  s << "  </Collection>\n</VTKFile>\n";
  // Write then rename: a reader (or a crash) never sees a half-written series.
  const std::string tmp = pvd_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("PvdWriter: cannot write '" + tmp + "': " + std::strerror(errno));
    out << s.str();
    out.flush();
    if (!out) throw Error("PvdWriter: writing '" + tmp + "' failed: " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, pvd_path_, ec);
  if (ec) throw Error("PvdWriter: cannot replace '" + pvd_path_ + "': " + ec.message());
}

}  // namespace adi::io
