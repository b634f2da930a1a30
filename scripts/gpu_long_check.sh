#!/usr/bin/env bash
# Long lines on one device (issue 18: the public case 128x128x4096 fp64 along z within 1.3x
# of its traffic model). Builds (VTK, MPI, Python off; sm_90) only the targets it needs,
# runs the CUDA tridiagonal tests of the long-line kernel and its neighbours (+ memcheck,
# racecheck, synccheck on its small cases), then bench_cuda_tridiagonal --long-only (the
# copy bandwidth, every candidate kernel on the public case in fp64 and fp32 with the
# dispatch's choice marked '*', the long kernel's launch shapes, the measured plan, and
# n = 4096 batches of 1,024 to 65,536 lines) and the Y line-length sweep, then one Nsight
# Compute pass on the long kernel (fp64 public case; skipped without ncu).
#
#   scripts/gpu_long_check.sh [--build-only | --no-build] [--no-tests] [--no-ncu] [--build-dir DIR]
#
# (--build-only, then --no-build: two device calls if the build and the runs do not fit one.)
#
# Logs under $OUT (default <repo>/out): build.log, ctest.log, sanitizer.log, bench_long.log,
# bench_sweep.log, ncu.txt, ncu_cluster.txt, summary.txt. The output ends with the tables and the summary.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=$root/build-long
do_build=1 do_tests=1 do_ncu=1 build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-only) build_only=1 ;;
    --no-tests) do_tests=0 ;;
    --no-ncu) do_ncu=0 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "gpu_long_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
. "$root/scripts/gtest_runs.sh"
summary_start "$out"
start=$(date +%s)
# Build and runs together within one 10-minute device call: the extras (sanitizers, ncu) are
# skipped once this many seconds have passed (run again with --no-build for them).
late() { [ $(( $(date +%s) - start )) -gt "${LONG_CHECK_BUDGET_S:-450}" ]; }
tests=(test_thomas_pcr_long test_thomas_pcr_strided test_thomas_strided test_tridiagonal_cuda_dispatch
       test_interleaved_batch test_layout_safety)
note "== gpu_long_check.sh $(date -u +%FT%TZ) on $(hostname), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"

if [ $do_build = 1 ]; then
  t0=$(date +%s)
  if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
       -DADI_WITH_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON \
       >"$out/build.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" --target bench_cuda_tridiagonal "${tests[@]}" >>"$out/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - t0 )) s)"
  else
    tail -40 "$out/build.log"
    note "build: FAILED (see build.log)"
    exit 1
  fi
fi
[ $build_only = 1 ] && exit 0
bench=$build/benchmarks/bench_cuda_tridiagonal

# Benchmarks first, on an idle device.
t0=$(date +%s)
"$bench" --long-only >"$out/bench_long.log" 2>&1 || { status=1; note "bench --long-only: FAILED (exit $?)"; }
"$bench" --no-tune --no-layouts --no-long --filter " y " --reps 10 >"$out/bench_sweep.log" 2>&1 ||
  { status=1; note "bench sweep: FAILED"; }
note "benchmarks: $(( $(date +%s) - t0 )) s"

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  run_gtests "$out/ctest.log" 300 "$build/tests" "${tests[@]}"
  note "tests: $(( $(date +%s) - t0 )) s"
  : >"$out/sanitizer.log"
  for tool in memcheck racecheck synccheck; do
    late && { note "sanitizer $tool: skipped (time budget)"; continue; }
    run_sanitizer "$out/sanitizer.log" 120 $tool "$build/tests/test_thomas_pcr_long" '*.Small'
  done
  # The launch shapes, clusters included (distributed shared memory).
  late || run_sanitizer "$out/sanitizer.log" 150 memcheck "$build/tests/test_thomas_pcr_long" '*.LaunchShapes'
fi

ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ $do_ncu = 1 ] && late; then
  note "ncu: skipped (time budget; run again with --no-build --no-tests)"
elif [ $do_ncu = 1 ] && [ -x "$ncu" ]; then
  timeout 150 "$ncu" --clock-control none --kernel-name "regex:pcr_long" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats --section SchedulerStats \
    --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum \
    "$bench" --long-only --reps 3 --filter "128x128x4096 fp64 z thomas_pcr_long (block/line) full" >"$out/ncu.txt" 2>&1 ||
    note "ncu: exit $? (see ncu.txt)"
  # The cluster form (8 blocks share a tile of 16 fp64 lines: 128-byte rows).
  late || timeout 120 "$ncu" --clock-control none --kernel-name "regex:pcr_long" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats --section SchedulerStats \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum \
    "$bench" --long-only --reps 3 --filter "128x128x4096 fp64 z tune pcr_long cluster=8 lb=0 full" >"$out/ncu_cluster.txt" 2>&1 ||
    note "ncu (cluster): exit $? (see ncu_cluster.txt)"
fi

section() { echo; echo "================================ $* ================================"; }
section "Y line-length sweep, 2^24 values (bench_sweep.log)"
sed -n '/^== Line-length/,/^== Summary/p' "$out/bench_sweep.log" | grep -E '^(grid|n=)' | grep -E ' y |^grid'
for f in ncu.txt ncu_cluster.txt; do
  [ -s "$out/$f" ] || continue
  section "Nsight Compute: thomas_pcr_long_kernel, 128x128x4096 fp64 z ($f)"
  grep -E "thomas_pcr_long_kernel|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Cluster Size|Dynamic Shared|L1/TEX Hit|L2 Hit|Mem Busy|Issued Warp|No Eligible|Warp Cycles Per Issued|Active Warps Per|Eligible Warps|inst_executed|dram__bytes|lts__t_sectors" "$out/$f" | head -40
  grep -E "^    (OPT|WRN) " "$out/$f" | cut -c1-200 | head -6
done
[ -s "$out/failures.txt" ] && { section "first test failures (failures.txt)"; head -40 "$out/failures.txt"; }
section "bench_cuda_tridiagonal --long-only (bench_long.log)"
cat "$out/bench_long.log"
section "summary"
cat "$summary"
exit $status
