#include "adi/io/vtk_parallel.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "adi/error.hpp"

#ifdef ADI_HAVE_VTK
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLImageDataWriter.h>
#endif

namespace adi::io {

namespace {

[[maybe_unused]] const char* const kNoVtk =
    "adi was built without VTK; reconfigure with -DADI_WITH_VTK=ON (needs VTK 9, e.g. apt-get install "
    "libvtk9-dev) to write .vti/.pvti/.pvd files";

[[maybe_unused]] void origin_spacing(const Grid& grid, double* origin, double* spacing, const char* who) {
  for (int d = 0; d < 3; ++d) {
    const AxisGrid& a = grid.axis(Axis(d));
    detail::require(a.is_uniform(), std::string(who) + ": axis " + axis_name(Axis(d)) +
                                        " is not uniform; .vti/.pvti hold only uniform grids");
    origin[d] = a.lo();
    spacing[d] = a.size() > 1 ? (a.hi() - a.lo()) / double(a.size() - 1) : 1.0;
  }
}

[[maybe_unused]] void check_extent(const Grid& grid, const PieceExtent& e, const char* who) {
  for (int d = 0; d < 3; ++d)
    detail::require(e.lo[d] >= 0 && e.lo[d] <= e.hi[d] && e.hi[d] < grid.extent(Axis(d)),
                    std::string(who) + ": piece extent along " + axis_name(Axis(d)) + " " +
                        std::to_string(e.lo[d]) + ".." + std::to_string(e.hi[d]) + " is outside 0.." +
                        std::to_string(grid.extent(Axis(d)) - 1));
}

[[maybe_unused]] std::string extent_text(const PieceExtent& e) {
  std::ostringstream s;
  s << e.lo[0] << ' ' << e.hi[0] << ' ' << e.lo[1] << ' ' << e.hi[1] << ' ' << e.lo[2] << ' ' << e.hi[2];
  return s.str();
}

// Writes `text` to path via a temporary file and a rename, so a reader never sees half a file.
[[maybe_unused]] void write_atomically(const std::string& path, const std::string& text, const char* who) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(std::string(who) + ": cannot write '" + tmp + "': " + std::strerror(errno));
    f << text;
    if (!f) throw Error(std::string(who) + ": writing '" + tmp + "' failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw Error(std::string(who) + ": cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
}

[[maybe_unused]] std::string xml_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    const char* e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;" : nullptr;
    if (e) r += e; else r += c;
  }
  return r;
}

}  // namespace

#ifdef ADI_HAVE_VTK

void write_vti_piece(const std::string& path, const Grid& grid, const PieceExtent& e,
                     const std::vector<PieceArray>& arrays, double time) {
  const char* who = "write_vti_piece";
  double origin[3], spacing[3];
  origin_spacing(grid, origin, spacing, who);
  check_extent(grid, e, who);
  const index_t nx = e.hi[0] - e.lo[0] + 1, ny = e.hi[1] - e.lo[1] + 1, nz = e.hi[2] - e.lo[2] + 1;
  auto img = vtkSmartPointer<vtkImageData>::New();
  img->SetOrigin(origin);
  img->SetSpacing(spacing);
  img->SetExtent(int(e.lo[0]), int(e.hi[0]), int(e.lo[1]), int(e.hi[1]), int(e.lo[2]), int(e.hi[2]));
  for (const PieceArray& a : arrays) {
    detail::require(!a.name.empty() && (a.f32 || a.f64), std::string(who) + ": an array has no name or no data");
    detail::require(a.box.nx == nx && a.box.ny == ny && a.box.nz == nz,
                    std::string(who) + ": array '" + a.name + "' is " + std::to_string(a.box.nx) + "x" +
                        std::to_string(a.box.ny) + "x" + std::to_string(a.box.nz) + " but the piece has " +
                        std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz) + " nodes");
    auto fill = [&](auto arr, const auto* src) {
      arr->SetName(a.name.c_str());
      arr->SetNumberOfTuples(nx * ny * nz);
      auto* dst = arr->GetPointer(0);
      index_t q = 0;
      for (index_t k = 0; k < nz; ++k)
        for (index_t j = 0; j < ny; ++j)
          for (index_t i = 0; i < nx; ++i) dst[q++] = src[i + j * a.box.sy + k * a.box.sz];
      img->GetPointData()->AddArray(arr);
    };
    if (a.f64)
      fill(vtkSmartPointer<vtkDoubleArray>::New(), a.f64);
    else
      fill(vtkSmartPointer<vtkFloatArray>::New(), a.f32);
  }
  auto t = vtkSmartPointer<vtkDoubleArray>::New();
  t->SetName("TimeValue");
  t->InsertNextValue(time);
  img->GetFieldData()->AddArray(t);
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw Error(std::string(who) + ": cannot write '" + path + "': " + std::strerror(errno));
    std::fclose(f);
  }
  auto w = vtkSmartPointer<vtkXMLImageDataWriter>::New();
  w->SetInputData(img);
  w->SetFileName(path.c_str());
  w->SetDataModeToAppended();
  w->EncodeAppendedDataOff();
  w->SetHeaderTypeToUInt64();
  w->SetCompressorTypeToZLib();
  w->SetCompressionLevel(1);
  if (w->Write() != 1 || w->GetErrorCode() != 0)
    throw Error(std::string(who) + ": VTK failed to write '" + path + "'");
}

void write_pvti(const std::string& path, const Grid& grid, const std::vector<PieceExtent>& extents,
                const std::vector<std::string>& pieces, const std::vector<std::pair<std::string, bool>>& arrays) {
  const char* who = "write_pvti";
  double origin[3], spacing[3];
  origin_spacing(grid, origin, spacing, who);
  detail::require(extents.size() == pieces.size() && !pieces.empty(),
                  std::string(who) + ": " + std::to_string(extents.size()) + " extents for " +
                      std::to_string(pieces.size()) + " pieces (need one each, at least one)");
  for (const PieceExtent& e : extents) check_extent(grid, e, who);
  std::ostringstream s;
  s.precision(17);
  s << "<?xml version=\"1.0\"?>\n"
    << "<VTKFile type=\"PImageData\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
    << "  <PImageData WholeExtent=\"0 " << grid.nx() - 1 << " 0 " << grid.ny() - 1 << " 0 " << grid.nz() - 1
    << "\" GhostLevel=\"0\" Origin=\"" << origin[0] << ' ' << origin[1] << ' ' << origin[2] << "\" Spacing=\""
    << spacing[0] << ' ' << spacing[1] << ' ' << spacing[2] << "\">\n";
  s << "    <PPointData" << (arrays.empty() ? "" : " Scalars=\"" + xml_escape(arrays[0].first) + "\"") << ">\n";
  for (const auto& [name, dbl] : arrays)
    s << "      <PDataArray type=\"" << (dbl ? "Float64" : "Float32") << "\" Name=\"" << xml_escape(name) << "\"/>\n";
  s << "    </PPointData>\n";
  for (std::size_t i = 0; i < pieces.size(); ++i)
    s << "    <Piece Extent=\"" << extent_text(extents[i]) << "\" Source=\"" << xml_escape(pieces[i]) << "\"/>\n";
  s << "  </PImageData>\n</VTKFile>\n";
  write_atomically(path, s.str(), who);
}

void write_pvd(const std::string& path, const std::vector<std::pair<double, std::string>>& frames) {
  std::ostringstream s;
  s.precision(17);
  s << "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
    << "  <Collection>\n";
  for (const auto& [t, file] : frames)
    s << "    <DataSet timestep=\"" << t << "\" group=\"\" part=\"0\" file=\"" << xml_escape(file) << "\"/>\n";
  s << "  </Collection>\n</VTKFile>\n";
  write_atomically(path, s.str(), "write_pvd");
}

#else

void write_vti_piece(const std::string&, const Grid&, const PieceExtent&, const std::vector<PieceArray>&, double) {
  throw Unsupported(kNoVtk);
}
void write_pvti(const std::string&, const Grid&, const std::vector<PieceExtent>&, const std::vector<std::string>&,
                const std::vector<std::pair<std::string, bool>>&) {
  throw Unsupported(kNoVtk);
}
void write_pvd(const std::string&, const std::vector<std::pair<double, std::string>>&) { throw Unsupported(kNoVtk); }

#endif

}  // namespace adi::io
