#!/usr/bin/env bash
# The pivoting GPU check of issue 23, for one H100 or H200 (< 6 min on 16 cores):
#   1. builds the pivoting targets with CUDA (sm_90, no VTK, no MPI);
#   2. runs test_pivoting_cuda (every route of cuda_pivoting against LAPACKE ?gtsv / ?gesv)
#      and part of test_pivoting_cpu (the partition method's core, the checks);
#   3. compute-sanitizer memcheck on PivotingCuda.EveryRouteSmall (tile, thread, partition)
#      and StagedSmall (the staged kernel, forced),
#      and racecheck on PivotingCuda.StagedSmall (the staged kernel: cp.async + barriers);
#   4. bench_cuda_pivoting: 256^3 per axis and one system of 2^24 and 2^20, fp32 / fp64,
#      against the non-pivoting kernels, cuSPARSE gtsv2 / gtsv2_nopivot, as % of the copy
#      bandwidth measured in the same run;
#   5. Nsight Compute (if ncu runs here) on the first launch of each pivoting kernel:
#      duration, DRAM and SM throughput, occupancy, registers (one line per kernel);
# then prints the tables (the bench table last). Logs under $OUT, tarred into
# $OUT/gpu_pivoting_logs.tgz.
#   OUT=/tmp/out scripts/gpu_pivoting_check.sh [--build-only | --no-build] [--with-nocheck]
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
for arg in "$@"; do
  case $arg in
    --no-build) build=0 ;;
    --build-only) run=0 ;;
    --with-nocheck) nocheck=1 ;;
    *) echo "unknown argument $arg"; exit 2 ;;
  esac
done
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
TESTS="test_pivoting_cuda test_pivoting_cpu"
configure() {  # dir, extra flags
  cmake -S . -B "$1" $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_EXAMPLES=OFF \
    -DCMAKE_CXX_FLAGS="$2" -DCMAKE_CUDA_FLAGS="$2" > "$OUT/configure_$1.log" 2>&1 ||
    { echo "configure $1 failed"; tail -30 "$OUT/configure_$1.log"; exit 1; }
}
t0=$(date +%s)
if [ $build = 1 ]; then
  configure $B ""
  cmake --build $B -j "$(nproc)" --target $TESTS bench_cuda_pivoting > "$OUT/build.log" 2>&1 ||
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
for t in $TESTS; do
  bin=$(find_bin $B $t)
  if [ -z "$bin" ]; then result[$t]="not built"; continue; fi
  t1=$(date +%s)
  filter="*"
  # The host suite's layout sweep runs in CI; here: the partition core and the checks.
  [ $t = test_pivoting_cpu ] && filter='PivotingPartition.*:Pivoting.*:UnsafeThomas.*:PivotingHostLarge.*'
  timeout 240 "$bin" --gtest_filter="$filter" > "$OUT/$t.log" 2>&1
  rc=$?
  summary=$(grep -E '^\[  (PASSED|SKIPPED|FAILED) ' "$OUT/$t.log" | tr '\n' ' ')
  failed=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$OUT/$t.log" | sed 's/\[  FAILED  \] //' | tr '\n' ' ')
  result[$t]="$([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)") in $(($(date +%s) - t1)) s: $summary $failed"
done
memcheck="not run"
racecheck="not run"
if command -v compute-sanitizer > /dev/null && [ -n "$(find_bin $B test_pivoting_cuda)" ]; then
  timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$(find_bin $B test_pivoting_cuda)" \
    --gtest_filter='PivotingCuda.EveryRouteSmall:PivotingCuda.StagedSmall' > "$OUT/memcheck.log" 2>&1
  rc=$?
  memcheck="$([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)"): $(grep -m1 'ERROR SUMMARY' "$OUT/memcheck.log")"
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 \
    "$(find_bin $B test_pivoting_cuda)" --gtest_filter='PivotingCuda.StagedSmall' > "$OUT/racecheck.log" 2>&1
  rc=$?
  racecheck="$([ $rc = 0 ] && echo pass || echo "FAIL (rc $rc)"): $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/racecheck.log")"
fi
bench=$(find_bin $B bench_cuda_pivoting)
[ -n "$bench" ] && timeout 300 "$bench" --reps=10 > "$OUT/bench_pivoting.log" 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2> /dev/null | head -1)
if [ -n "$bench" ] && [ -n "$NCU" ]; then
  M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,dram__bytes.sum,smsp__inst_executed.sum
  # The first launch of each kernel instance: the 256^3 box, then one system of 2^24 apart
  # (the partition route's kernels run in both).
  for size in "--n=256 --large=0" "--n=0 --large=24"; do
    timeout 45 "$NCU" --csv --metrics $M --kernel-name-base demangled --kernel-id '::regex:pivoting_:1' \
      --launch-count 24 "$bench" --reps=1 --cusparse=0 $size --large2=0 >> "$OUT/ncu.csv" 2>> "$OUT/ncu.err"
  done
fi
if [ $nocheck = 1 ] && [ -n "$(find_bin $B0 bench_cuda_pivoting)" ]; then
  timeout 300 "$(find_bin $B0 bench_cuda_pivoting)" --reps=10 > "$OUT/bench_pivoting_nocheck.log" 2>&1
fi
echo
echo "== adi pivoting GPU check ($gpu), $(date -u +%H:%M) UTC, $(($(date +%s) - t0)) s =="
echo "| step | result |"
echo "|---|---|"
for t in $TESTS; do echo "| $t | ${result[$t]} |"; done
echo "| compute-sanitizer memcheck (PivotingCuda.EveryRouteSmall, StagedSmall) | $memcheck |"
echo "| compute-sanitizer racecheck (PivotingCuda.StagedSmall) | $racecheck |"
echo
echo "-- failing checks (first lines) --"
grep -h -A3 "Failure" "$OUT"/test_pivoting_*.log 2> /dev/null | head -40
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
elif [ -n "${NCU:-}" ]; then
  echo; echo "-- Nsight Compute: no result ($(head -c 300 "$OUT/ncu.err" 2> /dev/null)) --"
fi
echo
echo "-- bench_cuda_pivoting ($gpu) --"
sed -n '/^copy bandwidth/p;/^Summary/,$p' "$OUT/bench_pivoting.log" 2> /dev/null
if [ -f "$OUT/bench_pivoting_nocheck.log" ]; then
  echo "-- bench_cuda_pivoting, -DADI_THOMAS_CHECK=0 (the automatic rows without the checks) --"
  sed -n '/^Summary/,$p' "$OUT/bench_pivoting_nocheck.log"
fi
# One file back (the device returns at most 8): every log in the tarball.
(cd "$OUT" && tar -czf /tmp/gpu_pivoting_logs.tgz --exclude gpu_pivoting_logs.tgz . 2> /dev/null &&
  find . -maxdepth 1 -type f -delete && mv /tmp/gpu_pivoting_logs.tgz gpu_pivoting_logs.tgz)
