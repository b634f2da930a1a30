#!/usr/bin/env bash
# Stop 39 (h-pivx, issue 23: the X-tile route, docs/pivoting.md "Stop 39 (h-pivx)"): ONE call,
# ~3-5 min on a fresh H100 / H200 with the build:
#   OUT=$OUT/xtile scripts/gpu_pivoting_check.sh --xtile
# builds bench_cuda_pivoting, test_pivoting_xtile_cuda, test_pivoting_xtile (host) and
# test_pivoting_cuda only; runs bench_cuda_pivoting --xtile=1 first (256^3 X lines, fp32 / fp64,
# dominant and Toeplitz 0.6 bands: the thread route forced, the tile route (automatic's on X to
# stop 39) and the xtile route's store and recompute forms (recompute with 64-byte chunks:
# automatic's on X since stop 40) with 64- and 32-byte chunks, ADI_PIVOTING_XTILE_BYTES, alternating, best
# of 3 medians of 20; % of copy counting 5 arrays, the copy measured in the run), then
# test_pivoting_xtile_cuda (bit for bit against the thread route, within 10x of LAPACKE, sizes
# 1 .. 257, partial warps and blocks, shared bands, in place; a singular line named), the host
# emulation test, PivotingCuda.ForcedRoutesWithinTenTimesLapack (xtile added), and compute-sanitizer
# memcheck and racecheck on PivotingXtileCuda.Small. Tables at the end: read the bench's "xtile"
# rows against "tile route forced" and "thread route forced".
# Stop 38 (h-regpart, issue 23: the register partition route, docs/pivoting.md "Stop 38 (h-regpart)"):
# ONE call, ~3-5 min on a fresh H100 / H200 with the build:
#   OUT=$OUT/regpart scripts/gpu_pivoting_check.sh --regpart
# builds bench_cuda_pivoting, test_pivoting_regpart_cuda, test_pivoting_regpart (host) and
# test_pivoting_cuda only; runs bench_cuda_pivoting --regpart=1 first (256^3, Y / Z / X, fp32 / fp64,
# dominant bands: the thread route forced against the regpart route forced, with the default,
# half and twice the lines a block, ADI_PIVOTING_REGPART_LINES=narrow|wide, alternating, best of 3 medians of 20; % of copy counting 5
# arrays, the copy measured in the run), then test_pivoting_regpart_cuda (every family / size /
# layout against LAPACKE within 10x), PivotingCuda.ForcedRoutesWithinTenTimesLapack (the other
# routes, the enum changed), the host test with its accuracy table (ADI_REGPART_VERBOSE=1), and
# compute-sanitizer memcheck on PivotingRegPartCuda.Small. Tables at the end: read the bench's
# "regpart route forced" rows against "thread route forced" (target 70% of copy on Y/Z).
# Stop 37 (h-autoflag, issue 23: the large plan's automatic solve within 5% of the unchecked one;
# docs/pivoting.md "Stop 37"): ONE call, ~4-5 min on a fresh H100 / H200 with the build:
#   OUT=$OUT/autoflag scripts/gpu_pivoting_check.sh --stop37
# builds bench_cuda_pivoting, test_partition_large_cuda, test_large_tridiagonal_nondominant,
# test_pivoting_cuda only; runs
# bench_cuda_pivoting --stop37=1 first (one system of 2^24 and 2^20, fp32 / fp64: pivoting none
# against automatic, and the checked kernels without the synchronisation, for each form of
# ADI_LARGE_CHECK_FORM = 0 stop 32's kernels | 1 the fused check (the default) | 2 fused without
# pass 1's register hold, alternating, best of 3 medians of 20; automatic with the fall-back decided
# on the device, ADI_PIVOTING_FALLBACK=device, check_pivots off / on; TridiagonalPlan's large
# route), then test_partition_large_cuda (the emulated forms agree bit for bit and on the flagged
# row; DeviceCheckFormsAgree; DeviceFallbackDecidedOnDevice), test_large_tridiagonal_nondominant,
# the large plans' fall-back tests of test_pivoting_cuda under each form
# (LargePlanAutomaticFlag: unsafe systems re-solved within 10x LAPACK, named with pivoting none;
# LargeRouteFlagReusedPlan; AutomaticFallBackErrors: a singular system named), compute-sanitizer
# memcheck on LargePlanAutomaticFlag (form 1), DeviceFallbackDecidedOnDevice (the opt-in
# ADI_PIVOTING_FALLBACK=device path: partition, condition kernel, IF node with the pivoting solve)
# and DeviceCheckFormsAgree. Tables at the end; read "Stop 37": "automatic +x% (whole) = kernels
# +y% + sync +z%" per form (aim: form 1 <= 5% at 2^24) and "device fall-back: check_pivots off"
# (no synchronisation: what 2^20 can reach).
# Stop 37: the graph gate of the refinement (ADI_PIVOTING_REFINE_GATE=graph) is removed, and with
# it the --stop36 and --stop35-memcheck modes (compute-sanitizer memcheck of its IF node's body,
# one variant a process: graph cache, no cache, syncs, no IF node, kept arrays, created stream):
# their diagnosis and tables live in docs/pivoting.md "Stop 35", "Stop 36" and "Stop 37"
# (git show 2f8ca14:scripts/gpu_pivoting_check.sh for the code).
# Stop 35 (h-refgate, issue 23: the refinement's gate; docs/pivoting.md "Stop 35"): ONE call,
# ~4-6 min on a fresh H100 / H200 with the build:
#   OUT=$OUT/refgate scripts/gpu_pivoting_check.sh --stop35
# builds test_pivoting_cuda and bench_cuda_pivoting only; runs bench_cuda_pivoting --stop35 first
# (one system of 2^24 and 2^20, fp32 / fp64, LargeTridiagonalPlan partial, out of place: the route
# without the test, the default, the dominance test + refinement under each gate of
# ADI_PIVOTING_REFINE_GATE = launches (stop 34's) | solve (the graph gate: removed at stop 37),
# on dominant bands (nothing flagged: the gate's cost), Toeplitz 0.6 (refined) and heat r = 1e4
# (never flagged), alternating, best of 3 medians of 20; gtsv2; the solve gate with new pointers
# each solve), then the whole test_pivoting_cuda and compute-sanitizer memcheck on
# PivotingCuda.PartitionFormsSmall and
# PivotingCuda.PartitionRefinementGatesAgree (every gate, graphs evicted and rebuilt). Tables at
# the end; what to read: "Stop 35: the refinement's gate" (solve's % on the dominant rows: aim
# <= 0% at 2^24), the Toeplitz rows (refined under every gate, ~2x the route), test lines.
# Stop 34, refinement (h-refine, not yet run on a GPU): the same call,
#   OUT=$OUT/refine scripts/gpu_pivoting_check.sh --stop34
# now also runs PivotingCuda.PartitionRefinementWithinTenTimesLapack (dominance test opted in:
# flagged lines refined out of place, the fall-back in place; large plan 2^20 + 1), memcheck of
# PartitionFormsSmall covers the refinement's kernels (its "1d" pass, out of place), the host
# sweep prints PivotingPartition.RefinementBringsFlaggedLinesWithinTenTimesLapack's lines, and the
# bench's Toeplitz 0.6 / heat rows are default / "dominance test + refinement" / in place (fall-back).
# Stop 34 (h-piv5, issue 23: the partition route's accuracy on long non-dominant lines): ONE call
# (~6-8 min on a fresh H100 / H200 with the build), the dominance test's A/B in the same run:
#   OUT=$OUT/piv5 scripts/gpu_pivoting_check.sh --stop34
# builds test_pivoting_cuda, test_pivoting_cpu and bench_cuda_pivoting only; runs the one-system
# rows first (2^24, 2^20: form 0, form 1 = the default, form 1 with the dominance test opted in via
# ADI_PIVOTING_PARTITION_DOMINANCE=1, alternating, best of 3 medians of 20;
# gtsv2; the large plan's automatic against none), then PivotingPartition.* of test_pivoting_cpu
# (the host sweep: lines flagged per family), the whole test_pivoting_cuda (with the restored
# LAPACK comparison on forced short lines, PartitionRouteForcedWithinTenTimesLapack), and
# compute-sanitizer memcheck on PivotingCuda.PartitionFormsSmall (the reduce with the test, the
# fill on dominant lines, the fall-back). Tables at the end; what to read: "dominance test +x%"
# (its cost, target within a few %), the speed-ups against gtsv2 (form 1 rows), test lines.
# Stop 33 (h-piv4): ONE focused call, old against new (the partition route's form 0 against
# form 1, the default since stop 33; ADI_PIVOTING_PARTITION_FORM, solvers/cuda/pivoting_partition.cuh):
#   OUT=$OUT/piv4_ab scripts/gpu_pivoting_check.sh --ab
# (--ab-quick: the whole test_pivoting_cuda, without memcheck, the 256^3 bench and Nsight Compute:
# ~4-5 min with the build)
# builds test_pivoting_cuda and bench_cuda_pivoting only (skipped with --no-build after a
# --build-only), runs the partition route's tests (both forms; memcheck on PartitionFormsSmall),
# the one-system rows (2^24, 2^20: forms alternating, gtsv2, the non-pivoting large plan), the
# 256^3 routes, and with ncu the kernels of one 2^24 fp32 solve with forms 0 and 1; tables at the end.
# The full check as at stop 32 (three calls):
#   OUT=$OUT/piv4_build scripts/gpu_pivoting_check.sh --build-only --with-nocheck
#   OUT=$OUT/piv4_tests scripts/gpu_pivoting_check.sh --no-build --tests-only
#   OUT=$OUT/piv4_bench scripts/gpu_pivoting_check.sh --no-build --bench-only --with-nocheck
# (stop 32: the large plan's flag in pinned host memory, PivotingCuda.LargePlanAutomaticFlag; the
# check's cost table at the end, "A / B / whole" per row, each the best of COST_PASSES + 1 runs of
# the checked and the -DADI_THOMAS_CHECK=0 bench, interleaved.)
# The pivoting GPU check of issue 23, for one H100 or H200 (< 6 min on 16 cores):
#   1. builds the pivoting targets with CUDA (sm_90, no VTK, no MPI);
#   2. runs test_pivoting_cuda (every route of cuda_pivoting against LAPACKE ?gtsv / ?gesv)
#      and part of test_pivoting_cpu (the partition method's core, the checks), and the
#      plans' CUDA tests (PLAN_TESTS: stop 30 changed how every checked CUDA solve reads its flag),
#      and (stop 31: the device check in every kernel automatic picks) each kernel's own CUDA
#      suite and test_scheme_cuda;
#   3. compute-sanitizer memcheck on PivotingCuda.EveryRouteSmall (tile, thread, partition),
#      StagedSmall (the staged kernel, forced), IssueTableCasesThrowWithoutPivoting,
#      VariableBatchCheckNamesTheSystem and AutomaticFallBack{ReusedPlan,Errors}
#      (automatic's gated fall-back), racecheck on PivotingCuda.StagedSmall;
#   4. bench_cuda_pivoting: 256^3 per axis and one system of 2^24 and 2^20, fp32 / fp64,
#      against the non-pivoting kernels, cuSPARSE gtsv2 / gtsv2_nopivot, as % of the copy
#      bandwidth measured in the same run; the check's cost per precision and axis
#      (automatic against Thomas without a flag, check_pivots off and on);
#   5. with --ncu, Nsight Compute (if ncu runs here) on the first launch of each pivoting kernel:
#      duration, DRAM and SM throughput, occupancy, registers (one line per kernel);
# then prints the tables (the bench table last). Logs under $OUT, tarred into
# $OUT/gpu_pivoting_logs.tgz.
#   OUT=/tmp/out scripts/gpu_pivoting_check.sh [--build-only | --no-build] [--with-nocheck] [--ncu]
#                                               [--tests-only | --bench-only] [--ab | --ab-quick]
#   (--build-only, then --no-build: two calls where one 10-minute device call is too short)
#   --with-nocheck: also builds bench_cuda_pivoting with -DADI_THOMAS_CHECK=0 and runs it
#   (the cost of the stability checks = the ratio of the automatic rows; +3-4 min), then
#   COST_PASSES (default 2) more runs of each bench with --routes=0 --cusparse=0 (the check's
#   rows only), alternating builds: the cost table takes each row's best run (the two builds
#   differed by +-3% on identical code in single runs at stop 31).
set -u
OUT=${OUT:-$PWD/out/gpu_pivoting}
mkdir -p "$OUT"
B=${BUILD_DIR:-build-piv}
B0=build-piv-nocheck
build=1
run=1
nocheck=0
tests=1
benches=1  # --tests-only / --bench-only: half of a --no-build run (each well under 10 minutes)
ncu=0  # --ncu: the Nsight Compute table of the pivoting kernels (unchanged at stop 31; +90 s)
ab=0   # --ab: the focused old / new call of stop 33 (see the top)
abq=0  # --ab-quick: --ab with the whole test_pivoting_cuda, without memcheck, the 256^3 bench, ncu
s34=0  # --stop34: see the top (--ab with the whole suite, the host sweep and memcheck; no 256^3, ncu, plan suites)
s35=0  # --stop35: see the top (the refinement's gate: bench --stop35, the whole test_pivoting_cuda, memcheck)
s37=0  # --stop37: see the top (the large plan's check: fused form A/B, its tests, memcheck)
s38=0  # --regpart: see the top (the register partition route: bench A/B, its tests, memcheck)
s39=0  # --xtile: see the top (the X-tile route: bench A/B, its tests, memcheck + racecheck)
for arg in "$@"; do
  case $arg in
    --stop37) s37=1 ;;
    --regpart) s38=1 ;;
    --xtile) s39=1 ;;
    --stop34) ab=1; s34=1 ;;
    --stop35) s35=1 ;;
    --ab) ab=1 ;;
    --ab-quick) ab=1; abq=1 ;;
    --no-build) build=0 ;;
    --build-only) run=0 ;;
    --with-nocheck) nocheck=1 ;;
    --ncu) ncu=1 ;;
    --tests-only) benches=0 ;;
    --bench-only) tests=0 ;;
    *) echo "unknown argument $arg"; exit 2 ;;
  esac
done
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
# The footer of every mode, one function (before stop 40 each mode carried its own copy of it):
# the first lines of each gtest failure in $OUT/test_*.log and in the given sanitizer logs, the
# sanitizer's own reports in those, and the lines of every log matching $FAILING_EXTRA (a regex,
# e.g. --stop35's "gate ... is unavailable"), under one heading; "none" where nothing failed.
failing_checks() {
  local text
  text=$({
    grep -h -A3 "Failure" "$OUT"/test_*.log "$@" 2> /dev/null | head -40
    grep -h "^========= " "$@" 2> /dev/null < /dev/null | grep -v "COMPUTE-SANITIZER\|ERROR SUMMARY\|RACECHECK SUMMARY" | head -10
    [ -n "${FAILING_EXTRA:-}" ] && grep -hE "$FAILING_EXTRA" "$OUT"/*.log 2> /dev/null | sort -u | head -5
  })
  echo
  echo "-- failing checks (first lines) --"
  if [ -n "$text" ]; then printf '%s\n' "$text"; else echo "none"; fi
}
TESTS="test_pivoting_cuda test_pivoting_cpu"
# Stop 30 changed how every checked CUDA TridiagonalPlan / LargeTridiagonalPlan solve reads its
# flag (pinned host memory) and the partition route's fall-back: the plans' own CUDA tests too.
PLAN_TESTS="test_plan_conventions_cuda test_large_tridiagonal_nondominant
  test_partition_large_cuda test_layout_safety test_tridiagonal_cuda_dispatch test_thomas_strided"
# Stop 31 (issue 23, no silent wrong answers): the device check now also sits in the Thomas-PCR
# hybrids' reduced PCR, their shared-band factors, the shared factors of the Thomas kernels, the
# variable-size core and the large partition: every kernel's own CUDA suite (dominant inputs: the
# check must not fire there) and the ADI schemes (the Operator's shared-band plans).
KERNEL_TESTS="test_thomas_pcr_hybrid test_thomas_pcr_strided test_thomas_pcr_long test_thomas_shared_transpose
  test_thomas_shuffle_transpose test_thomas_naive test_thomas_variable_cuda test_thomas_pcr_fused_stage
  test_interleaved_batch test_scheme_cuda"
PLAN_TESTS="$PLAN_TESTS $KERNEL_TESTS"
# -DADI_CUDA_UNROLL_ALL=ON: the forms this script compares (ADI_PIVOTING_ROUTE=staged|block|regpart,
# ADI_PIVOTING_PARTITION_FORM=0, ADI_LARGE_CHECK_FORM=0|2, and since stop 40 --xtile's
# ADI_PIVOTING_XTILE_FORM=store and ADI_PIVOTING_XTILE_BYTES=32) are compiled only with it (issue 15
# item 8). The default build's side (their tests skip, a forced form notes and runs the default):
# scripts/gpu_gated_forms_check.sh ONLY=piv.
configure() {  # dir, extra flags
  cmake -S . -B "$1" $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_EXAMPLES=OFF \
    -DADI_CUDA_UNROLL_ALL=ON \
    -DCMAKE_CXX_FLAGS="$2" -DCMAKE_CUDA_FLAGS="$2" > "$OUT/configure_$1.log" 2>&1 ||
    { echo "configure $1 failed"; tail -30 "$OUT/configure_$1.log"; exit 1; }
}
t0=$(date +%s)
find_bin() { find "$1" -name "$2" -type f -perm -u+x 2> /dev/null | head -1; }
# One table row per step: name, log, timeout, command...; the gtest counts and failures from its log.
step_row() {
  local name=$1 log=$2 limit=$3 t=$(date +%s) rc
  shift 3
  timeout "$limit" "$@" > "$OUT/$log" 2>&1
  rc=$?
  rows="$rows| $name | $([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)") in $(($(date +%s) - t)) s: $(grep -hE '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$log" | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/$log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ') |"$'\n'
}
if [ $s38 = 1 ] || [ $s39 = 1 ]; then
  # A forced route's A/B (--regpart: stop 38, --xtile: stop 39; see the top): the route's
  # targets first, test_pivoting_cuda in the background while the bench runs.
  if [ $s39 = 1 ]; then rt=xtile; suite=PivotingXtileCuda; else rt=regpart; suite=PivotingRegPartCuda; fi
  if [ $build = 1 ]; then
    configure $B ""
    cmake --build $B -j "$(nproc)" --target bench_cuda_pivoting test_pivoting_${rt}_cuda test_pivoting_$rt \
      > "$OUT/build.log" 2>&1 || { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
    cmake --build $B -j "$(nproc)" --target test_pivoting_cuda > "$OUT/build_tests.log" 2>&1 &
    tests_build=$!
  fi
  echo "build: $(($(date +%s) - t0)) s"
  [ $run = 0 ] && { wait; echo "built $B; run again with --$rt --no-build"; exit 0; }
  bench=$(find_bin $B bench_cuda_pivoting)
  rbin=$(find_bin $B test_pivoting_${rt}_cuda)
  hbin=$(find_bin $B test_pivoting_$rt)
  t1=$(date +%s)
  timeout 150 "$bench" --$rt=1 --reps=20 > "$OUT/bench_$rt.log" 2>&1
  brc=$?
  sed -n '/^Summary/,/^The check/p' "$OUT/bench_$rt.log" 2> /dev/null  # now too
  rows="| bench_cuda_pivoting --$rt=1 | rc $brc in $(($(date +%s) - t1)) s |"$'\n'
  san=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
  step_row "test_pivoting_${rt}_cuda (all)" test_pivoting_${rt}_cuda.log 150 "$rbin"
  step_row "memcheck $suite.Small" sanitizer.log 90 "$san" --tool memcheck --error-exitcode 99 "$rbin" \
    --gtest_filter="$suite.Small"
  [ $rt = xtile ] && step_row "racecheck $suite.Small" sanitizer_race.log 120 "$san" --tool racecheck \
    --error-exitcode 99 "$rbin" --gtest_filter="$suite.Small"
  step_row "test_pivoting_$rt (host)" test_pivoting_$rt.log 60 env ADI_REGPART_VERBOSE=1 "$hbin"
  [ -n "${tests_build:-}" ] && wait $tests_build
  step_row "test_pivoting_cuda ForcedRoutesWithinTenTimesLapack" test_pivoting_cuda.log 90 \
    "$(find_bin $B test_pivoting_cuda)" --gtest_filter='PivotingCuda.ForcedRoutesWithinTenTimesLapack'
  echo
  echo "== adi pivoting GPU check --$rt ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
  printf "%s" "$rows"
  failing_checks "$OUT"/sanitizer*.log
  if [ $rt = regpart ]; then
    echo; echo "-- host accuracy (regpart lines of 256: flagged lines go to the exact fall-back) --"
    grep -h "^regpart.* n   256:  60 lines" "$OUT/test_pivoting_regpart.log" 2> /dev/null | cut -c1-170
  fi
  echo; echo "-- 256^3, the $rt route against the others forced (bench --$rt=1; % of copy = 5 arrays) --"
  sed -n '/^device/p;/^copy bandwidth/p;/^Summary/,/^The check/p' "$OUT/bench_$rt.log" 2> /dev/null | grep -v "^The check"
  (cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
    mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
  exit 0
fi
if [ $s37 = 1 ]; then
  if [ $build = 1 ]; then
    configure $B ""
    cmake --build $B -j "$(nproc)" --target bench_cuda_pivoting test_partition_large_cuda test_large_tridiagonal_nondominant \
      > "$OUT/build.log" 2>&1 ||
      { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
    # test_pivoting_cuda while the bench runs (host cores; the bench's GPU rows are not disturbed).
    (cmake --build $B -j "$(nproc)" --target test_pivoting_cuda > "$OUT/build_tests.log" 2>&1; echo "rc $?" >> "$OUT/build_tests.log") &
    tests_build=$!
  fi
  echo "build: $(($(date +%s) - t0)) s"
  [ $run = 0 ] && { wait; echo "built $B; run again with --stop37 --no-build"; exit 0; }
  bench=$(find_bin $B bench_cuda_pivoting)
  lbin=$(find_bin $B test_partition_large_cuda)
  t1=$(date +%s)
  timeout 150 "$bench" --stop37=1 --reps=20 --large=24 --large2=20 > "$OUT/bench_stop37.log" 2>&1
  brc=$?
  sed -n '/^Stop 37: the large plan/,/^Partial pivoting/p' "$OUT/bench_stop37.log" 2> /dev/null  # now too
  bench_line="rc $brc in $(($(date +%s) - t1)) s"
  rows=""
  t1=$(date +%s)
  timeout 120 "$lbin" > "$OUT/test_partition_large_cuda.log" 2>&1
  rc=$?
  rows="$rows| test_partition_large_cuda (all) | $([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)") in $(($(date +%s) - t1)) s: $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/test_partition_large_cuda.log" | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/test_partition_large_cuda.log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ') |"$'\n'
  nbin=$(find_bin $B test_large_tridiagonal_nondominant)
  t1=$(date +%s)
  timeout 120 "$nbin" > "$OUT/test_large_tridiagonal_nondominant.log" 2>&1
  rc=$?
  rows="$rows| test_large_tridiagonal_nondominant (all) | $([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)") in $(($(date +%s) - t1)) s: $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/test_large_tridiagonal_nondominant.log" | tr '\n' ' ') |"$'\n'
  [ -n "${tests_build:-}" ] && wait $tests_build
  tbin=$(find_bin $B test_pivoting_cuda)
  pf='PivotingCuda.LargePlanAutomaticFlag:PivotingCuda.LargeRouteFlagReusedPlan:PivotingCuda.AutomaticFallBackErrors'
  for form in 0 1 2; do
    t1=$(date +%s)
    ADI_LARGE_CHECK_FORM=$form timeout 90 "$tbin" --gtest_filter="$pf" > "$OUT/test_pivoting_form$form.log" 2>&1
    rc=$?
    rows="$rows| test_pivoting_cuda large plans, ADI_LARGE_CHECK_FORM=$form | $([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)") in $(($(date +%s) - t1)) s: $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/test_pivoting_form$form.log" | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/test_pivoting_form$form.log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ') |"$'\n'
  done
  san=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
  t1=$(date +%s)
  timeout 100 "$san" --tool memcheck --error-exitcode 99 "$tbin" --gtest_filter='PivotingCuda.LargePlanAutomaticFlag' \
    > "$OUT/sanitizer.log" 2>&1
  rc=$?
  rows="$rows| memcheck LargePlanAutomaticFlag (form 1) | $([ $rc = 0 ] && echo clean || echo "ERRORS or timeout (rc $rc)") in $(($(date +%s) - t1)) s: $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.log" | tr '\n' ' ') |"$'\n'
  for mc in DeviceFallbackDecidedOnDevice DeviceCheckFormsAgree; do  # the IF node's body (stop 36's kind), the forms
    t1=$(date +%s)
    timeout 100 "$san" --tool memcheck --error-exitcode 99 "$lbin" --gtest_filter="*$mc*" > "$OUT/sanitizer_$mc.log" 2>&1
    rc=$?
    rows="$rows| memcheck $mc | $([ $rc = 0 ] && echo clean || echo "ERRORS or timeout (rc $rc)") in $(($(date +%s) - t1)) s: $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer_$mc.log" | tr '\n' ' ') $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/sanitizer_$mc.log" | tr '\n' ' ') |"$'\n'
  done
  rows="$rows| device fall-back graphs (test_partition_large_cuda) | built $(grep -c "device fall-back graph built" "$OUT/test_partition_large_cuda.log") (expect > 0), unavailable: $(grep -c 'graph is unavailable' "$OUT/test_partition_large_cuda.log") |"$'\n'
  echo
  echo "== adi pivoting GPU check --stop37 ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
  echo "| bench_cuda_pivoting --stop37 | $bench_line |"
  printf "%s" "$rows"
  failing_checks "$OUT"/sanitizer*.log
  echo; echo "-- one system, the large plan's check (bench --stop37 --reps=20; % of copy = 5 arrays) --"
  sed -n '/^device/p;/^copy bandwidth/p;/^Summary/,/^Partial pivoting/p' "$OUT/bench_stop37.log" 2> /dev/null
  (cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
    find . -maxdepth 1 -type f ! -name bench_stop37.log ! -name 'test_*.log' ! -name 'sanitizer*.log' -delete &&
    mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
  exit 0
fi
if [ $s35 = 1 ]; then
  if [ $build = 1 ]; then
    configure $B ""
    cmake --build $B -j "$(nproc)" --target test_pivoting_cuda bench_cuda_pivoting > "$OUT/build.log" 2>&1 ||
      { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  fi
  echo "build: $(($(date +%s) - t0)) s"
  [ $run = 0 ] && { echo "built $B; run again with --stop35 --no-build"; exit 0; }
  tbin=$(find_bin $B test_pivoting_cuda)
  bench=$(find_bin $B bench_cuda_pivoting)
  t1=$(date +%s)
  timeout 200 "$bench" --stop35=1 --reps=20 --large=24 --large2=20 > "$OUT/bench_stop35.log" 2>&1
  brc=$?
  sed -n '/^Stop 35: the refinement/,$p' "$OUT/bench_stop35.log" 2> /dev/null  # now too, in case the call is cut short
  bench_line="rc $brc in $(($(date +%s) - t1)) s"
  t1=$(date +%s)
  timeout 200 "$tbin" > "$OUT/test_pivoting_cuda.log" 2>&1
  trc=$?
  tests_line="$([ $trc = 0 ] && echo pass || echo "FAIL (rc $trc)") in $(($(date +%s) - t1)) s: $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/test_pivoting_cuda.log" | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/test_pivoting_cuda.log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ')"
  san=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
  t1=$(date +%s)
  timeout 240 "$san" --tool memcheck --error-exitcode 99 "$tbin" \
    --gtest_filter='PivotingCuda.PartitionFormsSmall:PivotingCuda.PartitionRefinementGatesAgree' > "$OUT/sanitizer.log" 2>&1
  src=$?
  san_line="$([ $src = 0 ] && echo clean || echo "ERRORS or timeout (rc $src)") in $(($(date +%s) - t1)) s: $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.log" | tr '\n' ' ') $(grep -E '^\[  (PASSED|FAILED)  \]' "$OUT/sanitizer.log" | tr '\n' ' ')"
  echo
  echo "== adi pivoting GPU check --stop35 ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
  echo "| bench_cuda_pivoting --stop35 | $bench_line |"
  echo "| test_pivoting_cuda (all) | $tests_line |"
  echo "| memcheck PivotingCuda.PartitionFormsSmall:PartitionRefinementGatesAgree | $san_line |"
  echo "| per test | $(grep -E '^\[       OK \] PivotingCuda.Partition(Refinement|Dominance)' "$OUT/test_pivoting_cuda.log" | sed 's/\[       OK \] PivotingCuda.//' | tr '\n' ' ') |"
  FAILING_EXTRA="gate.* is unavailable" failing_checks "$OUT/sanitizer.log"
  echo; echo "-- one system, the refinement's gate (bench --stop35 --reps=20; % of copy = 5 arrays) --"
  sed -n '/^device/p;/^copy bandwidth/p;/^Summary/,$p' "$OUT/bench_stop35.log" 2> /dev/null
  # Every log in the tarball; the bench, test and memcheck logs also as they are (4 files back).
  (cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
    find . -maxdepth 1 -type f ! -name bench_stop35.log ! -name test_pivoting_cuda.log ! -name sanitizer.log -delete &&
    mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
  exit 0
fi
if [ $ab = 1 ]; then
  # TridiagonalPlan's large route publishes its check into pinned memory (stop 33): its tests.
  AB_PLAN_TESTS="test_large_tridiagonal_nondominant test_plan_conventions_cuda test_partition_large_cuda"
  [ $s34 = 1 ] && AB_PLAN_TESTS="test_pivoting_cpu"  # stop 34 changed the pivoting route only
  if [ $build = 1 ]; then
    configure $B ""
    cmake --build $B -j "$(nproc)" --target test_pivoting_cuda bench_cuda_pivoting $AB_PLAN_TESTS > "$OUT/build.log" 2>&1 ||
      { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  fi
  echo "build: $(($(date +%s) - t0)) s"
  tbin=$(find_bin $B test_pivoting_cuda)
  bench=$(find_bin $B bench_cuda_pivoting)
  # The numbers first (printed now too, in case the call is cut short).
  timeout 240 "$bench" --reps=20 --n=0 --large=24 --large2=20 > "$OUT/bench_large.log" 2>&1
  sed -n '/^Partial pivoting against/,$p' "$OUT/bench_large.log" 2> /dev/null
  t1=$(date +%s)
  tfilter='PivotingCuda.Partition*:PivotingCuda.EveryRouteSmall:PivotingCuda.LargePlan*:PivotingCuda.LargeRoute*:PivotingCuda.SingularLineThrowsOnEveryRoute:PivotingCuda.OneLineOfAMillion:PivotingCuda.IssueTableCasesThrowWithoutPivoting:PivotingCuda.AutomaticFallBackErrors:PivotingCuda.CheckNeverFiresOnDominantSystems'
  [ $abq = 1 ] && tfilter='*'  # the default form changed (stop 33): the whole suite
  [ $s34 = 1 ] && tfilter='*'  # stop 34: which lines take the fall-back changed
  host_line=""
  if [ $s34 = 1 ]; then  # the host sweep first (seconds): lines flagged per family, before / after
    hbin=$(find_bin $B test_pivoting_cpu)
    timeout 120 "$hbin" --gtest_filter='PivotingPartition.*' > "$OUT/test_pivoting_cpu_partition.log" 2>&1
    hrc=$?
    host_line="$([ $hrc = 0 ] && echo pass || echo "FAIL (rc $hrc)"): $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]+ test' "$OUT/test_pivoting_cpu_partition.log" | tr '\n' ' ')"
  fi
  tlimit=300
  [ $s34 = 1 ] && tlimit=300  # stop 34: the call's 10 minutes (build ~3, bench ~1.5, memcheck <= 2)
  timeout $tlimit "$tbin" --gtest_filter="$tfilter" > "$OUT/test_pivoting_cuda.log" 2>&1
  trc=$?
  tests_line="$([ $trc = 0 ] && echo pass || echo "FAIL (rc $trc)") in $(($(date +%s) - t1)) s: $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/test_pivoting_cuda.log" | tr '\n' ' ') $(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/test_pivoting_cuda.log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ')"
  plan_lines=""
  for t in $AB_PLAN_TESTS; do
    [ $s34 = 1 ] && break  # stop 34: test_pivoting_cpu's partition tests ran above
    bin=$(find_bin $B $t)
    [ -n "$bin" ] || { plan_lines="$plan_lines| $t | not built |"$'\n'; continue; }
    timeout 200 "$bin" > "$OUT/$t.log" 2>&1
    rc=$?
    plan_lines="$plan_lines| $t | $([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)"): $(grep -E '^\[  (PASSED|SKIPPED|FAILED)  \] [0-9]+ test' "$OUT/$t.log" | tr '\n' ' ') |"$'\n'
  done
  san_line="not run (--ab-quick)"
  if [ $abq = 0 ]; then
    san=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
    timeout $([ $s34 = 1 ] && echo 120 || echo 150) "$san" --tool memcheck --error-exitcode 99 "$tbin" --gtest_filter='PivotingCuda.PartitionFormsSmall' \
      > "$OUT/sanitizer.log" 2>&1
    src=$?
    san_line="$([ $src = 0 ] && echo clean || echo "ERRORS or timeout (rc $src)"): $(grep -h 'ERROR SUMMARY' "$OUT/sanitizer.log" | tr '\n' ' ')"
    [ $s34 = 0 ] && timeout 240 "$bench" --reps=10 --n=256 --large=0 --large2=0 --checkcost=0 > "$OUT/bench_box.log" 2>&1
  fi
  NCU=""
  [ $abq = 0 ] && [ $s34 = 0 ] && NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
  if [ -n "$NCU" ]; then
    M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__bytes.sum,smsp__inst_executed.sum
    for f in 0 1; do  # the second solve's 12 kernels (bench --profile)
      timeout 90 "$NCU" --csv --metrics $M --kernel-name-base demangled --kernel-name regex:pivoting_ \
        --launch-skip 12 --launch-count 12 \
        "$bench" --profile=$f --large=24 > "$OUT/ncu_form$f.csv" 2>> "$OUT/ncu.err"
    done
  fi
  echo
  echo "== adi pivoting GPU check $([ $s34 = 1 ] && echo --stop34 || echo --ab) ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
  echo "| test_pivoting_cuda ($tfilter) | $tests_line |"
  [ $s34 = 1 ] && echo "| test_pivoting_cpu (PivotingPartition.*, host) | $host_line |"
  printf "%s" "$plan_lines"
  echo "| memcheck PivotingCuda.PartitionFormsSmall | $san_line |"
  failing_checks
  if [ $s34 = 1 ]; then
    echo; echo "-- host sweep (PivotingPartition.LongLinesWithinTenTimesLapackOrFlagged, then RefinementBringsFlaggedLines...) --"
    grep -E '^  fp(32|64) ' "$OUT/test_pivoting_cpu_partition.log" 2> /dev/null
    echo; echo "-- the dominance test's cost (form 1 with / without, same run; with: + the refinement's empty launches) --"
    grep -h "dominance test (=1) *[+-]\|, partial: default" "$OUT/bench_large.log" 2> /dev/null
  fi
  for f in 0 1; do
    [ -s "$OUT/ncu_form$f.csv" ] || continue
    echo; echo "-- Nsight Compute: the kernels of one 2^24 fp32 partial solve, form $f ($gpu) --"
    python3 - "$OUT/ncu_form$f.csv" << 'PY'
import csv, sys, re
rows, order, head = {}, [], None
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if r[0] == "ID": head = r; continue
    h = dict(zip(head, r))
    k = (h["ID"], h["Kernel Name"], h["Grid Size"])
    if k not in rows: rows[k] = {}; order.append(k)
    rows[k][h["Metric Name"]] = (h["Metric Value"], h.get("Metric Unit", ""))
def val(m, n, scale=None):
    v, u = m.get(n, ("0", ""))
    x = float(v.replace(",", "") or 0)
    if scale: x *= scale.get(u, 1)
    return x
print("%-36s %10s %9s %6s %6s %6s %4s %9s %10s" % ("kernel", "grid", "time us", "DRAM%", "SM%", "warps%", "regs", "DRAM MB", "inst (M)"))
tot = 0
for k in order:
    m = rows[k]
    t = val(m, "gpu__time_duration.sum", {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1, "us": 1, "msecond": 1e3, "ms": 1e3})
    tot += t
    mb = val(m, "dram__bytes.sum", {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1, "Gbyte": 1e3, "B": 1e-6, "KB": 1e-3, "MB": 1, "GB": 1e3})
    name = re.sub(r"^void |adi::cuda_backend::kernels::|pivoting_partition_|\(.*", "", k[1])[:36]
    print("%-36s %10s %9.1f %6.1f %6.1f %6.1f %4d %9.1f %10.2f" % (name, k[2], t, val(m, "dram__throughput.avg.pct_of_peak_sustained_elapsed"),
          val(m, "sm__throughput.avg.pct_of_peak_sustained_elapsed"), val(m, "sm__warps_active.avg.pct_of_peak_sustained_active"),
          val(m, "launch__registers_per_thread"), mb, val(m, "smsp__inst_executed.sum") / 1e6))
print("%-36s %10s %9.1f  (kernel time only; no launch gaps)" % ("sum", "", tot))
PY
  done
  echo
  echo "-- one system (bench --n=0 --large=24 --large2=20 --reps=20; % of copy = 5 arrays) --"
  sed -n '/^copy bandwidth/p;/^Summary/,$p' "$OUT/bench_large.log" 2> /dev/null
  [ $s34 = 1 ] || echo
  [ $s34 = 1 ] || echo "-- 256^3 routes (bench --n=256 --checkcost=0 --reps=10) --"
  sed -n '/^copy bandwidth/p;/^Summary/,/^The check/p' "$OUT/bench_box.log" 2> /dev/null | grep -v "^The check"
  sed -n '/^Partial pivoting against/,$p' "$OUT/bench_box.log" 2> /dev/null
  (cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
    find . -maxdepth 1 -type f -delete && mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
  exit 0
fi
if [ $build = 1 ]; then
  configure $B ""
  cmake --build $B -j "$(nproc)" --target $TESTS $PLAN_TESTS bench_cuda_pivoting > "$OUT/build.log" 2>&1 ||
    { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  if [ $nocheck = 1 ]; then
    configure $B0 "-DADI_THOMAS_CHECK=0"
    cmake --build $B0 -j "$(nproc)" --target bench_cuda_pivoting > "$OUT/build_nocheck.log" 2>&1 ||
      { echo "build (no check) failed"; grep -m 20 -B2 -A8 "error" "$OUT/build_nocheck.log"; exit 1; }
  fi
fi
echo "build: $(($(date +%s) - t0)) s"
[ $run = 0 ] && { echo "built $B; run again with --no-build"; exit 0; }
declare -A result
[ $tests = 1 ] || { TESTS=""; PLAN_TESTS=""; }
for t in $TESTS $PLAN_TESTS; do
  bin=$(find_bin $B $t)
  if [ -z "$bin" ]; then result[$t]="not built"; continue; fi
  t1=$(date +%s)
  filter="*"
  # The host suite's layout sweep runs in CI; here: the partition core and the checks.
  [ $t = test_pivoting_cpu ] && filter='PivotingPartition.*:Pivoting.*:UnsafeThomas.*:PivotingHostLarge.*'
  timeout 300 "$bin" --gtest_filter="$filter" > "$OUT/$t.log" 2>&1
  rc=$?
  summary=$(grep -E '^\[  (PASSED|SKIPPED|FAILED) ' "$OUT/$t.log" | tr '\n' ' ')
  failed=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/$t.log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ')
  result[$t]="$([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)") in $(($(date +%s) - t1)) s: $summary $failed"
done
# compute-sanitizer (scripts/gtest_runs.sh run_sanitizer): memcheck on one small case per
# route, the staged kernel and automatic's gated device fall-back (stop 30); racecheck on the
# staged kernel (cp.async + barriers).
summary=$OUT/sanitizer_summary.txt
: > "$summary"
status=0
. "$(dirname "$0")/gtest_runs.sh"
note() { echo "$*" >> "$summary"; }  # (after gtest_runs.sh's printing note: this one only appends)
sanitizer="not run"
if [ $tests = 1 ] && [ -n "$(find_bin $B test_pivoting_cuda)" ]; then
  tbin=$(find_bin $B test_pivoting_cuda)
  run_sanitizer "$OUT/sanitizer.log" 300 memcheck "$tbin" \
    'PivotingCuda.EveryRouteSmall:PivotingCuda.StagedSmall:PivotingCuda.AutomaticFallBackReusedPlan:PivotingCuda.AutomaticFallBackErrors:PivotingCuda.IssueTableCasesThrowWithoutPivoting:PivotingCuda.VariableBatchCheckNamesTheSystem:PivotingCuda.LargePlanAutomaticFlag:PivotingCuda.PartitionFormsSmall'
  run_sanitizer "$OUT/sanitizer.log" 60 racecheck "$tbin" 'PivotingCuda.StagedSmall'
  # The partition route's forms (stop 33).
  run_sanitizer "$OUT/sanitizer.log" 150 racecheck "$tbin" 'PivotingCuda.PartitionFormsSmall'
  sanitizer="$([ $status = 0 ] && echo pass || echo FAIL): $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$OUT/sanitizer.log" | tr '\n' ' ')"
fi
bench=$(find_bin $B bench_cuda_pivoting)
[ $benches = 1 ] || bench=""
[ -n "$bench" ] && timeout 300 "$bench" --reps=10 > "$OUT/bench_pivoting.log" 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
if [ $ncu = 1 ] && [ -n "$bench" ] && [ -n "$NCU" ]; then
  M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__bytes.sum,smsp__inst_executed.sum
  # The first launch of each kernel instance: the 256^3 box, then one system of 2^24 apart
  # (the partition route's kernels run in both).
  for size in "--n=256 --large=0" "--n=0 --large=24"; do
    timeout 45 "$NCU" --csv --metrics $M --kernel-name-base demangled --kernel-id '::regex:pivoting_:1' \
      --launch-count 24 "$bench" --reps=1 --cusparse=0 --checkcost=0 $size --large2=0 >> "$OUT/ncu.csv" 2>> "$OUT/ncu.err"
  done
fi
if [ $benches = 1 ] && [ $nocheck = 1 ] && [ -n "$(find_bin $B0 bench_cuda_pivoting)" ]; then
  timeout 300 "$(find_bin $B0 bench_cuda_pivoting)" --reps=10 > "$OUT/bench_pivoting_nocheck.log" 2>&1
  # The check's rows again, alternating builds (bench_cost_<pass>_{check,nocheck}.log).
  for pass in $(seq 1 "${COST_PASSES:-2}"); do
    [ -n "$bench" ] && timeout 120 "$bench" --reps=10 --routes=0 --cusparse=0 > "$OUT/bench_cost_${pass}_check.log" 2>&1
    timeout 120 "$(find_bin $B0 bench_cuda_pivoting)" --reps=10 --routes=0 --cusparse=0 \
      > "$OUT/bench_cost_${pass}_nocheck.log" 2>&1
  done
fi
echo
echo "== adi pivoting GPU check ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
echo "| step | result |"
echo "|---|---|"
for t in $TESTS $PLAN_TESTS; do echo "| $t | ${result[$t]} |"; done
echo "| compute-sanitizer (memcheck: EveryRouteSmall, StagedSmall, AutomaticFallBack{ReusedPlan,Errors}, IssueTableCasesThrowWithoutPivoting, VariableBatchCheckNamesTheSystem, LargePlanAutomaticFlag, PartitionFormsSmall; racecheck: StagedSmall, PartitionFormsSmall) | $sanitizer |"
sed 's/^/  /' "$summary"
echo
failing_checks
if [ -s "$OUT/ncu.csv" ] && command -v python3 > /dev/null; then
  echo
  echo "-- Nsight Compute, first launch of each pivoting kernel ($gpu; bench --reps=1) --"
  python3 - "$OUT/ncu.csv" << 'PY'
import csv, sys, re
rows = {}
order = []
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if r[0] == "ID": head = r; continue
    h = dict(zip(head, r))
    k = (h["ID"], h["Kernel Name"], h["Grid Size"], h["Block Size"])
    if k not in rows: rows[k] = {}; order.append(k)
    rows[k][h["Metric Name"]] = h["Metric Value"] + " " + h.get("Metric Unit", "")
print("%-44s %12s %7s %6s %6s %4s %10s" % ("kernel", "time", "DRAM%", "SM%", "warps%", "regs", "DRAM bytes"))
for k in order:
    m = rows[k]
    g = lambda n: m.get(n, "?").split(" ")[0]
    name = re.sub(r"^void |adi::cuda_backend::kernels::|\(.*", "", k[1])[:44]
    print("%-44s %8s %3s %7s %6s %6s %4s %10s" % (name, g("gpu__time_duration.sum"), m.get("gpu__time_duration.sum", "? ?").split(" ")[1][:3],
          g("dram__throughput.avg.pct_of_peak_sustained_elapsed"), g("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
          g("sm__warps_active.avg.pct_of_peak_sustained_active"), g("launch__registers_per_thread"), g("dram__bytes.sum")))
PY
elif [ $ncu = 1 ] && [ -n "${NCU:-}" ]; then
  echo; echo "-- Nsight Compute: no result ($(head -c 300 "$OUT/ncu.err" 2> /dev/null)) --"
fi
echo
echo "-- bench_cuda_pivoting ($gpu) --"
sed -n '/^copy bandwidth/p;/^Summary/,$p' "$OUT/bench_pivoting.log" 2> /dev/null
if [ -f "$OUT/bench_pivoting_nocheck.log" ]; then
  echo "-- bench_cuda_pivoting, -DADI_THOMAS_CHECK=0 (the automatic rows without the checks) --"
  sed -n '/^Summary/,$p' "$OUT/bench_pivoting_nocheck.log"
  # The checks' cost (same card, same call), each row the best of the full run and the
  # COST_PASSES check-only runs of its build: A = automatic against Thomas with no flag, same
  # (checked) build: the flag and its synchronisation; B = Thomas with no flag, checked build
  # against the -DADI_THOMAS_CHECK=0 one: the tests' arithmetic; whole = automatic (checked)
  # against Thomas with no flag (no check): what the default costs (target <= 5%).
  echo
  echo "-- the check's cost, best of $((${COST_PASSES:-2} + 1)) runs per build ($gpu; target: whole <= 5%) --"
  python3 - "$OUT" << 'PY'
import glob, re, sys
def rows(build):  # row -> best ms over the build's runs
    out = {}
    for path in glob.glob(sys.argv[1] + "/bench_pivoting%s.log" % build) + \
            sorted(glob.glob(sys.argv[1] + "/bench_cost_*%s.log" % (build or "_check"))):
        for line in open(path):
            m = re.match(r"(\S.*?)\s+([0-9.]+) ms\s+[0-9]+ GB/s", line)
            if m:
                k, v = m.group(1).strip(), float(m.group(2))
                out[k] = min(out.get(k, v), v)
    return out
chk, non = rows(""), rows("_nocheck")
def find(table, prefix, what):
    for k, v in table.items():
        if k.startswith(prefix) and what in k and ("shared bands" in k) == ("shared bands" in prefix):
            return k, v
    return None, None
pct = lambda x, y: "%+6.1f%%" % (100 * (x / y - 1))
print("  %-36s %-20s %8s %8s %8s %8s  %7s %7s %7s %7s" % ("rows", "kernel", "none", "auto", "none", "none+cp", "A",
                                                           "B", "whole", "whole'"))
print("  %-36s %-20s %8s %8s %8s %8s" % ("", "", "checked", "checked", "no check", "no check"))
groups = []
for p in ("fp32", "fp64"):
    for ax in ("X", "Y", "Z"):
        for sb in ("", "shared bands, "):
            groups.append((p + " " + ax + " " + sb, "Thomas (", "automatic (+ check", "Thomas with check_pivots"))
    for lg in ("24", "20"):
        groups.append((p + " one system of 2^" + lg + " large plan, ", "pivoting none (partition)",
                       "pivoting automatic", "Thomas with check_pivots"))
for prefix, none_what, auto_what, cp_what in groups:
    kn, n_c = find(chk, prefix, none_what)
    ka, a_c = find(chk, prefix, auto_what)
    _, n_0 = find(non, prefix, none_what)
    _, c_0 = find(non, prefix, cp_what)
    if kn is None or ka is None or n_0 is None:
        continue
    kernel = "partition" if "large" in prefix else re.search(r"Thomas \(([a-z_0-9]+)", kn).group(1)
    print("  %-36s %-20s %8.4f %8.4f %8.4f %8s  %7s %7s %7s %7s" % (
        prefix.strip(" ,"), kernel, n_c, a_c, n_0, "%8.4f" % c_0 if c_0 else "-", pct(a_c, n_c), pct(n_c, n_0),
        pct(a_c, n_0), pct(a_c, c_0) if c_0 else "-"))
print("  (ms, best run. A: automatic / none, checked build: the flag and its synchronisation. B: none,")
print("  checked / no-check build: the tests' arithmetic. whole: automatic, checked / none, no-check build.")
print("  whole': automatic, checked / none with check_pivots (the options' default: a zero-pivot flag read")
print("  after one synchronisation, as before issue 23), no-check build: the stability check's own cost)")
# Every row of both builds (best run each), as at stop 31.
print("\n-- every non-pivoting row: checked build / -DADI_THOMAS_CHECK=0 build, best run each --")
for k, v in chk.items():
    if k in non and ("Thomas (" in k or "automatic" in k or "pivoting none" in k) and non[k] > 0:
        print("  %-70s %8.3f ms  %8.3f ms  %+6.1f%%" % (k, v, non[k], 100 * (v / non[k] - 1)))
PY
fi
# One file back (the device returns at most 8): every log in the tarball.
(cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
  find . -maxdepth 1 -type f -delete && mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
