// The parallel VTK series read back with VTK: the .pvti of a decomposed field is one
// dataset with the global extents and every node's value, pieces sharing their layers.
#include <gtest/gtest.h>
#include <vtkDataArray.h>
#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPImageDataReader.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "adi/mpi/halo.hpp"
#include "adi/mpi/vtk_series.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

double value(index_t i, index_t j, index_t k) { return 0.5 * double(i) + 10.0 * double(j) - 100.0 * double(k); }

template <class T>
void write_and_read_back(const std::array<int, 3>& dims, const std::string& dir) {
  ProcessGrid procs(MPI_COMM_WORLD, dims);
  const std::array<index_t, 3> n{9, 9, 10};  // >= 2 nodes per rank on 4 ranks along any axis
  const Grid grid = Grid::uniform(n, {0, -1, 2}, {1, 1, 3});
  Decomposition dec(procs, n);
  LocalField<T> f(dec, {1, 1, 1});
  const auto lo = dec.lo();
  for (index_t k = 0; k < f.extent(Axis::z); ++k)
    for (index_t j = 0; j < f.extent(Axis::y); ++j)
      for (index_t i = 0; i < f.extent(Axis::x); ++i) f(i, j, k) = T(value(lo[0] + i, lo[1] + j, lo[2] + k));
  HaloExchange<T> halo(procs, f);
  halo.exchange(f);
  PvtiSeries out(procs, dec, grid, dir, "series");
  out.template write<T>({{"f", &f}}, 0.0, 0);
  const std::string pvti = out.template write<T>({{"f", &f}}, 0.5, 7);
  EXPECT_EQ(out.frames(), 2u);
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() != 0) return;
  auto reader = vtkSmartPointer<vtkXMLPImageDataReader>::New();
  reader->SetFileName(pvti.c_str());
  reader->Update();
  vtkImageData* img = reader->GetOutput();
  int ext[6];
  img->GetExtent(ext);
  EXPECT_EQ(ext[1] - ext[0] + 1, n[0]);
  EXPECT_EQ(ext[3] - ext[2] + 1, n[1]);
  EXPECT_EQ(ext[5] - ext[4] + 1, n[2]);
  double sp[3];
  img->GetSpacing(sp);
  EXPECT_NEAR(sp[0], 1.0 / 8, 1e-12);
  EXPECT_NEAR(sp[1], 2.0 / 8, 1e-12);
  vtkDataArray* arr = img->GetPointData()->GetArray("f");
  ASSERT_NE(arr, nullptr);
  ASSERT_EQ(arr->GetNumberOfTuples(), n[0] * n[1] * n[2]);
  int bad = 0;
  for (index_t k = 0; k < n[2]; ++k)
    for (index_t j = 0; j < n[1]; ++j)
      for (index_t i = 0; i < n[0]; ++i)
        bad += arr->GetTuple1(i + n[0] * (j + n[1] * k)) != double(T(value(i, j, k)));
  EXPECT_EQ(bad, 0);
  // The .pvd lists both frames.
  std::ifstream pvd(out.pvd_path());
  std::stringstream s;
  s << pvd.rdbuf();
  EXPECT_NE(s.str().find("series_00000.pvti"), std::string::npos);
  EXPECT_NE(s.str().find("series_00007.pvti"), std::string::npos);
}

TEST(ParallelVtk, PvtiReadsBackAsOneDataset) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("adi_pvti_test_" + std::to_string(world_size())))
                              .string();
  for (const auto& dims : factorisations(world_size())) {
    write_and_read_back<double>(dims, dir);
    write_and_read_back<float>(dims, dir);
  }
}

TEST(ParallelVtk, UnwritableFolderFailsOnEveryRank) {
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  const std::array<index_t, 3> n{4 * world_size(), 3, 3};
  Decomposition dec(procs, n);
  EXPECT_THROW(
      { PvtiSeries s(procs, dec, Grid::uniform(n, {0, 0, 0}, {1, 1, 1}), "/proc/adi_cannot_write_here", "x"); },
      InvalidArgument);
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

}  // namespace
