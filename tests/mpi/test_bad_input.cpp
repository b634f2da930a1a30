// Bad input under MPI: every rank throws the same clear error, and nobody hangs (the
// ctest TIMEOUT of the mpi_* tests turns a hang into a failure). After each error a
// barrier checks that all ranks are still in step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/subdomain.hpp"
#include "adi/operator.hpp"
#include "adi/scheme.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace adi;
using namespace adi::mpi;
using namespace adi::mpi::testing;

TEST(MpiBadInput, ProcessGridNotMatchingCommunicator) {
  expect_everywhere<InvalidArgument>([] { ProcessGrid g(MPI_COMM_WORLD, {world_size() + 1, 1, 1}); },
                                     "but the communicator has");
  expect_everywhere<InvalidArgument>([] { ProcessGrid g(MPI_COMM_WORLD, {0, 1, 1}); }, "count < 1");
}

TEST(MpiBadInput, ProcessGridDiffersBetweenRanks) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int p = world_size();
  expect_everywhere<InvalidArgument>(
      [p] { ProcessGrid g(MPI_COMM_WORLD, world_rank() == 1 ? std::array<int, 3>{1, p, 1} : std::array<int, 3>{p, 1, 1}); },
      "differ from rank 0's");
}

TEST(MpiBadInput, FewerThanTwoRowsAlongASplitAxis) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
  expect_everywhere<InvalidArgument>([&] { Decomposition d(procs, {2 * p - 1, 5, 5}); }, "needs >= 2 nodes per rank");
  // A tiny weight starves one rank.
  expect_everywhere<InvalidArgument>(
      [&] { Decomposition d(procs, {4 * p, 5, 5}, world_rank() == p - 1 ? 1e-3 : 1.0); }, "needs >= 2 nodes per rank");
  // And the plan itself, given a 1-row box directly.
  expect_everywhere<InvalidArgument>(
      [&] { DistributedTridiagonalPlan<double> plan(procs, Axis::x, Executor::host(), Box3::dense(1, 4, 4)); },
      ">= 2 rows per rank");
}

TEST(MpiBadInput, MismatchedExtents) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
  expect_everywhere<InvalidArgument>(
      [&] { Decomposition d(procs, {20, world_rank() == 1 ? 6 : 5, 5}); }, "mismatched global extents");
  // Boxes whose lines differ between the ranks of the axis.
  expect_everywhere<InvalidArgument>(
      [&] {
        DistributedTridiagonalPlan<double> plan(procs, Axis::x, Executor::host(),
                                                Box3::dense(6, world_rank() == 1 ? 5 : 4, 3));
      },
      "mismatched extents");
}

TEST(MpiBadInput, BadWeightOnOneRank) {
  ProcessGrid procs(MPI_COMM_WORLD, {world_size(), 1, 1});
  expect_everywhere<InvalidArgument>(
      [&] { Decomposition d(procs, {40, 5, 5}, world_rank() == world_size() - 1 ? -1.0 : 1.0); }, "weight");
}

TEST(MpiBadInput, ZeroPivotOnOneRankThrowsOnEveryRank) {
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {1, 1, p});
  for (auto s : {ReducedStrategy::allgather, ReducedStrategy::alltoall, ReducedStrategy::pcr}) {
    const Box3 box = Box3::dense(3, 2, 6);
    std::vector<double> a(std::size_t(box.span()), 0.1), b(a.size(), 2.0), c(a.size(), 0.1), d(a.size(), 1.0),
        u(a.size());
    // A zero row on the last rank only: b = a = c = 0 in row 2 of line 0.
    if (world_rank() == p - 1) a[2 * 6] = b[2 * 6] = c[2 * 6] = 0.0;
    DistributedTridiagonalPlan<double> plan(procs, Axis::z, Executor::host(), box, {false, s});
    expect_everywhere<SingularSystem>(
        [&] { plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data()); }, "pivot");
    // The fields name the line and its row along the whole axis, on every rank.
    try {
      plan.solve(Bands<double>{a.data(), b.data(), c.data()}, d.data(), u.data());
      ADD_FAILURE() << "no SingularSystem, " << strategy_name(s);
    } catch (const SingularSystem& e) {
      EXPECT_EQ(e.system(), 0) << strategy_name(s) << ": " << e.what();
      if (p > 1) {  // one rank: the single-device plan's pivoting solve, which names the line only
        EXPECT_EQ(e.row(), 6 * (p - 1) + 2) << strategy_name(s) << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("at row " + std::to_string(6 * (p - 1) + 2)), std::string::npos)
            << e.what();
      }
    }
  }
}

// The distributed Operator / AdiSolver: checks of the global set-up throw alike on every
// rank, checks that only some ranks can make (coefficients, initial values on their own
// nodes) are agreed, so every rank throws the same error and nobody waits in a collective.
TEST(MpiBadInput, DistributedAdiSetups) {
  const int p = world_size();
  ProcessGrid procs(MPI_COMM_WORLD, {p, 1, 1});
  const Grid g = Grid::uniform({4 * p + 1, 5, 5}, {0, 0, 0}, {1, 1, 1});
  Decomposition dec(procs, {g.nx(), g.ny(), g.nz()});
  const auto sub = subdomain(procs, dec);
  auto bc = BoundaryConditions::all(Boundary::dirichlet(0.0));
  // A decomposition of another grid.
  const Grid other = Grid::uniform({4 * p + 2, 5, 5}, {0, 0, 0}, {1, 1, 1});
  expect_everywhere<InvalidArgument>([&] { Operator<double> op(other, Pde::heat(1, 1, 1), bc, Executor::host(), sub); },
                                     "but the decomposition");
  // A mixed derivative next to a Neumann face.
  Pde mixed = Pde::heat(1, 1, 1);
  mixed.mixed_xy = Coefficient(0.1);
  auto neumann = bc;
  neumann.set(Face::y_hi, Boundary::neumann(0.0));
  expect_everywhere<Unsupported>([&] { Operator<double> op(g, mixed, neumann, Executor::host(), sub); },
                                 "next to the Neumann face");
  // Peaceman-Rachford on a 3D grid.
  expect_everywhere<InvalidArgument>(
      [&] { AdiSolver<double> s(g, Pde::heat(1, 1, 1), bc, Scheme::peaceman_rachford(), Executor::host(), sub); },
      "peaceman-rachford");
  // A coefficient that is not finite on the last rank's nodes only.
  Pde bad = Pde::heat(1, 1, 1);
  bad.diffusion[0] = Coefficient([](double x, double, double) { return x > 0.99 ? std::nan("") : 1.0; });
  expect_everywhere<InvalidArgument>([&] { Operator<double> op(g, bad, bc, Executor::host(), sub); }, "not finite");
  // A non-finite initial value on one rank only.
  AdiSolver<double> solver(g, Pde::heat(1, 1, 1), bc, Scheme::douglas(), Executor::host(), sub);
  Field<double> u = solver.op().make_field();
  if (world_rank() == p - 1) u(solver.op().owned_hi()[0], 2, 2) = std::nan("");
  expect_everywhere<InvalidArgument>([&] { solver.advance(u, 0.0, 0.1, 2); }, "is not finite");
  // Boundary data and a source that turn non-finite during the run on the last rank's nodes
  // only: kept until the end of the step, then thrown on every rank.
  {
    auto late = bc;
    late.set(Face::x_hi, Boundary::dirichlet([](double t, double, double, double) { return t > 0.1 ? std::nan("") : 0.0; }));
    AdiSolver<double> s(g, Pde::heat(1, 1, 1), late, Scheme::craig_sneyd(), Executor::host(), sub);
    Field<double> v = s.op().make_field();
    expect_everywhere<InvalidArgument>([&] { s.advance(v, 0.0, 0.4, 4); }, "boundary data on face x+");
    Pde src = Pde::heat(1, 1, 1);
    src.source = [](double t, double x, double, double) { return t > 0.1 && x > 0.99 ? std::nan("") : 1.0; };
    AdiSolver<double> f(g, src, bc, Scheme::douglas(), Executor::host(), sub);
    Field<double> w = f.op().make_field();
    expect_everywhere<InvalidArgument>([&] { f.advance(w, 0.0, 0.4, 4); }, "the source");
  }
  if (p > 1) {
    // A periodic axis split over a process grid that does not wrap.
    auto per = bc;
    per.set_periodic(Axis::x);
    expect_everywhere<InvalidArgument>([&] { Operator<double> op(g, Pde::heat(1, 1, 1), per, Executor::host(), sub); },
                                       "make the process grid periodic");
    // A process grid that wraps along a non-periodic axis.
    ProcessGrid wrap(MPI_COMM_WORLD, {p, 1, 1}, {true, false, false});
    Decomposition wdec(wrap, {g.nx(), g.ny(), g.nz()});
    expect_everywhere<InvalidArgument>(
        [&] { Operator<double> op(g, Pde::heat(1, 1, 1), bc, Executor::host(), subdomain(wrap, wdec)); },
        "boundary conditions are not");
  }
}

TEST(MpiBadInput, ParseProcs) {
  EXPECT_EQ(parse_procs("2x2x1"), (std::array<int, 3>{2, 2, 1}));
  EXPECT_EQ(parse_procs("4"), (std::array<int, 3>{4, 1, 1}));
  EXPECT_EQ(parse_procs("2x3"), (std::array<int, 3>{2, 3, 1}));
  for (const char* bad : {"", "x", "2x", "0x1x1", "2x2x2x2", "a", "2*2", "-1"})
    EXPECT_THROW(parse_procs(bad), InvalidArgument) << bad;
}

}  // namespace
