// Field's row padding in one process (before stop 40 checked only by the 2-rank MPI test
// DistributedAdi.LocalShape): rows of more than 64 bytes padded to detail::row_align_bytes()
// (128 bytes; 64 under ADI_FIELD_ROW_ALIGN=64: ctest test_field_row64 runs this file so),
// rows of at most 64 bytes to 64 bytes either way (a 128-byte line would double a narrow
// field's memory); host storage aligned to 128 bytes, so every padded row starts aligned.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "adi/adi.hpp"

namespace {

using adi::Field;
using adi::index_t;

// What the process was started with (row_align_bytes() reads it once per process).
index_t expected_align() {
  const char* env = std::getenv("ADI_FIELD_ROW_ALIGN");
  return env != nullptr && std::string(env) == "64" ? 64 : 128;
}

TEST(Field, RowAlignFromTheEnvironment) {
  EXPECT_EQ(static_cast<index_t>(adi::detail::row_align_bytes()), expected_align());
}

// Rows of at most 64 bytes: 64-byte padding, whatever row_align_bytes() is.
TEST(Field, RowsOfAtMost64BytesKeep64BytePadding) {
  for (index_t nx = 1; nx <= 8; ++nx) EXPECT_EQ(Field<double>::padded_row(nx), 8) << "double nx " << nx;
  for (index_t nx = 1; nx <= 16; ++nx) EXPECT_EQ(Field<float>::padded_row(nx), 16) << "float nx " << nx;
  const Field<double> d(5, 3, 2);  // 40-byte rows
  EXPECT_EQ(d.box().sy, 8);
  EXPECT_EQ(d.box().sz, 24);
  const Field<float> f(16, 2, 1);  // exactly 64 bytes
  EXPECT_EQ(f.box().sy, 16);
}

// Longer rows: padded to row_align_bytes() (128 by default), by less than one alignment.
TEST(Field, LongerRowsPadToTheRowAlignment) {
  const index_t align = expected_align();
  for (index_t nx : {9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 513}) {
    const index_t pd = Field<double>::padded_row(nx);
    EXPECT_EQ(pd * index_t(sizeof(double)) % align, 0) << "double nx " << nx;
    EXPECT_GE(pd, nx);
    EXPECT_LT(pd - nx, align / index_t(sizeof(double))) << "double nx " << nx;
  }
  for (index_t nx : {17, 31, 32, 33, 255, 257, 513}) {
    const index_t pf = Field<float>::padded_row(nx);
    EXPECT_EQ(pf * index_t(sizeof(float)) % align, 0) << "float nx " << nx;
    EXPECT_GE(pf, nx);
    EXPECT_LT(pf - nx, align / index_t(sizeof(float))) << "float nx " << nx;
  }
  // The cases stop 39 measured (docs/mpi.md): an x-split piece's 513 values per row.
  EXPECT_EQ(Field<double>::padded_row(513), align == 128 ? 528 : 520);
  EXPECT_EQ(Field<double>::padded_row(9), 16);  // 72 bytes: 128 either way
  EXPECT_EQ(Field<double>::padded_row(17), align == 128 ? 32 : 24);
  EXPECT_EQ(Field<float>::padded_row(17), 32);  // 68 bytes: 128 either way
  EXPECT_EQ(Field<float>::padded_row(33), align == 128 ? 64 : 48);
}

// A host field's rows each start on a multiple of their padding (storage aligned to 128 bytes).
TEST(Field, HostRowsStartAligned) {
  for (index_t nx : {3, 8, 9, 33, 257}) {
    const Field<double> u(nx, 3, 2);
    const index_t pad = nx * index_t(sizeof(double)) <= 64 ? 64 : expected_align();
    EXPECT_EQ(u.box().sy, Field<double>::padded_row(nx));
    EXPECT_EQ(u.box().sz, u.box().sy * 3);
    for (index_t k = 0; k < 2; ++k)
      for (index_t j = 0; j < 3; ++j) {
        const auto at = reinterpret_cast<std::uintptr_t>(&u(0, j, k));
        EXPECT_EQ(at % std::uintptr_t(pad), 0u) << "nx " << nx << " row " << j << " plane " << k;
      }
  }
}

}  // namespace
