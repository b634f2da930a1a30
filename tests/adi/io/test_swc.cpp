// SWC reader: the two real cells, Hines renumbering, and every kind of bad input with a
// message that names the file and the line.
#include <gtest/gtest.h>

#include <sstream>

#include "adi/error.hpp"
#include "adi/io/swc.hpp"
#include "hines_test_common.hpp"

namespace {

using adi::io::parse_swc;
using adi::io::SwcTree;

SwcTree parse(const std::string& text) {
  std::istringstream in(text);
  return parse_swc(in, "cell.swc");
}

// Every parent precedes its children, and a sample with children is followed by one of them.
void expect_hines_order(const SwcTree& t) {
  ASSERT_EQ(t.parent.size(), t.samples.size());
  ASSERT_FALSE(t.samples.empty());
  EXPECT_EQ(t.parent[0], -1);
  std::vector<int> children(t.parent.size(), 0);
  for (std::size_t i = 1; i < t.parent.size(); ++i) {
    ASSERT_GE(t.parent[i], 0);
    ASSERT_LT(t.parent[i], static_cast<int>(i));
    ++children[static_cast<std::size_t>(t.parent[i])];
    // The parent's id in the file is the parent_id of this sample.
    EXPECT_EQ(t.samples[static_cast<std::size_t>(t.parent[i])].id, t.samples[i].parent_id);
  }
  for (std::size_t i = 0; i + 1 < t.parent.size(); ++i)
    if (children[i] > 0) EXPECT_EQ(t.parent[i + 1], static_cast<int>(i)) << "sample " << i;
}

TEST(Swc, RealCells) {
  const SwcTree a = adi::io::read_swc(hines_test::dense_cell());
  EXPECT_EQ(a.samples.size(), 3187u);
  expect_hines_order(a);
  const SwcTree b = adi::io::read_swc(hines_test::sparse_cell());
  EXPECT_EQ(b.samples.size(), 3783u);
  expect_hines_order(b);
  // Branch points as the data README states.
  for (const auto& [t, expected] : {std::pair{&a, 392}, std::pair{&b, 57}}) {
    std::vector<int> children(t->parent.size(), 0);
    for (std::size_t i = 1; i < t->parent.size(); ++i) ++children[static_cast<std::size_t>(t->parent[i])];
    int branch_points = 0;
    for (int c : children) branch_points += c >= 2;
    EXPECT_EQ(branch_points, expected);
  }
}

TEST(Swc, RenumbersChildrenBeforeParentsCommentsAndSeparators) {
  const SwcTree t = parse(
      "# a comment\n"
      "\n"
      "5 3 1 0 0 0.5 2\r\n"
      "2\t3\t0.5\t0\t0\t0.5\t1  # trailing comment\n"
      "1 1 0 0 0 2 -1\n"
      "7 3 0 1 0 0.5 1\n"
      "9 3 1.5 0 0 +0.4 5\n");
  ASSERT_EQ(t.samples.size(), 5u);
  expect_hines_order(t);
  EXPECT_EQ(t.samples[0].id, 1);
  EXPECT_EQ(t.samples[1].id, 2);
  EXPECT_EQ(t.samples[2].id, 5);
  EXPECT_EQ(t.samples[3].id, 9);
  EXPECT_EQ(t.samples[4].id, 7);
  EXPECT_DOUBLE_EQ(t.samples[3].radius, 0.4);
  EXPECT_EQ(t.samples[3].line, 7);
  EXPECT_EQ(t.source, "cell.swc");
}

// The error names the file and the line and says what is wrong.
void expect_error(const std::string& text, const std::string& where, const std::string& what) {
  try {
    parse(text);
    ADD_FAILURE() << "no error for:\n" << text;
  } catch (const adi::InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(where), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
}

TEST(Swc, BadInput) {
  const std::string root = "1 1 0 0 0 2 -1\n";
  expect_error(root + "2 3 1 0 0 0.5\n", "cell.swc:2:", "expected 7 fields");
  expect_error(root + "2 3 1 0 0 0.5 1 8\n", "cell.swc:2:", "found 8");
  expect_error(root + "2 3 1 abc 0 0.5 1\n", "cell.swc:2:", "(y) = 'abc' is not a finite number");
  expect_error(root + "2 3 1 0 nan 0.5 1\n", "cell.swc:2:", "(z)");
  expect_error(root + "2.5 3 1 0 0 0.5 1\n", "cell.swc:2:", "(id) = '2.5' is not an integer");
  expect_error(root + "2 dendrite 1 0 0 0.5 1\n", "cell.swc:2:", "(type)");
  expect_error(root + "2 3 1 0 0 0.5 one\n", "cell.swc:2:", "(parent)");
  expect_error(root + "2 3 1 0 0 -0.5 1\n", "cell.swc:2:", "negative radius");
  expect_error(root + "2 3 1 0 0 0.5 1\n2 3 2 0 0 0.5 1\n", "cell.swc:3:", "id 2 already used on line 2");
  expect_error(root + "2 3 1 0 0 0.5 1\n3 3 2 0 0 0.5 4\n", "cell.swc:3:", "missing parent");
  expect_error(root + "2 3 1 0 0 0.5 2\n", "cell.swc:2:", "its own parent");
  expect_error(root + "2 3 1 0 0 0.5 3\n3 3 2 0 0 0.5 2\n", "cell.swc:", "cycle");
  expect_error(root + "2 3 1 0 0 0.5 1\n3 1 5 0 0 2 -1\n", "cell.swc:3:", "several roots");
  expect_error("2 3 1 0 0 0.5 3\n3 3 2 0 0 0.5 2\n", "cell.swc", "no root");
  expect_error("# only comments\n\n", "cell.swc", "no samples");
  expect_error(root + "2 3 1 0 0 0.5 -3\n", "cell.swc:2:", "neither -1");
  EXPECT_THROW(adi::io::read_swc("/nonexistent/cell.swc"), adi::Error);
}

}  // namespace
