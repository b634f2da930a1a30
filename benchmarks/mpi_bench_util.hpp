#pragma once
// Helpers of the MPI benchmarks' own lockstep harness (bench_mpi_*.cpp).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "adi/mpi/nccl_transport.hpp"

namespace adi::bench {

// The median (upper middle) of v; 0 when empty.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// The largest x over the ranks of comm: a collective step takes as long as its slowest rank.
inline double max_over(double x, MPI_Comm comm = MPI_COMM_WORLD) {
  double y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, comm);
  return y;
}

// Collective over procs.axis_comm(a): makes the axis's NCCL communicator on `device` now (when
// adi::mpi has NCCL and every rank of the axis has a GPU of its own), so that it is timed on its
// own and the plans after it reuse it. Returns the row's text ("" without NCCL): the slowest
// rank's wall time and its ncclCommInitRank / warm-up parts, or why it was not made.
inline std::string nccl_creation(const mpi::ProcessGrid& procs, Axis a, int device) {
  if (!mpi::nccl::built()) return {};
  const std::string shared = mpi::nccl::shared_gpu_report(procs.axis_comm(a), device);
  if (!shared.empty()) return "not made: " + shared;
  MPI_Barrier(procs.axis_comm(a));
  const double c0 = MPI_Wtime();
  mpi::nccl::axis_communicator(procs, a, device);
  const double wall = max_over(MPI_Wtime() - c0, procs.axis_comm(a));
  const mpi::nccl::CreationCost c = mpi::nccl::creation_cost(procs, a);
  char line[256];
  std::snprintf(line, sizeof line, "%.1f ms (slowest rank; ncclCommInitRank %.1f ms + warm-up %.1f ms)", 1e3 * wall,
                1e3 * max_over(c.init_seconds, procs.axis_comm(a)), 1e3 * max_over(c.warm_up_seconds, procs.axis_comm(a)));
  return line;
}

}  // namespace adi::bench
