#pragma once
// adi's MPI domain decomposition (target adi::mpi): process grid, decomposition, halo
// exchange, distributed tridiagonal and block-tridiagonal line solves, and the subdomain
// that runs adi::Operator / adi::AdiSolver on a decomposed grid, the NCCL transport's
// queries and the parallel VTK series (both compile without NCCL / VTK: they answer
// Unsupported). See docs/mpi.md. Every public header of adi/mpi/ is named here (checked by
// tests/structure/check_layers.cmake).
#include "adi/mpi/decomposition.hpp"
#include "adi/mpi/distributed_block_tridiagonal.hpp"
#include "adi/mpi/distributed_tridiagonal.hpp"
#include "adi/mpi/halo.hpp"
#include "adi/mpi/nccl_transport.hpp"
#include "adi/mpi/process_grid.hpp"
#include "adi/mpi/subdomain.hpp"
#include "adi/mpi/vtk_series.hpp"
