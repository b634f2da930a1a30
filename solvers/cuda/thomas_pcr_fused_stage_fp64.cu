// The fused ADI stage (thomas_pcr_fused_stage.cuh), double precision.
#include "solvers/cuda/thomas_pcr_fused_stage.cuh"

namespace adi::cuda_backend {

template <>
FusedLaunch fused_stage_prepare<double>(const LineSet& lines, const FusedTuning& tuning) {
  return kernels::prepare_fused_stage<double>(lines, tuning);
}
template <>
void fused_stage_run<double>(const FusedStage<double>& stage, const FusedLaunch& launch, int* pivot_flag, void* stream) {
  kernels::run_fused_stage<double>(stage, launch, pivot_flag, static_cast<cudaStream_t>(stream));
}

}  // namespace adi::cuda_backend
