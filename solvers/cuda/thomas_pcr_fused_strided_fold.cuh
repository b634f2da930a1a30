#pragma once
// Issue 16 (stop 39, the z-first idea): the explicit operator folded into a Y/Z stage.
//
// With the implicit stages in the order z, y, x (AdiSolver::set_stage_order, ADI_STAGE_ORDER=zyx)
// the first stage of a Douglas chain, the one that carries the explicit operator, runs along a
// strided axis. There a thread of the fused Y/Z kernel walks its line's rows as the stencil pass's
// column kernel does, so it can form each row's explicit base itself: U at the row, its neighbours
// along the line (the line's own rows) and across it (the neighbouring lanes' lines: L1 / L2),
// the same per-node formula as the X stage's fold (fold_base in thomas_pcr_fused_stage.cuh, which
// takes the stage's axis at run time; the body's Fold path calls it per row), then solves the
// line: read U, write Y_1 (2 field transfers instead of the stencil pass's 2 plus the stage's 2).
// A 3D Douglas step is then 2 + 3 + 3 = 8 transfers, the minimum.
//
// The kernel is the fused Y/Z body's Fold form (fused_stage_strided_body<T, 16, true, true, Lean>:
// 16-row segments, 1 block per SM, the warp copy stream), which was never instantiated (the first
// stage was along x): its general rows (fold_base per row, ADI_FOLD_STRIDED=1) or its lean rows
// (ADI_FOLD_STRIDED=2, below), or the lean rows with the others' bases staged (ADI_FOLD_STRIDED=3,
// the body's Staged: no fp64 spills in the rows). Its ptxas costs up to a minute per form and
// precision, so it is compiled only with
// ADI_FOLD_STRIDED_KERNELS defined (-DCMAKE_CUDA_FLAGS=-DADI_FOLD_STRIDED_KERNELS; the device
// command of scripts/gpu_heat_ab.sh --zfirst does it) and run only while ADI_FOLD_STRIDED=1, 2 or 3
// (a same-run A/B switch, default off; read at each folded stage): elsewhere the stencil fold runs
// as before (Operator::solve_folded). Where the Y/Z launch has no warp copy stream
// (ADI_FUSED_STAGE_STREAM=thread, rows not 16-byte aligned) the folded stage throws Unsupported.

#include <algorithm>
#include <cstdlib>
#include <string>

#include "adi/base/env_switch.hpp"

namespace adi::cuda_backend::kernels {

// Lean: the body's lean form (ADI_FOLD_STRIDED=2): interior rows without per-row tests, the term's
// part along the line from the stage's own v window (v is the term's field: one multiply-add chain,
// no global loads along the line), the cross parts through fold_cross; the two end rows and every
// other stage (sources, two terms) as the general form.
#if defined(ADI_FOLD_STRIDED_KERNELS)
constexpr bool kStridedFoldCompiled = true;
template <class T, bool Lean>
__global__ void __launch_bounds__(512, 1) fused_stage_strided_fold_kernel(StageArgs<T> g, int log2lb, int shift) {
  fused_stage_strided_body<T, 16, true, true, Lean>(g, log2lb, shift);
}
// The staged form (ADI_FOLD_STRIDED=3): the lean rows, the other rows' folded bases staged in
// shared memory first (the body's Staged) so that fold_base is not unrolled across live rows
// (ptxas sm_90 fp64: 128 registers, 4 B / 4 B spilled, one value stored at kernel start and loaded
// once per tile, outside the rows; the lean form spills 84 B / 172 B at the 128-register cap).
template <class T>
__global__ void __launch_bounds__(512, 1) fused_stage_strided_fold_staged_kernel(StageArgs<T> g, int log2lb,
                                                                                  int shift) {
  fused_stage_strided_body<T, 16, true, true, true, true>(g, log2lb, shift);
}
#else
constexpr bool kStridedFoldCompiled = false;
#endif

// ADI_FOLD_STRIDED: 0 off (or the kernels not compiled), 1 the general form, 2 the lean form,
// 3 the staged lean form.
inline int strided_fold_mode() {
  const int mode = ::adi::detail::env_int("ADI_FOLD_STRIDED", 0, 3, 0);
  return kStridedFoldCompiled ? mode : 0;
}
inline bool strided_fold_requested() { return strided_fold_mode() != 0; }

// Whether prepare_fused_stage gives Y/Z lines a folded launch that run_strided_fold can take:
// requested, lines the Y/Z form takes, the warp copy stream (its tiles' rows 16-byte aligned; the
// tile width is a power of two of at least 16 lines for n <= 512), 1 block per SM (the default).
inline bool strided_fold_applies(const LineSet& l, int value_bytes) {
  const auto aligned = [&](i64 values) { return values * value_bytes % 16 == 0; };
  return strided_fold_requested() && l.stride != 1 && fused_supported(l) && fused_stage_warp_stream() &&
         l.stride0 == 1 && aligned(l.stride) && (l.count1 <= 1 || aligned(l.stride1));
}

inline std::size_t& strided_fold_count() {
  static std::size_t launches = 0;
  return launches;
}

// The folded Y/Z launch's grid for a prepared Y/Z launch of the warp stream at 1 block per SM
// (wtiles: its tiles), 0 where it does not apply (not compiled, another shape). Prepared whatever
// ADI_FOLD_STRIDED says (one occupancy query), so that the switch decides at each stage.
template <class T>
unsigned strided_fold_grid(const FusedLaunch& L, bool one_block, i64 wtiles, const LaunchLimits& lim) {
  if (!kStridedFoldCompiled || !one_block || L.warp_grid == 0) return 0;
#if defined(ADI_FOLD_STRIDED_KERNELS)
  // Every form (each kernel's dynamic shared-memory limit is set here); the smallest grid serves all.
  return std::min({persistent_grid(fused_stage_strided_fold_kernel<T, false>, L.threads, L.smem, wtiles, lim),
                   persistent_grid(fused_stage_strided_fold_kernel<T, true>, L.threads, L.smem, wtiles, lim),
                   persistent_grid(fused_stage_strided_fold_staged_kernel<T>, L.threads, L.smem, wtiles, lim)});
#else
  (void)wtiles;
  (void)lim;
  return 0;
#endif
}

// Launches the folded Y/Z stage (g.sh set); Unsupported where the launch was not prepared for it
// (fold_grid 0) or the fields' rows do not suit the warp stream (shift < 0).
template <class T>
void run_strided_fold(const StageArgs<T>& g, const FusedLaunch& L, int shift, cudaStream_t stream) {
  if (L.fold_grid == 0 || shift < 0)
    throw Unsupported(std::string("fused ADI stage: the explicit operator folds into a Y/Z stage only with "
                                  "ADI_FOLD_STRIDED=1, 2 or 3, a build with ADI_FOLD_STRIDED_KERNELS and rows the warp "
                                  "copy stream takes (") +
                      (L.fold_grid == 0 ? "no folded launch prepared" : "rows not 16-byte aligned") + ")");
#if defined(ADI_FOLD_STRIDED_KERNELS)
  const int mode = strided_fold_mode();
  if (mode == 3)
    fused_stage_strided_fold_staged_kernel<T><<<L.fold_grid, L.threads, L.smem, stream>>>(g, L.log2lb, shift);
  else if (mode == 2)
    fused_stage_strided_fold_kernel<T, true><<<L.fold_grid, L.threads, L.smem, stream>>>(g, L.log2lb, shift);
  else
    fused_stage_strided_fold_kernel<T, false><<<L.fold_grid, L.threads, L.smem, stream>>>(g, L.log2lb, shift);
  ++strided_fold_count();
#else
  (void)g;
  (void)stream;
#endif
}

}  // namespace adi::cuda_backend::kernels
