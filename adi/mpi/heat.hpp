#pragma once
// The ADI step of the heat equation  u_t = kx u_xx + ky u_yy + kz u_zz  on a grid
// decomposed over the ranks of a ProcessGrid: the distributed counterpart of
//   adi::AdiSolver<T>(grid, adi::Pde::heat(kx, ky, kz), bc, scheme)
// with the same discretisation, the same Douglas stages and the same boundary values of
// the intermediate stages, so a run on any process grid reproduces the single-domain
// solver to rounding.
//
//   adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, {2, 2, 1});
//   adi::mpi::Decomposition dec(procs, {grid.nx(), grid.ny(), grid.nz()});
//   adi::mpi::DistributedHeat<double> heat(procs, dec, grid, {1, 1, 1}, bc, adi::Scheme::douglas());
//   heat.u()(i, j, k) = ...;                 // this rank's nodes (local indices)
//   for (...) heat.step(t, dt);
//
// The explicit part reads one ghost layer filled by HaloExchange; each implicit stage
// is a DistributedTridiagonalPlan along its axis (the partition method when the axis
// is split, the single-domain kernel when not).
//
// Host or device memory: with Executor::cuda(dev) everything lives on that GPU (u(), the
// scratch stage, the bands) and the step runs there: the explicit part and the first
// stage's right-hand side in one kernel, each later stage's  W -= s A_a U  in one more,
// the halo exchange and the line solves through page-locked host buffers (the MPI may
// not accept device pointers). Dirichlet data g(t, x, y, z) is evaluated on the host on
// the faces this rank owns only (cached for the last two times; constant faces once),
// by several OpenMP threads for large faces, so g must be a pure function. u() is then
// a device field: read / write it with its copy helpers (to_host(), copy_from()).
//
//   adi::mpi::DistributedHeat<double> heat(procs, dec, grid, k, bc, scheme,
//                                          adi::mpi::ReducedStrategy::automatic, adi::Executor::cuda(dev));
//   heat.u().copy_from(initial);             // a host LocalField of the same shape
//
// Supported: uniform axes, Dirichlet faces (constant or g(t, x, y, z)) and periodic
// axes; Douglas, Craig-Sneyd (which is Douglas without mixed terms), Rannacher damping.
// Neumann faces and the Modified Craig-Sneyd / Hundsdorfer-Verwer schemes throw
// Unsupported (on every rank).
#include <array>
#include <memory>

#include "adi/boundary.hpp"
#include "adi/grid.hpp"
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/halo.hpp"
#include "adi/scheme.hpp"

namespace adi::mpi {

// Wall seconds per part since construction (this rank's).
// A device heat waits for the GPU at the end of every part, so the parts are real times.
struct DistributedTimings {
  std::array<double, 3> implicit{};    // per axis: right-hand side + distributed solve
  std::array<double, 3> solve_exchange{};  // of which: the reduced-system exchange of the solves
  double explicit_part = 0;            // U + dt F(U) (device: fused with the first stage's - s F_a(U))
  double halo = 0;                     // ghost exchange
  double boundary = 0;                 // Dirichlet writes
  long steps = 0;
};

template <class T>
class DistributedHeat {
 public:
  // Collective over procs.comm(). `grid` is the global grid (dec's extents), k the
  // diffusivities (axes with one node are ignored), exec where u lives and the step runs
  // (this rank's GPU for a device heat). Validation failures (and a failed device
  // allocation on any rank) throw the same InvalidArgument / Unsupported on every rank.
  DistributedHeat(const ProcessGrid& procs, const Decomposition& dec, const Grid& grid, std::array<double, 3> k,
                  const BoundaryConditions& bc, Scheme scheme,
                  ReducedStrategy strategy = ReducedStrategy::automatic, const Executor& exec = Executor::host());
  ~DistributedHeat();
  DistributedHeat(DistributedHeat&&) noexcept;
  DistributedHeat& operator=(DistributedHeat&&) noexcept;

  // This rank's solution (one ghost layer along every axis with more than one node), in
  // the executor's memory (a device heat: use u().to_host() / u().copy_from(host field)).
  LocalField<T>& u();
  const LocalField<T>& u() const;
  const Executor& executor() const;
  // Collective: one step from t to t + dt (Rannacher's first steps as two theta = 1 halves).
  void step(double t, double dt);
  // Writes g(t) into u's Dirichlet nodes (local).
  void set_boundary(double t);
  // Collective: fills u's ghost layers (e.g. before writing pieces that share a layer).
  void exchange();
  const DistributedTimings& timings() const;
  // The reduced-system strategy of axis a's plan ("local" when a is not split).
  const char* strategy(Axis a) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

extern template class DistributedHeat<float>;
extern template class DistributedHeat<double>;

}  // namespace adi::mpi
