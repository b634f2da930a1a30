#!/usr/bin/env bash
# Issue 16 (stop 37): the fused Y/Z stage's lean form (fused_stage_lean_kernel in
# solvers/cuda/thomas_pcr_fused_stage.cuh; the default since stop 37, runs s37/7-9) against the
# general form (ADI_FUSED_YZ_LEAN=0, the default before), on one
# GPU, in one call (<= 5 minutes on a fresh H100 with the build):
#   1. builds adi with CUDA for sm_90 (no VTK, MPI, Python; Ninja) and only test_thomas_pcr_fused_stage,
#      test_scheme_cuda and bench_cuda_heat_step;
#   2. the fused-stage tests at the default (incl. the new CudaFusedStage.LeanForm* cases, which set
#      the switch themselves), the GPU cases with Y/Z stages again with ADI_FUSED_YZ_LEAN=0 for the
#      whole process,
#      test_scheme_cuda (every scheme's step on the GPU vs the host) at the default (lean), and
#      compute-sanitizer memcheck on CudaFusedStage.LeanFormSmall;
#   3. bench_cuda_heat_step, Douglas with the stencil fold (CUDA's default), 256^3 and 512^3, fp32
#      and fp64, general / lean / general / lean (same process order each pass; each run measures
#      its copy bandwidth);
#   4. (if ncu is there) Nsight Compute on the first fp32 256^3 Y stage of each form: duration,
#      DRAM and SM throughput, warp cycles per issued instruction, instructions executed.
# Tables last: the checks, then the A/B (per part: ms of each pass, best of two, change, % of copy).
#
# --x (issue 16, stop 37, xstage): the first stage's explicit stencil pass instead: the lean column
# form (stencil_columns_ring_kernel in solvers/cuda/stencil_apply.cu; the default since stop 38)
# against the column kernel (ADI_STENCIL_LEAN=0, the default before): builds test_stencil_apply,
# test_scheme_cuda and bench_cuda_heat_step; runs test_stencil_apply (its LeanColumns* /
# GeneralColumns* cases set the switch themselves), test_stencil_apply and test_scheme_cuda again
# with ADI_STENCIL_LEAN=0 for the whole process, memcheck on CudaStencilApply.LeanColumnsSmall; the
# same A/B passes (forms "general" = column kernel, "lean" = ring kernel; the rows that move:
# "explicit, back to back" and "Do stencil stage x"; Y/Z rows are the control); ncu on the first
# stencil pass of a 256^3 Douglas step, fp32 and fp64, each form.
#
# --ring (issue 16, stop 38, xfused): the first stage in one kernel, the x ring
# (fused_x_ring_kernel in solvers/cuda/thomas_pcr_fused_x_ring.cuh, ADI_FOLD_X_RING=1, default off)
# against the default stencil pass + X solve (ADI_FOLD_X_RING=0): builds test_fused_x_ring,
# test_thomas_pcr_fused_stage, test_scheme_cuda and bench_cuda_heat_step; runs test_fused_x_ring
# (its cases set the switch themselves), the folded-stage cases of test_thomas_pcr_fused_stage and
# test_scheme_cuda with ADI_FOLD_X_RING=1 for the whole process (in parallel), memcheck on
# FusedXRing.Small; the same A/B passes (forms "general" = stencil pass + X solve, "lean" = x ring;
# the rows that move: "Do stencil stage x", the step, "stage x +explicit stencil, b2b"; every run
# also times "stage x folded, x ring S=3/4/5" beside the old folded kernel); ncu on the first
# stage of a 256^3 Douglas step: fp64 each form (general: the stencil pass and the X solve), fp32 ring.
# Since xring2 (stop 38): form "lean" = the ring's lean form (fused_x_ring_lean_kernel,
# ADI_FOLD_X_RING=2, lines of 256; the ring kernel for other lengths, the default path for lines
# > 256); the ring kernel itself (ADI_FOLD_X_RING=1) as a third form "ring" in pass 1 at 256^3 only
# (its own table) and in ncu (ring_fp64); the switch's tests run with ADI_FOLD_X_RING=2.
#
# --zfirst (issue 16, stop 39, zfirst): the stages in the order z, y, x with the explicit operator
# folded into the first (z) stage inside the fused Y/Z kernel (fused_stage_strided_fold_kernel in
# solvers/cuda/thomas_pcr_fused_strided_fold.cuh; 8 transfers per Douglas step) against today's default
# (order x, y, z, the stencil pass + the X solve: 10 transfers). Builds with -DADI_FOLD_STRIDED_KERNELS
# (the folded Y/Z instances; build dir build-gpu-zfirst) test_thomas_pcr_fused_stage, test_scheme_cuda
# and bench_cuda_heat_step. Tests, in parallel: the folded-stage cases of test_thomas_pcr_fused_stage
# with ADI_FOLD_STRIDED=2 for the whole process (their Douglas-form y and z stages take the new kernel;
# NaN-poisoned outputs, odd sizes) and test_scheme_cuda's z-first cases (CudaScheme.StridedFold*,
# .ReversedStageOrderMatchesHost, .StepsAllocateNoDeviceMemory set their own switches: every scheme's
# z-first step vs the host in the same order, both fold forms); memcheck on CudaScheme.StridedFoldSmall.
# A/B passes (fp64 only; BENCH_TYPES=fp32,fp64 for both): form "general" = ADI_STAGE_ORDER=xyz
# ADI_FOLD_STRIDED=0 (the default), "lean" = ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=2 (the fold's lean
# rows); the rows that move: "Do stencil stage x" (4 -> 3 fields), "... stage z" (3 -> 2), the step,
# "stage x|z +explicit stencil, b2b". Two more forms in pass 1 at 256^3 (their own table): "zyx"
# (ADI_FOLD_STRIDED=0: the order's cost alone) and "zyx1" (ADI_FOLD_STRIDED=1: the fold's general rows,
# fold_base per row). ncu on the first stage of a 256^3 fp64 Douglas step in each A/B form (general: the
# stencil pass and the X solve; lean: the folded Z stage).
# Since spill (stop 39): a third form "staged" = ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=3 (the lean rows,
# the other rows' folded bases staged in shared memory first: fused_stage_strided_fold_staged_kernel,
# no fp64 spills where the lean form spills 84 B / 172 B) in both passes after lean (same grids), its
# own A/B table (lean vs staged), its ncu log (staged_fp64); the tests cover form 3 (the scheme cases
# loop over 1, 2, 3; the folded-stage cases run a second time with ADI_FOLD_STRIDED=3).
#
#   OUT=/tmp/out scripts/gpu_heat_ab.sh [--x|--ring|--zfirst] [--no-build] [--no-tests] [--no-ncu] [--steps N]
#
# Logs under $OUT: build.log, test_*.log, sanitizer.log, bench_ab.log, ncu_{general,lean,staged}[_fp32|_fp64].log.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
build=1 tests=1 ncu_on=1 steps=10 mode=yz
while [ $# -gt 0 ]; do
  case "$1" in
    --x) mode=x ;;
    --ring) mode=ring ;;
    --zfirst) mode=zfirst ;;
    --no-build) build=0 ;;
    --no-tests) tests=0 ;;
    --no-ncu) ncu_on=0 ;;
    --steps) steps=${2:?--steps N}; shift ;;
    -h|--help) sed -n '2,70p' "$0"; exit 0 ;;
    *) echo "gpu_heat_ab.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
OUT=${OUT:-$root/out/gpu_heat_ab}
mkdir -p "$OUT"
B=${B:-$root/build-gpu-heat-ab}
cuda_flags="" bench_types=fp32,fp64
if [ $mode = zfirst ]; then  # fp64 only in the benchmark passes (the 5-minute call; issue 16's targets are fp64)
  bench_types=${BENCH_TYPES:-fp64}
  B=${B_ZFIRST:-$root/build-gpu-zfirst}
  cuda_flags="-DADI_FOLD_STRIDED_KERNELS"
fi
jobs=$(nproc)
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
targets=(test_thomas_pcr_fused_stage test_scheme_cuda bench_cuda_heat_step)
# The A/B switch: form "general" sets $ab_var=$ab_general, form "lean" $ab_var=$ab_lean.
ab_var=ADI_FUSED_YZ_LEAN ab_general=0 ab_lean=1
if [ $mode = x ]; then
  targets=(test_stencil_apply test_scheme_cuda bench_cuda_heat_step)
  ab_var=ADI_STENCIL_LEAN
elif [ $mode = ring ]; then
  targets=(test_fused_x_ring test_thomas_pcr_fused_stage test_scheme_cuda bench_cuda_heat_step)
  ab_var=ADI_FOLD_X_RING ab_lean=2
fi
# The environment of a form (general | lean | zyx): $ab_var=value, or (--zfirst) the stage order and the fold.
ab_env() {
  if [ $mode = zfirst ]; then
    case $1 in
      general) echo "ADI_STAGE_ORDER=xyz ADI_FOLD_STRIDED=0" ;;
      lean) echo "ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=2" ;;
      zyx) echo "ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=0" ;;
      zyx1) echo "ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=1" ;;
      staged) echo "ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=3" ;;
    esac
  elif [ "$1" = lean ]; then
    echo "$ab_var=$ab_lean"
  else
    echo "$ab_var=$ab_general"
  fi
}
# The general form (ADI_FUSED_YZ_LEAN=0) is compiled only with -DADI_CUDA_UNROLL_ALL=ON since stop 40
# (issue 15 item 8, h-gatex; a default build runs the lean form for it, with one note): the default
# mode configures with it, the other modes' forms need no option.
unroll=OFF
[ $mode = yz ] && unroll=ON
t_build=0
if [ $build = 1 ]; then
  : > "$OUT/build.log"
  t0=$(date +%s)
  cmake -S "$root" -B "$B" $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DADI_WITH_PYTHON=OFF -DADI_BUILD_EXAMPLES=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON \
    -DADI_CUDA_UNROLL_ALL=$unroll ${cuda_flags:+"-DCMAKE_CUDA_FLAGS=$cuda_flags"} >> "$OUT/build.log" 2>&1 && cmake --build "$B" -j "$jobs" --target "${targets[@]}" >> "$OUT/build.log" 2>&1 ||
    { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  t_build=$(( $(date +%s) - t0 ))
  echo "build: ok ($t_build s, $jobs jobs)"
fi
[ -x "$B/benchmarks/bench_cuda_heat_step" ] || { echo "no $B/benchmarks/bench_cuda_heat_step (build first)"; exit 1; }
{ command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader ||
  echo "no nvidia-smi"; } > "$OUT/nvidia-smi.txt" 2>&1
T=$B/tests
status() { if [ "$1" = skipped ]; then echo skipped; elif [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
counts() { grep -E '^\[  (PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$1" 2>/dev/null | tr -s ' ' | tr '\n' ' '; }

t0=$(date +%s)
r_fused=skipped r_lean=skipped r_scheme=skipped san="not run" race="not run"
r_st=skipped r_stl=skipped r_ring=skipped r_ringf=skipped
# compute-sanitizer memcheck on one test case (BINARY CASE): sets $san.
memcheck() {
  local cs r
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [ -x "$cs" ]; then
    echo "### memcheck $2" > "$OUT/sanitizer.log"
    timeout 120 "$cs" --tool memcheck --error-exitcode 99 "$T/$1" --gtest_filter="$2" >> "$OUT/sanitizer.log" 2>&1
    r=$?
    san="memcheck: $([ $r = 0 ] && echo clean || echo "ERRORS or timeout (exit $r)")"
  else
    san="no compute-sanitizer"
  fi
}
if [ $tests = 1 ] && [ $mode = zfirst ]; then
  # In parallel (correctness only; the timings come after), memcheck in front.
  ADI_FOLD_STRIDED=2 timeout 120 "$T/test_thomas_pcr_fused_stage" \
    --gtest_filter='CudaFoldedStage.*:CudaFusedStage.MatchesTheFp64ReferenceFolded*' \
    > "$OUT/test_fused_stage_strided.log" 2>&1 &
  p1=$!
  ADI_FOLD_STRIDED=3 timeout 120 "$T/test_thomas_pcr_fused_stage" \
    --gtest_filter='CudaFoldedStage.*:CudaFusedStage.MatchesTheFp64ReferenceFolded*' \
    > "$OUT/test_fused_stage_staged.log" 2>&1 &
  p3=$!
  # (150 s: StridedFoldMatchesHost runs every fold case for 3 forms since spill)
  timeout 150 "$T/test_scheme_cuda" \
    --gtest_filter='CudaScheme.StridedFold*:CudaScheme.ReversedStageOrderMatchesHost:CudaScheme.StepsAllocateNoDeviceMemory' \
    > "$OUT/test_scheme_cuda_zfirst.log" 2>&1 &
  p2=$!
  memcheck test_scheme_cuda CudaScheme.StridedFoldSmall
  wait $p1; r_fused=$?
  wait $p2; r_scheme=$?
  wait $p3; r_staged=$?
elif [ $tests = 1 ] && [ $mode = ring ]; then
  # In parallel (correctness only; the timings come after): the ring's own test, the folded-stage
  # cases and every scheme's step with the switch on for the whole process, memcheck in front.
  timeout 100 "$T/test_fused_x_ring" > "$OUT/test_fused_x_ring.log" 2>&1 &
  p1=$!
  ADI_FOLD_X_RING=2 timeout 100 "$T/test_thomas_pcr_fused_stage" \
    --gtest_filter='CudaFoldedStage.*:CudaFusedStage.MatchesTheFp64ReferenceFolded*:CudaFusedStage.XStageLargerGrids*' \
    > "$OUT/test_fused_stage_ring.log" 2>&1 &
  p2=$!
  ADI_FOLD_X_RING=2 timeout 100 "$T/test_scheme_cuda" > "$OUT/test_scheme_cuda_ring.log" 2>&1 &
  p3=$!
  memcheck test_fused_x_ring FusedXRing.Small
  # racecheck (shared-memory hazards: the lean form syncs per warp only, its rhs overwrites a ring slot in place)
  race="not run"
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [ -x "$cs" ]; then
    echo "### racecheck FusedXRing.Small" >> "$OUT/sanitizer.log"
    timeout 90 "$cs" --tool racecheck --error-exitcode 99 "$T/test_fused_x_ring" --gtest_filter=FusedXRing.Small \
      >> "$OUT/sanitizer.log" 2>&1
    rr=$?
    race="racecheck: $([ $rr = 0 ] && echo clean || echo "HAZARDS or timeout (exit $rr)")"
  fi
  wait $p1; r_ring=$?
  wait $p2; r_ringf=$?
  wait $p3; r_scheme=$?
elif [ $tests = 1 ] && [ $mode = x ]; then
  timeout 150 "$T/test_stencil_apply" > "$OUT/test_stencil_apply.log" 2>&1; r_st=$?
  # (the ring kernel is the default since stop 38: the whole processes again under the column kernel)
  ADI_STENCIL_LEAN=0 timeout 150 "$T/test_stencil_apply" > "$OUT/test_stencil_apply_lean.log" 2>&1; r_stl=$?
  ADI_STENCIL_LEAN=0 timeout 150 "$T/test_scheme_cuda" > "$OUT/test_scheme_cuda_lean.log" 2>&1; r_scheme=$?
  memcheck test_stencil_apply CudaStencilApply.LeanColumnsSmall
elif [ $tests = 1 ]; then
  # Each under its own timeout, so that the benchmark always runs.
  timeout 150 "$T/test_thomas_pcr_fused_stage" > "$OUT/test_fused_stage.log" 2>&1; r_fused=$?
  # The GPU cases with Y/Z stages again in the general form (ADI_FUSED_YZ_LEAN=0; the lean form is
  # the default since stop 37) for the whole process (the X-only and LeanForm cases left out).
  ADI_FUSED_YZ_LEAN=0 timeout 120 "$T/test_thomas_pcr_fused_stage" \
    --gtest_filter='CudaFusedStage.*:CudaPlanStage.*-CudaFusedStage.XStage*:CudaFusedStage.LeanForm*' \
    > "$OUT/test_fused_stage_lean.log" 2>&1; r_lean=$?
  timeout 150 "$T/test_scheme_cuda" > "$OUT/test_scheme_cuda_lean.log" 2>&1; r_scheme=$?
  memcheck test_thomas_pcr_fused_stage CudaFusedStage.LeanFormSmall
fi
t_tests=$(( $(date +%s) - t0 ))

# The A/B: two passes, general then lean, Douglas (stencil fold), both grids and precisions.
t0=$(date +%s)
: > "$OUT/bench_ab.log"
: > "$OUT/bench_ab_ring.log"
ab_forms="general lean"
[ $mode = zfirst ] && ab_forms="general lean staged"
for pass in 1 2; do
  for form in $ab_forms; do
    echo "### pass $pass form $form" >> "$OUT/bench_ab.log"
    env $(ab_env $form) timeout 150 "$B/benchmarks/bench_cuda_heat_step" --grids 256,512 --scheme douglas \
      --folds stencil --steps "$steps" --types "$bench_types" >> "$OUT/bench_ab.log" 2>&1 ||
      echo "bench pass $pass $form: exit $?" >> "$OUT/bench_ab.log"
  done
  if [ $mode = ring ] && [ $pass = 1 ]; then  # the third form: the ring kernel (256^3 only)
    echo "### pass 1 form ring" >> "$OUT/bench_ab_ring.log"
    ADI_FOLD_X_RING=1 timeout 60 "$B/benchmarks/bench_cuda_heat_step" --grids 256 --scheme douglas \
      --folds stencil --steps "$steps" >> "$OUT/bench_ab_ring.log" 2>&1 || echo "bench pass 1 ring: exit $?" >> "$OUT/bench_ab.log"
  fi
  if [ $mode = zfirst ] && [ $pass = 1 ]; then  # two more forms at 256^3: zyx + stencil fold, zyx + general fold rows
    for form in zyx zyx1; do
      echo "### pass 1 form $form" >> "$OUT/bench_ab_ring.log"
      env $(ab_env $form) timeout 60 "$B/benchmarks/bench_cuda_heat_step" --grids 256 --scheme douglas \
        --folds stencil --steps "$steps" --types "$bench_types" >> "$OUT/bench_ab_ring.log" 2>&1 || echo "bench pass 1 $form: exit $?" >> "$OUT/bench_ab.log"
    done
  fi
done
t_ab=$(( $(date +%s) - t0 ))

# Nsight Compute: the first fp32 256^3 Y stage of a Douglas step (the first strided launch).
t0=$(date +%s)
if [ $ncu_on = 1 ] && [ $mode = zfirst ] && command -v ncu > /dev/null; then
  # The first stage of a 256^3 fp64 Douglas step: general = the stencil pass and the X solve (2
  # kernels), lean = the folded Z stage (1).
  for form in general lean staged; do
    k='stencil_columns_ring|thomas' c=2
    [ $form != general ] && k='fused_stage_strided_fold' c=1
    env $(ab_env $form) timeout 50 ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
      --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
      --metrics smsp__inst_executed.sum,smsp__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
      -k regex:"$k" -c $c "$B/benchmarks/bench_cuda_heat_step" --grids 256 --types fp64 \
      --scheme douglas --folds stencil --steps 1 > "$OUT/ncu_${form}_fp64.log" 2>&1
  done
elif [ $ncu_on = 1 ] && [ $mode = ring ] && command -v ncu > /dev/null; then
  # The first stage of a 256^3 Douglas step: general = the stencil pass and the X solve (2
  # kernels), lean = the ring (fp64; fp32 the ring only).
  for run in general_fp64 lean_fp64 lean_fp32 ring_fp64; do
    form=${run%_*} type=${run#*_} val=$ab_general k='stencil_columns_ring|thomas' c=2
    [ $form = lean ] && val=$ab_lean k='fused_x_ring' c=1
    [ $form = ring ] && val=1 k='fused_x_ring' c=1
    env "$ab_var=$val" timeout 50 ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
      --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
      --metrics smsp__inst_executed.sum,smsp__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
      -k regex:"$k" -c $c "$B/benchmarks/bench_cuda_heat_step" --grids 256 --types $type \
      --scheme douglas --folds stencil --steps 1 > "$OUT/ncu_$run.log" 2>&1
  done
elif [ $ncu_on = 1 ] && [ $mode = x ] && command -v ncu > /dev/null; then
  # The first stencil pass of a 256^3 Douglas step (the stencil fold's), per precision and form.
  for form in general lean; do
    val=$ab_general
    [ $form = lean ] && val=$ab_lean
    for type in fp32 fp64; do
      env "$ab_var=$val" timeout 100 ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
        --section LaunchStats --section Occupancy --metrics smsp__inst_executed.sum,smsp__cycles_active.avg,dram__bytes.sum \
        -k regex:'stencil_columns_(shared|ring)' -c 1 "$B/benchmarks/bench_cuda_heat_step" --grids 256 --types $type \
        --scheme douglas --folds stencil --steps 1 > "$OUT/ncu_${form}_$type.log" 2>&1
    done
  done
elif [ $ncu_on = 1 ] && command -v ncu > /dev/null; then
  for form in general lean; do
    lean=0
    [ $form = lean ] && lean=1
    ADI_FUSED_YZ_LEAN=$lean timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats \
      --section LaunchStats --metrics smsp__inst_executed.sum,smsp__cycles_active.avg \
      -k regex:'fused_stage_(strided|lean)' -c 1 "$B/benchmarks/bench_cuda_heat_step" --grids 256 --types fp32 \
      --scheme douglas --folds stencil --steps 1 > "$OUT/ncu_$form.log" 2>&1
  done
fi
t_ncu=$(( $(date +%s) - t0 ))

echo
echo "== gpu_heat_ab.sh $(date -u +%FT%TZ), $(head -1 "$OUT/nvidia-smi.txt"), tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
echo "| check | result |"
echo "|---|---|"
# One row per named case of a gtest log (LOG CASE...): OK / FAILED / SKIPPED and its time.
case_rows() {
  local log=$1 t r
  shift
  for t in "$@"; do
    r=$(grep -E "^\[ +(OK|FAILED|SKIPPED) +\] $t " "$log" 2>/dev/null | head -1 |
        sed -E 's/^\[ +([A-Z]+) +\].*\(([0-9]+ ms)\).*/\1 (\2)/')
    echo "| $t | ${r:-not run} |"
  done
}
if [ $mode = zfirst ]; then
echo "| test_thomas_pcr_fused_stage folded cases, ADI_FOLD_STRIDED=2 (whole process: Douglas-form y/z stages fold in the Y/Z kernel, lean rows) | $(status $r_fused): $(counts "$OUT/test_fused_stage_strided.log") |"
echo "| test_thomas_pcr_fused_stage folded cases, ADI_FOLD_STRIDED=3 (the same, staged form) | $(status $r_staged): $(counts "$OUT/test_fused_stage_staged.log") |"
echo "| test_scheme_cuda (its StridedFold* / ReversedStageOrder cases set the switches) | $(status $r_scheme): $(counts "$OUT/test_scheme_cuda_zfirst.log") |"
case_rows "$OUT/test_scheme_cuda_zfirst.log" CudaScheme.StridedFoldMatchesHost CudaScheme.StridedFoldSmall \
  CudaScheme.ReversedStageOrderMatchesHost CudaScheme.StepsAllocateNoDeviceMemory CudaScheme.FoldedStepsMatchHostAtOddSizes
echo "| compute-sanitizer, CudaScheme.StridedFoldSmall | $san |"
elif [ $mode = ring ]; then
echo "| test_fused_x_ring (the ring and its lean form vs the fp64 host; sets ADI_FOLD_X_RING=1 / 2 itself) | $(status $r_ring): $(counts "$OUT/test_fused_x_ring.log") |"
case_rows "$OUT/test_fused_x_ring.log" FusedXRing.DouglasFirstStageFloat FusedXRing.DouglasFirstStageDouble \
  FusedXRing.RingDepths FusedXRing.LeanFormFloat FusedXRing.LeanFormDouble FusedXRing.LeanFormDepths \
  FusedXRing.Small FusedXRing.OffByDefault
echo "| test_thomas_pcr_fused_stage folded cases, ADI_FOLD_X_RING=2 (whole process) | $(status $r_ringf): $(counts "$OUT/test_fused_stage_ring.log") |"
echo "| test_scheme_cuda, ADI_FOLD_X_RING=2 (every scheme's GPU step vs the host) | $(status $r_scheme): $(counts "$OUT/test_scheme_cuda_ring.log") |"
echo "| compute-sanitizer, FusedXRing.Small | $san; $race |"
elif [ $mode = x ]; then
echo "| test_stencil_apply (default: lean; LeanColumns* set ADI_STENCIL_LEAN=1, GeneralColumnsMatch =0) | $(status $r_st): $(counts "$OUT/test_stencil_apply.log") |"
case_rows "$OUT/test_stencil_apply.log" CudaStencilApply.LeanColumnsMatchFloat CudaStencilApply.LeanColumnsMatchDouble CudaStencilApply.GeneralColumnsMatch \
  CudaStencilApply.LeanColumnsSmall CudaStencilApply.MatchesHostFloat CudaStencilApply.MatchesHostDouble
echo "| test_stencil_apply, ADI_STENCIL_LEAN=0 (whole process) | $(status $r_stl): $(counts "$OUT/test_stencil_apply_lean.log") |"
echo "| test_scheme_cuda, ADI_STENCIL_LEAN=0 (every scheme's GPU step vs the host) | $(status $r_scheme): $(counts "$OUT/test_scheme_cuda_lean.log") |"
echo "| compute-sanitizer, CudaStencilApply.LeanColumnsSmall | $san |"
else
echo "| test_thomas_pcr_fused_stage (default: lean; LeanForm* cases set the switch) | $(status $r_fused): $(counts "$OUT/test_fused_stage.log") |"
case_rows "$OUT/test_fused_stage.log" CudaFusedStage.LeanFormMatchesTheFp64ReferenceFloat \
  CudaFusedStage.LeanFormMatchesTheFp64ReferenceDouble CudaFusedStage.LeanFormSmall CudaFusedStage.WarpStreamFloat \
  CudaFusedStage.WarpStreamDouble
echo "| test_thomas_pcr_fused_stage GPU cases, ADI_FUSED_YZ_LEAN=0 (general form) | $(status $r_lean): $(counts "$OUT/test_fused_stage_lean.log") |"
echo "| test_scheme_cuda (default: lean) | $(status $r_scheme): $(counts "$OUT/test_scheme_cuda_lean.log") |"
echo "| compute-sanitizer, CudaFusedStage.LeanFormSmall | $san |"
fi
echo "| times | build $t_build s, tests $t_tests s, A/B $t_ab s, ncu $t_ncu s |"
if [ $tests = 1 ]; then
  grep -h -E "^\[  FAILED  \]|Failure|first bad node|Expected|actual" "$OUT"/test_*.log 2>/dev/null | head -16
  grep -h "no CUDA device" "$OUT"/test_*.log 2>/dev/null | head -2
fi
grep -h "bench pass" "$OUT/bench_ab.log"
if [ $mode = zfirst ]; then
  ncu_logs="general_fp64 lean_fp64 staged_fp64" ncu_k='(stencil_columns_ring|thomas[a-z_]*|fused_stage_strided_fold[a-z_]*)_kernel'
  ncu_what="first stage of a Douglas step 256^3 fp64 (general = stencil pass + X solve, lean / staged = the folded Z stage)"
elif [ $mode = ring ]; then
  ncu_logs="general_fp64 lean_fp64 lean_fp32 ring_fp64" ncu_k='(stencil_columns_ring|thomas[a-z_]*|fused_x_ring[a-z_]*)_kernel'
  ncu_what="first stage of a Douglas step 256^3 (general = stencil pass + X solve, lean = the x ring's lean form, ring = the ring kernel)"
elif [ $mode = x ]; then
  ncu_logs="general_fp32 lean_fp32 general_fp64 lean_fp64" ncu_k='stencil_columns_(shared|ring)_kernel'
  ncu_what="first stencil pass of a Douglas step 256^3 (general = column kernel, lean = ring kernel, the default)"
else
  ncu_logs="general lean" ncu_k='fused_stage_(strided|lean)_kernel' ncu_what="first fused Y stage fp32 256^3"
fi
for f in $ncu_logs; do
  [ -s "$OUT/ncu_$f.log" ] || continue
  echo
  echo "-- ncu, $ncu_what, $f --"
  grep -E "$ncu_k|DRAM Throughput|Duration|Compute \(SM\) Throughput|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued|smsp__inst_executed.sum|smsp__cycles_active.avg|dram__bytes(_read|_write)?.sum|lts__t_bytes.sum|Dynamic Shared Memory Per Block|Block Limit (Registers|Shared Mem)|L2 Hit Rate" \
    "$OUT/ncu_$f.log" | sed -E 's/void (adi::cuda_backend::[^(]*::)?([a-z_]+_kernel)/  \2/; s/\((adi::detail::)?(StencilView|adi::cuda_backend::kernels::StageArgs|StageArgs)<.*//' |
    tr -s ' ' | cut -c1-110
done
echo
if [ $mode = zfirst ]; then
  echo "== the z-first order with the stencil fold (form zyx: ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=0) and with the fold's general rows (zyx1: ADI_FOLD_STRIDED=1), 256^3, pass 1 (bench_ab_ring.log)"
  grep -E "^(### |device|256x.*(Do stencil stage [xyz]|Do stencil step: CUDA events|stage [xz] \+explicit stencil, b2b))" "$OUT/bench_ab_ring.log" | cut -c1-110
  echo "== A/B: general = order x, y, z, stencil pass + X solve (ADI_STAGE_ORDER=xyz ADI_FOLD_STRIDED=0, the default) / lean = order z, y, x, explicit part folded in the Z stage, lean rows (ADI_STAGE_ORDER=zyx ADI_FOLD_STRIDED=2); ms, two passes, Douglas (bench_ab.log)"
elif [ $mode = ring ]; then
  echo "== the ring kernel (ADI_FOLD_X_RING=1), 256^3, pass 1 (bench_ab_ring.log; run s38/14: fp32 stage x 0.2144, fp64 0.2611 ms)"
  grep -E "^256x.*(Do stencil stage x|Do stencil step: CUDA events|stage x \+explicit stencil, b2b|x ring S=|x ring 2 waves)" "$OUT/bench_ab_ring.log" | cut -c1-80
  echo "== A/B: first stage, general = stencil pass + X solve (ADI_FOLD_X_RING=0, the default) / lean = the x ring's lean form (ADI_FOLD_X_RING=2); ms, two passes, Douglas, stencil fold (bench_ab.log)"
elif [ $mode = x ]; then
  echo "== A/B: explicit stencil pass, general = column kernel (ADI_STENCIL_LEAN=0) / lean = ring kernel (ADI_STENCIL_LEAN=1, the default since stop 38); ms, two passes, Douglas, stencil fold (bench_ab.log)"
else
  echo "== A/B: fused Y/Z stage, general (ADI_FUSED_YZ_LEAN=0) / lean (the default since stop 37); ms, two passes, Douglas, stencil fold (bench_ab.log)"
fi
grep -E "^(device|copy)" "$OUT/bench_ab.log" | sort -u | head -6
echo "('% copy' = 100 / ratio to the part's minimum transfers; the step's ratio to the 8-transfer minimum: ms / (8/10 x the 10-field min))"
ab_parts='stage [xyz] fused, back to back|explicit, back to back|stage x [+]explicit stencil, b2b|Do stencil stage [xyz]|Do stencil step: CUDA events'
ab_copy=min
if [ $mode = zfirst ]; then  # each form against its own minimum (the first stage's axis moves)
  ab_parts='stage [xyz] fused, back to back|explicit, back to back|stage [xz] [+]explicit stencil, b2b|Do stencil stage [xyz]|Do stencil step: CUDA events'
  ab_copy=own
elif [ $mode = ring ]; then  # (the x ring's rows; each form against its own minimum: 2 / 4 fields)
  ab_parts="$ab_parts|stage x folded, carveout fitted|stage x folded, x (ring|lean) (S=[345]|2 waves)"
  ab_copy=own
fi
awk -f "$root/scripts/ab_table.awk" -v bench=heat -v a=general -v b=lean -v partw=30 -v copy=$ab_copy -v step8=1 \
  -v parts="$ab_parts" -v heads='row (ms),general,lean,general,lean,best gen,best len,change,% copy gen -> lean' "$OUT/bench_ab.log"
if [ $mode = zfirst ]; then  # the third form against the second (both z first: the same minimum)
  echo
  echo "== A/B: lean = the fold's lean rows (ADI_FOLD_STRIDED=2; fp64 spills 84 B / 172 B) / staged = the same rows, the other rows' bases staged first (ADI_FOLD_STRIDED=3, no spills); both ADI_STAGE_ORDER=zyx; ms, two passes (bench_ab.log)"
  awk -f "$root/scripts/ab_table.awk" -v bench=heat -v a=lean -v b=staged -v partw=30 -v copy=own -v step8=1 \
    -v parts="$ab_parts" -v heads='row (ms),lean,staged,lean,staged,best len,best stg,change,% copy len -> stg' "$OUT/bench_ab.log"
fi
