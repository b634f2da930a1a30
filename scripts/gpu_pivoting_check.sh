#!/usr/bin/env bash
# Stop 31 (h-piv2), the lead's three calls (each under 10 minutes on an H100 / H200):
#   OUT=$OUT/piv2_build scripts/gpu_pivoting_check.sh --build-only --with-nocheck
#   OUT=$OUT/piv2_tests scripts/gpu_pivoting_check.sh --no-build --tests-only
#   OUT=$OUT/piv2_bench scripts/gpu_pivoting_check.sh --no-build --bench-only --with-nocheck
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
#                                               [--tests-only | --bench-only]
#   (--build-only, then --no-build: two calls where one 10-minute device call is too short)
#   --with-nocheck: also builds bench_cuda_pivoting with -DADI_THOMAS_CHECK=0 and runs it
#   (the cost of the stability checks = the ratio of the automatic rows; +3-4 min).
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
for arg in "$@"; do
  case $arg in
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
configure() {  # dir, extra flags
  cmake -S . -B "$1" $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_EXAMPLES=OFF \
    -DCMAKE_CXX_FLAGS="$2" -DCMAKE_CUDA_FLAGS="$2" > "$OUT/configure_$1.log" 2>&1 ||
    { echo "configure $1 failed"; tail -30 "$OUT/configure_$1.log"; exit 1; }
}
t0=$(date +%s)
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
find_bin() { find "$1" -name "$2" -type f -perm -u+x 2> /dev/null | head -1; }
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
note() { echo "$*" >> "$summary"; }
. "$(dirname "$0")/gtest_runs.sh"
sanitizer="not run"
if [ $tests = 1 ] && [ -n "$(find_bin $B test_pivoting_cuda)" ]; then
  tbin=$(find_bin $B test_pivoting_cuda)
  run_sanitizer "$OUT/sanitizer.log" 300 memcheck "$tbin" \
    'PivotingCuda.EveryRouteSmall:PivotingCuda.StagedSmall:PivotingCuda.AutomaticFallBackReusedPlan:PivotingCuda.AutomaticFallBackErrors:PivotingCuda.IssueTableCasesThrowWithoutPivoting:PivotingCuda.VariableBatchCheckNamesTheSystem'
  run_sanitizer "$OUT/sanitizer.log" 60 racecheck "$tbin" 'PivotingCuda.StagedSmall'
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
fi
echo
echo "== adi pivoting GPU check ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
echo "| step | result |"
echo "|---|---|"
for t in $TESTS $PLAN_TESTS; do echo "| $t | ${result[$t]} |"; done
echo "| compute-sanitizer (memcheck: EveryRouteSmall, StagedSmall, AutomaticFallBack{ReusedPlan,Errors}, IssueTableCasesThrowWithoutPivoting, VariableBatchCheckNamesTheSystem; racecheck: StagedSmall) | $sanitizer |"
sed 's/^/  /' "$summary"
echo
echo "-- failing checks (first lines) --"
grep -h -A3 "Failure" "$OUT"/test_*.log 2> /dev/null | head -40
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
  # The checks' whole cost (every device test compiled in against none, same card, same call):
  # each non-pivoting row of the checked build against the same row of the -DADI_THOMAS_CHECK=0 one.
  echo
  echo "-- the device checks' cost: checked build / -DADI_THOMAS_CHECK=0 build, same rows ($gpu; target <= 5%) --"
  python3 - "$OUT/bench_pivoting.log" "$OUT/bench_pivoting_nocheck.log" << 'PY'
import re, sys
def rows(path):
    out = {}
    for line in open(path):
        m = re.match(r"(\S.*?)\s+([0-9.]+) ms\s+[0-9]+ GB/s", line)
        if m:
            out.setdefault(m.group(1).strip(), float(m.group(2)))
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
for k, v in a.items():
    if k in b and ("Thomas (" in k or "automatic" in k or "pivoting none" in k) and b[k] > 0:
        print("  %-70s %8.3f ms  %8.3f ms  %+6.1f%%" % (k, v, b[k], 100 * (v / b[k] - 1)))
PY
fi
# One file back (the device returns at most 8): every log in the tarball.
(cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
  find . -maxdepth 1 -type f -delete && mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
