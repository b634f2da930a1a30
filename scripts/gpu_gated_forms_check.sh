#!/usr/bin/env bash
# Device check of stop 36's compile-time gates (issue 15 item 8, h-build7): the forms kept for
# comparison that the default build no longer compiles, only -DADI_CUDA_UNROLL_ALL=ON:
#   - the fused ADI stage's non-default register caps (FusedTuning::min_blocks: X 3 and 4
#     blocks/SM, Y/Z 2; the tuning rows of bench_cuda_heat_step --tune);
#   - the partition passes' forms before stop 31 (DistributedOptions::device_prefetch = false)
#     and the L2 requests where they measured slower (device_l2_prefetch_everywhere);
#   - the large-system partition's staged loads (cuda_backend::large_solve(..., load = 2));
#   - stop 37 (h-build8): block Thomas's shared-memory exchange (BlockKernel::cuda_block_thomas_shared).
# Every default kernel is byte-identical to the base (scripts/compare_cubin.py, docs/design.md):
# nothing here is timed. What can break is the host dispatch that now falls back to the default
# (one stderr note, then the default form): checked by
#   1. tests/mpi/partition_device_selfcheck.cu (no MPI) built twice with nvcc, default and
#      ADI_CUDA_UNROLL_ALL (pf 0, 1, 2 cases: the default build runs its default for pf 0 and
#      the X / per-line L2 cases), against Thomas per line;
#   2. test_thomas_pcr_fused_stage and test_partition_large_cuda (every test; its load 2 cases
#      run the global loads) and, on 2 ranks sharing the GPU,
#      DistributedAdiDevice.Prefetch / .StageInPasses (the no-prefetch and L2-everywhere variants);
#   3. bench_cuda_heat_step --grids 256 --types fp32 --tune --quick: the tuning rows run (the default form) and
#      say so once on stderr;
#   4. test_block_thomas_cuda (every test runs both BlockKernels: the shared one runs the shuffles
#      and says so) and bench_cuda_block_tridiagonal --quick --reps=3 (its shared rows: the shuffles).
#   5. (ONLY=piv, stop 39, h-compile) the pivoting routes forced only for measurement
#      (ADI_PIVOTING_ROUTE=staged|block|regpart), the partition route's form 0 with per-line bands
#      (ADI_PIVOTING_PARTITION_FORM=0) and the large plan's check forms 0 and 2 (ADI_LARGE_CHECK_FORM):
#      in this default build their tests check the default form and then skip naming the gated one
#      (expect SKIPPED, never FAILED: PartitionForms*, StagedSmall, ForcedRoutesWithinTenTimesLapack,
#      the PivotingRegPartCuda suite, DeviceCheckFormsAgree), and a forced gated form runs the
#      default with one stderr note (EveryRouteSmall under ADI_PIVOTING_ROUTE=regpart,
#      DeviceZeroPivotNamesTheRow under ADI_LARGE_CHECK_FORM=0: PASSED, 1 note each).
#      Stop 40 (h-gatex): the X-tile route's forms kept for measurement (ADI_PIVOTING_XTILE_FORM=store,
#      ADI_PIVOTING_XTILE_BYTES=32): test_pivoting_xtile_cuda checks the default form (recompute,
#      64-byte chunks) and skips naming them (3 SKIPPED, never FAILED), and EveryRouteSmall under
#      each switch runs the default on its X lines (PASSED, 1 note each). And the fused Y/Z stage's
#      general 16-row warp form (ADI_FUSED_YZ_LEAN=0): CudaFusedStage.GeneralForm* skip (3 SKIPPED),
#      WarpStreamFloat under ADI_FUSED_YZ_LEAN=0 runs the lean form (PASSED, 1 note).
#   6. (ONLY=reach, stop 40, h-reach) the 8-row segments only the internal tuning structs reach
#      (Tuning::rows_per_thread = 8 where 16 is the default, FusedTuning::rows = 8): test_thomas_pcr_strided
#      (LaunchShapes checks rows 16 only in this build) and test_thomas_pcr_fused_stage pass with no
#      note; bench_cuda_heat_step --tune's rows=8 rows and bench_cuda_tridiagonal's tuning rows run the
#      default and say so once each.
#
#   OUT=/tmp/o scripts/gpu_gated_forms_check.sh      # ~4-5 min on an H100 host (16 cores), build included
#   OUT=/tmp/o ONLY=block scripts/gpu_gated_forms_check.sh   # step 4 alone (stop 37's gate; ~2 min)
#   OUT=/tmp/o ONLY=piv scripts/gpu_gated_forms_check.sh     # step 5 alone (stops 39-40's gates; ~3-4 min)
#   OUT=/tmp/o ONLY=reach scripts/gpu_gated_forms_check.sh   # step 6 alone (h-reach's gates; ~3 min)
# Logs under $OUT (default <repo>/out/gated): build.log, selfcheck_{default,unroll}.log,
# fused.log, large.log, adi_np2.log, tune.log, block.log, block_bench.log (ONLY=piv: piv.log,
# regpart.log, large_forms.log, piv_forced.log, large_forced.log, xtile.log, piv_xstore.log,
# piv_x32.log, fused_general.log, fused_lean0.log; ONLY=reach: reach_*.log); summary.txt (printed last).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}/gated
B=$root/build-gated
mkdir -p "$out" "$B"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
MPI="mpiexec --oversubscribe --allow-run-as-root --bind-to none"
status=0
cd "$root" || exit 1
note "== gpu_gated_forms_check.sh $(date -u +%FT%TZ) on $(hostname), commit $(git rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"

t0=$(date +%s)
only=${ONLY:-all}
targets=(test_thomas_pcr_fused_stage test_partition_large_cuda test_distributed_adi bench_cuda_heat_step
         test_block_thomas_cuda bench_cuda_block_tridiagonal)
[ "$only" = block ] && targets=(test_block_thomas_cuda bench_cuda_block_tridiagonal)
[ "$only" = piv ] && targets=(test_pivoting_cuda test_pivoting_regpart_cuda test_partition_large_cuda
                             test_pivoting_xtile_cuda test_thomas_pcr_fused_stage)
[ "$only" = reach ] && targets=(test_thomas_pcr_strided test_thomas_pcr_fused_stage bench_cuda_heat_step
                               bench_cuda_tridiagonal)
# 1. the standalone self-checks, compiled in the background while CMake builds
for v in default unroll; do
  [ "$only" != all ] && break
  flags=(); [ $v = unroll ] && flags=(-DADI_CUDA_UNROLL_ALL=1)
  (nvcc -std=c++17 -O2 -arch=sm_90 -DADI_HAVE_CUDA "${flags[@]}" -I. tests/mpi/partition_device_selfcheck.cu \
     solvers/cuda/partition_local_passes.cu -o "$B/selfcheck_$v" >"$out/selfcheck_build_$v.log" 2>&1) &
done
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=ON -DADI_WITH_PYTHON=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_BUILD_EXAMPLES=OFF \
  >"$out/build.log" 2>&1 &&
  cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" >>"$out/build.log" 2>&1
rc=$?
wait
[ $rc = 0 ] || { tail -30 "$out/build.log"; note "build: FAILED (build.log)"; exit 1; }
note "build: ok ($(( $(date +%s) - t0 )) s; warnings: $(grep -c 'warning' "$out/build.log" "$out"/selfcheck_build_*.log 2>/dev/null | tr '\n' ' '))"

gt() {  # name log timeout binary args...: runs one test binary, notes its PASSED/FAILED/SKIPPED lines
  local name=$1 log=$out/$2 t=$3; shift 3
  timeout "$t" "$@" --gtest_color=no >"$log" 2>&1 || status=1
  note "$name: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr -s ' ' | tr '\n' ';') notes: $(grep -c 'does not compile' "$log")"
}
if [ "$only" = reach ]; then  # 6. h-reach's gates
  gt "test_thomas_pcr_strided (expect PASSED, notes 0)" reach_strided.log 300 "$B/tests/test_thomas_pcr_strided"
  gt "test_thomas_pcr_fused_stage (expect PASSED, notes 0)" reach_fused.log 300 "$B/tests/test_thomas_pcr_fused_stage"
  timeout 150 "$B/benchmarks/bench_cuda_heat_step" --grids 256 --scheme douglas --types fp32 --tune --quick \
    >"$out/reach_tune.log" 2>&1
  rc=$?
  [ $rc = 0 ] || status=1
  note "bench_cuda_heat_step --tune: exit $rc, $(grep -c 'tune ' "$out/reach_tune.log") tune rows, notes: $(grep -c 'does not compile' "$out/reach_tune.log")"
  timeout 200 "$B/benchmarks/bench_cuda_tridiagonal" --quick --reps 3 --no-sweep --no-layouts --no-long \
    --filter 'tune pcr_strided' >"$out/reach_tridiag.log" 2>&1
  rc=$?
  [ $rc = 0 ] || status=1
  note "bench_cuda_tridiagonal 'tune pcr_strided' rows: exit $rc, $(grep -c 'tune pcr_strided' "$out/reach_tridiag.log") rows (m=8 run m=16 here), notes: $(grep -c 'does not compile' "$out/reach_tridiag.log")"
  grep -h 'does not compile' "$out"/reach_*.log 2>/dev/null | sort -u | sed 's/^/  /' | tee -a "$summary"
  grep -h -A3 'Failure' "$out"/reach_*.log 2>/dev/null | head -20 | tee -a "$summary"
  echo; echo "================================ summary ================================"
  cat "$summary"
  note "status: $([ $status = 0 ] && echo PASS || echo FAIL) ($(( $(date +%s) - t0 )) s)"
  exit $status
fi

if [ "$only" = piv ]; then  # 5. stop 39's gates
  gt "test_pivoting_cuda (gated forms' tests)" piv.log 300 "$B/tests/test_pivoting_cuda" \
    --gtest_filter='PivotingCuda.PartitionForms*:PivotingCuda.StagedSmall:PivotingCuda.ForcedRoutesWithinTenTimesLapack'
  gt "test_pivoting_regpart_cuda" regpart.log 120 "$B/tests/test_pivoting_regpart_cuda"
  gt "test_partition_large_cuda DeviceCheckFormsAgree" large_forms.log 200 "$B/tests/test_partition_large_cuda" \
    --gtest_filter='*DeviceCheckFormsAgree*'
  gt "ADI_PIVOTING_ROUTE=regpart EveryRouteSmall" piv_forced.log 200 env ADI_PIVOTING_ROUTE=regpart \
    "$B/tests/test_pivoting_cuda" --gtest_filter='PivotingCuda.EveryRouteSmall'
  gt "ADI_LARGE_CHECK_FORM=0 DeviceZeroPivotNamesTheRow" large_forced.log 200 env ADI_LARGE_CHECK_FORM=0 \
    "$B/tests/test_partition_large_cuda" --gtest_filter='*DeviceZeroPivotNamesTheRow*'
  gt "test_pivoting_xtile_cuda (default form checked, the others skip)" xtile.log 200 \
    "$B/tests/test_pivoting_xtile_cuda"
  gt "ADI_PIVOTING_XTILE_FORM=store EveryRouteSmall" piv_xstore.log 200 env ADI_PIVOTING_XTILE_FORM=store \
    "$B/tests/test_pivoting_cuda" --gtest_filter='PivotingCuda.EveryRouteSmall'
  gt "ADI_PIVOTING_XTILE_BYTES=32 EveryRouteSmall" piv_x32.log 200 env ADI_PIVOTING_XTILE_BYTES=32 \
    "$B/tests/test_pivoting_cuda" --gtest_filter='PivotingCuda.EveryRouteSmall'
  gt "test_thomas_pcr_fused_stage GeneralForm* (skip)" fused_general.log 200 \
    "$B/tests/test_thomas_pcr_fused_stage" --gtest_filter='CudaFusedStage.GeneralForm*'
  gt "ADI_FUSED_YZ_LEAN=0 WarpStreamFloat" fused_lean0.log 200 env ADI_FUSED_YZ_LEAN=0 \
    "$B/tests/test_thomas_pcr_fused_stage" --gtest_filter='CudaFusedStage.WarpStreamFloat'
  grep -h -m1 'does not compile' "$out/piv_forced.log" "$out/large_forced.log" "$out/piv_xstore.log" \
    "$out/piv_x32.log" "$out/fused_lean0.log" 2>/dev/null | sed 's/^/  /' | tee -a "$summary"
  grep -h -A3 'Failure' "$out"/piv*.log "$out"/regpart.log "$out"/large_*.log "$out"/xtile.log "$out"/fused_*.log \
    2>/dev/null | head -20 | tee -a "$summary"
  echo; echo "================================ summary ================================"
  cat "$summary"
  note "status: $([ $status = 0 ] && echo PASS || echo FAIL) ($(( $(date +%s) - t0 )) s)"
  exit $status
fi

if [ "$only" != block ]; then
for v in default unroll; do
  if [ -x "$B/selfcheck_$v" ]; then
    timeout 120 "$B/selfcheck_$v" >"$out/selfcheck_$v.log" 2>&1 || status=1
    note "selfcheck ($v): $(tail -1 "$out/selfcheck_$v.log"); stderr notes: $(grep -c 'does not compile' "$out/selfcheck_$v.log")"
  else
    status=1; note "selfcheck ($v): build FAILED ($(tail -3 "$out/selfcheck_build_$v.log" | tr '\n' ' '))"
  fi
done

timeout 200 "$B/tests/test_thomas_pcr_fused_stage" --gtest_color=no >"$out/fused.log" 2>&1 || status=1
note "test_thomas_pcr_fused_stage: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/fused.log" | tr -s ' ' | tr '\n' ';')"
timeout 200 "$B/tests/test_partition_large_cuda" --gtest_color=no >"$out/large.log" 2>&1 || status=1
note "test_partition_large_cuda: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/large.log" | tr -s ' ' | tr '\n' ';') notes: $(grep -c 'does not compile' "$out/large.log")"
timeout 240 $MPI -n 2 "$B/tests/test_distributed_adi" \
  --gtest_filter='DistributedAdiDevice.Prefetch:DistributedAdiDevice.StageInPasses' --gtest_color=no \
  >"$out/adi_np2.log" 2>&1 || status=1
note "test_distributed_adi np2 (Prefetch, StageInPasses): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/adi_np2.log" | sort | uniq -c | tr -s ' ' | tr '\n' ';') notes: $(grep -c 'does not compile' "$out/adi_np2.log")"

timeout 150 "$B/benchmarks/bench_cuda_heat_step" --grids 256 --scheme douglas --types fp32 --tune --quick \
  >"$out/tune.log" 2>&1
rc=$?
[ $rc = 0 ] || status=1
note "bench_cuda_heat_step --tune: exit $rc, $(grep -c 'tune ' "$out/tune.log") tune rows, notes: $(grep -c 'does not compile' "$out/tune.log")"
fi  # (ONLY=block: from here)

timeout 200 "$B/tests/test_block_thomas_cuda" --gtest_color=no >"$out/block.log" 2>&1 || status=1
note "test_block_thomas_cuda: $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/block.log" | tr -s ' ' | tr '\n' ';') notes: $(grep -c 'does not compile' "$out/block.log")"
timeout 150 "$B/benchmarks/bench_cuda_block_tridiagonal" --quick --reps=3 >"$out/block_bench.log" 2>&1
rc=$?
[ $rc = 0 ] || status=1
note "bench_cuda_block_tridiagonal --quick: exit $rc, $(grep -c ' shared ' "$out/block_bench.log") shared rows, notes: $(grep -c 'does not compile' "$out/block_bench.log")"
grep -m2 'does not compile' "$out/tune.log" "$out/adi_np2.log" "$out/block.log" 2>/dev/null | sed 's/^/  /' | tee -a "$summary"

echo
echo "================================ summary ================================"
cat "$summary"
note "status: $([ $status = 0 ] && echo PASS || echo FAIL) ($(( $(date +%s) - t0 )) s)"
exit $status
