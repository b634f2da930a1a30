#!/usr/bin/env bash
# Issue 16, the X direction (contiguous lines, per-line bands): same-run A/B of cuda_thomas_pcr's
# general kernel (thomas_pcr_kernel<T, false, 8, false>, ADI_PCR_X_LEAN=0) and its lean form for
# lines of exactly 256 rows (thomas_pcr_lean_kernel<T>, ADI_PCR_X_LEAN=1; the default since stop
# 38; solvers/cuda/README.md "X lines of 256: the lean form"). One call on a fresh H100/H200,
# ~4-5 min with the build:
#   1. build (sm_90; VTK, MPI, Python off; build dir build-xab) only bench_cuda_tridiagonal and
#      test_thomas_pcr_hybrid;
#   2. bench_cuda_tridiagonal, X hybrid rows only (--filter), boxes 256^3, 240x256x256 (control:
#      lines of 240 keep the general kernel), 512^3 (control: lines of 512, MaxM 16), fp32 + fp64,
#      copy bandwidth measured in each run; general / lean / general / lean, alternating;
#   3. tests: test_thomas_pcr_hybrid (LeanForm* / GeneralForm* set the switch themselves), the
#      whole binary again with ADI_PCR_X_LEAN=0 (every suite case on the general kernel), compute-
#      sanitizer memcheck + racecheck on CudaThomasPcr.LeanFormSmall;
#   4. ncu (--no-ncu skips): the 256^3 X kernel, fp32 and fp64, each form: instructions executed,
#      duration, DRAM %, registers, occupancy, issue and stall figures.
#
#   OUT=... scripts/gpu_x_ab.sh [--no-build] [--no-tests] [--no-512] [--no-ncu] [--build-dir DIR]
#
# Logs under $OUT (default <repo>/out/x_ab): build.log, bench_ab.log, tests.log, sanitizer.log,
# ncu_*.txt, summary.txt; the tables last (also tables.txt).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}/x_ab
build=$root/build-xab
do_build=1 do_tests=1 do_ncu=1 big=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --no-tests) do_tests=0 ;;
    --no-512) big=0 ;;
    --no-ncu) do_ncu=0 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "gpu_x_ab.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
. "$root/scripts/gtest_runs.sh"
summary_start "$out"
gpu_banner gpu_x_ab.sh

if [ $do_build = 1 ]; then
  cuda_build "$out/build.log" "$build" bench_cuda_tridiagonal test_thomas_pcr_hybrid || exit 1
fi
bench=$build/benchmarks/bench_cuda_tridiagonal
filter="x thomas_pcr (hybrid) full"
boxes=256x256x256,240x256x256
[ $big = 1 ] && boxes=$boxes,512x512x512
form_env() { [ "$1" = lean ] && echo ADI_PCR_X_LEAN=1 || echo ADI_PCR_X_LEAN=0; }

# Benchmarks first, on an idle device: general / lean, two passes.
t0=$(date +%s)
: >"$out/bench_ab.log"
for pass in 1 2; do
  for form in general lean; do
    echo "### pass $pass form $form" >>"$out/bench_ab.log"
    env $(form_env $form) timeout 90 "$bench" --boxes "$boxes" --no-tune --no-layouts --no-sweep --no-long \
      --reps 15 --filter "$filter" >>"$out/bench_ab.log" 2>&1 || { status=1; note "bench $form pass $pass: FAILED (exit $?)"; }
  done
done
note "bench A/B (boxes $boxes, 2 passes): $(( $(date +%s) - t0 )) s"

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  run_gtests "$out/tests.log" 200 "$build/tests" test_thomas_pcr_hybrid
  echo "### test_thomas_pcr_hybrid with ADI_PCR_X_LEAN=0 (whole binary; the lean form is the default since stop 38)" >>"$out/tests.log"
  if ADI_PCR_X_LEAN=0 timeout 200 "$build/tests/test_thomas_pcr_hybrid" >"$out/tests_lean.log" 2>&1; then
    note "test_thomas_pcr_hybrid, ADI_PCR_X_LEAN=0: passed ($(grep -oE '^\[  PASSED  \] [0-9]+' "$out/tests_lean.log"); skipped $(grep -cE '^\[  SKIPPED \] [A-Za-z]' "$out/tests_lean.log"))"
  else
    note "test_thomas_pcr_hybrid, ADI_PCR_X_LEAN=0: FAILED (tests_lean.log)"
    grep -m2 -B2 -A10 'Failure$' "$out/tests_lean.log" | head -26 | tee -a "$summary"
    status=1
  fi
  cat "$out/tests_lean.log" >>"$out/tests.log"
  note "tests: $(( $(date +%s) - t0 )) s"
  : >"$out/sanitizer.log"
  for tool in memcheck racecheck; do
    run_sanitizer "$out/sanitizer.log" 90 $tool "$build/tests/test_thomas_pcr_hybrid" 'CudaThomasPcr.LeanFormSmall'
  done
fi

ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ $do_ncu = 1 ] && [ -x "$ncu" ]; then
  t0=$(date +%s)
  for type in fp32 fp64; do
    for form in general lean; do
      env $(form_env $form) timeout 60 "$ncu" --clock-control none --kernel-name "regex:thomas_pcr_(lean_)?kernel" \
        --launch-skip 2 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
        --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second,$(printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' long_scoreboard short_scoreboard wait mio_throttle lg_throttle math_pipe_throttle not_selected no_instruction | sed 's/,$//') \
        "$bench" --boxes 256x256x256 --no-tune --no-layouts --no-sweep --no-long --reps 3 \
        --filter "256x256x256 $type $filter" >"$out/ncu_${type}_$form.txt" 2>&1 ||
        note "ncu $type $form: exit $? (see ncu_${type}_$form.txt)"
    done
  done
  note "ncu: $(( $(date +%s) - t0 )) s"
fi

section() { echo; echo "=== $*"; }
# The tables, also in $OUT/x_ab/tables.txt (the output's tail may be cut).
{
  for type in fp32 fp64; do
    for form in general lean; do
      f=$out/ncu_${type}_$form.txt
      [ -s "$f" ] || continue
      section "Nsight Compute: 256^3 $type X, per-line bands, $form (ncu_${type}_$form.txt)"
      grep -E "thomas_pcr_(lean_)?kernel|DRAM Throughput|Duration|SM Frequency|Issue Slots Busy|Issued Warp|No Eligible|Warp Cycles Per Issued|Eligible Warps|Active Warps Per|inst_executed|dram__bytes|stalled|Registers Per Thread|Block Limit (Registers|Shared Mem)|Achieved Occupancy|Theoretical Occupancy" "$f" | head -30
    done
  done
  [ -s "$out/failures.txt" ] && { section "first test failures (failures.txt)"; head -30 "$out/failures.txt"; }
  section "A/B: X hybrid, per-line bands, ADI_PCR_X_LEAN 0 (general) / 1 (lean, the default since stop 38), ms and % of copy, two passes (bench_ab.log)"
  grep -E "^(device|copy)" "$out/bench_ab.log" | sort -u | head -6
  echo "(lean applies to lines of exactly 256 rows: 256^3 rows; 240x256x256 and 512^3 are controls that must not move)"
  awk -f "$root/scripts/ab_table.awk" -v bench=tridiag -v a=general -v b=lean \
    -v heads='row,gen p1,lean p1,gen p2,lean p2,best gen %copy,best lean,lean vs general (best ms)' "$out/bench_ab.log"
  section "summary"
  cat "$summary"
} 2>&1 | tee "$out/tables.txt"
exit $status
