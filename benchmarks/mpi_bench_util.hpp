#pragma once
// Helpers of the MPI benchmarks' own lockstep harness (bench_mpi_*.cpp).
#include <mpi.h>

#include <algorithm>
#include <vector>

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

}  // namespace adi::bench
