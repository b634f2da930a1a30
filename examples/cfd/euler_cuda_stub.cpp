// Builds without CUDA: the CUDA solver is not available.
#include "euler_backends.hpp"

namespace cfd {

template <class T>
std::unique_ptr<EulerSolverBase<T>> make_cuda_solver(const EulerSetup&, const adi::Executor&) {
  throw adi::Unsupported("euler_vortex was built without CUDA; use --backend cpu or configure with ADI_WITH_CUDA=ON");
}

template std::unique_ptr<EulerSolverBase<float>> make_cuda_solver<float>(const EulerSetup&, const adi::Executor&);
template std::unique_ptr<EulerSolverBase<double>> make_cuda_solver<double>(const EulerSetup&, const adi::Executor&);

}  // namespace cfd
