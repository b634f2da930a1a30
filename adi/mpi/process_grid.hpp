#pragma once
// The Cartesian process grid of an MPI run and the collective error agreement every
// distributed entry point uses.
//
//   MPI_Init(&argc, &argv);
//   adi::mpi::ProcessGrid procs(MPI_COMM_WORLD, adi::mpi::parse_procs("2x2x1"), {false, false, true});
//   procs.coord(adi::Axis::x);            // this rank's position along x
//   procs.axis_comm(adi::Axis::x);        // the ranks that share this rank's y and z coordinates
//
// Errors: every constructor and plan in adi::mpi is collective and validates *before*
// its first exchange; a failure on any rank makes every rank of the communicator throw
// the same adi::InvalidArgument (the lowest failing rank's message), so no rank is left
// waiting in a collective that the others never enter.
#include <mpi.h>

#include <array>
#include <memory>
#include <string>

#include "adi/error.hpp"
#include "adi/executor.hpp"
#include "adi/layout.hpp"

namespace adi::mpi {

// "2x2x1" -> {2, 2, 1}; "4" -> {4, 1, 1}; "2x3" -> {2, 3, 1}. Throws InvalidArgument
// naming the text for anything else (a count < 1, a fourth factor, a non-number).
std::array<int, 3> parse_procs(const std::string& text);

// A factorisation of `size` ranks over the axes with more than one node, the most even
// one (MPI_Dims_create); an axis with extent 1 gets 1 rank.
std::array<int, 3> default_procs(int size, std::array<index_t, 3> extents);

// Measured costs of one axis communicator, used by the reduced-system strategy model.
// All ranks of the axis hold the same values (maxima over the axis).
struct NetworkModel {
  double latency = 0;        // s, one small MPI_Allreduce across the axis (~ log2(P) hops)
  double p2p_latency = 0;    // s, one small neighbour exchange (MPI_Sendrecv)
  double bandwidth = 0;      // bytes/s of a neighbour exchange of a large message
  double copy_bandwidth = 0; // bytes/s of a host memcpy (packing, local passes)
  double measure_seconds = 0;
};

class ProcessGrid {
 public:
  // Collective over `comm`. dims[a] ranks along axis a (their product must equal the
  // communicator size); periodic[a] wraps the neighbours along a. Every rank must pass
  // the same dims and periodic flags: checked, and every rank throws the same
  // InvalidArgument otherwise. The communicators are duplicated (a library's messages
  // never meet the caller's) and freed by the destructor.
  ProcessGrid(MPI_Comm comm, std::array<int, 3> dims, std::array<bool, 3> periodic = {});
  ~ProcessGrid();
  ProcessGrid(const ProcessGrid&) = delete;
  ProcessGrid& operator=(const ProcessGrid&) = delete;

  MPI_Comm comm() const { return cart_; }  // the Cartesian communicator (ranks may be reordered)
  MPI_Comm axis_comm(Axis a) const { return axis_[int(a)]; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int dims(Axis a) const { return dims_[int(a)]; }
  const std::array<int, 3>& dims() const { return dims_; }
  int coord(Axis a) const { return coords_[int(a)]; }
  const std::array<int, 3>& coords() const { return coords_; }
  bool periodic(Axis a) const { return periodic_[int(a)]; }
  // The neighbouring rank (in comm()) below / above along a; MPI_PROC_NULL at a
  // non-periodic end.
  int neighbor(Axis a, bool hi) const { return neighbors_[int(a)][hi ? 1 : 0]; }
  // "2x2x1".
  std::string describe() const;

  // Latency/bandwidth of axis a's communicator, measured once (collectively, on the
  // first call from every rank of the grid) and kept.
  const NetworkModel& network(Axis a) const;

  // Transport state attached to axis a once and shared by the plans along it (the NCCL
  // communicators of adi/mpi/nccl_transport.hpp); released with the grid and its last plan.
  std::shared_ptr<void>& axis_state(Axis a) const { return axis_state_[int(a)]; }

 private:
  MPI_Comm cart_ = MPI_COMM_NULL;
  std::array<MPI_Comm, 3> axis_{MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};
  std::array<int, 3> dims_{}, coords_{};
  std::array<bool, 3> periodic_{};
  std::array<std::array<int, 2>, 3> neighbors_{};
  int rank_ = 0, size_ = 1;
  mutable std::array<std::unique_ptr<NetworkModel>, 3> network_;
  mutable std::array<std::shared_ptr<void>, 3> axis_state_;
};

// Collective agreement on a local check: every rank of `comm` calls it with its own
// verdict. Returns normally when all are ok; otherwise every rank throws
// InvalidArgument carrying the message of the lowest failing rank (prefixed "rank R: ").
void agree(MPI_Comm comm, bool ok, const std::string& message);
// The same for an exception caught on some ranks: call it on every rank with the
// caught message (empty: none). Rethrows as InvalidArgument everywhere if any failed.
void agree_no_error(MPI_Comm comm, const std::string& error_message);
// The same agreement for a set-up this build or machine cannot run: every rank throws the
// same adi::Unsupported (the lowest failing rank's message) when any rank is not ok.
void agree_supported(MPI_Comm comm, bool ok, const std::string& message);
// What the three above agree on, without throwing: the lowest failing rank's message on every
// rank (prefixed "rank R: " when the communicator has several ranks), empty when all are ok.
std::string agreed_message(MPI_Comm comm, bool ok, const std::string& message);

// Throws adi::Error naming `call` when an MPI call did not return MPI_SUCCESS (the
// communicators use MPI_ERRORS_RETURN).
void check_mpi(int rc, const char* call);

// The MPI datatype of float / double.
template <class T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// This rank's index among the ranks of `comm` on its node (MPI_COMM_TYPE_SHARED).
int node_local_rank(MPI_Comm comm = MPI_COMM_WORLD);
// This rank's GPU, made current: the node-local rank modulo the node's CUDA devices (ranks
// share GPUs when there are fewer). Collective over `comm`: when any rank has no CUDA
// device (or adi was built without CUDA) every rank throws the same adi::Unsupported.
Executor rank_gpu(MPI_Comm comm = MPI_COMM_WORLD);

// Whether the MPI library says it can take device pointers (Open MPI's
// MPIX_Query_cuda_support(); false when the library has no such query).
bool cuda_aware();
// One line for reports: the compile-time macro and the run-time answer, e.g.
// "MPIX_CUDA_AWARE_SUPPORT = 0, MPIX_Query_cuda_support() = 0".
std::string cuda_aware_report();

}  // namespace adi::mpi
