// The fused ADI stage (thomas_pcr_fused_stage.cuh), double precision.
#include "solvers/cuda/thomas_pcr_fused_stage.cuh"
#include "solvers/cuda/thomas_pcr_fused_x_ring.cuh"

namespace adi::cuda_backend {

template <>
FusedLaunch fused_stage_prepare<double>(const LineSet& lines, const FusedTuning& tuning) {
  return kernels::prepare_fused_stage<double>(lines, tuning);
}
template <>
void fused_stage_run<double>(const FusedStage<double>& stage, const FusedLaunch& launch, int* pivot_flag, void* stream) {
  // The x ring kernel (ADI_FOLD_X_RING=1 / 2, an A/B switch) where it applies; the same function.
  if (stage.fold.count > 0 && kernels::fold_x_ring_requested() && kernels::fused_x_ring_applies(stage)) {
    kernels::run_fused_x_ring<double>(stage, pivot_flag, static_cast<cudaStream_t>(stream));
    return;
  }
  kernels::run_fused_stage<double>(stage, launch, pivot_flag, static_cast<cudaStream_t>(stream));
}

}  // namespace adi::cuda_backend
