// The CUDA backend of the CFD example: the same functors as the host (euler.hpp,
// periodic_block_lines.hpp), each run by a one-thread-per-index kernel on the
// executor's stream; the block solves go through adi::BlockTridiagonalPlan on the device.
#include <cuda_runtime.h>

#include <string>

#include "cuda_launch.cuh"
#include "euler.hpp"

namespace cfd {

namespace {

struct CudaLaunch {
  cudaStream_t stream = nullptr;
  template <class Op>
  void operator()(index_t count, const Op& op) const {
    launch_each(op, count, stream);
  }
};

}  // namespace

// Listed in euler_backends.hpp (ADI_CUDA_KERNEL_OR: its stand-in serves builds without
// CUDA); repeated here so that this file needs no host-only header.
template <class T>
std::unique_ptr<EulerSolverBase<T>> make_cuda_solver(const EulerSetup& s, const adi::Executor& exec);

template <class T>
std::unique_ptr<EulerSolverBase<T>> make_cuda_solver(const EulerSetup& s, const adi::Executor& exec) {
  validate(s);
  adi::detail::require(exec.is_cuda(), "make_cuda_solver: the executor " + exec.name() + " is not a CUDA one");
  if (cudaSetDevice(exec.device()) != cudaSuccess)
    throw adi::DeviceError("make_cuda_solver: cannot select CUDA device " + std::to_string(exec.device()));
  const CudaLaunch launch{static_cast<cudaStream_t>(exec.stream())};
  if (s.dims == 2) return std::make_unique<EulerSolver<T, 2, CudaLaunch>>(s, exec, launch);
  return std::make_unique<EulerSolver<T, 3, CudaLaunch>>(s, exec, launch);
}

template std::unique_ptr<EulerSolverBase<float>> make_cuda_solver<float>(const EulerSetup&, const adi::Executor&);
template std::unique_ptr<EulerSolverBase<double>> make_cuda_solver<double>(const EulerSetup&, const adi::Executor&);

}  // namespace cfd
