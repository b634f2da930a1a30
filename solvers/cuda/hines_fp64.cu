// Batched Hines solver on CUDA: double (hines.cu: float); a file of its own, compiled with
// the other light units as one (CMakeLists.txt's _adi_cuda_groups).
#include "solvers/cuda/hines_launch.cuh"

namespace adi::cuda_backend {

template void hines_solve<double>(HinesKernel, const adi::detail::HinesView&, const double*, double*, double*,
                                  const HinesLaunch&, int*, void*);
template void hines_assemble<double>(index_t, const double*, const double*, const double*, double*, double*,
                                     const index_t*, const double*, int, void*);

}  // namespace adi::cuda_backend
