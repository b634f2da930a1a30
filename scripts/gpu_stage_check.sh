#!/usr/bin/env bash
# Issue 15 item 4 (the fused stage through the plan: TridiagonalPlan::solve_stage, the
# asynchronous pivot check) and issue 16, "the step moves its minimum", on one GPU: the explicit operator folded into the
# first implicit stage of each ADI chain (Operator::solve_folded / ExplicitFold, docs/design.md
# "The fused stage"). Builds adi with CUDA for sm_90 (no VTK, no MPI) and only the targets it
# needs, runs the GPU tests of the folded and fused stages and of every scheme (each against
# the host Operator / the fp64 reference, both folds), then the heat-step benchmark at 256^3
# and 512^3, fp32 and fp64, for Douglas, Craig-Sneyd, Modified Craig-Sneyd and
# Hundsdorfer-Verwer, each with the explicit part separate (as before), in the stencil pass
# (CUDA's default) and in the fused kernel, and prints the table: each fold's minimum field
# transfers, the measured step, its ratio to that and to the kernel fold's 8 / 17, and the
# copy bandwidth that defines 100%.
#
#   OUT=/tmp/out scripts/gpu_stage_check.sh [--build-only | --no-build] [--quick] [--base]
#
#   --build-only / --no-build  two calls if one 10-minute device call is too short
#   --quick                    5 steps per median instead of 20
#   --base                     also build and run .base/'s bench_cuda_heat_step (before/after in
#                              one run; scripts/export_base.sh REV here first, carry .base; the
#                              base tree's bench takes one --scheme per run and its own grids)
# The Douglas table has a row with dt varied at every step (every stage checks its pivots: the
# fused stages asynchronously, one read at the end of the step) beside the constant-dt step.
# Logs under $OUT: build.log, test_*.log, bench_heat_step.log, bench_tune.log, ncu.log (and bench_heat_step.base.log).
# The output ends with the test results and the benchmark's summary table.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
mode="" quick="" base=0
for arg in "$@"; do
  case "$arg" in
    --build-only|--no-build) mode=$arg ;;
    --quick) quick=--quick ;;
    --base) base=1 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "gpu_stage_check.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$root/out/gpu_stage}
mkdir -p "$OUT"
B=${B:-$root/build-gpu-stage}
BB=${BB:-$root/build-gpu-stage-base}
jobs=$(nproc)
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
targets=(test_thomas_pcr_fused_stage test_scheme_cuda bench_cuda_heat_step)  # host tests: run without a GPU
configure() {  # src build
  cmake -S "$1" -B "$2" $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON >> "$OUT/build.log" 2>&1
}
if [ "$mode" != "--no-build" ]; then
  : > "$OUT/build.log"
  t0=$(date +%s)
  configure "$root" "$B" && cmake --build "$B" -j "$jobs" --target "${targets[@]}" >> "$OUT/build.log" 2>&1 ||
    { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  if [ $base = 1 ]; then
    [ -d "$root/.base" ] || { echo "no $root/.base (scripts/export_base.sh REV, carry .base)"; exit 2; }
    configure "$root/.base" "$BB" && cmake --build "$BB" -j "$jobs" --target bench_cuda_heat_step >> "$OUT/build.log" 2>&1 ||
      { echo "base build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  fi
  echo "build: ok ($(( $(date +%s) - t0 )) s, $jobs jobs)"
fi
[ "$mode" = "--build-only" ] && exit 0
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader > "$OUT/nvidia-smi.txt" 2>&1
T=$B/tests
status() { if [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
counts() { grep -E '^\[  (PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$1" | tr -s ' ' | tr '\n' ' '; }
t0=$(date +%s)
# Each test binary under 4 minutes (124: timed out), so that the benchmark always runs.
timeout 240 "$T/test_thomas_pcr_fused_stage" > "$OUT/test_fused_stage.log" 2>&1; r_fused=$?
timeout 240 "$T/test_scheme_cuda" > "$OUT/test_scheme_cuda.log" 2>&1; r_scheme_cuda=$?
t_tests=$(( $(date +%s) - t0 ))
t0=$(date +%s)
"$B/benchmarks/bench_cuda_heat_step" --grids 256,512 --scheme all $quick > "$OUT/bench_heat_step.log" 2>&1; r_bench=$?
t_bench=$(( $(date +%s) - t0 ))
# Launch shapes of the fused X and Y kernels at 256^3 (rows for the next defaults).
"$B/benchmarks/bench_cuda_heat_step" --grids 256 --scheme douglas --tune $quick > "$OUT/bench_tune.log" 2>&1
# Nsight Compute's speed of light for the first fp32 Douglas steps at 256^3: the folded x
# stage, then the y and z stages (two steps).
if command -v ncu > /dev/null; then
  timeout 150 ncu --section SpeedOfLight -k regex:fused_stage -c 6 "$B/benchmarks/bench_cuda_heat_step" --grids 256 \
    --scheme douglas --steps 1 > "$OUT/ncu.log" 2>&1
fi
if [ $base = 1 ]; then
  : > "$OUT/bench_heat_step.base.log"
  for s in douglas craig-sneyd modified-craig-sneyd hundsdorfer-verwer; do
    echo "### base --scheme $s" >> "$OUT/bench_heat_step.base.log"
    "$BB/benchmarks/bench_cuda_heat_step" --scheme "$s" $quick >> "$OUT/bench_heat_step.base.log" 2>&1
  done
fi

echo
echo "== gpu_stage_check.sh $(date -u +%FT%TZ), $(cat "$OUT/nvidia-smi.txt" | head -1), tree $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
echo "| check | result |"
echo "|---|---|"
echo "| test_thomas_pcr_fused_stage (folded + fused stage vs host and fp64 reference) | $(status $r_fused): $(counts "$OUT/test_fused_stage.log") |"
echo "| test_scheme_cuda (every scheme on the GPU vs host, folded) | $(status $r_scheme_cuda): $(counts "$OUT/test_scheme_cuda.log") |"
# Issue 15 item 4: the plan's stage entry and the asynchronous pivot report (in test_thomas_pcr_fused_stage).
for t in CudaPlanStage.MatchesTheReference CudaFusedStage.ZeroPivotInAStepThrowsAtTheEndOfTheStep \
         CudaFusedStage.ZeroPivotThrows PlanStage.HostMatchesTheReference; do
  r=$(grep -E "^\[ +(OK|FAILED|SKIPPED) +\] $t " "$OUT/test_fused_stage.log" | head -1 | sed -E 's/^\[ +([A-Z]+) +\].*\(([0-9]+ ms)\).*/\1 (\2)/')
  echo "| $t | ${r:-not run} |"
done
echo "| bench_cuda_heat_step | exit $r_bench ($t_bench s; tests $t_tests s) |"
grep -h -E "^\[  FAILED  \]|Failure|first bad node|Expected|actual" "$OUT"/test_*.log | head -24
grep -h "SKIPPED\|no CUDA device" "$OUT"/test_*.log | head -3
echo
grep -E "^device:|^copy bandwidth" "$OUT/bench_heat_step.log"
echo
echo "-- Douglas at 256^3, parts back to back (fields = minimum transfers of the part; tune rows in bench_tune.log) --"
grep -E "^256x256x256 " "$OUT/bench_heat_step.log" | grep -E "back to back|b2b|unfused|folded|stencil step" | cut -c1-100
if [ $base = 1 ]; then
  echo
  echo "-- base tree ($(cat "$root/.base/REVISION" 2>/dev/null | cut -c1-12)): its summaries (11 / 26 transfer minimum, target column 1.3x) --"
  grep -E "^### base|^256x256x256 .*(step: CUDA events)|^240x256x256 .*(step: CUDA events)" "$OUT/bench_heat_step.base.log"
fi
if [ -s "$OUT/ncu.log" ]; then
  echo
  echo "-- ncu SpeedOfLight, fp32 256^3 Douglas: folded x, y, z, folded x, y, z --"
  grep -E "fused_stage_(x|strided)_kernel|DRAM Throughput|Memory Throughput|Duration|Compute \(SM\) Throughput" \
    "$OUT/ncu.log" | sed -E 's/void adi::cuda_backend::kernels::/  /; s/\(adi::cuda_backend::kernels::StageArgs<float>.*//' |
    tr -s ' ' | cut -c1-100
fi
echo
sed -n '/^== Summary/,$p' "$OUT/bench_heat_step.log"
