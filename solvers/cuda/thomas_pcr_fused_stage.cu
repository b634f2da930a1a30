// The fused ADI stage (thomas_pcr_fused_stage.cuh), single precision, and the layout
// query. Double precision: thomas_pcr_fused_stage_fp64.cu (both compiled as one unit, the
// group fused_stage of CMakeLists.txt: the header's front end once).
#include "solvers/cuda/thomas_pcr_fused_stage.cuh"
#include "solvers/cuda/thomas_pcr_fused_x_ring.cuh"

namespace adi::cuda_backend {

bool fused_stage_supported(const LineSet& lines) { return kernels::fused_supported(lines); }
std::size_t fused_x_ring_launches() { return kernels::fused_x_ring_count(); }
std::size_t fused_x_ring_lean_launches() { return kernels::fused_x_ring_lean_count(); }
bool fused_strided_fold_available() { return kernels::strided_fold_requested(); }
bool fused_strided_fold_applies(const LineSet& lines, int value_bytes) {
  return kernels::strided_fold_applies(lines, value_bytes);
}
std::size_t fused_strided_fold_launches() { return kernels::strided_fold_count(); }
int fold_x_ring_mode() { return kernels::fold_x_ring_mode(); }

template <>
FusedLaunch fused_stage_prepare<float>(const LineSet& lines, const FusedTuning& tuning) {
  return kernels::prepare_fused_stage<float>(lines, tuning);
}
template <>
void fused_stage_run<float>(const FusedStage<float>& stage, const FusedLaunch& launch, int* pivot_flag, void* stream) {
  // The x ring kernel (ADI_FOLD_X_RING=1 / 2, an A/B switch) where it applies; the same function.
  if (stage.fold.count > 0 && kernels::fold_x_ring_requested() && kernels::fused_x_ring_applies(stage)) {
    kernels::run_fused_x_ring<float>(stage, pivot_flag, static_cast<cudaStream_t>(stream));
    return;
  }
  kernels::run_fused_stage<float>(stage, launch, pivot_flag, static_cast<cudaStream_t>(stream));
}

}  // namespace adi::cuda_backend
