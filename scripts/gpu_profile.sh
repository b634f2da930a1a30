#!/usr/bin/env bash
# Nsight Compute on the tridiagonal hybrids at 256^3 (issue 16: the limiter before and after).
# Builds bench_cuda_tridiagonal only (VTK off, sm_90), prints the dense-box rows, then one ncu
# report per (filter, kernel regex) pair: speed of light, memory, occupancy, warp stalls.
#   [PROFILE_TESTS="test_a test_b"] scripts/gpu_profile.sh [--no-build] [--build-dir DIR]
# (PROFILE_TESTS: GoogleTest executables also built and run first)
# Logs under $OUT: build.log, bench.log, ncu_<i>.txt; the key lines are printed last.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}; mkdir -p "$out"
build=$root/build-prof do_build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "gpu_profile.sh: unknown option '$1'" >&2; exit 2 ;;
  esac; shift
done
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
if [ $do_build = 1 ]; then
  t0=$(date +%s)
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DADI_WITH_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON \
    >"$out/build.log" 2>&1 && cmake --build "$build" -j "$(nproc)" --target bench_cuda_tridiagonal ${PROFILE_TESTS:-} >>"$out/build.log" 2>&1 \
    || { tail -40 "$out/build.log"; echo "build FAILED"; exit 1; }
  echo "build: $(( $(date +%s) - t0 )) s"
fi
bench=$build/benchmarks/bench_cuda_tridiagonal
for t in ${PROFILE_TESTS:-}; do "$build/tests/$t" >"$out/$t.log" 2>&1; echo "test $t: exit $? ($(grep -E 'PASSED|FAILED' "$out/$t.log" | head -3 | tr '\n' ' '))"; done
"$bench" --no-sweep --no-tune --no-layouts --reps 20 >"$out/bench.log" 2>&1
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
i=0
prof() {  # filter kernel-regex
  i=$((i + 1))
  echo "### $1 :: $2" >"$out/ncu_$i.txt"
  timeout 120 "$ncu" --clock-control none --kernel-name "regex:$2" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section LaunchStats --section SchedulerStats --section InstructionStats \
    --metrics sass__inst_executed_per_opcode,smsp__inst_executed.sum,smsp__sass_thread_inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio --print-metric-instances values \
    "$bench" --no-sweep --no-tune --no-layouts --reps 3 --filter "$1" >>"$out/ncu_$i.txt" 2>&1
}
prof "256x256x256 fp64 y thomas_pcr_strided (hybrid) full" "registers"
prof "256x256x256 fp32 y thomas_pcr_strided (hybrid) full" "registers"
prof "256x256x256 fp32 y thomas_strided full" "thread_per_line"
prof "256x256x256 fp64 x thomas_pcr (hybrid) full" "pcr"
prof "256x256x256 fp32 x thomas_pcr (hybrid) full" "pcr"
"$bench" --no-sweep --no-layouts --reps 20 --filter "256^3" >"$out/bench_tune.log" 2>&1
echo "===== bench (launch shapes of the hybrids)"
grep -E "tune" "$out/bench_tune.log"
echo "===== bench (dispatch against the fastest, measured plan)"
sed -n '/== Dispatch against/,$p' "$out/bench.log"
echo "===== bench (dense boxes)"
sed -n '/== Solves/,/^$/p' "$out/bench.log" | grep -E "grid|256x256x256" | grep -v naive
for f in "$out"/ncu_*.txt; do
  echo "===== $(head -1 "$f")"
  grep -E "^  [a-zA-Z]+.*(kernel|Kernel)<|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Dynamic Shared|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Issued Warp|No Eligible|Warp Cycles Per Issued|Active Warps Per|Eligible Warps|stalled|inst_executed" "$f" | head -50
  grep -E "^    (OPT|WRN|INF) " "$f" | cut -c1-220 | head -8
done
