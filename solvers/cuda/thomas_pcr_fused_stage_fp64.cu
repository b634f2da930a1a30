// The fused ADI stage (thomas_pcr_fused_stage.cuh), double precision.
#include "solvers/cuda/thomas_pcr_fused_stage.cuh"

namespace adi::cuda_backend {

template <>
void fused_stage_solve<double>(const FusedStage<double>& stage, int* pivot_flag, void* stream) {
  kernels::launch_fused_stage<double>(stage, pivot_flag, static_cast<cudaStream_t>(stream), FusedTuning{});
}
template <>
void fused_stage_solve_tuned<double>(const FusedStage<double>& stage, int* pivot_flag, void* stream,
                                  const FusedTuning& tuning) {
  kernels::launch_fused_stage<double>(stage, pivot_flag, static_cast<cudaStream_t>(stream), tuning);
}

}  // namespace adi::cuda_backend
