#pragma once
// Where work runs: the host (OpenMP threads) or one CUDA device with a stream.
// A plain value: copy it, pass it to plans and fields. No CUDA header needed;
// the stream travels as an opaque pointer (a cudaStream_t).
#include <string>

#include "adi/base/error.hpp"

namespace adi {

enum class MemorySpace { host, device };

class Executor {
 public:
  // Host execution on `threads` OpenMP threads (0: all available).
  static Executor host(int threads = 0) {
    detail::require(threads >= 0, "Executor::host: threads = " + std::to_string(threads) +
                                      " must be >= 0 (0: all available)");
    return Executor(MemorySpace::host, threads, 0, nullptr);
  }
  // CUDA device `device`, work enqueued on `stream` (nullptr: the legacy default stream).
  // Throws Unsupported when adi was built without CUDA or no device is present.
  static Executor cuda(int device = 0, void* stream = nullptr);

  // True when adi was built with CUDA and at least one device answers.
  // Any CUDA error (e.g. no driver) counts as "no device".
  static bool cuda_available();

  bool is_host() const { return space_ == MemorySpace::host; }
  bool is_cuda() const { return space_ == MemorySpace::device; }
  MemorySpace memory_space() const { return space_; }
  int threads() const { return threads_; }
  int device() const { return device_; }
  void* stream() const { return stream_; }
  // Blocks until all work queued by this executor is done (no-op on the host).
  void synchronize() const;
  std::string name() const;

  friend bool operator==(const Executor& x, const Executor& y) {
    return x.space_ == y.space_ && x.threads_ == y.threads_ && x.device_ == y.device_ &&
           x.stream_ == y.stream_;
  }

 private:
  Executor(MemorySpace s, int t, int d, void* st) : space_(s), threads_(t), device_(d), stream_(st) {}
  MemorySpace space_;
  int threads_;
  int device_;
  void* stream_;
};

}  // namespace adi
