#include "adi/io/vtk_polydata.hpp"

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
#include <vtkCellArray.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPolyDataWriter.h>
#endif

namespace adi::io {
namespace {

[[maybe_unused]] const char* const kNoVtk =
    "adi was built without VTK; reconfigure with -DADI_WITH_VTK=ON (needs VTK 9, e.g. "
    "apt-get install libvtk9-dev) to write .vtp/.pvd files";

void check(const TreeGeometry& t, const std::vector<PointArray>& arrays) {
  const std::size_t n = t.x.size();
  detail::require(t.y.size() == n && t.z.size() == n && t.parent.size() == n,
                  "write_vtp: x, y, z and parent must have the same length (" + std::to_string(n) + ", " +
                      std::to_string(t.y.size()) + ", " + std::to_string(t.z.size()) + ", " +
                      std::to_string(t.parent.size()) + ")");
  for (std::size_t i = 0; i < n; ++i)
    detail::require(t.parent[i] >= -1 && t.parent[i] < static_cast<int>(n) && t.parent[i] != static_cast<int>(i),
                    "write_vtp: parent[" + std::to_string(i) + "] = " + std::to_string(t.parent[i]) +
                        " must be -1 or another node in [0, " + std::to_string(n) + ")");
  std::set<std::string> names;
  for (const PointArray& a : arrays) {
    detail::require(!a.name.empty(), "write_vtp: a point array has an empty name");
    detail::require(names.insert(a.name).second, "write_vtp: point array '" + a.name + "' appears twice");
    detail::require(a.values.size() == n, "write_vtp: point array '" + a.name + "' has " +
                                              std::to_string(a.values.size()) + " values for " + std::to_string(n) +
                                              " points");
  }
}

std::string xml_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '&') r += "&amp;";
    else if (c == '<') r += "&lt;";
    else if (c == '>') r += "&gt;";
    else if (c == '"') r += "&quot;";
    else r += c;
  }
  return r;
}

}  // namespace

#ifdef ADI_HAVE_VTK

void write_vtp(const std::string& path, const TreeGeometry& tree, const std::vector<PointArray>& arrays, double time) {
  check(tree, arrays);
  {
    // VTK reports an unwritable file only on stderr: open it ourselves first.
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw Error("write_vtp: cannot write '" + path + "': " + std::strerror(errno));
    std::fclose(f);
  }
  const vtkIdType n = static_cast<vtkIdType>(tree.x.size());
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(n);
  for (vtkIdType i = 0; i < n; ++i) points->SetPoint(i, tree.x[i], tree.y[i], tree.z[i]);
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  for (vtkIdType i = 0; i < n; ++i)
    if (tree.parent[i] >= 0) {
      const vtkIdType ids[2] = {tree.parent[i], i};
      lines->InsertNextCell(2, ids);
    }
  auto pd = vtkSmartPointer<vtkPolyData>::New();
  pd->SetPoints(points);
  pd->SetLines(lines);
  for (const PointArray& a : arrays) {
    auto v = vtkSmartPointer<vtkDoubleArray>::New();
    v->SetName(a.name.c_str());
    v->SetNumberOfTuples(n);
    for (vtkIdType i = 0; i < n; ++i) v->SetValue(i, a.values[static_cast<std::size_t>(i)]);
    pd->GetPointData()->AddArray(v);
  }
  if (!arrays.empty()) pd->GetPointData()->SetActiveScalars(arrays.back().name.c_str());
  auto t = vtkSmartPointer<vtkDoubleArray>::New();
  t->SetName("TimeValue");
  t->SetNumberOfTuples(1);
  t->SetValue(0, time);
  pd->GetFieldData()->AddArray(t);
  auto w = vtkSmartPointer<vtkXMLPolyDataWriter>::New();
  w->SetInputData(pd);
  w->SetFileName(path.c_str());
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();
  w->SetHeaderTypeToUInt64();
  w->SetCompressorTypeToZLib();
  w->SetCompressionLevel(1);
  if (w->Write() != 1 || w->GetErrorCode() != 0)
    throw Error("write_vtp: VTK failed to write '" + path + "' (vtkErrorCode " + std::to_string(w->GetErrorCode()) + ")");
}

#else

void write_vtp(const std::string&, const TreeGeometry& tree, const std::vector<PointArray>& arrays, double) {
  check(tree, arrays);
  throw Unsupported(std::string("write_vtp: ") + kNoVtk);
}

#endif  // ADI_HAVE_VTK

PolyDataSeries::PolyDataSeries(std::string directory, std::string name)
    : directory_(directory.empty() ? std::string(".") : std::move(directory)), name_(std::move(name)) {
#ifndef ADI_HAVE_VTK
  throw Unsupported(std::string("PolyDataSeries: ") + kNoVtk);
#endif
  detail::require(!name_.empty() && name_.find('/') == std::string::npos,
                  "PolyDataSeries: name '" + name_ + "' must be non-empty and contain no '/'");
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec || !std::filesystem::is_directory(directory_))
    throw Error("PolyDataSeries: cannot create directory '" + directory_ +
                "': " + (ec ? ec.message() : std::string("a file of that name exists")));
  pvd_path_ = (std::filesystem::path(directory_) / (name_ + ".pvd")).string();
}

std::string PolyDataSeries::write(long step, int part, double time, const TreeGeometry& tree,
                                  const std::vector<PointArray>& arrays) {
  detail::require(step >= 0 && part >= 0, "PolyDataSeries::write: step = " + std::to_string(step) + " and part = " +
                                              std::to_string(part) + " must be >= 0");
  char label[48];
  std::snprintf(label, sizeof label, "_t%05ld_p%04d.vtp", step, part);
  const std::string file = name_ + label;
  const std::string path = (std::filesystem::path(directory_) / file).string();
  write_vtp(path, tree, arrays, time);
  bool replaced = false;  // writing the same (step, part) again replaces it
  for (Entry& e : entries_)
    if (e.file == file) {
      e.time = time;
      replaced = true;
    }
  if (!replaced) entries_.push_back({step, part, time, file});
  flush();
  return path;
}

std::size_t PolyDataSeries::steps() const {
  std::set<long> s;
  for (const Entry& e : entries_) s.insert(e.step);
  return s.size();
}

void PolyDataSeries::flush() const {
  std::ostringstream s;
  s << "<?xml version=\"1.0\"?>\n"
    << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
  for (const Entry& e : entries_) {
    char t[32];
    const auto r = std::to_chars(t, t + sizeof t, e.time);  // shortest text that reads back exactly
    s << "    <DataSet timestep=\"" << std::string_view(t, std::size_t(r.ptr - t)) << "\" group=\"\" part=\""
      << e.part << "\" file=\"" << xml_escape(e.file) << "\"/>\n";
  }
  s << "  </Collection>\n</VTKFile>\n";
  const std::string tmp = pvd_path_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("PolyDataSeries: cannot write '" + tmp + "': " + std::strerror(errno));
    out << s.str();
    out.flush();
    if (!out) throw Error("PolyDataSeries: writing '" + tmp + "' failed: " + std::strerror(errno));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, pvd_path_, ec);
  if (ec) throw Error("PolyDataSeries: cannot replace '" + pvd_path_ + "': " + ec.message());
}

}  // namespace adi::io
