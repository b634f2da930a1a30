// PLACEHOLDER (scaffold): replaced by the CUDA tridiagonal kernels and their launcher.
#include "adi/error.hpp"
#include "solvers/cuda/backend.hpp"

namespace adi::cuda_backend {
std::size_t tridiagonal_workspace_bytes(Kernel, const LineSet&, bool, std::size_t) { return 0; }
template <class T>
void tridiagonal_solve(Kernel, const LineSet&, BandView<T>, const T*, T*, bool, void*, int*, void*) {
  throw Unsupported("CUDA tridiagonal kernels are not written yet");
}
template void tridiagonal_solve<float>(Kernel, const LineSet&, BandView<float>, const float*, float*, bool,
                                       void*, int*, void*);
template void tridiagonal_solve<double>(Kernel, const LineSet&, BandView<double>, const double*, double*,
                                        bool, void*, int*, void*);
}  // namespace adi::cuda_backend
