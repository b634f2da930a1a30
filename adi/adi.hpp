#pragma once
// Everything public in one include: grids, fields, boundaries, operators, ADI
// schemes, tridiagonal solves, VTK output.
#include "adi/batched_cholesky.hpp"
#include "adi/block_tridiagonal.hpp"
#include "adi/boundary.hpp"
#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/field.hpp"
#include "adi/grid.hpp"
#include "adi/io/vtk.hpp"
#include "adi/large_tridiagonal.hpp"
#include "adi/layout.hpp"
#include "adi/operator.hpp"
#include "adi/scheme.hpp"
#include "adi/tridiagonal.hpp"
#include "adi/variable_batch.hpp"
#include "adi/variable_tridiagonal.hpp"
