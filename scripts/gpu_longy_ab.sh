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
#   OUT=... scripts/gpu_longy_ab.sh [--no-build] [--no-tests] [--no-bench] [--build-dir DIR]
#
# Logs under $OUT/longy_ab: build.log, bench_ab.log, tests.log, sanitizer.log, summary.txt; the
# tables last (also tables.txt).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}/longy_ab
build=$root/build-longy
do_build=1 do_tests=1 do_bench=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --no-tests) do_tests=0 ;;
    --no-bench) do_bench=0 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
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
  section "summary"
  cat "$summary"
} 2>&1 | tee "$out/tables.txt"
exit $status
