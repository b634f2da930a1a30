#pragma once
// The NCCL calls adi::mpi makes, seen from plain C++: no NCCL or CUDA header here,
// communicators and streams travel as opaque pointers (ncclComm_t, cudaStream_t).
// Implemented in nccl_collectives.cpp, compiled into adi::mpi; without NCCL every call but
// built()/version() throws Unsupported.
#include <cstddef>
#include <string>

namespace adi::cuda_backend::nccl {

bool built();
void require_built();  // throws Unsupported without NCCL
std::string version();  // "2.28.9", "unknown", or "not built"

inline constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct UniqueId {
  unsigned char bytes[kUniqueIdBytes] = {};
};

// Each returns an empty string on success, otherwise NCCL's error text (with its last error).
std::string get_unique_id(UniqueId& id);
std::string comm_init_rank(void** comm, int size, const UniqueId& id, int rank);
void comm_destroy(void* comm) noexcept;

// Enqueued on `stream`; throw adi::Error naming the failed call.
void all_gather(void* comm, const void* send, void* recv, std::size_t bytes, void* stream);
void group_start();
void group_end();
void send(void* comm, const void* buf, std::size_t bytes, int peer, void* stream);
void recv(void* comm, void* buf, std::size_t bytes, int peer, void* stream);

}  // namespace adi::cuda_backend::nccl
