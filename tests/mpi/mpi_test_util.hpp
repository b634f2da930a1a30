#pragma once
// Helpers shared by the MPI tests: the world, process-grid factorisations, a global
// random problem every rank builds identically, local boxes with padded strides, and the
// check that every rank throws the same error.
#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "adi/field.hpp"
#include "adi/layout.hpp"
#include "adi/mpi/nccl_transport.hpp"

namespace adi::mpi::testing {

inline int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}
inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Every (px, py, pz) with px*py*pz == size.
inline std::vector<std::array<int, 3>> factorisations(int size) {
  std::vector<std::array<int, 3>> out;
  for (int x = 1; x <= size; ++x)
    for (int y = 1; y <= size; ++y)
      if (size % (x * y) == 0) out.push_back({x, y, size / (x * y)});
  return out;
}

// A global dense nx*ny*nz array (x fastest) of values from `seed`, the same on every rank.
template <class T>
std::vector<T> random_global(std::array<index_t, 3> n, unsigned seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(std::size_t(n[0] * n[1] * n[2]));
  for (T& x : v) x = T(u(rng));
  return v;
}

// A local box of extents e with padded rows and planes (strides that are not the
// dense ones, so the solvers must honour Box3's strides).
inline Box3 padded_box(std::array<index_t, 3> e) {
  const index_t sy = e[0] + 3, sz = sy * e[1] + 5;
  return Box3{e[0], e[1], e[2], sy, sz};
}

// Copies the part [lo, lo+e) of a dense global array into a local box (poison elsewhere).
template <class T>
std::vector<T> extract(const std::vector<T>& g, std::array<index_t, 3> n, std::array<index_t, 3> lo, const Box3& b) {
  std::vector<T> out(std::size_t(b.span()), std::numeric_limits<T>::quiet_NaN());
  for (index_t k = 0; k < b.nz; ++k)
    for (index_t j = 0; j < b.ny; ++j)
      for (index_t i = 0; i < b.nx; ++i)
        out[std::size_t(i + j * b.sy + k * b.sz)] =
            g[std::size_t((lo[0] + i) + (lo[1] + j) * n[0] + (lo[2] + k) * n[0] * n[1])];
  return out;
}

// max |local - global part| / max |global|, over this rank's box (NaN counts as infinite).
template <class T, class U>
double rel_error(const std::vector<T>& local, const Box3& b, const std::vector<U>& g, std::array<index_t, 3> n,
                 std::array<index_t, 3> lo) {
  double err = 0, scale = 0;
  for (U v : g) scale = std::max(scale, std::abs(double(v)));
  for (index_t k = 0; k < b.nz; ++k)
    for (index_t j = 0; j < b.ny; ++j)
      for (index_t i = 0; i < b.nx; ++i) {
        const double x = double(local[std::size_t(i + j * b.sy + k * b.sz)]);
        const double y = double(g[std::size_t((lo[0] + i) + (lo[1] + j) * n[0] + (lo[2] + k) * n[0] * n[1])]);
        const double e = std::abs(x - y);
        err = std::isfinite(e) ? std::max(err, e) : std::numeric_limits<double>::infinity();
      }
  return err / std::max(scale, 1e-300);
}

// A device (or host) copy of v on exec.
template <class T>
Array<T> to_device(const std::vector<T>& v, const Executor& exec) {
  Array<T> x(index_t(v.size()), exec);
  x.copy_from_host(v.data());
  return x;
}

// Runs f on every rank, expects exception E whose message contains `text`, identical on
// every rank (compared through rank 0's message), then a barrier.
template <class E, class F>
void expect_everywhere(F&& f, const std::string& text) {
  std::string msg;
  try {
    f();
    ADD_FAILURE() << "no exception (expected one containing '" << text << "')";
  } catch (const E& e) {
    msg = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
  EXPECT_NE(msg.find(text), std::string::npos) << "message: " << msg;
  int len = int(msg.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string root(std::size_t(len), ' ');
  if (world_rank() == 0) root = msg;
  MPI_Bcast(root.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_EQ(msg, root) << "ranks disagree on the error";
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

// Whether NCCL can run here: built with it and every rank of the world on a GPU of its own
// (collective; `device` is this rank's). Empty when it can, else why not.
inline std::string nccl_unavailable(int device) {
  if (!mpi::nccl::built()) return "adi::mpi built without NCCL";
  const std::string shared = mpi::nccl::shared_gpu_report(MPI_COMM_WORLD, device);
  return shared.empty() ? std::string() : "ranks share a GPU: " + shared;
}

}  // namespace adi::mpi::testing
