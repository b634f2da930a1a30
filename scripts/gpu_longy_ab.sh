#!/usr/bin/env bash
# Issue 18 part 1 (stop 41, h-longy): the single-device long-line kernel by truncated sweeps,
# Kernel::cuda_thomas_truncated (solvers/cuda/thomas_truncated.cuh, common::spike_y_part; automatic's
# pick on long lines since stop 42) against cuda_thomas_pcr_long in the same run. One call on
# one H100/H200, <= 5 min with the build:
#   1. build (sm_90; VTK, MPI, Python off; build dir build-longy) only bench_cuda_tridiagonal,
#      test_thomas_truncated, test_tridiagonal_cuda_dispatch, test_thomas_pcr_long;
#   2. bench_cuda_tridiagonal --truncated, two passes: 128x128x4096 and 128x128x2048 along z, fp64 and
#      fp32, the MPI benchmark's bands and this benchmark's weaker ones; pcr_long's plan, the
#      truncated plan (flag read + re-solve where refused), the kernel alone in forms 1 and 3,
#      alternated solve by solve; % of the copy bandwidth measured in the same run (5 arrays);
#   3. tests: test_thomas_truncated (host whole-line form, sizes 1..4096 vs the fp64 reference,
#      refusals, the rule, the sticky fall-back), test_tridiagonal_cuda_dispatch, test_thomas_pcr_long
#      (the exact table's rows), the dispatch test again with ADI_LONG_TRUNCATED=0; compute-sanitizer
#      memcheck on SanitizerSmall. (Other shapes: bench_cuda_tridiagonal --truncated --boxes LIST.)
#
#   4. --unchecked (stop 43): the unchecked plans' truncated sweeps (ADI_TRUNCATED_UNCHECKED=1, opt-in):
#      bench_cuda_tridiagonal's dense boxes (256^3, 240x256x256; timed with check_pivots off) without
#      and with the variable, alternated twice, the dispatch's kernel and % of copy per row; and
#      --truncated --boxes 256x256x256,512x512x512 with it (the by-name plan row unchecked).
#
#   OUT=... scripts/gpu_longy_ab.sh [--no-build] [--no-tests] [--no-bench] [--unchecked] [--build-dir DIR]
#
# Logs under $OUT/longy_ab: build.log, bench_ab.log, tests.log, sanitizer.log, summary.txt; the
# tables last (also tables.txt).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}/longy_ab
build=$root/build-longy
do_build=1 do_tests=1 do_bench=1 do_unchecked=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --no-tests) do_tests=0 ;;
    --no-bench) do_bench=0 ;;
    --unchecked) do_unchecked=1 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "gpu_longy_ab.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
. "$root/scripts/gtest_runs.sh"
summary_start "$out"
gpu_banner gpu_longy_ab.sh

if [ $do_build = 1 ]; then
  cuda_build "$out/build.log" "$build" bench_cuda_tridiagonal test_thomas_truncated test_tridiagonal_cuda_dispatch test_thomas_pcr_long ||
    exit 1
fi
bench=$build/benchmarks/bench_cuda_tridiagonal

# Benchmarks first, on an idle device: two passes (each alternates the variants solve by solve).
if [ $do_bench = 1 ]; then
  t0=$(date +%s)
  : >"$out/bench_ab.log"
  for pass in 1 2; do
    echo "### pass $pass" >>"$out/bench_ab.log"
    timeout 120 "$bench" --truncated --reps 20 >>"$out/bench_ab.log" 2>&1 ||
      { status=1; note "bench pass $pass: FAILED (exit $?)"; }
  done
  note "bench A/B (2 passes): $(( $(date +%s) - t0 )) s"
fi

# The unchecked plans' truncated sweeps: the dense boxes' summary rows (the dispatch's kernel, % of
# copy) without and with ADI_TRUNCATED_UNCHECKED=1, alternated.
if [ $do_unchecked = 1 ]; then
  t0=$(date +%s)
  : >"$out/unchecked.log"
  for pass in 1 2; do
    for v in 0 1; do
      echo "### pass $pass ADI_TRUNCATED_UNCHECKED=$v" >>"$out/unchecked.log"
      ADI_TRUNCATED_UNCHECKED=$v timeout 200 "$bench" --no-sweep --no-tune --no-layouts --no-long --reps 20 \
        >>"$out/unchecked.log" 2>&1 || { status=1; note "unchecked bench pass $pass ($v): FAILED (exit $?)"; }
    done
  done
  ADI_TRUNCATED_UNCHECKED=1 timeout 120 "$bench" --truncated --reps 20 --boxes 256x256x256,512x512x512 \
    >"$out/unchecked_truncated.log" 2>&1 || { status=1; note "unchecked --truncated: FAILED (exit $?)"; }
  note "unchecked A/B: $(( $(date +%s) - t0 )) s"
fi

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  run_gtests "$out/tests.log" 150 "$build/tests" test_thomas_truncated test_tridiagonal_cuda_dispatch test_thomas_pcr_long
  # The exact table alone (ADI_LONG_TRUNCATED=0: what the plan re-solves with): its rows' tests
  # still pass where they assert the table's own picks.
  echo "### test_tridiagonal_cuda_dispatch with ADI_LONG_TRUNCATED=0" >>"$out/tests.log"
  if ADI_LONG_TRUNCATED=0 timeout 100 "$build/tests/test_tridiagonal_cuda_dispatch" >"$out/tests_switch.log" 2>&1; then
    note "test_tridiagonal_cuda_dispatch, ADI_LONG_TRUNCATED=0: passed"
  else
    note "test_tridiagonal_cuda_dispatch, ADI_LONG_TRUNCATED=0: failed (expected only in RowsPerCard, which" \
         "asserts automatic's truncated picks; see tests_switch.log)"
    grep -m4 -B2 -A8 'Failure$' "$out/tests_switch.log" | head -40 | tee -a "$summary"
  fi
  cat "$out/tests_switch.log" >>"$out/tests.log"
  note "tests: $(( $(date +%s) - t0 )) s"
  : >"$out/sanitizer.log"
  run_sanitizer "$out/sanitizer.log" 90 memcheck "$build/tests/test_thomas_truncated" 'CudaThomasTruncated.SanitizerSmall'
fi

section() { echo; echo "=== $*"; }
{
  [ -s "$out/failures.txt" ] && { section "first test failures (failures.txt)"; head -30 "$out/failures.txt"; }
  section "A/B: cuda_thomas_truncated vs cuda_thomas_pcr_long, two passes (bench_ab.log)"
  grep -E "^(device|copy)" "$out/bench_ab.log" 2>/dev/null | sort -u | head -6
  echo "(bands: mpi = bench_mpi's (b in [3,4]), bench = this bench's weaker ones, -s shared; taken = no: the kernel refused a line, its plan row then includes the exact re-solve)"
  grep -E "^### pass|^grid|^128x128|^1 x " "$out/bench_ab.log" 2>/dev/null
  if [ -s "$out/unchecked.log" ]; then
    section "unchecked plans, ADI_TRUNCATED_UNCHECKED=0 / 1 (unchecked.log: the dense boxes' summary rows)"
    awk '/^### pass/ {print; next} /target 85% of copy/ {on = 1; next} /^== / {on = 0} on && NF' "$out/unchecked.log"
    grep -E " mpi +(cuda_thomas_truncated|automatic|truncated kernel form 3)" "$out/unchecked_truncated.log"
  fi
  section "summary"
  cat "$summary"
} 2>&1 | tee "$out/tables.txt"
exit $status
