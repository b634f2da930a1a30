#pragma once
// examples/common/cli.hpp for the MPI programs: steps every rank must take alike.
#include <mpi.h>

#include <string>

#include "common/cli.hpp"

namespace example {

// Collective: rank 0 creates the --output folder (prepare_output); every rank throws the
// same UsageError when it could not, before any work.
inline void prepare_output_everywhere(const std::string& dir, MPI_Comm comm = MPI_COMM_WORLD) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string err;
  if (rank == 0) try {
      prepare_output(dir);
    } catch (const UsageError& e) {
      err = e.what();
    }
  int len = int(err.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  err.resize(std::size_t(len));
  MPI_Bcast(err.data(), len, MPI_CHAR, 0, comm);
  if (len > 0) throw UsageError(err);
}

}  // namespace example
