#pragma once
// The adi::Subdomain of adi/subdomain.hpp over a ProcessGrid and a Decomposition: what lets
// adi::Operator and adi::AdiSolver (every scheme, every boundary, host or device memory) run
// on a grid decomposed over MPI ranks.
//
//   adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, {2, 2, 1});          // periodic axes: periodic here too
//   adi::mpi::Decomposition dec(procs, {grid.nx(), grid.ny(), grid.nz()});
//   adi::AdiSolver<double> solver(grid, pde, bc, adi::Scheme::craig_sneyd(), exec,
//                                 adi::mpi::subdomain(procs, dec));
//   adi::Field<double> u = solver.op().make_field();    // this rank's piece + ghost layers
//   // u(i, j, k) is global node solver.op().origin() + (i, j, k); fill owned_lo() .. owned_hi()
//   solver.advance(u, 0.0, 0.1, 100);                   // collective
//
// Halo exchange: HaloExchange over the piece's field (one ghost plane per side of a split
// axis that has a neighbouring rank; faces, edges and corners, axis after axis; device
// fields through page-locked host buffers). Lines of a split axis: a
// DistributedTridiagonalPlan with `options` (strategy, transport, ...; `periodic` is set per
// axis from the boundary conditions). The process grid must outlive the subdomain and every
// operator built on it.
#include <memory>

#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/process_grid.hpp"
#include "adi/subdomain.hpp"

namespace adi::mpi {

std::shared_ptr<adi::Subdomain> subdomain(const ProcessGrid& procs, const Decomposition& dec,
                                          DistributedOptions options = {});

}  // namespace adi::mpi
