// The time grid of the finance steppers (adi/finance/pricer_detail.hpp: time_level, step_length,
// time_step): uniform steps all hand the scheme the bitwise-same length T / N, so the bands it
// forms from s = theta dt (AdiSolver / Operator, the Brennan-Schwartz sweeps of the one-asset
// engine, the chain and the one-asset American solver) are formed once, not at every step;
// graded steps keep tb - ta; the times stay the grid's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "adi/finance/pricer_detail.hpp"

namespace {

using adi::finance::detail::nominal_step;
using adi::finance::detail::step_length;
using adi::finance::detail::time_level;
using adi::finance::detail::time_step;
using adi::finance::detail::TimeStep;

constexpr double kEps = std::numeric_limits<double>::epsilon();

// Maturities and step counts whose levels k T / N round differently from step to step.
const double kMaturities[] = {1.0, 0.7, 2.0 / 3.0, 1.0 / 52 + 2.0 * 9 / 22, 0.25, 5.3};
const long kSteps[] = {1, 2, 7, 50, 60, 100, 333, 1000, 12345};

TEST(TimeSteps, UniformStepsAllHaveTheBitwiseSameLength) {
  long wobbling = 0;  // grids on which tb - ta itself takes more than one value
  for (double T : kMaturities)
    for (long N : kSteps) {
      SCOPED_TRACE("T = " + std::to_string(T) + ", N = " + std::to_string(N));
      const double h = T / double(N);
      EXPECT_EQ(nominal_step(T, N, 1.0), h);
      std::set<double> raw, used;
      double sum = 0.0;
      for (long k = 0; k < N; ++k) {
        const TimeStep st = time_step(T, k, N, 1.0);
        // The times stay the grid's; consecutive steps join exactly; the last ends at T.
        ASSERT_EQ(st.ta, time_level(T, k, N, 1.0));
        ASSERT_EQ(st.tb, time_level(T, k + 1, N, 1.0));
        ASSERT_EQ(st.dt, h) << "step " << k << ": tb - ta = " << st.tb - st.ta;
        ASSERT_EQ(st.half(), 0.5 * h);  // damped halves: one length too
        EXPECT_GE(st.middle(), st.ta);
        EXPECT_LE(st.middle(), st.tb);
        raw.insert(st.tb - st.ta);
        used.insert(st.dt);
        sum += st.dt;
      }
      EXPECT_EQ(time_step(T, N - 1, N, 1.0).tb, T);
      EXPECT_EQ(used.size(), 1u);
      // N steps of T / N reach T up to the rounding of T / N and of the sum.
      EXPECT_NEAR(sum, T, 2.0 * kEps * T * double(N));
      if (raw.size() > 1) ++wobbling;
    }
  // The reason for all this: on most of these grids tb - ta is not one value (the bands formed
  // from it would change at every step).
  EXPECT_GT(wobbling, 10);
}

TEST(TimeSteps, GradedStepsKeepTheirGridLengths) {
  for (double p : {1.5, 2.0, 3.0, 4.0})
    for (double T : kMaturities)
      for (long N : {2L, 7L, 60L, 333L}) {
        SCOPED_TRACE("p = " + std::to_string(p) + ", T = " + std::to_string(T) + ", N = " + std::to_string(N));
        EXPECT_EQ(nominal_step(T, N, p), 0.0);
        for (long k = 0; k < N; ++k) {
          const TimeStep st = time_step(T, k, N, p);
          ASSERT_EQ(st.ta, time_level(T, k, N, p));
          ASSERT_EQ(st.tb, time_level(T, k + 1, N, p));
          ASSERT_EQ(st.dt, st.tb - st.ta) << "step " << k;
          ASSERT_EQ(st.half(), 0.5 * (st.tb - st.ta));
        }
      }
}

// The one-asset engine merges uniform levels with dividend and exercise dates: steps within
// round-off of T / N take it, the uneven ones around an event keep tb - ta.
TEST(TimeSteps, StepLengthSnapsOnlyRoundOff) {
  const double T = 0.7;
  const long N = 100;
  const double h = nominal_step(T, N, 1.0);
  const double ta = time_level(T, 37, N, 1.0), tb = time_level(T, 38, N, 1.0);
  EXPECT_EQ(step_length(ta, tb, h), h);
  EXPECT_EQ(step_length(ta, std::nextafter(tb, 1.0), h), h);
  EXPECT_EQ(step_length(std::nextafter(ta, 1.0), tb, h), h);
  // An event inside the step, or one merged into a level 1e-13 T away: real lengths.
  const double event = ta + 0.3 * h;
  EXPECT_EQ(step_length(ta, event, h), event - ta);
  EXPECT_EQ(step_length(event, tb, h), tb - event);
  const double near = tb - 1e-13 * T;
  EXPECT_EQ(step_length(ta, near, h), near - ta);
  // No nominal step (graded levels): always tb - ta.
  EXPECT_EQ(step_length(ta, tb, 0.0), tb - ta);
  EXPECT_EQ(step_length(0.0, 0.0, 0.0), 0.0);
}

}  // namespace
