#!/usr/bin/env bash
# Host-CPU measurements on any Linux machine (the GPU machine's CPU included): the host
# tridiagonal sweeps against the machine's copy bandwidth, and the host-thread policy
# under load. Builds host-only (no CUDA, no VTK) into build-host, logs under $OUT.
#
#   scripts/host_check.sh [--no-build] [--cores N] [--steps K]
#
#   --cores N   run everything pinned to the first N processors (default 2: the size of
#               the CI/dev VMs), so the figures compare with theirs
#   --steps K   heat3d steps per load-test run (default 200)
#
# Tables at the end:
#  1. bench_cpu_tridiagonal on N threads (X/Y/Z, fp32/fp64, % of copy, x LAPACK);
#  2. heat3d --n 128 ms per step: idle and with one of the N cores kept busy by `yes`,
#     for the default (--threads 0, adi's measured team), 1 thread and N threads.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=$root/build-host
do_build=1 cores=2 steps=200
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --cores) cores=$2; shift ;;
    --steps) steps=$2; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "host_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
log=$out/host_check.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }

say "== host_check.sh $(date -u +%FT%TZ) on $(hostname)"
say "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) processors"
say "flags: $(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
if [ $do_build = 1 ]; then
  t0=$(date +%s)
  if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=OFF -DADI_WITH_VTK=OFF \
       -DADI_WITH_MPI=OFF -DADI_BUILD_TESTS=OFF -DADI_BUILD_BENCHMARKS=ON >"$out/host_build.log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" --target bench_cpu_tridiagonal heat3d >>"$out/host_build.log" 2>&1; then
    say "build: ok ($(( $(date +%s) - t0 )) s)"
  else
    say "build: FAILED (see host_build.log)"; tail -30 "$out/host_build.log"; exit 1
  fi
fi
last=$((cores - 1))
pin="taskset -c 0-$last"

say ""
say "== 1. bench_cpu_tridiagonal, $cores threads pinned to processors 0-$last"
OMP_NUM_THREADS=$cores $pin "$build/benchmarks/bench_cpu_tridiagonal" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > "$out/bench_cpu.log" 2>&1
grep -E "copy_GB/s|omp_threads" "$out/bench_cpu.log" | tee -a "$log"
say "| row (median of 3) | time | of copy |"
say "|---|---:|---:|"
grep -E "_median" "$out/bench_cpu.log" | grep -E "automatic|lapack|LAPACK" |
  awk '{ oc = ""; for (i = 1; i <= NF; ++i) if ($i ~ /^of_copy=/) oc = substr($i, 9);
         printf "| %s | %s %s | %.0f%% |\n", $1, $2, $3, 100 * oc }' | sed 's|/real_time_median||' | tee -a "$log"

heat() {  # threads label
  local th=$1
  $pin "$build/examples/heat/heat3d" --n 128 --steps "$steps" --no-output --threads "$th" 2>&1 |
    awk -v th="$th" '/per step/ { s = 0; for (i = 1; i <= NF; ++i) if ($(i+1) ~ /^ms/) s += $i;
                                   printf "%.1f", s }'
}
say ""
say "== 2. heat3d --n 128 --steps $steps, ms per step (sum of the parts), $cores processors"
say "| machine state | default (threads 0) | 1 thread | $cores threads |"
say "|---|---:|---:|---:|"
for rep in 1 2; do
  say "| idle (run $rep) | $(heat 0) | $(heat 1) | $(heat "$cores") |"
done
taskset -c "$last" yes > /dev/null &
busy=$!
sleep 1
for rep in 1 2; do
  say "| processor $last kept busy by yes (run $rep) | $(heat 0) | $(heat 1) | $(heat "$cores") |"
done
kill $busy
say ""
say "logs: $out/host_check.log, bench_cpu.log, host_build.log"
