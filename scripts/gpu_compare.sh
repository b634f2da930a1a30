#!/usr/bin/env bash
# Before/after on one GPU, in one call: builds the benchmarks of a base revision and of the
# working tree, runs each benchmark on both (base, then this tree, alternating), and prints a
# row-by-row comparison of the times; then, unless --no-tests, the whole CTest suite of this
# tree. For changes that must keep the speed (the structure issue: "no row slower by > 3%").
#
#   scripts/export_base.sh REV            # here, once: git archive REV into .base/ (ignored)
#   scripts/gpu_compare.sh [--no-tests] [--no-build] [--quick]   # on the GPU machine, carry .base
#
# Logs under $OUT (default <repo>/out): bench_logs.tgz (build.log, <bench>.base{,2}.log,
# <bench>.new{,2}.log), compare.txt, ctest.log, summary.txt. The output ends with compare.txt
# and the summary.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
base_src=$root/.base
do_tests=1 do_build=1 quick=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-tests) do_tests=0 ;;
    --no-build) do_build=0 ;;
    --quick) quick=--quick ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "gpu_compare.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ -d "$base_src" ] || { echo "gpu_compare.sh: no $base_src (run scripts/export_base.sh REV and carry .base)" >&2; exit 2; }
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
jobs=$(nproc)
benches=(bench_cuda_tridiagonal bench_cuda_heat_step bench_cuda_block_tridiagonal bench_cuda_large_tridiagonal
         bench_cuda_variable_batch bench_cuda_hines)
if [ -n "${BENCHES:-}" ]; then read -r -a benches <<<"$BENCHES"; fi  # a subset, e.g. BENCHES="bench_cuda_heat_step"
note "== gpu_compare.sh $(date -u +%FT%TZ): base $(cat "$base_src/REVISION" 2>/dev/null) vs this tree"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"

configure() {  # src build
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_BUILD_EXAMPLES=ON >>"$out/build.log" 2>&1
}
if [ $do_build = 1 ]; then
  : >"$out/build.log"
  t0=$(date +%s)
  targets=(--target "${benches[@]}")
  [ $do_tests = 1 ] && targets=()
  if configure "$root" "$root/build-new" && cmake --build "$root/build-new" -j "$jobs" "${targets[@]}" >>"$out/build.log" 2>&1 &&
     configure "$base_src" "$root/build-base" && cmake --build "$root/build-base" -j "$jobs" --target "${benches[@]}" >>"$out/build.log" 2>&1; then
    note "build: ok ($(( $(date +%s) - t0 )) s, $jobs jobs)"
  else
    tail -40 "$out/build.log"; note "build: FAILED"; exit 1
  fi
fi

args_for() {
  case "$1" in
    bench_cuda_tridiagonal) echo "--no-sweep --no-tune $quick" ;;
    bench_cuda_heat_step|bench_cuda_large_tridiagonal) echo "$quick" ;;
    bench_cuda_hines|bench_cuda_variable_batch) echo "--quick" ;;  # the full runs take minutes each
    *) echo "" ;;
  esac
}
# Base and new alternated, twice (A B A B): a row counts as slower only if it is in both pairs.
for b in "${benches[@]}"; do
  t0=$(date +%s)
  for rep in "" 2; do
    # shellcheck disable=SC2046
    "$root/build-base/benchmarks/$b" $(args_for "$b") >"$out/$b.base$rep.log" 2>&1 || note "$b (base): exit $?"
    # shellcheck disable=SC2046
    "$root/build-new/benchmarks/$b" $(args_for "$b") >"$out/$b.new$rep.log" 2>&1 || note "$b (new): exit $?"
  done
  note "$b: $(( $(date +%s) - t0 )) s"
done
python3 "$root/scripts/compare_bench_logs.py" "$out" "${benches[@]}" >"$out/compare.txt" 2>&1
# At most 8 files come back from the device machine: the logs travel as one archive.
(cd "$out" && tar czf bench_logs.tgz ./*.base*.log ./*.new*.log build.log && rm -f ./*.base*.log ./*.new*.log)

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  [ $do_build = 1 ] || cmake --build "$root/build-new" -j "$jobs" >>"$out/build.log" 2>&1
  ctest --test-dir "$root/build-new" --output-on-failure -j 8 --timeout 600 >"$out/ctest.log" 2>&1
  rc=$?
  note "ctest: exit $rc ($(( $(date +%s) - t0 )) s): $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
  grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|Not Run|Subprocess)' "$out/ctest.log" | sed 's/^/  FAILED /' | tee -a "$summary"
  note "ctest: GPU tests (Cuda*) passed: $(grep -cE 'Test +#[0-9]+: Cuda.*Passed' "$out/ctest.log"), skipped: $(grep -cE 'Test +#[0-9]+: Cuda.*\*\*\*Skipped' "$out/ctest.log")"
fi
echo; cat "$out/compare.txt"; echo; cat "$summary"
