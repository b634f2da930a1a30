#!/usr/bin/env bash
# Stop 37 (h-varpiv, issue 23): partial pivoting of variable-size batches on CUDA, in one lean
# device call: configure (tests only, no benchmarks), build the two test targets that cover it,
# run the variable-batch and pivoting tests that touch it, then compute-sanitizer memcheck on the
# small cases (the new kernel through every layout, and the singular-system paths).
#   scripts/gpu_varpiv_check.sh        # logs and summary under $OUT (default ./out)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
mkdir -p "$out"
b="$root/build-varpiv"
t0=$(date +%s)
cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build "$b" -j "$(nproc)" --target test_pivoting_cuda test_thomas_variable_cuda >"$out/build.log" 2>&1 ||
  { grep -E "error" "$out/build.log" | head -30; echo "build FAILED"; exit 1; }
echo "build: $(( $(date +%s) - t0 )) s" | tee "$out/summary.txt"

run() {  # name, command...
  local name=$1; shift
  local t=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc ($(( $(date +%s) - t )) s): $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/$name.log" | tr '\n' ' ')" |
    tee -a "$out/summary.txt"
  grep -E '^\[  FAILED  \]|Failure|ERROR SUMMARY|Invalid|out of bounds' "$out/$name.log" | head -20 | tee -a "$out/summary.txt"
}
run pivoting "$b/tests/test_pivoting_cuda" --gtest_filter='PivotingCuda.Variable*'
run thomas_variable "$b/tests/test_thomas_variable_cuda"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
run memcheck_pivoting "$cs" --tool memcheck --error-exitcode 9 "$b/tests/test_pivoting_cuda" \
    --gtest_filter='PivotingCuda.VariableBatchPivotingNamesTheSingularSystem'
run memcheck_layouts "$cs" --tool memcheck --error-exitcode 9 "$b/tests/test_thomas_variable_cuda" \
    --gtest_filter='Sizes/CudaVariableThomas.Double/uniform_N33:CudaVariableThomasErrors.*'
echo "total: $(( $(date +%s) - t0 )) s" | tee -a "$out/summary.txt"
echo "=== summary ==="; cat "$out/summary.txt"
