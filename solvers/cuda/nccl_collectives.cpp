// NCCL behind plain C++ (nccl_collectives.hpp): the one file outside the .cu sources that
// includes nccl.h, compiled into adi::mpi with ADI_MPI_HAVE_NCCL when adi is configured
// with ADI_WITH_NCCL=ON.
#include "solvers/cuda/nccl_collectives.hpp"

#include <cstring>

#include "adi/base/error.hpp"

#if defined(ADI_MPI_HAVE_NCCL)
#include <cuda_runtime.h>
#include <nccl.h>

namespace adi::cuda_backend::nccl {
namespace {
static_assert(sizeof(ncclUniqueId) == kUniqueIdBytes, "NCCL_UNIQUE_ID_BYTES changed");

std::string describe(ncclResult_t rc) {
  if (rc == ncclSuccess) return {};
  const char* last = ncclGetLastError(nullptr);
  return std::string(ncclGetErrorString(rc)) + (last && *last ? std::string(" (") + last + ")" : std::string());
}
void check(ncclResult_t rc, const char* call) {
  if (rc != ncclSuccess) throw Error(std::string("NCCL call ") + call + " failed: " + describe(rc));
}
ncclComm_t as_comm(void* c) { return static_cast<ncclComm_t>(c); }
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
}  // namespace

bool built() { return true; }
void require_built() {}

std::string version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string get_unique_id(UniqueId& id) {
  ncclUniqueId u;
  const ncclResult_t rc = ncclGetUniqueId(&u);
  if (rc == ncclSuccess) std::memcpy(id.bytes, &u, kUniqueIdBytes);
  return describe(rc);
}

std::string comm_init_rank(void** comm, int size, const UniqueId& id, int rank) {
  ncclUniqueId u;
  std::memcpy(&u, id.bytes, kUniqueIdBytes);
  ncclComm_t c = nullptr;
  const ncclResult_t rc = ncclCommInitRank(&c, size, u, rank);
  *comm = c;
  return describe(rc);
}

void comm_destroy(void* comm) noexcept {
  if (comm) ncclCommDestroy(as_comm(comm));
}

void all_gather(void* comm, const void* send, void* recv, std::size_t bytes, void* stream) {
  check(ncclAllGather(send, recv, bytes, ncclChar, as_comm(comm), as_stream(stream)), "ncclAllGather");
}
void group_start() { check(ncclGroupStart(), "ncclGroupStart"); }
void group_end() { check(ncclGroupEnd(), "ncclGroupEnd"); }
void send(void* comm, const void* buf, std::size_t bytes, int peer, void* stream) {
  check(ncclSend(buf, bytes, ncclChar, peer, as_comm(comm), as_stream(stream)), "ncclSend");
}
void recv(void* comm, void* buf, std::size_t bytes, int peer, void* stream) {
  check(ncclRecv(buf, bytes, ncclChar, peer, as_comm(comm), as_stream(stream)), "ncclRecv");
}

}  // namespace adi::cuda_backend::nccl

#else  // built without NCCL

namespace adi::cuda_backend::nccl {
namespace {
[[noreturn]] void no_nccl() {
  throw Unsupported(
      "adi::mpi was built without NCCL (configure with -DADI_WITH_NCCL=ON where nccl.h and libnccl are found)");
}
}  // namespace

bool built() { return false; }
void require_built() { no_nccl(); }
std::string version() { return "not built"; }
std::string get_unique_id(UniqueId&) { no_nccl(); }
std::string comm_init_rank(void**, int, const UniqueId&, int) { no_nccl(); }
void comm_destroy(void*) noexcept {}
void all_gather(void*, const void*, void*, std::size_t, void*) { no_nccl(); }
void group_start() { no_nccl(); }
void group_end() { no_nccl(); }
void send(void*, const void*, std::size_t, int, void*) { no_nccl(); }
void recv(void*, void*, std::size_t, int, void*) { no_nccl(); }

}  // namespace adi::cuda_backend::nccl

#endif
