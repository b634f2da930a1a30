#pragma once
// The CUDA backend seen from plain C++: no CUDA header here, streams are void*.
// Implemented in solvers/cuda/*.cu when adi is built with CUDA, otherwise by
// backend_stub.cpp, whose functions report "no device" or throw Unsupported.
#include <cstddef>

#include "adi/layout.hpp"
#include "adi/tridiagonal.hpp"

namespace adi::cuda_backend {

bool compiled();     // built with CUDA at all
int device_count();  // 0 on any CUDA error (no driver, no device)
void set_device(int device);
void* allocate(std::size_t bytes, int device);  // throws DeviceError
void deallocate(void* p) noexcept;
enum class Copy { host_to_device, device_to_host, device_to_device, host_to_host };
void copy(void* dst, const void* src, std::size_t bytes, Copy kind);  // synchronous
void memset_zero(void* p, std::size_t bytes);
void synchronize(void* stream);
bool is_device_pointer(const void* p);

struct DeviceInfo {
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t shared_per_block = 0;
  std::size_t shared_per_block_optin = 0;  // after cudaFuncSetAttribute (227 KB on an H100)
  std::size_t global_memory = 0;
  char name[256] = {};
};
DeviceInfo device_info(int device);

// Tridiagonal kernels (solvers/cuda/*.cuh). Assume validated input.
template <class T>
struct BandView {
  const T* a;
  const T* b;
  const T* c;
  bool shared;
};
std::size_t tridiagonal_workspace_bytes(Kernel kernel, const LineSet& lines, bool periodic,
                                        std::size_t value_size);
// Enqueues the solve on `stream`. `pivot_flag` (device int, may be null) is set non-zero
// by the kernel on a zero or non-finite pivot.
template <class T>
void tridiagonal_solve(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u,
                       bool periodic, void* workspace, int* pivot_flag, void* stream);

// Shared memory one block of `kernel` needs at the least (0 for kernels that need
// little); the dispatch table compares it with DeviceInfo::shared_per_block_optin.
std::size_t tridiagonal_min_shared_bytes(Kernel kernel, const LineSet& lines, bool shared_bands,
                                         std::size_t value_size);

// Launch-shape overrides of the hybrid kernels (cuda_thomas_pcr, cuda_thomas_pcr_strided),
// for the benchmark's tuning rows; 0 keeps the default policy.
struct Tuning {
  int lines_per_block = 0;  // pcr_strided: lines per tile (power of two <= 32)
  int warps_per_block = 0;  // both
  int rows_per_thread = 0;  // pcr_strided (registers): segment length, 8 or 16
  int prefetch = -1;        // pcr (lines up to 256): load the next line during a solve (0 off, 1 on)
};
template <class T>
void tridiagonal_solve_tuned(Kernel kernel, const LineSet& lines, BandView<T> bands, const T* d, T* u,
                             bool periodic, void* workspace, int* pivot_flag, void* stream,
                             const Tuning& tuning);

}  // namespace adi::cuda_backend
