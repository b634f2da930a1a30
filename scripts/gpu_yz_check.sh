#!/usr/bin/env bash
# Issue 16, the batched solves: every direction >= 85% of copy in fp32 and fp64 on the card
# it runs on, and the dispatch table fitting that card. Builds (VTK, MPI, Python off; sm_90;
# build dir build-yz) only bench_cuda_tridiagonal and the tests of the Y/Z and X kernels,
# runs the tests (+ compute-sanitizer memcheck on the register kernel's small cases), then
# bench_cuda_tridiagonal on the dense boxes 256^3, 240x256x256 and 512^3 (every candidate
# kernel, the dispatch's pick marked '*', the measured plan, cuSPARSE; % of the copy
# bandwidth measured in the same run) and the Y tuning rows of thomas_pcr_strided (the
# unrolled full-segment path on and off: same-run A/B). Optional: one Nsight Compute pass
# on the register kernel (fp32 256^3 Y, full bands).
#
#   scripts/gpu_yz_check.sh [--build-only | --no-build] [--no-tests] [--no-512] [--ncu] [--build-dir DIR]
#
# Logs under $OUT (default <repo>/out): yz_logs.tgz (build.log, ctest.log, sanitizer.log,
# bench_boxes.log, bench_tune.log, ncu.txt) and summary.txt. The output ends with the tables.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=$root/build-yz
do_build=1 do_tests=1 do_ncu=0 build_only=0 big=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-only) build_only=1 ;;
    --no-tests) do_tests=0 ;;
    --no-512) big=0 ;;
    --ncu) do_ncu=1 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "gpu_yz_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
logs=$out/yz_logs
mkdir -p "$logs"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
. "$root/scripts/gtest_runs.sh"
status=0
tests=(test_thomas_pcr_strided test_thomas_strided test_thomas_naive test_thomas_pcr_hybrid
       test_tridiagonal_cuda_dispatch test_interleaved_batch)
note "== gpu_yz_check.sh $(date -u +%FT%TZ) on $(hostname), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"

if [ $do_build = 1 ]; then
  t0=$(date +%s)
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
       -DADI_WITH_PYTHON=OFF -DADI_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON \
       -DADI_BUILD_TESTS=ON "${launcher[@]}" >"$logs/build.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" --target bench_cuda_tridiagonal "${tests[@]}" >>"$logs/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - t0 )) s)"
  else
    tail -40 "$logs/build.log"
    note "build: FAILED (see build.log)"
    tar -czf "$out/yz_logs.tgz" -C "$out" yz_logs 2>/dev/null
    exit 1
  fi
fi
[ $build_only = 1 ] && exit 0
bench=$build/benchmarks/bench_cuda_tridiagonal

# Benchmarks first, on an idle device.
t0=$(date +%s)
"$bench" --no-tune --no-layouts --no-sweep --no-long --reps 15 >"$logs/bench_boxes.log" 2>&1 ||
  { status=1; note "bench 256^3 + 240x256x256: FAILED (exit $?)"; }
note "bench 256^3, 240x256x256: $(( $(date +%s) - t0 )) s"
if [ $big = 1 ]; then
  t1=$(date +%s)
  "$bench" --boxes 512x512x512 --no-tune --no-layouts --no-sweep --no-long --reps 7 >"$logs/bench_512.log" 2>&1 ||
    { status=1; note "bench 512^3: FAILED (exit $?)"; }
  note "bench 512^3: $(( $(date +%s) - t1 )) s"
fi
t1=$(date +%s)
# Same-run A/B: the tuning rows with the register kernel's unrolled full-segment path (the
# default) and without it (ADI_PCR_STRIDED_FULL_PATH=0: the general path, as before it), twice.
: >"$logs/bench_tune.log"
for pass in 1 2; do
  for full in 1 0; do
    echo "### pass $pass ADI_PCR_STRIDED_FULL_PATH=$full" >>"$logs/bench_tune.log"
    ADI_PCR_STRIDED_FULL_PATH=$full "$bench" --boxes "" --no-layouts --no-sweep --no-long --reps 10 \
      --filter "pcr_strided" >>"$logs/bench_tune.log" 2>&1 || { status=1; note "bench tuning rows: FAILED (exit $?)"; }
  done
done
note "bench tuning rows: $(( $(date +%s) - t1 )) s"

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  run_gtests "$logs/ctest.log" 200 "$build/tests" "${tests[@]}"
  note "tests: $(( $(date +%s) - t0 )) s"
  echo "### FullSegments with ADI_PCR_STRIDED_FULL_PATH=0 (the general path)" >>"$logs/ctest.log"
  if ADI_PCR_STRIDED_FULL_PATH=0 timeout 100 "$build/tests/test_thomas_pcr_strided" --gtest_filter='*.FullSegments' \
       >>"$logs/ctest.log" 2>&1; then
    note "test_thomas_pcr_strided *.FullSegments, general path (ADI_PCR_STRIDED_FULL_PATH=0): passed"
  else
    note "test_thomas_pcr_strided *.FullSegments, general path (ADI_PCR_STRIDED_FULL_PATH=0): FAILED"
    status=1
  fi
  : >"$logs/sanitizer.log"
  run_sanitizer "$logs/sanitizer.log" 120 memcheck "$build/tests/test_thomas_pcr_strided" '*.FullSegments'
fi

ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ $do_ncu = 1 ] && [ -x "$ncu" ]; then
  timeout 150 "$ncu" --clock-control none --kernel-name "regex:pcr_strided_registers" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats --section SchedulerStats \
    --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,local_load_store \
    "$bench" --boxes 256x256x256 --no-tune --no-layouts --no-sweep --no-long --reps 3 \
    --filter "256x256x256 fp32 y thomas_pcr_strided (hybrid) full" >"$logs/ncu.txt" 2>&1 ||
    note "ncu: exit $? (see ncu.txt)"
fi
tar -czf "$out/yz_logs.tgz" -C "$out" yz_logs 2>/dev/null

section() { echo; echo "================================ $* ================================"; }
if [ -s "$logs/ncu.txt" ]; then
  section "Nsight Compute: thomas_pcr_strided_registers_kernel, 256^3 fp32 y full (ncu.txt)"
  grep -E "registers_kernel|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Duration|Achieved Occupancy|Registers Per|Local Memory Spilling Requests  |Issued Warp|No Eligible|Warp Cycles Per Issued|Active Warps Per|Eligible Warps|inst_executed|dram__bytes" "$logs/ncu.txt" | head -30
fi
[ -s "$logs/failures.txt" ] && { section "first test failures (failures.txt)"; head -30 "$logs/failures.txt"; }
section "A/B, 256^3 Y, default tile: full-segment path on (1) / off (0), two passes (bench_tune.log has all)"
grep -m2 -E "^(device|copy)" "$logs/bench_tune.log"
grep -E "^### |^256\^3 +fp32 +y +tune pcr_strided lb=32 |^256\^3 +fp64 +y +tune pcr_strided lb=16 " "$logs/bench_tune.log"
if [ -s "$logs/bench_boxes.log" ]; then
  section "256^3 Y rows (bench_boxes.log has every row)"
  grep -E "^(device|copy)" "$logs/bench_boxes.log"
  grep -E "^256x256x256 +fp(32|64) +y " "$logs/bench_boxes.log" | grep -v naive
fi
for f in bench_boxes.log bench_512.log; do
  [ -s "$logs/$f" ] || continue
  section "dense boxes ($f): summaries"
  sed -n '/^== Summary/,$p' "$logs/$f"
done
section "summary"
cat "$summary"
exit $status
