// NCCL transport for the distributed partition method (see nccl_transport.hpp). The
// communicator of an axis is created once per ProcessGrid axis and device: rank 0 of the
// axis makes the unique id, MPI broadcasts it, every rank joins with ncclCommInitRank.
// The NCCL calls themselves are in solvers/cuda/nccl_collectives.cpp (no NCCL header here);
// without NCCL they throw Unsupported.
#include "adi/mpi/nccl_transport.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <vector>

#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/nccl_collectives.hpp"
#include "solvers/cuda/partition_local_passes.hpp"

namespace adi::mpi::nccl {

std::string shared_gpu_report(MPI_Comm comm, int device) {
  // Host name + PCI bus id: bus ids repeat across hosts, so both are needed.
  constexpr int kLen = MPI_MAX_PROCESSOR_NAME + 64;
  char mine[kLen] = {};
  int hl = 0;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  MPI_Get_processor_name(host, &hl);
  std::string bus = cuda_backend::partition::pci_bus_id(device);
  for (char& ch : bus) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (bus.empty()) bus = "device " + detail::number(device);
  const std::string id = std::string(host, std::size_t(hl)) + " " + bus;
  std::strncpy(mine, id.c_str(), kLen - 1);
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<char> all(std::size_t(size) * kLen);
  check_mpi(MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, comm), "MPI_Allgather");
  for (int p = 0; p < size; ++p)
    for (int q = p + 1; q < size; ++q)
      if (std::strncmp(&all[std::size_t(p) * kLen], &all[std::size_t(q) * kLen], kLen) == 0)
        return "ranks " + detail::number(p) + " and " + detail::number(q) + " of the axis share one GPU (" +
               std::string(&all[std::size_t(p) * kLen]) +
               "); NCCL needs a GPU of its own per rank: use one rank per GPU, or transport host_staging / "
               "cuda_aware_mpi";
  return {};
}

namespace nb = cuda_backend::nccl;

namespace {

// Collective over comm: rank 0's unique id and its verdict travel together, so a failure
// there reaches every rank. Returns NCCL's error text ("" on success) and the communicator.
std::string init_rank(MPI_Comm comm, int device, void** made) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  struct {
    nb::UniqueId id;
    char err[256];
  } msg{};
  if (rank == 0) std::strncpy(msg.err, nb::get_unique_id(msg.id).c_str(), sizeof msg.err - 1);
  check_mpi(MPI_Bcast(&msg, int(sizeof msg), MPI_BYTE, 0, comm), "MPI_Bcast");
  *made = nullptr;
  if (msg.err[0]) return msg.err;
  const cuda_backend::DeviceGuard guard(device);  // ncclCommInitRank binds the current device
  return nb::comm_init_rank(made, size, msg.id, rank);
}

}  // namespace

class Communicator {
 public:
  Communicator(void* c, int device, int rank, int size) : comm(c), device(device), rank(rank), size(size) {}
  ~Communicator() { nb::comm_destroy(comm); }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  void* comm;
  int device, rank, size;
};

namespace {
// NCCL connects peers lazily, on the first collective of each kind: the ring of an
// all-gather, the point-to-point channels of grouped sends. Measured on 4 H200s (NCCL
// 2.28.3) the first plan that used a kind paid it in its first solve (plan + first solve
// 300-1900 ms, later plans 4-5 ms). One tiny collective of each kind when the communicator
// is made pays it there, once per axis and device; the plans after it start in
// milliseconds. Collective over the communicator's ranks.
void warm_up(Communicator& c) {
  const cuda_backend::DeviceGuard guard(c.device);
  constexpr std::size_t kBytes = 8;
  const std::size_t all = kBytes * std::size_t(c.size);
  void* stream = cuda_backend::side_stream_create(c.device);
  void* buf = nullptr;
  try {
    buf = cuda_backend::allocate(2 * all, c.device);
    char* send = static_cast<char*>(buf);
    char* recv = send + all;
    nb::all_gather(c.comm, send, recv, kBytes, stream);
    nb::group_start();
    for (int p = 0; p < c.size; ++p)
      if (p != c.rank) {
        nb::send(c.comm, send + std::size_t(p) * kBytes, kBytes, p, stream);
        nb::recv(c.comm, recv + std::size_t(p) * kBytes, kBytes, p, stream);
      }
    nb::group_end();
    cuda_backend::synchronize(stream);
  } catch (...) {
    cuda_backend::deallocate(buf);
    cuda_backend::side_stream_destroy(stream);
    throw;
  }
  cuda_backend::deallocate(buf);
  cuda_backend::side_stream_destroy(stream);
}

// The communicators made for one ProcessGrid axis, one per device used there, and what
// making them cost.
struct AxisComms {
  std::vector<std::shared_ptr<Communicator>> comms;
  CreationCost cost;
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

bool built() { return nb::built(); }
std::string version() { return nb::version(); }

std::shared_ptr<Communicator> axis_communicator(const ProcessGrid& procs, Axis a, int device) {
  nb::require_built();  // Unsupported without NCCL: the same on every rank
  MPI_Comm comm = procs.axis_comm(a);
  std::shared_ptr<void>& slot = procs.axis_state(a);
  if (!slot) slot = std::make_shared<AxisComms>();
  auto& cache = *static_cast<AxisComms*>(slot.get());
  std::shared_ptr<Communicator> found;
  for (const auto& c : cache.comms)
    if (c->device == device) found = c;
  // Every rank must take the same branch (creation is collective).
  int have = found ? 1 : 0, all = 0;
  check_mpi(MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (all) return found;
  void* c = nullptr;
  const double t0 = now();
  std::string err = init_rank(comm, device, &c);
  if (!err.empty()) err = "ncclCommInitRank failed: " + err;
  agree_supported(comm, err.empty(), err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  auto made = std::make_shared<Communicator>(c, device, rank, size);
  const double t1 = now();
  warm_up(*made);
  cache.cost.communicators += 1;
  cache.cost.init_seconds += t1 - t0;
  cache.cost.warm_up_seconds += now() - t1;
  cache.comms.erase(std::remove_if(cache.comms.begin(), cache.comms.end(),
                                   [&](const auto& x) { return x->device == device; }),
                    cache.comms.end());
  cache.comms.push_back(made);
  return made;
}

CreationCost creation_cost(const ProcessGrid& procs, Axis a) {
  const std::shared_ptr<void>& slot = procs.axis_state(a);
  return slot ? static_cast<const AxisComms*>(slot.get())->cost : CreationCost{};
}

void all_gather(Communicator& comm, const void* send, void* recv, std::size_t bytes, void* stream) {
  nb::all_gather(comm.comm, send, recv, bytes, stream);
}

void all_to_all_v(Communicator& comm, const void* send, const int* send_counts, const int* send_displs, void* recv,
                  const int* recv_counts, const int* recv_displs, std::size_t value_size, void* stream) {
  const char* sb = static_cast<const char*>(send);
  char* rb = static_cast<char*>(recv);
  // This rank's own share: a device copy (no self-send through NCCL).
  cuda_backend::partition::copy_async(rb + std::size_t(recv_displs[comm.rank]) * value_size,
                                      sb + std::size_t(send_displs[comm.rank]) * value_size,
                                      std::size_t(send_counts[comm.rank]) * value_size, stream);
  nb::group_start();
  for (int p = 0; p < comm.size; ++p) {
    if (p == comm.rank) continue;
    if (send_counts[p] > 0)
      nb::send(comm.comm, sb + std::size_t(send_displs[p]) * value_size, std::size_t(send_counts[p]) * value_size,
               p, stream);
    if (recv_counts[p] > 0)
      nb::recv(comm.comm, rb + std::size_t(recv_displs[p]) * value_size, std::size_t(recv_counts[p]) * value_size,
               p, stream);
  }
  nb::group_end();
}

void send_recv(Communicator& comm, const void* send, int to, void* recv, int from, std::size_t bytes, void* stream) {
  if (to < 0 && from < 0) return;
  nb::group_start();
  if (to >= 0) nb::send(comm.comm, send, bytes, to, stream);
  if (from >= 0) nb::recv(comm.comm, recv, bytes, from, stream);
  nb::group_end();
}

void neighbour_exchange(Communicator& comm, const void* send_lo, void* recv_lo, int lo, const void* send_hi,
                        void* recv_hi, int hi, std::size_t bytes, void* stream) {
  if (lo < 0 && hi < 0) return;
  nb::group_start();
  if (lo >= 0) nb::send(comm.comm, send_lo, bytes, lo, stream);
  if (hi >= 0) nb::recv(comm.comm, recv_hi, bytes, hi, stream);
  if (hi >= 0) nb::send(comm.comm, send_hi, bytes, hi, stream);
  if (lo >= 0) nb::recv(comm.comm, recv_lo, bytes, lo, stream);
  nb::group_end();
}

std::string probe_init(MPI_Comm comm, int device) {
  if (!nb::built()) return "not built";
  void* c = nullptr;
  std::string err;
  try {
    err = init_rank(comm, device, &c);
  } catch (const Error& e) {  // no device on this rank (set_device)
    return e.what();
  }
  nb::comm_destroy(c);
  return err.empty() ? "ncclSuccess (communicator created)" : err;
}

}  // namespace adi::mpi::nccl
