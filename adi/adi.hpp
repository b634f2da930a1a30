#pragma once
// Everything public in one include: grids, fields, boundaries, operators, ADI
// schemes, tridiagonal / block / variable-size / large-system / Hines solves, pricing,
// SWC and VTK I/O. The MPI layer, which needs MPI, has its own: adi/mpi/mpi.hpp.
#include "adi/batched_cholesky.hpp"
#include "adi/block_tridiagonal.hpp"
#include "adi/boundary.hpp"
#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/finance/finance.hpp"
#include "adi/grid.hpp"
#include "adi/hines.hpp"
#include "adi/io/swc.hpp"
#include "adi/io/vtk.hpp"
#include "adi/io/vtk_parallel.hpp"
#include "adi/io/vtk_polydata.hpp"
#include "adi/large_tridiagonal.hpp"
#include "adi/layout.hpp"
#include "adi/operator.hpp"
#include "adi/scheme.hpp"
#include "adi/tridiagonal.hpp"
#include "adi/variable_batch.hpp"
#include "adi/variable_tridiagonal.hpp"
