#pragma once
// Building an Euler solver for a backend: the host one here, the CUDA one in
// euler_cuda.cu, declared once through the kernel list (solvers/cuda/kernel_list.hpp): a
// build without CUDA gets the stand-in that throws adi::Unsupported.
#include <memory>

#include "euler.hpp"
#include "host_launch.hpp"
#include "solvers/cuda/kernel_list.hpp"

namespace cfd {

template <class T>
std::unique_ptr<EulerSolverBase<T>> make_host_solver(const EulerSetup& s) {
  validate(s);
  const adi::Executor exec = adi::Executor::host(s.threads);
  if (s.dims == 2) return std::make_unique<EulerSolver<T, 2, HostLaunch>>(s, exec, HostLaunch{s.threads});
  return std::make_unique<EulerSolver<T, 3, HostLaunch>>(s, exec, HostLaunch{s.threads});
}

// Fields, flux/RHS evaluation, block assembly and the periodic closure all on the
// device of `exec` (a CUDA executor); only set_state/state cross to the host.
ADI_CUDA_KERNELS_BEGIN
template <class T>
ADI_CUDA_KERNEL_OR(throw adi::Unsupported("euler_vortex was built without CUDA; use --backend cpu or configure with "
                                          "ADI_WITH_CUDA=ON");,
                   std::unique_ptr<EulerSolverBase<T>> make_cuda_solver(const EulerSetup& s, const adi::Executor& exec))
ADI_CUDA_KERNELS_END

}  // namespace cfd
