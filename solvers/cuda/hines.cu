// Batched Hines solver on CUDA: float and the device queries (hines_fp64.cu: double; kernels
// in hines.cuh, launch shapes in hines_launch.cuh).
#include "solvers/cuda/hines_launch.cuh"

namespace adi::cuda_backend {

int hines_stack_threads(int max_size, std::size_t value_size, int device) {
  return hines_stack_threads_impl(max_size, value_size, device);
}

template void hines_solve<float>(HinesKernel, const adi::detail::HinesView&, const float*, float*, float*,
                                 const HinesLaunch&, int*, void*);
template void hines_assemble<float>(index_t, const float*, const float*, const float*, float*, float*, const index_t*,
                                    const float*, int, void*);

}  // namespace adi::cuda_backend
