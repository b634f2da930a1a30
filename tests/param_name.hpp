#pragma once
// Readable names for value-parameterised suites: the parameter as GoogleTest prints it
// (its PrintTo), with every run of other characters than letters and digits turned into
// one '_'. Pass it as the name generator, so that CTest lists
//   Suite/Fixture.Test/contiguous_dominant_partial_automatic
// instead of Suite/Fixture.Test/0 (tests/CMakeLists.txt discovers with NO_PRETTY_VALUES,
// whose default would put "# GetParam() = <hex dump>" into the name; the structure_test_names
// CTest fails on either).
//
//   INSTANTIATE_TEST_SUITE_P(Layouts, MySuite, ::testing::ValuesIn(params()), adi::test::ParamName{});
#include <gtest/gtest.h>

#include <cctype>
#include <string>

namespace adi::test {

struct ParamName {
  template <class P>
  std::string operator()(const ::testing::TestParamInfo<P>& info) const {
    std::string out;
    for (char ch : ::testing::PrintToString(info.param)) {
      if (std::isalnum(static_cast<unsigned char>(ch)))
        out += ch;
      else if (!out.empty() && out.back() != '_')
        out += '_';
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    return out.empty() ? "param" + std::to_string(info.index) : out;
  }
};

}  // namespace adi::test
