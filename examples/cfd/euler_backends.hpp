#pragma once
// Building an Euler solver for a backend: the host one here, the CUDA one in
// euler_cuda.cu (CUDA builds) or euler_cuda_stub.cpp (which throws adi::Unsupported).
#include <memory>

#include "euler.hpp"
#include "host_launch.hpp"

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
template <class T>
std::unique_ptr<EulerSolverBase<T>> make_cuda_solver(const EulerSetup& s, const adi::Executor& exec);

}  // namespace cfd
