#!/usr/bin/env bash
# The one script for the machine with the GPU: configure, build with all cores, run the
# GPU benchmarks first (on an idle device), then the whole CTest suite and
# compute-sanitizer on small GPU cases. Full logs go to $OUT (default: <repo>/out), 7 files:
# build.log, bench.log (bench_cuda_tridiagonal), bench_heat.log (bench_cuda_heat_step: the
# heat ADI step per part), heat3d.log (heat3d --backend cuda beside the CPU runs), ctest.log,
# sanitizer.log, summary.txt. The output ends with the full tables, then the two benchmark
# summaries against the targets, then the pass/fail summary (the last lines).
#
#   scripts/gpu_check.sh [--tests-only | --bench-only | --build-only] [--no-sanitizer]
#                        [--no-build] [--build-dir DIR] [--bench-args "ARGS"] [--tests REGEX]
#
#   --tests-only    build, ctest, sanitizer; no benchmarks
#   --bench-only    build the benchmark targets only and run them
#   --build-only    configure and build everything, run nothing (then call again with
#                   --no-build: the two halves each fit a 10-minute device call)
#   --no-sanitizer  skip compute-sanitizer
#   --no-build      reuse an existing build folder
#   --bench-args    extra arguments for bench_cuda_tridiagonal (e.g. "--quick --no-sweep")
#   --tests REGEX   run only the CTest tests whose names match REGEX (ctest -R)
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=$root/build-gpu
do_build=1 do_tests=1 do_san=1 do_bench=1 build_all=0 bench_args="" tests_regex=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tests-only) do_bench=0 ;;
    --bench-only) do_tests=0; do_san=0 ;;
    --build-only) do_tests=0; do_san=0; do_bench=0; build_all=1 ;;
    --no-sanitizer) do_san=0 ;;
    --no-build) do_build=0 ;;
    --build-dir) build=$2; shift ;;
    --bench-args) bench_args=$2; shift ;;
    --tests) tests_regex=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "gpu_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
summary=$out/summary.txt
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }
status=0
jobs=$(nproc)
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

note "== gpu_check.sh $(date -u +%FT%TZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
nvcc --version 2>/dev/null | tail -1 | sed 's/^/nvcc: /' | tee -a "$summary"

# --- configure + build -----------------------------------------------------------
if [ $do_build = 1 ]; then
  t0=$(date +%s)
  targets=()
  [ $do_tests = 0 ] && [ $build_all = 0 ] && targets=(--target bench_cuda_tridiagonal bench_cuda_heat_step heat3d)
  if cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON >"$out/build.log" 2>&1 &&
     cmake --build "$build" -j "$jobs" "${targets[@]}" >>"$out/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - t0 )) s, $jobs jobs)"
  else
    tail -60 "$out/build.log"
    note "build: FAILED (see build.log)"
    exit 1
  fi
fi

# --- benchmarks (first, on an idle device: the tests would disturb their timings) -------
if [ $do_bench = 1 ]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  "$build/benchmarks/bench_cuda_tridiagonal" $bench_args >"$out/bench.log" 2>&1 || { status=1; note "bench_cuda_tridiagonal: FAILED"; }
  "$build/benchmarks/bench_cuda_heat_step" >"$out/bench_heat.log" 2>&1 || { status=1; note "bench_cuda_heat_step: FAILED"; }
  # heat3d on the GPU beside the CPU: the same errors to round-off, and per-part timings.
  : >"$out/heat3d.log"
  heat() {  # label args...
    echo "### heat3d $*" >>"$out/heat3d.log"
    "$build/examples/heat/heat3d" --no-output "$@" >>"$out/heat3d.log" 2>&1 || { status=1; note "heat3d $*: FAILED"; }
  }
  for prec in float double; do
    for scheme in douglas hundsdorfer-verwer; do
      heat --n 65 --steps 20 --scheme "$scheme" --precision $prec --backend cpu
      heat --n 65 --steps 20 --scheme "$scheme" --precision $prec --backend cuda
    done
    heat --nx 129 --ny 65 --nz 1 --steps 20 --scheme peaceman-rachford --precision $prec --backend cpu
    heat --nx 129 --ny 65 --nz 1 --steps 20 --scheme peaceman-rachford --precision $prec --backend cuda
    heat --n 256 --steps 50 --precision $prec --backend cuda
  done
  note "benchmarks and heat3d: $(( $(date +%s) - t0 )) s"
fi


# --- the whole CTest suite ---------------------------------------------------------
if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  ctest --test-dir "$build" --output-on-failure -j "$(( jobs > 8 ? 8 : jobs ))" --timeout 900 \
    ${tests_regex:+-R "$tests_regex"} >"$out/ctest.log" 2>&1
  rc=$?
  [ $rc = 0 ] || status=1
  note "ctest: exit $rc ($(( $(date +%s) - t0 )) s): $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
  grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Not Run|Subprocess)' "$out/ctest.log" | sed 's/^/  FAILED /' | tee -a "$summary"
  # GPU tests skip (loudly) without a device; on the GPU machine none may skip.
  skipped=$(grep -cE 'Test +#[0-9]+: Cuda.*\*\*\*Skipped' "$out/ctest.log")
  ran=$(grep -cE 'Test +#[0-9]+: Cuda.*Passed' "$out/ctest.log")
  note "ctest: GPU tests (Cuda*) passed: $ran, skipped: $skipped (must be 0 on the GPU machine)"
  [ "$skipped" = 0 ] || status=1
  # Every skipped test, GPU or not (VTK or MPI ones may skip by design), by name.
  grep -E '\*\*\*Skipped' "$out/ctest.log" | head -20 | sed 's/^ */  skipped: /' | tee -a "$summary"
fi

# --- compute-sanitizer on small GPU cases ------------------------------------------
if [ $do_san = 1 ]; then
  : >"$out/sanitizer.log"
  run_san() {  # tool binary filter
    echo "### compute-sanitizer --tool $1 $2 --gtest_filter=$3" >>"$out/sanitizer.log"
    if timeout 90 "$san" --tool "$1" --error-exitcode 99 "$build/tests/$2" --gtest_filter="$3" >>"$out/sanitizer.log" 2>&1; then
      note "sanitizer $1 $2 ($3): clean"
    else
      note "sanitizer $1 $2 ($3): ERRORS (see sanitizer.log)"
      status=1
    fi
  }
  for t in test_thomas_naive test_thomas_strided test_thomas_shuffle_transpose test_thomas_shared_transpose \
           test_thomas_pcr_hybrid test_thomas_pcr_strided; do
    run_san memcheck "$t" '*.Small'
  done
  # The kernels that share memory between lanes or warps.
  for t in test_thomas_shared_transpose test_thomas_pcr_hybrid test_thomas_pcr_strided; do
    run_san racecheck "$t" '*.Small'
  done
  run_san synccheck test_thomas_pcr_strided '*.Small'
  # The framework on the GPU: stencil kernels and the fused ADI stage.
  for t in test_stencil_apply test_stencil_face test_thomas_pcr_fused_stage; do
    run_san memcheck "$t" '*.Small'
  done
  run_san racecheck test_thomas_pcr_fused_stage '*.Small'
  run_san synccheck test_thomas_pcr_fused_stage '*.Small'
  # The other founding systems: block, large, variable batches, Hines (small cases).
  run_san memcheck test_block_thomas_cuda '*Interleaved*:*Periodic*'
  run_san memcheck test_partition_large_cuda '*DeviceSmall*'
  run_san memcheck test_thomas_variable_cuda '*TinyBatches*'
  run_san memcheck test_hines_cuda '*EveryShapeOneTree*'
fi

# --- output: full tables first, then the summaries against the targets, pass/fail last ---
section() { echo; echo "================================ $* ================================"; }
if [ $do_bench = 1 ]; then
  if [ -f "$out/bench.log" ]; then
    section "bench_cuda_tridiagonal (tuning rows and line-length sweep: bench.log)"
    awk '/^== (Tuning|Line-length|Summary)/{skip=1} /^== (Solves|Unaligned)/{skip=0} !skip' "$out/bench.log"
  fi
  section "heat3d: CPU vs CUDA errors (must agree to round-off)"
  awk '/^### /{run=$0} /^error/{print run; print "    " $0}' "$out/heat3d.log" 2>/dev/null
  section "heat3d --backend cuda timings"
  grep -E '^### .*--n 256|^(grid|time|per part|per step)' "$out/heat3d.log" 2>/dev/null | grep -A4 -- '--n 256'
  if [ -f "$out/bench_heat.log" ]; then
    section "bench_cuda_heat_step"
    awk '/^== Summary/{exit} 1' "$out/bench_heat.log"
  fi
  section "SUMMARIES against the targets"
  # The benchmarks print their summaries last; a benchmark that failed shows its log's tail.
  for f in bench.log bench_heat.log; do
    [ -f "$out/$f" ] || continue
    if grep -q '^== Summary' "$out/$f"; then awk '/^== Summary/{p=1} p' "$out/$f"; else tail -5 "$out/$f"; fi
  done
fi
section "summary"
cat "$summary"
exit $status
