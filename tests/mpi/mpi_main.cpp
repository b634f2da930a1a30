// GoogleTest main for the MPI tests: every rank runs every test; the verdict is
// agreed across ranks (a failure on any rank fails the run everywhere); rank 0
// prints the usual report, other ranks print only their failures, prefixed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <string>

namespace {
// Prints failed assertions of a rank other than 0 (its default printer is removed).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  // The test's name is kept from OnTestStart: asking the UnitTest for it inside
  // OnTestPartResult would take a lock GoogleTest already holds there.
  void OnTestStart(const ::testing::TestInfo& info) override {
    name_ = std::string(info.test_suite_name()) + "." + info.name();
  }
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s failed at %s:%d\n%s\n", rank_, name_.c_str(),
                 r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    std::fflush(stderr);
  }

 private:
  int rank_;
  std::string name_;
};
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int local = RUN_ALL_TESTS();
  int global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("MPI verdict over %d rank(s): %s\n", size, global == 0 ? "passed" : "FAILED (see above)");
  MPI_Finalize();
  return global == 0 ? 0 : 1;
}
