// GoogleTest main for the MPI tests: every rank runs every test; the verdict is
// agreed across ranks (a failure on any rank fails the run everywhere); rank 0
// prints the usual report, other ranks print only their failures, prefixed.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace {
// Prints failed assertions of a rank other than 0 (its default printer is removed).
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::fprintf(stderr, "[rank %d] %s.%s failed at %s:%d\n%s\n", rank_, info ? info->test_suite_name() : "?",
                 info ? info->name() : "?", r.file_name() ? r.file_name() : "?", r.line_number(), r.summary());
    std::fflush(stderr);
  }

 private:
  int rank_;
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
