#pragma once
// The NCCL transport of DistributedTridiagonalPlan (adi/mpi/nccl_transport.cpp, compiled
// with NCCL when adi is configured with ADI_WITH_NCCL=ON, otherwise a stub whose
// communicator calls throw Unsupported). No NCCL or CUDA header here: communicators and
// streams travel as opaque pointers.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>

#include "adi/mpi/process_grid.hpp"

namespace adi::mpi::nccl {

// Whether adi::mpi was built with NCCL, and the library's version ("2.28.9"; "not built").
bool built();
std::string version();

// Collective over comm: an empty string when every rank runs on a GPU of its own (host
// name + PCI bus id of `device`, allgathered), else the same sentence on every rank naming
// two ranks that share one (NCCL refuses them: "Duplicate GPU detected").
std::string shared_gpu_report(MPI_Comm comm, int device);

// One NCCL communicator over the ranks of an axis communicator, on one device.
class Communicator;

// Collective over procs.axis_comm(a): the NCCL communicator of that axis on `device`,
// created once (unique id from rank 0, broadcast with MPI) and kept on the ProcessGrid
// (axis_state) for the later plans of the axis. Call only after shared_gpu_report()
// returned empty. Throws Unsupported without NCCL, adi::Error when NCCL fails.
std::shared_ptr<Communicator> axis_communicator(const ProcessGrid& procs, Axis a, int device);

// The one-time cost of the NCCL communicators made on axis a of this ProcessGrid so far
// (this rank, every device): seconds in ncclCommInitRank (with the unique id's broadcast)
// and in the warm-up collectives that connect the peers. Zeros before the first. The
// plans after it reuse the communicator and pay neither.
struct CreationCost {
  int communicators = 0;
  double init_seconds = 0;
  double warm_up_seconds = 0;
  double seconds() const { return init_seconds + warm_up_seconds; }
};
CreationCost creation_cost(const ProcessGrid& procs, Axis a);

// Enqueued on `stream` (a cudaStream_t): every rank's `bytes` bytes of send into recv
// (rank p's at recv + p*bytes), like MPI_Allgather.
void all_gather(Communicator& comm, const void* send, void* recv, std::size_t bytes, void* stream);
// Enqueued on `stream`: grouped sends and receives like MPI_Alltoallv, counts and
// displacements in values of `value_size` bytes; this rank's own share is a device copy.
void all_to_all_v(Communicator& comm, const void* send, const int* send_counts, const int* send_displs, void* recv,
                  const int* recv_counts, const int* recv_displs, std::size_t value_size, void* stream);

// Enqueued on `stream`: one grouped send of `bytes` bytes of send to rank `to` and receive of
// `bytes` bytes from rank `from` into recv (ranks of the communicator; to == from allowed),
// like MPI_Sendrecv: a neighbour exchange of ghost layers. to < 0 (from < 0): no send
// (no receive), like MPI_PROC_NULL at the end of a non-periodic axis.
void send_recv(Communicator& comm, const void* send, int to, void* recv, int from, std::size_t bytes, void* stream);
// Enqueued on `stream`: a halo's two neighbour exchanges as one NCCL group (one launch instead
// of send_recv's two): send_lo to rank lo with recv_hi from rank hi, then send_hi to hi with
// recv_lo from lo, each `bytes` bytes (lo / hi < 0: no neighbour there). NCCL matches a pair of
// ranks' sends and receives in their order, so neighbours issuing the same calls pair them as
// the two send_recv calls do (also where lo == hi: a periodic axis of 2 ranks).
void neighbour_exchange(Communicator& comm, const void* send_lo, void* recv_lo, int lo, const void* send_hi,
                        void* recv_hi, int hi, std::size_t bytes, void* stream);

// Diagnostics for the benchmark: tries ncclCommInitRank over comm with this rank on
// `device`, without the one-GPU-per-rank check, and returns NCCL's answer ("ncclSuccess",
// or the error string and last error). Collective; "not built" without NCCL.
std::string probe_init(MPI_Comm comm, int device);

}  // namespace adi::mpi::nccl
