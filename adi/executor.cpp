#include "adi/executor.hpp"

#include <string>

#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi {

bool Executor::cuda_available() { return cuda_backend::device_count() > 0; }

Executor Executor::cuda(int device, void* stream) {
  if (!cuda_backend::compiled())
    throw Unsupported("Executor::cuda: adi was built without CUDA; rebuild with -DADI_WITH_CUDA=ON "
                      "or use Executor::host()");
  const int n = cuda_backend::device_count();
  if (n == 0) throw Unsupported("Executor::cuda: no CUDA device is present; use Executor::host()");
  if (device < 0 || device >= n)
    throw InvalidArgument("Executor::cuda: device = " + detail::number(device) + " must be in [0, " +
                          detail::number(n - 1) + "]");
  return Executor(MemorySpace::device, 0, device, stream);
}

void Executor::synchronize() const {
  if (is_cuda()) cuda_backend::synchronize(stream_);
}

std::string Executor::name() const {
  if (is_host()) return threads_ == 0 ? "host" : "host(" + detail::number(threads_) + " threads)";
  return "cuda:" + detail::number(device_);
}

}  // namespace adi
