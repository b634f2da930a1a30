// The fused ADI stage (thomas_pcr_fused_stage.cuh), single precision, and the layout
// query. Double precision: thomas_pcr_fused_stage_fp64.cu (compiles in parallel).
#include "solvers/cuda/thomas_pcr_fused_stage.cuh"

namespace adi::cuda_backend {

bool fused_stage_supported(const LineSet& lines) { return kernels::fused_supported(lines); }

template <>
void fused_stage_solve<float>(const FusedStage<float>& stage, int* pivot_flag, void* stream) {
  kernels::launch_fused_stage<float>(stage, pivot_flag, static_cast<cudaStream_t>(stream), FusedTuning{});
}
template <>
void fused_stage_solve_tuned<float>(const FusedStage<float>& stage, int* pivot_flag, void* stream,
                                  const FusedTuning& tuning) {
  kernels::launch_fused_stage<float>(stage, pivot_flag, static_cast<cudaStream_t>(stream), tuning);
}

}  // namespace adi::cuda_backend
