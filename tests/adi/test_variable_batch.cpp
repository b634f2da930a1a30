// VariableBatchPlan (adi/variable_batch.hpp): validation, the size sort, bins, the
// SortedInterleaved geometry, pack/unpack round trips, and the layout helpers' checks.
#include "gpu_skip.hpp"
#include "adi/variable_batch.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "adi/error.hpp"
#include "adi/field.hpp"

namespace adi {
namespace {

std::vector<int> random_sizes(int count, int N, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(0, N);
  std::vector<int> n(count);
  for (int& x : n) x = u(rng);
  return n;
}

TEST(VariableBatchPlan, SortsBinsAndLaysOut) {
  const auto n = random_sizes(1000, 70, 1);
  VariableBatchOptions o;
  o.bin_edges = {0, 32, 64};
  VariableBatchPlan plan(Executor::host(), BatchSizes{n.data(), 1000}, o);
  const VariableBatchView& v = plan.host_view();
  EXPECT_EQ(plan.max_size(), *std::max_element(n.begin(), n.end()));
  EXPECT_EQ(plan.min_size(), *std::min_element(n.begin(), n.end()));
  EXPECT_EQ(plan.total_size(), std::accumulate(n.begin(), n.end(), index_t(0)));
  EXPECT_GE(plan.build_seconds(), 0.0);
  // order: a permutation, sizes descending, ties in system order; position its inverse.
  std::vector<char> seen(1000, 0);
  for (index_t p = 0; p < 1000; ++p) {
    const index_t s = v.order[p];
    ASSERT_FALSE(seen[s]);
    seen[s] = 1;
    EXPECT_EQ(v.position[s], p);
    if (p > 0) {
      const index_t q = v.order[p - 1];
      ASSERT_TRUE(n[q] > n[s] || (n[q] == n[s] && q < s));
    }
  }
  // Packed offsets.
  for (index_t s = 0; s < 1000; ++s) EXPECT_EQ(v.offsets[s + 1] - v.offsets[s], n[s]);
  // Chunks of 32, each padded to its first (largest) system.
  EXPECT_EQ(v.chunks, (1000 + 31) / 32);
  index_t at = 0;
  for (index_t c = 0; c < v.chunks; ++c) {
    EXPECT_EQ(v.chunk_offsets[c], at);
    EXPECT_EQ(v.chunk_rows[c], n[v.order[c * 32]]);
    at += 32 * v.chunk_rows[c];
  }
  EXPECT_EQ(plan.span(SortedInterleaved{}), at);
  // Bins: classes [0,0], [1,32], [33,64], [65,70]; together they cover the sorted order.
  ASSERT_EQ(plan.bins().size(), 4u);
  index_t covered = 0;
  int lower = -1;
  for (const SizeBin& b : plan.bins()) {
    covered += b.count;
    for (index_t p = b.first; p < b.first + b.count; ++p) {
      EXPECT_LE(n[v.order[p]], b.upper_bound);
      EXPECT_GT(n[v.order[p]], lower);
    }
    lower = b.upper_bound;
  }
  EXPECT_EQ(covered, 1000);
  EXPECT_EQ(plan.bins()[3].upper_bound, 70);
  EXPECT_EQ(plan.bins()[0].max_size, 0);
}

TEST(VariableBatchPlan, PackUnpackRoundTrip) {
  const auto n = random_sizes(77, 40, 2);
  VariableBatchOptions o;
  o.chunk_width = 8;
  VariableBatchPlan plan(Executor::host(), BatchSizes{n.data(), 77}, o);
  const index_t total = plan.total_size();
  std::vector<double> compact(total), sorted(plan.span(SortedInterleaved{}), -1.0);
  std::iota(compact.begin(), compact.end(), 1.0);
  plan.pack(compact.data(), CompactBatch{}, sorted.data());
  // Every value lands in its slot; padding is zero.
  const VariableBatchView& v = plan.host_view();
  index_t real = 0;
  for (double x : sorted) real += x != 0.0;
  EXPECT_EQ(real, total);
  for (index_t s = 0; s < 77; ++s)
    for (int k = 0; k < n[s]; ++k) {
      const index_t p = v.position[s];
      ASSERT_EQ(sorted[v.chunk_offsets[p / 8] + k * 8 + p % 8], compact[v.offsets[s] + k]);
    }
  std::vector<double> back(total, 0.0);
  plan.unpack(sorted.data(), back.data(), CompactBatch{});
  EXPECT_EQ(back, compact);
  // Padded interleaved with a larger stride and custom compact offsets (reversed).
  const PaddedInterleaved pl{80, 45};
  std::vector<float> padded(plan.span(pl), std::numeric_limits<float>::quiet_NaN()), sf(sorted.size());
  for (index_t s = 0; s < 77; ++s)
    for (int k = 0; k < n[s]; ++k) padded[k * 80 + s] = float(s * 100 + k);
  plan.pack(padded.data(), pl, sf.data());
  std::vector<float> padded2(padded.size(), std::numeric_limits<float>::quiet_NaN());
  plan.unpack(sf.data(), padded2.data(), pl);
  for (index_t i = 0; i < index_t(padded.size()); ++i)
    if (!std::isnan(padded[i])) {
      ASSERT_EQ(padded2[i], padded[i]);
    }
  std::vector<index_t> rev(77);
  for (index_t s = 0; s < 77; ++s) rev[s] = total - v.offsets[s + 1];
  std::vector<int> ci(total), si(sorted.size()), ci2(total, -5);
  std::iota(ci.begin(), ci.end(), 0);
  plan.pack(ci.data(), CompactBatch{rev.data()}, si.data());
  plan.unpack(si.data(), ci2.data(), CompactBatch{rev.data()});
  EXPECT_EQ(ci2, ci);
}

TEST(VariableBatchPlan, EmptyAndTiny) {
  VariableBatchPlan empty(Executor::host(), BatchSizes{nullptr, 0});
  EXPECT_EQ(empty.count(), 0);
  EXPECT_EQ(empty.max_size(), 0);
  EXPECT_EQ(empty.span(SortedInterleaved{}), 0);
  EXPECT_EQ(empty.span(PaddedInterleaved{}), 0);
  std::vector<int> zeros = {0, 0, 0};
  VariableBatchPlan z(Executor::host(), BatchSizes{zeros.data(), 3, 0});
  EXPECT_EQ(z.total_size(), 0);
  EXPECT_EQ(z.span(SortedInterleaved{}), 0);
}

TEST(VariableBatchPlan, BadInput) {
  std::vector<int> n = {3, -1, 4};
  try {
    VariableBatchPlan(Executor::host(), BatchSizes{n.data(), 3});
    ADD_FAILURE() << "negative size accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("sizes[1] = -1"), std::string::npos) << e.what();
  }
  n[1] = 9;
  EXPECT_THROW(VariableBatchPlan(Executor::host(), BatchSizes{n.data(), 3, 8}), InvalidArgument);  // over max
  EXPECT_NO_THROW(VariableBatchPlan(Executor::host(), BatchSizes{n.data(), 3, 9}));
  VariableBatchOptions limit;
  limit.max_supported = 5;
  EXPECT_THROW(VariableBatchPlan(Executor::host(), BatchSizes{n.data(), 3}, limit), InvalidArgument);
  EXPECT_THROW(VariableBatchPlan(Executor::host(), BatchSizes{nullptr, 3}), InvalidArgument);
  EXPECT_THROW(VariableBatchPlan(Executor::host(), BatchSizes{n.data(), -1}), InvalidArgument);
  VariableBatchOptions edges;
  edges.bin_edges = {8, 4};
  EXPECT_THROW(VariableBatchPlan(Executor::host(), BatchSizes{n.data(), 3}, edges), InvalidArgument);
  VariableBatchOptions width;
  width.chunk_width = 0;
  EXPECT_THROW(VariableBatchPlan(Executor::host(), BatchSizes{n.data(), 3}, width), InvalidArgument);

  VariableBatchPlan plan(Executor::host(), BatchSizes{n.data(), 3});
  std::vector<int> ld = {3, 8, 4};  // ld[1] < n[1] = 9
  try {
    detail::leading_dimensions(plan, PointerBatch{ld.data()}, "test");
    ADD_FAILURE() << "mismatched leading dimension accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ld[1] = 8"), std::string::npos) << e.what();
  }
  ld[1] = 9;
  EXPECT_EQ(detail::leading_dimensions(plan, PointerBatch{ld.data()}, "test"), ld);
  EXPECT_EQ(detail::leading_dimensions(plan, PointerBatch{}, "test"), (std::vector<int>{3, 9, 4}));
  std::vector<index_t> off = {0, 3, 11};  // system 1 (9 elements from 3) overlaps system 2 at 11
  EXPECT_THROW(detail::compact_geometry(plan, CompactBatch{off.data()}, [](int m) -> index_t { return m; }, "test"),
               InvalidArgument);
  off[2] = 12;
  EXPECT_EQ(detail::compact_geometry(plan, CompactBatch{off.data()}, [](int m) -> index_t { return m; }, "test").span,
            16);
  std::vector<double> src(16), dst(plan.span(SortedInterleaved{}));
  EXPECT_THROW(plan.pack(src.data(), PaddedInterleaved{2, 0}, dst.data()), InvalidArgument);  // stride < count
  EXPECT_THROW(plan.pack(src.data(), PaddedInterleaved{0, 3}, dst.data()), InvalidArgument);  // rows < max
  EXPECT_THROW(plan.pack<double>(nullptr, CompactBatch{}, dst.data()), InvalidArgument);
}

// On a CUDA executor the plan mirrors its arrays on the device and packs there.
TEST(VariableBatchPlan, DeviceMirrorAndPack) {
  ADI_REQUIRE_CUDA("device part of the plan");
  const auto n = random_sizes(300, 50, 3);
  Array<int> dn(300, Executor::cuda());
  dn.copy_from_host(n.data());
  VariableBatchPlan plan(Executor::cuda(), BatchSizes{dn.data(), 300});
  EXPECT_EQ(plan.total_size(), std::accumulate(n.begin(), n.end(), index_t(0)));
  const index_t total = plan.total_size(), span = plan.span(SortedInterleaved{});
  std::vector<double> compact(total), sorted(span), back(total);
  std::iota(compact.begin(), compact.end(), 1.0);
  Array<double> dc(total, Executor::cuda()), ds(span, Executor::cuda()), db(total, Executor::cuda());
  dc.copy_from_host(compact.data());
  plan.pack(dc.data(), CompactBatch{}, ds.data());
  ds.copy_to_host(sorted.data());
  VariableBatchPlan host(Executor::host(), BatchSizes{n.data(), 300});
  std::vector<double> expect(span, -1);
  host.pack(compact.data(), CompactBatch{}, expect.data());
  EXPECT_EQ(sorted, expect);
  plan.unpack(ds.data(), db.data(), CompactBatch{});
  db.copy_to_host(back.data());
  EXPECT_EQ(back, compact);
}

}  // namespace
}  // namespace adi
