#pragma once
// adi's MPI domain decomposition (target adi::mpi): process grid, decomposition, halo
// exchange, distributed tridiagonal and block-tridiagonal line solves, and the subdomain
// that runs adi::Operator / adi::AdiSolver on a decomposed grid.
// See docs/mpi.md.
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_block_tridiagonal.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/halo.hpp"
#include "adi/mpi/process_grid.hpp"
#include "adi/mpi/subdomain.hpp"
