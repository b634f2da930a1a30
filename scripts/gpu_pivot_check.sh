#!/usr/bin/env bash
# The pivoting GPU checks of issue 23, for one H100 or H200: builds adi with CUDA (sm_90,
# no VTK) twice, once as shipped and once with -DADI_THOMAS_CHECK=0 (the Thomas kernels
# without their stability check, for its cost only), runs the pivoting and tridiagonal GPU
# tests, the pivoting benchmark (cuda_pivoting, automatic, the Thomas kernels, cuSPARSE
# gtsv2 / gtsv2_nopivot / gtsv2StridedBatch at 256^3 per axis and one system of 2^24, fp32
# and fp64) in both builds, and prints the tables. Logs under $OUT.
#
#   OUT=/tmp/out scripts/gpu_pivot_check.sh [--build-only | --no-build]
#   (--build-only, then --no-build: two calls if one 10-minute device call is too short)
set -u
mode=${1:-}
OUT=${OUT:-$PWD/out/gpu_pivot}
mkdir -p "$OUT"
B=build-gpu-pivot
B0=build-gpu-pivot-nocheck
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
TESTS="test_pivoting_cuda test_pivoting_cpu test_tridiagonal_cuda_dispatch test_thomas_strided test_thomas_pcr_hybrid \
test_thomas_pcr_strided test_thomas_shuffle_transpose test_thomas_shared_transpose test_thomas_naive \
test_thomas_pcr_fused_stage test_scheme_cuda test_layout_safety test_thomas_variable_cuda test_partition_large_cuda \
test_large_tridiagonal test_large_tridiagonal_nondominant"
TARGETS="$TESTS bench_cuda_pivoting bench_cuda_tridiagonal"
configure() {  # dir, extra flags
  cmake -S . -B "$1" $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_EXAMPLES=OFF \
    -DCMAKE_CXX_FLAGS="$2" -DCMAKE_CUDA_FLAGS="$2" > "$OUT/configure_$1.log" 2>&1 ||
    { echo "configure $1 failed"; tail -30 "$OUT/configure_$1.log"; exit 1; }
}
if [ "$mode" != "--no-build" ]; then
  configure $B ""
  cmake --build $B -j "$(nproc)" --target $TARGETS > "$OUT/build.log" 2>&1 ||
    { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  configure $B0 "-DADI_THOMAS_CHECK=0"
  cmake --build $B0 -j "$(nproc)" --target bench_cuda_pivoting bench_cuda_tridiagonal > "$OUT/build_nocheck.log" 2>&1 ||
    { echo "build (no check) failed"; grep -m 20 -B2 -A8 "error" "$OUT/build_nocheck.log"; exit 1; }
fi
[ "$mode" = "--build-only" ] && { echo "built $B and $B0"; exit 0; }
status() { if [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
find_bin() { find "$1" -name "$2" -type f -perm -u+x | head -1; }
declare -A result
for t in $TESTS; do
  bin=$(find_bin $B $t)
  if [ -z "$bin" ]; then result[$t]="not built"; continue; fi
  timeout 900 "$bin" > "$OUT/$t.log" 2>&1
  result[$t]="$(status $?): $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$OUT/$t.log" | tr '\n' ' ')"
done
"$(find_bin $B bench_cuda_pivoting)" > "$OUT/bench_pivoting.log" 2>&1
"$(find_bin $B0 bench_cuda_pivoting)" > "$OUT/bench_pivoting_nocheck.log" 2>&1
"$(find_bin $B bench_cuda_tridiagonal)" > "$OUT/bench_tridiagonal.log" 2>&1
"$(find_bin $B0 bench_cuda_tridiagonal)" > "$OUT/bench_tridiagonal_nocheck.log" 2>&1
echo
echo "== adi pivoting GPU check ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
echo "| test | result |"
echo "|---|---|"
for t in $TESTS; do echo "| $t | ${result[$t]} |"; done
echo
echo "-- bench_cuda_pivoting (as shipped) --"
sed -n '/^Summary/,$p' "$OUT/bench_pivoting.log"
echo "-- bench_cuda_pivoting (-DADI_THOMAS_CHECK=0: the cost of the check is the ratio of the automatic rows) --"
sed -n '/^Summary/,$p' "$OUT/bench_pivoting_nocheck.log"
echo "-- bench_cuda_tridiagonal summaries (checked / unchecked) --"
tail -25 "$OUT/bench_tridiagonal.log"
tail -25 "$OUT/bench_tridiagonal_nocheck.log"
