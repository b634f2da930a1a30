// NCCL transport for the distributed partition method (see nccl_transport.hpp). The
// communicator of an axis is created once per ProcessGrid axis and device: rank 0 of the
// axis makes the unique id, MPI broadcasts it, every rank joins with ncclCommInitRank.
// Without ADI_MPI_HAVE_NCCL every communicator call throws Unsupported.
#include "adi/mpi/nccl_transport.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"
#include "solvers/cuda/partition_mpi.hpp"

#if defined(ADI_MPI_HAVE_NCCL)
#include <nccl.h>
#endif

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
  if (bus.empty()) bus = "device " + std::to_string(device);
  const std::string id = std::string(host, std::size_t(hl)) + " " + bus;
  std::strncpy(mine, id.c_str(), kLen - 1);
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<char> all(std::size_t(size) * kLen);
  check_mpi(MPI_Allgather(mine, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, comm), "MPI_Allgather");
  for (int p = 0; p < size; ++p)
    for (int q = p + 1; q < size; ++q)
      if (std::strncmp(&all[std::size_t(p) * kLen], &all[std::size_t(q) * kLen], kLen) == 0)
        return "ranks " + std::to_string(p) + " and " + std::to_string(q) + " of the axis share one GPU (" +
               std::string(&all[std::size_t(p) * kLen]) +
               "); NCCL needs a GPU of its own per rank: use one rank per GPU, or transport host_staging / "
               "cuda_aware_mpi";
  return {};
}

#if defined(ADI_MPI_HAVE_NCCL)

namespace {

void check_nccl(ncclResult_t rc, const char* call) {
  if (rc == ncclSuccess) return;
  const char* last = ncclGetLastError(nullptr);
  throw Error(std::string("NCCL call ") + call + " failed: " + ncclGetErrorString(rc) +
              (last && *last ? std::string(" (") + last + ")" : std::string()));
}

// The communicators made for one ProcessGrid axis, one per device used there.
struct AxisComms {
  std::vector<std::shared_ptr<Communicator>> comms;
};

ncclComm_t init_rank(MPI_Comm comm, int device, ncclResult_t& rc) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  // Rank 0's id and its verdict travel together, so a failure there reaches every rank.
  struct {
    ncclUniqueId id;
    int rc;
  } msg;
  std::memset(&msg, 0, sizeof msg);
  if (rank == 0) msg.rc = int(ncclGetUniqueId(&msg.id));
  check_mpi(MPI_Bcast(&msg, int(sizeof msg), MPI_BYTE, 0, comm), "MPI_Bcast");
  rc = ncclResult_t(msg.rc);
  if (rc != ncclSuccess) return nullptr;
  cuda_backend::set_device(device);
  ncclComm_t c = nullptr;
  rc = ncclCommInitRank(&c, size, msg.id, rank);
  return c;
}

}  // namespace

class Communicator {
 public:
  Communicator(ncclComm_t c, int device, int rank, int size) : comm(c), device(device), rank(rank), size(size) {}
  ~Communicator() {
    if (comm) ncclCommDestroy(comm);
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ncclComm_t comm;
  int device, rank, size;
};

bool built() { return true; }

std::string version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::shared_ptr<Communicator> axis_communicator(const ProcessGrid& procs, Axis a, int device) {
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
  ncclResult_t rc = ncclSuccess;
  ncclComm_t c = init_rank(comm, device, rc);
  std::string err;
  if (rc != ncclSuccess) {
    const char* last = ncclGetLastError(nullptr);
    err = std::string("ncclCommInitRank failed: ") + ncclGetErrorString(rc) +
          (last && *last ? std::string(" (") + last + ")" : std::string());
  }
  agree_supported(comm, err.empty(), err);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  auto made = std::make_shared<Communicator>(c, device, rank, size);
  cache.comms.erase(std::remove_if(cache.comms.begin(), cache.comms.end(),
                                   [&](const auto& x) { return x->device == device; }),
                    cache.comms.end());
  cache.comms.push_back(made);
  return made;
}

void all_gather(Communicator& comm, const void* send, void* recv, std::size_t bytes, void* stream) {
  check_nccl(ncclAllGather(send, recv, bytes, ncclChar, comm.comm, static_cast<cudaStream_t>(stream)),
             "ncclAllGather");
}

void all_to_all_v(Communicator& comm, const void* send, const int* send_counts, const int* send_displs, void* recv,
                  const int* recv_counts, const int* recv_displs, std::size_t value_size, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const char* sb = static_cast<const char*>(send);
  char* rb = static_cast<char*>(recv);
  // This rank's own share: a device copy (no self-send through NCCL).
  cuda_backend::partition::copy_async(rb + std::size_t(recv_displs[comm.rank]) * value_size,
                                      sb + std::size_t(send_displs[comm.rank]) * value_size,
                                      std::size_t(send_counts[comm.rank]) * value_size, stream);
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int p = 0; p < comm.size; ++p) {
    if (p == comm.rank) continue;
    if (send_counts[p] > 0)
      check_nccl(ncclSend(sb + std::size_t(send_displs[p]) * value_size, std::size_t(send_counts[p]) * value_size,
                          ncclChar, p, comm.comm, s),
                 "ncclSend");
    if (recv_counts[p] > 0)
      check_nccl(ncclRecv(rb + std::size_t(recv_displs[p]) * value_size, std::size_t(recv_counts[p]) * value_size,
                          ncclChar, p, comm.comm, s),
                 "ncclRecv");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
}

std::string probe_init(MPI_Comm comm, int device) {
  ncclResult_t rc = ncclSuccess;
  ncclComm_t c = nullptr;
  try {
    c = init_rank(comm, device, rc);
  } catch (const Error& e) {  // no device on this rank (set_device)
    return e.what();
  }
  std::string out = ncclGetErrorString(rc);
  if (rc != ncclSuccess) {
    const char* last = ncclGetLastError(nullptr);
    if (last && *last) out += std::string(": ") + last;
  } else {
    out = "ncclSuccess (communicator created)";
  }
  if (c) ncclCommDestroy(c);
  return out;
}

#else  // built without NCCL

namespace {
[[noreturn]] void no_nccl() {
  throw Unsupported(
      "adi::mpi was built without NCCL (configure with -DADI_WITH_NCCL=ON where nccl.h and libnccl are found)");
}
}  // namespace

class Communicator {};

bool built() { return false; }
std::string version() { return "not built"; }
std::shared_ptr<Communicator> axis_communicator(const ProcessGrid&, Axis, int) { no_nccl(); }
void all_gather(Communicator&, const void*, void*, std::size_t, void*) { no_nccl(); }
void all_to_all_v(Communicator&, const void*, const int*, const int*, void*, const int*, const int*, std::size_t,
                  void*) {
  no_nccl();
}
std::string probe_init(MPI_Comm, int) { return "not built"; }

#endif

}  // namespace adi::mpi::nccl
