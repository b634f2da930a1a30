// The host-team policy (adi/detail/host_team.hpp) on simulated timings: it settles on the
// fastest team of its ladder, follows load that arrives and leaves, keeps a requested
// thread count as given, and spends few calls away from its choice.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "adi/detail/host_team.hpp"
#include "adi/operator.hpp"
#include "adi/tridiagonal.hpp"

namespace {

using adi::detail::TeamTuner;

// Runs `calls` calls whose time is cost(team); returns how often each team ran.
std::map<int, int> drive(TeamTuner& t, int calls, const std::function<double(int)>& cost) {
  std::map<int, int> used;
  for (int i = 0; i < calls; ++i) {
    const int team = t.pick();
    ++used[team];
    t.record(cost(team));
  }
  return used;
}

// An idle 16-processor machine where the sweeps scale until 8 threads (memory bound).
double idle(int team) { return 1.0 / std::min(team, 8) + 0.001 * team; }
// One core busy elsewhere on a 2-core machine: the static split waits for the shared core.
double loaded(int team) { return team == 1 ? 1.0 : 1.4; }

class HostTeam : public ::testing::Test {
 protected:
  void SetUp() override { TeamTuner::forget_shared_hint(); }
};

}  // namespace

TEST_F(HostTeam, RequestedCountIsKept) {
  TeamTuner t(3);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(t.pick(), 3);
    t.record(i % 2 ? 1.0 : 100.0);
  }
  EXPECT_EQ(t.preferred(), 3);
}

TEST_F(HostTeam, ClimbsDownToTheFastestTeam) {
  TeamTuner t;
  t.reset(0, 16);  // ladder 16, 8, 4, 2, 1
  drive(t, 50, idle);
  EXPECT_EQ(t.preferred(), 8);
  // Settled: at most one call in 64 on another team.
  const auto used = drive(t, 640, idle);
  EXPECT_GE(used.at(8), 640 - 10);
}

TEST_F(HostTeam, NeverTimesTheSmallestTeamOnAnIdleWideMachine) {
  TeamTuner t;
  t.reset(0, 16);
  const auto used = drive(t, 1000, [](int team) { return 1.0 / team; });
  EXPECT_EQ(t.preferred(), 16);
  EXPECT_EQ(used.count(1), 0u);
  EXPECT_EQ(used.count(2), 0u);
}

TEST_F(HostTeam, FollowsLoadBothWays) {
  TeamTuner t;
  t.reset(0, 2);  // a 2-core machine: ladder 2, 1
  drive(t, 20, idle);
  EXPECT_EQ(t.preferred(), 2);
  // Another process takes a core: the chosen team slows down and the tuner moves to one thread.
  drive(t, 20, loaded);
  EXPECT_EQ(t.preferred(), 1);
  const auto used = drive(t, 640, loaded);
  EXPECT_LE(used.count(2) ? used.at(2) : 0, 20);  // re-timings of the other team only
  // The load leaves: a re-timing finds two threads faster again.
  drive(t, 200, idle);
  EXPECT_EQ(t.preferred(), 2);
}

// A busy 2-core machine where two threads collapse (each fork/join waits for a core):
// the re-timings of the larger team back off by the factor it lost by: under 1% in all.
TEST_F(HostTeam, BacksOffFromATeamThatCollapses) {
  TeamTuner t;
  t.reset(0, 2);
  const auto collapse = [](int team) { return team == 1 ? 1.0 : 10.0; };
  const auto used = drive(t, 8192, collapse);
  EXPECT_EQ(t.preferred(), 1);
  double total = 0;
  for (const auto& [team, calls] : used) total += calls * collapse(team);
  EXPECT_LT(total, 1.01 * 8192) << "calls on two threads: " << used.at(2);
}

// A tuner that starts after another one learnt the machine starts on its choice.
TEST_F(HostTeam, LaterTunersStartWhereTheFirstSettled) {
  TeamTuner first, second;
  first.reset(0, 2);
  second.reset(0, 2);
  const auto collapse = [](int team) { return team == 1 ? 1.0 : 10.0; };
  drive(first, 10, collapse);
  ASSERT_EQ(first.preferred(), 1);
  const auto used = drive(second, 10, collapse);
  EXPECT_EQ(used.count(2), 0u);
}

TEST_F(HostTeam, OneSlowCallDoesNotMoveIt) {
  TeamTuner t;
  t.reset(0, 2);
  drive(t, 20, idle);
  int calls = 0;
  drive(t, 100, [&](int team) { return ++calls == 50 ? 10.0 : idle(team); });
  EXPECT_EQ(t.preferred(), 2);
}

// Whatever team a plan picks, its results are the same (each line on one thread).
TEST_F(HostTeam, PlanResultsDoNotDependOnTheTeam) {
  const adi::index_t n = 33, lines = 257;
  std::vector<double> a(n * lines, -1.0), b(n * lines, 4.0), c(n * lines, -1.5), d(n * lines), u1(n * lines),
      u2(n * lines);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = std::sin(0.37 * double(i));
  adi::StridedLines l{n, lines, 1, n};
  adi::TridiagonalPlan<double> one(adi::Executor::host(1), l);
  adi::TridiagonalPlan<double> automatic(adi::Executor::host(), l);
  one.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), u1.data());
  for (int rep = 0; rep < 10; ++rep) {
    std::fill(u2.begin(), u2.end(), std::nan(""));
    automatic.solve(adi::Bands<double>{a.data(), b.data(), c.data()}, d.data(), u2.data());
    ASSERT_EQ(u1, u2) << "call " << rep;
  }
}
