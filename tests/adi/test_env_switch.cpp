// The library's one reader of environment switches (adi/base/env_switch.hpp): unset and empty
// keep the fallback, the accepted values are read, anything else is an InvalidArgument naming
// the variable, the value and the accepted values; and switches of adi/ and solvers/ read
// through it (ADI_PIVOTING_FALLBACK, ADI_BOUNDARY_REUSE, ADI_FOLD_X_RING).
#include <gtest/gtest.h>

#include <string>

#include "adi/base/env_switch.hpp"
#include "adi/detail/tridiagonal_dispatch.hpp"
#include "adi/adi.hpp"
#include "scoped_env.hpp"
#include "solvers/cuda/backend.hpp"

namespace {

using adi::InvalidArgument;
using adi::test::ScopedEnv;
namespace d = adi::detail;

constexpr const char* kVar = "ADI_TEST_ENV_SWITCH";  // no library switch: the reader alone

// The message of the InvalidArgument that f throws ("" and a failure where it throws none).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument";
  return "";
}

// Unset: the fallback (the variable absent for the scope, the caller's value restored after).
struct Unset {
  ScopedEnv keep{kVar, ""};
  Unset() { unsetenv(kVar); }
};

TEST(EnvSwitch, OnOffUnsetEmpty) {
  {
    const Unset unset;
    EXPECT_TRUE(d::env_switch(kVar, true));
    EXPECT_FALSE(d::env_switch(kVar, false));
  }
  {
    const ScopedEnv empty(kVar, "");  // empty reads as unset
    EXPECT_TRUE(d::env_switch(kVar, true));
    EXPECT_FALSE(d::env_switch(kVar, false));
  }
  {
    const ScopedEnv on(kVar, "1");
    EXPECT_TRUE(d::env_switch(kVar, false));
  }
  {
    const ScopedEnv off(kVar, "0");
    EXPECT_FALSE(d::env_switch(kVar, true));
  }
}

TEST(EnvSwitch, AnythingElseNamesVariableValueAndAccepted) {
  for (const char* bad : {"off", "on", "true", "2", "01", " 1", "1 ", "-1", "yes"}) {
    const ScopedEnv e(kVar, bad);
    const std::string what = refusal([] { d::env_switch(kVar, true); });
    EXPECT_NE(what.find(kVar), std::string::npos) << what;
    EXPECT_NE(what.find(std::string("'") + bad + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("use 1 (on) or 0 (off)"), std::string::npos) << what;
  }
}

TEST(EnvSwitch, ChoiceReadsNamesInOrder) {
  const auto routes = [] {
    return d::env_choice(kVar, {"thread", "tile", "block", "partition", "staged", "regpart"}, -1);
  };
  {
    const Unset unset;
    EXPECT_EQ(routes(), -1);
  }
  {
    const ScopedEnv empty(kVar, "");
    EXPECT_EQ(routes(), -1);
  }
  int i = 0;
  for (const char* name : {"thread", "tile", "block", "partition", "staged", "regpart"}) {
    const ScopedEnv e(kVar, name);
    EXPECT_EQ(routes(), i++) << name;
  }
}

TEST(EnvSwitch, ChoiceRefusesOtherNames) {
  for (const char* bad : {"Thread", "threads", "auto", "automatic", " tile", "0"}) {
    const ScopedEnv e(kVar, bad);
    const std::string what = refusal([] { d::env_choice(kVar, {"thread", "tile", "block"}, 0); });
    EXPECT_EQ(what, std::string("environment variable ") + kVar + " = '" + bad +
                        "': use thread, tile or block, or unset it for the default");
  }
  const ScopedEnv e(kVar, "3");
  EXPECT_NE(refusal([] { d::env_choice(kVar, {"128", "64"}, 0); }).find("use 128 or 64,"), std::string::npos);
}

TEST(EnvSwitch, IntegerInRange) {
  {
    const Unset unset;
    EXPECT_EQ(d::env_int(kVar, 3, 5, 4), 4);
    EXPECT_EQ(d::env_int(kVar, 3, 5, 0), 0);  // (the fallback need not lie in the range)
  }
  {
    const ScopedEnv empty(kVar, "");
    EXPECT_EQ(d::env_int(kVar, 3, 5, 4), 4);
  }
  for (int v : {3, 4, 5}) {
    const ScopedEnv e(kVar, std::to_string(v).c_str());
    EXPECT_EQ(d::env_int(kVar, 3, 5, 4), v);
  }
  const ScopedEnv negative(kVar, "-2");
  EXPECT_EQ(d::env_int(kVar, -3, 0, 0), -2);
}

TEST(EnvSwitch, IntegerRefusesOutOfRangeAndNonNumbers) {
  for (const char* bad : {"2", "6", "0", "-4", "3x", "+3", " 3", "3 ", "0x3", "3.0", "-", "four",
                          "99999999999999999999999"}) {
    const ScopedEnv e(kVar, bad);
    const std::string what = refusal([] { d::env_int(kVar, 3, 5, 4); });
    EXPECT_EQ(what, std::string("environment variable ") + kVar + " = '" + bad +
                        "': use an integer from 3 to 5, or unset it for the default");
  }
}

// The library's switches through the reader.

TEST(EnvSwitch, PivotingFallbackHostOrDevice) {
  {
    const ScopedEnv keep("ADI_PIVOTING_FALLBACK", "");  // (restored after)
    unsetenv("ADI_PIVOTING_FALLBACK");
    EXPECT_FALSE(d::pivoting_fallback_on_device());
  }
  {
    const ScopedEnv e("ADI_PIVOTING_FALLBACK", "host");
    EXPECT_FALSE(d::pivoting_fallback_on_device());
  }
  {
    const ScopedEnv e("ADI_PIVOTING_FALLBACK", "device");
    EXPECT_TRUE(d::pivoting_fallback_on_device());
  }
  const ScopedEnv e("ADI_PIVOTING_FALLBACK", "gpu");  // before stop 40: silently the host
  const std::string what = refusal([] { d::pivoting_fallback_on_device(); });
  EXPECT_NE(what.find("ADI_PIVOTING_FALLBACK = 'gpu': use host or device"), std::string::npos) << what;
}

TEST(EnvSwitch, BoundaryReuseStrictWhenTheOperatorIsMade) {
  const adi::Grid g = adi::Grid::uniform({8, 8, 8}, {0, 0, 0}, {1, 1, 1});
  {
    const ScopedEnv e("ADI_BOUNDARY_REUSE", "0");
    EXPECT_NO_THROW(adi::Operator<double>(g, adi::Pde::heat(1, 1, 1), adi::BoundaryConditions{}));
  }
  const ScopedEnv e("ADI_BOUNDARY_REUSE", "no");
  const std::string what =
      refusal([&] { adi::Operator<double>(g, adi::Pde::heat(1, 1, 1), adi::BoundaryConditions{}); });
  EXPECT_NE(what.find("ADI_BOUNDARY_REUSE = 'no'"), std::string::npos) << what;
}

// A CUDA form switch of solvers/ (read on the host, no GPU needed): ADI_FOLD_X_RING 0 .. 2.
TEST(EnvSwitch, FoldXRingModeStrict) {
  if (!adi::cuda_backend::compiled()) GTEST_SKIP() << "CUDA not built: fold_x_ring_mode() is 0 whatever the variable";
  for (int v : {0, 1, 2}) {
    const ScopedEnv e("ADI_FOLD_X_RING", std::to_string(v).c_str());
    EXPECT_EQ(adi::cuda_backend::fold_x_ring_mode(), v);
  }
  {
    const ScopedEnv e("ADI_FOLD_X_RING", "");
    EXPECT_EQ(adi::cuda_backend::fold_x_ring_mode(), 0);
  }
  const ScopedEnv e("ADI_FOLD_X_RING", "3");  // before stop 40: silently off
  const std::string what = refusal([] { adi::cuda_backend::fold_x_ring_mode(); });
  EXPECT_NE(what.find("ADI_FOLD_X_RING = '3': use an integer from 0 to 2"), std::string::npos) << what;
}

}  // namespace
