// VTK output: files written by adi::io are read back with VTK's own readers and
// compared value by value; the .pvd series is parsed with VTK's XML parser.
#include <gtest/gtest.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkRectilinearGrid.h>
#include <vtkSmartPointer.h>
#include <vtkType.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLRectilinearGridReader.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "adi/error.hpp"
#include "adi/io/vtk.hpp"

namespace fs = std::filesystem;
using adi::Field;
using adi::Grid;
using adi::index_t;

namespace {

// A fresh scratch directory per test, removed afterwards.
class VtkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = fs::temp_directory_path() / ("adi_test_vtk_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& f) const { return (dir_ / f).string(); }
  fs::path dir_;
};

// Random values in every node, NaN in the row padding: a writer that copies the
// padding (or gets the row pitch wrong) puts NaNs or shifted values in the file.
template <class T>
Field<T> random_field(index_t nx, index_t ny, index_t nz, unsigned seed) {
  Field<T> f(nx, ny, nz);
  f.fill(std::numeric_limits<T>::quiet_NaN());
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  for (index_t k = 0; k < nz; ++k)
    for (index_t j = 0; j < ny; ++j)
      for (index_t i = 0; i < nx; ++i) f(i, j, k) = static_cast<T>(u(gen));
  return f;
}

template <class T>
constexpr int vtk_type() {
  return std::is_same_v<T, float> ? VTK_FLOAT : VTK_DOUBLE;
}

// Every value of `a` equals the field's, bit for bit (VTK ids run x fastest).
template <class T>
void expect_same(vtkDataArray* a, const Field<T>& f) {
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->GetDataType(), vtk_type<T>());
  ASSERT_EQ(a->GetNumberOfComponents(), 1);
  ASSERT_EQ(a->GetNumberOfTuples(), f.size());
  index_t id = 0, bad = 0;
  for (index_t k = 0; k < f.nz(); ++k)
    for (index_t j = 0; j < f.ny(); ++j)
      for (index_t i = 0; i < f.nx(); ++i, ++id)
        if (static_cast<T>(a->GetComponent(id, 0)) != f(i, j, k) && bad++ < 5)
          ADD_FAILURE() << "value (" << i << "," << j << "," << k << "): file " << a->GetComponent(id, 0)
                        << ", field " << f(i, j, k);
  EXPECT_EQ(bad, 0);
}

double time_value(vtkDataSet* ds) {
  vtkDataArray* t = ds->GetFieldData()->GetArray("TimeValue");
  if (!t || t->GetNumberOfTuples() != 1) return std::numeric_limits<double>::quiet_NaN();
  return t->GetComponent(0, 0);
}

vtkSmartPointer<vtkImageData> read_vti(const std::string& p) {
  auto r = vtkSmartPointer<vtkXMLImageDataReader>::New();
  r->SetFileName(p.c_str());
  r->Update();
  vtkSmartPointer<vtkImageData> out = r->GetOutput();
  return out;
}

vtkSmartPointer<vtkRectilinearGrid> read_vtr(const std::string& p) {
  auto r = vtkSmartPointer<vtkXMLRectilinearGridReader>::New();
  r->SetFileName(p.c_str());
  r->Update();
  vtkSmartPointer<vtkRectilinearGrid> out = r->GetOutput();
  return out;
}

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class T>
class VtkTyped : public VtkTest {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(VtkTyped, Precisions);

TYPED_TEST(VtkTyped, ImageDataRoundTrip) {
  using T = TypeParam;
  // Non-cubic, odd extents; origin and spacing differ per axis.
  const Grid g = Grid::uniform({7, 5, 3}, {-1.0, 0.5, 2.0}, {2.0, 1.5, 2.6});
  const Field<T> u = random_field<T>(7, 5, 3, 1);
  const Field<T> v = random_field<T>(7, 5, 3, 2);
  const std::string p = this->path("a.vti");
  adi::io::write_vti(p, g, {{"u", u}, {"v", v}}, 0.375);

  // Appended, raw, zlib-compressed: the format the brief asks for.
  const std::string text = slurp(p);
  EXPECT_NE(text.find("vtkZLibDataCompressor"), std::string::npos);
  EXPECT_NE(text.find("<AppendedData encoding=\"raw\">"), std::string::npos);

  auto img = read_vti(p);
  int ext[6];
  img->GetExtent(ext);
  EXPECT_EQ(ext[0], 0);
  EXPECT_EQ(ext[1], 6);
  EXPECT_EQ(ext[2], 0);
  EXPECT_EQ(ext[3], 4);
  EXPECT_EQ(ext[4], 0);
  EXPECT_EQ(ext[5], 2);
  double o[3], h[3];
  img->GetOrigin(o);
  img->GetSpacing(h);
  EXPECT_DOUBLE_EQ(o[0], -1.0);
  EXPECT_DOUBLE_EQ(o[1], 0.5);
  EXPECT_DOUBLE_EQ(o[2], 2.0);
  EXPECT_DOUBLE_EQ(h[0], 0.5);
  EXPECT_DOUBLE_EQ(h[1], 0.25);
  EXPECT_DOUBLE_EQ(h[2], 0.3);
  expect_same(img->GetPointData()->GetArray("u"), u);
  expect_same(img->GetPointData()->GetArray("v"), v);
  EXPECT_DOUBLE_EQ(time_value(img), 0.375);
}

TYPED_TEST(VtkTyped, RectilinearRoundTripOnStretchedGrid) {
  using T = TypeParam;
  const Grid g(adi::AxisGrid::stretched(7, 0.0, 1.0, 0.3, 4.0), adi::AxisGrid::uniform(5, -2.0, 2.0),
               adi::AxisGrid::from_nodes({0.0, 0.1, 0.5}));
  const Field<T> u = random_field<T>(7, 5, 3, 3);
  const std::string p = this->path("b.vtr");
  adi::io::write_vtr(p, g, {{"u", u}}, 2.5);

  auto rg = read_vtr(p);
  int dims[3];
  rg->GetDimensions(dims);
  EXPECT_EQ(dims[0], 7);
  EXPECT_EQ(dims[1], 5);
  EXPECT_EQ(dims[2], 3);
  vtkDataArray* c[3] = {rg->GetXCoordinates(), rg->GetYCoordinates(), rg->GetZCoordinates()};
  for (int d = 0; d < 3; ++d) {
    const adi::AxisGrid& a = g.axis(adi::Axis(d));
    ASSERT_EQ(c[d]->GetNumberOfTuples(), a.size());
    for (index_t i = 0; i < a.size(); ++i) EXPECT_EQ(c[d]->GetComponent(i, 0), a[i]) << "axis " << d;
  }
  expect_same(rg->GetPointData()->GetArray("u"), u);
  EXPECT_DOUBLE_EQ(time_value(rg), 2.5);
}

TEST_F(VtkTest, MixedPrecisionAndFlatGrid) {
  // A 2D grid (nz = 1) with a float and a double array in one file.
  const Grid g = Grid::uniform({9, 4, 1}, {0, 0, 0.25}, {1, 1, 0.25});
  const Field<float> a = random_field<float>(9, 4, 1, 4);
  const Field<double> b = random_field<double>(9, 4, 1, 5);
  const std::string p = adi::io::write_vtk(path("flat"), g, {{"a", a}, {"b", b}}, 1.0);
  EXPECT_EQ(p, path("flat.vti"));
  auto img = read_vti(p);
  int dims[3];
  img->GetDimensions(dims);
  EXPECT_EQ(dims[2], 1);
  EXPECT_DOUBLE_EQ(img->GetOrigin()[2], 0.25);
  expect_same(img->GetPointData()->GetArray("a"), a);
  expect_same(img->GetPointData()->GetArray("b"), b);
}

TEST_F(VtkTest, WriteVtkPicksRectilinearForStretchedGrids) {
  const Grid g(adi::AxisGrid::from_nodes({0.0, 0.2, 1.0}), adi::AxisGrid::uniform(2, 0, 1));
  const Field<double> u = random_field<double>(3, 2, 1, 6);
  EXPECT_EQ(adi::io::write_vtk(path("s"), g, {{"u", u}}), path("s.vtr"));
  expect_same(read_vtr(path("s.vtr"))->GetPointData()->GetArray("u"), u);
}

TEST_F(VtkTest, BadInputThrows) {
  const Grid g = Grid::uniform({7, 5, 3}, {0, 0, 0}, {1, 1, 1});
  const Field<double> u = random_field<double>(7, 5, 3, 7);
  // The parent of the target is a regular file: not writable even as root.
  const std::string blocker = path("file");
  std::ofstream(blocker) << "x";
  const std::string bad = blocker + "/sub/out.vti";
  try {
    adi::io::write_vti(bad, g, {{"u", u}});
    FAIL() << "no exception for an unwritable path";
  } catch (const adi::Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_THROW(adi::io::write_vtr(blocker + "/x.vtr", g, {{"u", u}}), adi::Error);
  EXPECT_THROW(adi::io::PvdWriter(blocker + "/series", "s"), adi::Error);

  // Wrong extents, duplicate or empty names, stretched grid in a .vti.
  const Field<double> w = random_field<double>(7, 5, 4, 8);
  EXPECT_THROW(adi::io::write_vti(path("x.vti"), g, {{"w", w}}), adi::InvalidArgument);
  EXPECT_THROW(adi::io::write_vti(path("x.vti"), g, {{"u", u}, {"u", u}}), adi::InvalidArgument);
  EXPECT_THROW(adi::io::write_vti(path("x.vti"), g, {{"", u}}), adi::InvalidArgument);
  const Grid s(adi::AxisGrid::stretched(7, 0, 1, 0.5, 3), adi::AxisGrid::uniform(5, 0, 1),
               adi::AxisGrid::uniform(3, 0, 1));
  EXPECT_THROW(adi::io::write_vti(path("x.vti"), s, {{"u", u}}), adi::InvalidArgument);
  EXPECT_THROW(adi::io::PvdWriter(path("d"), "a/b"), adi::InvalidArgument);
}

// The <DataSet> entries of a .pvd, as (timestep, file), through VTK's XML parser.
std::vector<std::pair<double, std::string>> parse_pvd(const std::string& p) {
  auto parser = vtkSmartPointer<vtkXMLDataParser>::New();
  parser->SetFileName(p.c_str());
  std::vector<std::pair<double, std::string>> out;
  if (!parser->Parse()) {
    ADD_FAILURE() << p << " is not well-formed XML";
    return out;
  }
  vtkXMLDataElement* root = parser->GetRootElement();
  EXPECT_STREQ(root->GetName(), "VTKFile");
  EXPECT_STREQ(root->GetAttribute("type"), "Collection");
  vtkXMLDataElement* col = root->FindNestedElementWithName("Collection");
  if (!col) {
    ADD_FAILURE() << "no <Collection> in " << p;
    return out;
  }
  for (int i = 0; i < col->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* e = col->GetNestedElement(i);
    EXPECT_STREQ(e->GetName(), "DataSet");
    double t = std::numeric_limits<double>::quiet_NaN();
    e->GetScalarAttribute("timestep", t);
    out.emplace_back(t, e->GetAttribute("file") ? e->GetAttribute("file") : "");
  }
  return out;
}

TEST_F(VtkTest, PvdSeriesListsEveryFrameAfterEveryWrite) {
  const Grid g = Grid::uniform({7, 5, 3}, {0, 0, 0}, {1, 1, 1});
  const std::string out = path("series/deeper");  // created by the writer
  adi::io::PvdWriter pvd(out, "heat");
  EXPECT_EQ(pvd.pvd_path(), (fs::path(out) / "heat.pvd").string());
  const double times[] = {0.0, 0.1, 1.0 / 3.0};
  const long steps[] = {0, 10, 20};
  std::vector<Field<float>> frames;
  for (int f = 0; f < 3; ++f) {
    frames.push_back(random_field<float>(7, 5, 3, 10 + f));
    const std::string p = pvd.write(g, {{"u", frames.back()}}, times[f], steps[f]);
    char name[32];
    std::snprintf(name, sizeof name, "heat_%05ld.vti", steps[f]);
    EXPECT_EQ(p, (fs::path(out) / name).string());
    // The series is complete after each frame (what a crash would leave).
    const auto entries = parse_pvd(pvd.pvd_path());
    ASSERT_EQ(entries.size(), std::size_t(f + 1));
    EXPECT_EQ(entries.back().second, name);
    EXPECT_EQ(entries.back().first, times[f]);  // written with 17 digits: exact
    EXPECT_FALSE(fs::exists(pvd.pvd_path() + ".tmp"));
  }
  EXPECT_EQ(pvd.frames(), 3u);
  for (const auto& [t, file] : parse_pvd(pvd.pvd_path())) {
    auto img = read_vti((fs::path(out) / file).string());
    EXPECT_EQ(time_value(img), t);
  }
  expect_same(read_vti((fs::path(out) / "heat_00020.vti").string())->GetPointData()->GetArray("u"),
              frames[2]);

  // Default labels count frames; a repeated label replaces its entry.
  adi::io::PvdWriter second(path("two"), "s");
  second.write(g, {{"u", frames[0]}}, 0.0);
  second.write(g, {{"u", frames[1]}}, 0.5);
  second.write(g, {{"u", frames[2]}}, 0.75, 1);
  const auto e = parse_pvd(second.pvd_path());
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].second, "s_00000.vti");
  EXPECT_EQ(e[1].second, "s_00001.vti");
  EXPECT_EQ(e[1].first, 0.75);
}

TEST(Vtk, AvailableInThisBuild) { EXPECT_TRUE(adi::io::vtk_available()); }

}  // namespace
