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
# Stop 32 (issues 16 and 23): the fused Y/Z stage's copy stream, the warp's 16-byte pieces
# (solvers/cuda/warp_tile_copy.cuh, the default) against each thread's own rows
# (ADI_FUSED_STAGE_STREAM=thread): the fused-stage tests at both (the Y/Z cases), compute-sanitizer
# memcheck and racecheck on the warp stream, test_thomas_pcr_strided (the shared copy code), and the
# same-run A/B of the Douglas step (stencil and kernel folds; stages back to back per axis and the
# whole step; fp32, fp64; 256^3, 512^3; two passes, alternating), printed last. The fused stage's
# stability check (issue 23): CudaFusedStage.NonDominantBandsThrowUnstable / HeatBandsNeverFireTheCheck,
# and the "dt varied (pivot checks)" row against the constant-dt step.
#
#   OUT=/tmp/out scripts/gpu_stage_check.sh [--build-only | --no-build] [--quick] [--base] [--no-ab]
#                                           [--no-full] [--no-tests]
#
#   --build-only / --no-build  two calls if one 10-minute device call is too short
#   --quick                    5 steps per median instead of 20
#   --no-ab                    skip the copy-stream A/B (and its tests, sanitizer and ncu runs)
#   --no-full                  skip the every-scheme benchmark, the tune rows and the first ncu
#   --no-tests                 skip the tests (e.g. a later call for the benchmarks only)
#   --base                     also build and run .base/'s bench_cuda_heat_step (before/after in
#                              one run; scripts/export_base.sh REV here first, carry .base; the
#                              base tree's bench takes one --scheme per run and its own grids)
# The Douglas table has a row with dt varied at every step (every stage checks its pivots: the
# fused stages asynchronously, one read at the end of the step) beside the constant-dt step.
# Logs under $OUT: build.log, test_*.log, bench_heat_step.log, bench_tune.log, ncu.log (and bench_heat_step.base.log).
# The output ends with the test results and the benchmark's summary table.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
mode="" quick="" base=0 ab=1 full=1 tests=1
for arg in "$@"; do
  case "$arg" in
    --build-only|--no-build) mode=$arg ;;
    --quick) quick=--quick ;;
    --base) base=1 ;;
    --no-ab) ab=0 ;;
    --no-full) full=0 ;;
    --no-tests) tests=0 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
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
targets=(test_thomas_pcr_fused_stage test_scheme_cuda test_thomas_pcr_strided test_chain test_pricer test_american_gpu
         bench_cuda_heat_step)  # host tests: run without a GPU
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
status() { if [ "$1" = skipped ]; then echo skipped; elif [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
counts() { grep -E '^\[  (PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$1" 2>/dev/null | tr -s ' ' | tr '\n' ' '; }
t0=$(date +%s)
r_fused=skipped r_scheme_cuda=skipped r_strided=skipped r_fin=skipped r_thread=skipped san=""
if [ $tests = 1 ]; then
# Each test binary under 4 minutes (124: timed out), so that the benchmark always runs.
timeout 240 "$T/test_thomas_pcr_fused_stage" > "$OUT/test_fused_stage.log" 2>&1; r_fused=$?
timeout 240 "$T/test_scheme_cuda" > "$OUT/test_scheme_cuda.log" 2>&1; r_scheme_cuda=$?
timeout 200 "$T/test_thomas_pcr_strided" > "$OUT/test_strided.log" 2>&1; r_strided=$?
# Other users of the fused stage (Black-Scholes, Heston: convection, per-axis coefficients): the
# stage's stability check (stop 32) must not fire on their operators.
timeout 200 "$T/test_chain" --gtest_filter='*Cuda*' > "$OUT/test_finance.log" 2>&1; r_fin=$?
timeout 200 "$T/test_pricer" --gtest_filter='*Cuda*' >> "$OUT/test_finance.log" 2>&1; r_fin=$(( r_fin | $? ))
timeout 200 "$T/test_american_gpu" --gtest_filter='AmericanGpu.*' >> "$OUT/test_finance.log" 2>&1; r_fin=$(( r_fin | $? ))
if [ $ab = 1 ]; then
  # The fused stage's GPU tests with each thread copying its own rows (the A of the A/B).
  ADI_FUSED_STAGE_STREAM=thread timeout 200 "$T/test_thomas_pcr_fused_stage" --gtest_filter='CudaFusedStage.*' \
    > "$OUT/test_fused_stage_thread.log" 2>&1; r_thread=$?
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [ -x "$cs" ]; then
    : > "$OUT/sanitizer.log"
    for tool in memcheck racecheck; do
      echo "### $tool CudaFusedStage.WarpStreamSmall" >> "$OUT/sanitizer.log"
      timeout 150 "$cs" --tool $tool --error-exitcode 99 "$T/test_thomas_pcr_fused_stage" \
        --gtest_filter='CudaFusedStage.WarpStreamSmall' >> "$OUT/sanitizer.log" 2>&1
      r=$?
      san="$san $tool: $([ $r = 0 ] && echo clean || echo "ERRORS or timeout (exit $r)");"
    done
  fi
fi
fi
t_tests=$(( $(date +%s) - t0 ))
t0=$(date +%s)
r_bench=skipped
if [ $full = 1 ]; then
  "$B/benchmarks/bench_cuda_heat_step" --grids 256,512 --scheme all $quick > "$OUT/bench_heat_step.log" 2>&1; r_bench=$?
fi
t_bench=$(( $(date +%s) - t0 ))
# Same-run A/B of the fused Y/Z stage's copy stream: Douglas, stencil and kernel folds, both
# precisions, 256^3 and 512^3, two passes alternating thread / warp.
t0=$(date +%s)
if [ $ab = 1 ]; then
  : > "$OUT/bench_stream_ab.log"
  for pass in 1 2; do
    for stream in thread warp; do
      echo "### pass $pass stream $stream" >> "$OUT/bench_stream_ab.log"
      ADI_FUSED_STAGE_STREAM=$stream timeout 200 "$B/benchmarks/bench_cuda_heat_step" --grids 256,512 \
        --scheme douglas --folds stencil,kernel $quick >> "$OUT/bench_stream_ab.log" 2>&1 ||
        echo "bench A/B pass $pass $stream: exit $?" >> "$OUT/bench_stream_ab.log"
    done
  done
fi
t_ab=$(( $(date +%s) - t0 ))
# Launch shapes of the fused X and Y kernels at 256^3 (rows for the next defaults).
[ $full = 1 ] && "$B/benchmarks/bench_cuda_heat_step" --grids 256 --scheme douglas --tune $quick > "$OUT/bench_tune.log" 2>&1
# Nsight Compute's speed of light for the first fp32 Douglas steps at 256^3: the folded x
# stage, then the y and z stages (two steps).
if command -v ncu > /dev/null; then
  [ $full = 1 ] && timeout 150 ncu --section SpeedOfLight -k regex:fused_stage -c 6 "$B/benchmarks/bench_cuda_heat_step" --grids 256 \
    --scheme douglas --steps 1 > "$OUT/ncu.log" 2>&1
  # The Y/Z stage's limiter with each copy stream (fp32 256^3, the first y and z stages).
  if [ $ab = 1 ]; then
    for stream in thread warp; do
      ADI_FUSED_STAGE_STREAM=$stream timeout 100 ncu --section SpeedOfLight --section WarpStateStats \
        --section LaunchStats -k regex:fused_stage_strided -c 2 "$B/benchmarks/bench_cuda_heat_step" --grids 256 \
        --scheme douglas --folds kernel --steps 1 > "$OUT/ncu_yz_$stream.log" 2>&1
    done
  fi
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
if [ $tests = 1 ]; then
echo "| test_thomas_pcr_fused_stage (folded + fused stage vs host and fp64 reference) | $(status $r_fused): $(counts "$OUT/test_fused_stage.log") |"
echo "| test_scheme_cuda (every scheme on the GPU vs host, folded) | $(status $r_scheme_cuda): $(counts "$OUT/test_scheme_cuda.log") |"
# Issue 15 item 4: the plan's stage entry and the asynchronous pivot report (in test_thomas_pcr_fused_stage).
for t in CudaPlanStage.MatchesTheReference CudaFusedStage.ZeroPivotInAStepThrowsAtTheEndOfTheStep \
         CudaFusedStage.ZeroPivotThrows PlanStage.HostMatchesTheReference; do
  r=$(grep -E "^\[ +(OK|FAILED|SKIPPED) +\] $t " "$OUT/test_fused_stage.log" | head -1 | sed -E 's/^\[ +([A-Z]+) +\].*\(([0-9]+ ms)\).*/\1 (\2)/')
  echo "| $t | ${r:-not run} |"
done
echo "| test_thomas_pcr_strided (the shared warp copy code, default stream) | $(status $r_strided): $(counts "$OUT/test_strided.log") |"
echo "| finance on the GPU (test_chain, test_pricer *Cuda*, test_american_gpu AmericanGpu.*) | $(status $r_fin): $(counts "$OUT/test_finance.log") |"
if [ $ab = 1 ]; then
  echo "| test_thomas_pcr_fused_stage CudaFusedStage.* with ADI_FUSED_STAGE_STREAM=thread | $([ "$r_thread" = skipped ] && echo skipped || status $r_thread): $(counts "$OUT/test_fused_stage_thread.log") |"
  echo "| compute-sanitizer, CudaFusedStage.WarpStreamSmall | ${san:-no compute-sanitizer} |"
fi
# Issue 23: the fused stage's stability check; stop 32: the warp stream's own cases.
for t in CudaFusedStage.NonDominantBandsThrowUnstable CudaFusedStage.HeatBandsNeverFireTheCheck \
         CudaFusedStage.WarpStreamSmall CudaFusedStage.WarpStreamFloat CudaFusedStage.WarpStreamDouble; do
  r=$(grep -E "^\[ +(OK|FAILED|SKIPPED) +\] $t " "$OUT/test_fused_stage.log" | head -1 | sed -E 's/^\[ +([A-Z]+) +\].*\(([0-9]+ ms)\).*/\1 (\2)/')
  echo "| $t | ${r:-not run} |"
done
fi
echo "| bench_cuda_heat_step | exit $r_bench ($t_bench s; tests $t_tests s; A/B $t_ab s) |"
if [ $tests = 1 ]; then
  grep -h -E "^\[  FAILED  \]|Failure|first bad node|Expected|actual" "$OUT"/test_*.log | head -24
  grep -h "SKIPPED\|no CUDA device" "$OUT"/test_*.log | head -3
fi
if [ $full = 1 ]; then
echo
grep -E "^device:|^copy bandwidth" "$OUT/bench_heat_step.log"
echo
echo "-- Douglas at 256^3, parts back to back (fields = minimum transfers of the part; tune rows in bench_tune.log) --"
grep -E "^256x256x256 " "$OUT/bench_heat_step.log" | grep -E "back to back|b2b|unfused|folded|stencil step" | cut -c1-100
fi
if [ $base = 1 ]; then
  echo
  echo "-- base tree ($(cat "$root/.base/REVISION" 2>/dev/null | cut -c1-12)): its summaries (11 / 26 transfer minimum, target column 1.3x) --"
  grep -E "^### base|^256x256x256 .*(step: CUDA events)|^240x256x256 .*(step: CUDA events)" "$OUT/bench_heat_step.base.log"
fi
if [ $full = 1 ] && [ -s "$OUT/ncu.log" ]; then
  echo
  echo "-- ncu SpeedOfLight, fp32 256^3 Douglas: folded x, y, z, folded x, y, z --"
  grep -E "fused_stage_(x|strided)_kernel|DRAM Throughput|Memory Throughput|Duration|Compute \(SM\) Throughput" \
    "$OUT/ncu.log" | sed -E 's/void adi::cuda_backend::kernels::/  /; s/\(adi::cuda_backend::kernels::StageArgs<float>.*//' |
    tr -s ' ' | cut -c1-100
fi
echo
[ $full = 1 ] && sed -n '/^== Summary/,$p' "$OUT/bench_heat_step.log"
if [ $ab = 1 ] && [ -s "$OUT/bench_stream_ab.log" ]; then
  for stream in thread warp; do
    [ -s "$OUT/ncu_yz_$stream.log" ] || continue
    echo
    echo "-- ncu, fused Y/Z stage fp32 256^3 (y, z), ADI_FUSED_STAGE_STREAM=$stream --"
    grep -E "fused_stage_strided_kernel|DRAM Throughput|Duration|Registers Per Thread|Warp Cycles Per Issued|Stall Long Scoreboard|Long Scoreboard" \
      "$OUT/ncu_yz_$stream.log" | sed -E 's/void adi::cuda_backend::kernels::/  /; s/\(adi::cuda_backend::kernels::StageArgs<float>.*//' |
      tr -s ' ' | cut -c1-110
  done
  echo
  echo "== A/B: fused Y/Z stage copy stream, ADI_FUSED_STAGE_STREAM thread (each thread its own rows) / warp (16-byte pieces, the default); ms, two passes (bench_stream_ab.log)"
  grep -m2 -E "^(device|copy)" "$OUT/bench_stream_ab.log"
  echo "(warp only where the field's rows are 16-byte multiples: nx * sizeof(T) % 16 == 0, so at 256^3 and 512^3; '% copy' = 100 / ratio to the part's minimum transfers)"
  awk -f "$root/scripts/ab_table.awk" -v bench=heat -v a=thread -v b=warp -v partw=32 -v copy=ratio \
    -v parts='stage [xyz] fused, back to back|Do (stencil|kernel) step: CUDA events|Do kernel stage [yz]' \
    -v heads='row (ms),thread,warp,thread,warp,best thr,best wrp,change,% copy thr -> warp' "$OUT/bench_stream_ab.log"
fi
