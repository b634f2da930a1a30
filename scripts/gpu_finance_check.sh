#!/usr/bin/env bash
# The finance GPU checks of issue 20, for one H100: builds adi with CUDA (no VTK), runs
# the GPU tests of adi::finance (the option chain kernel against the one-contract path,
# the pricer's device paths), compute-sanitizer on a small chain, the option-chain
# benchmark (680,000 American puts) at four settings, and prints a table. Logs under $OUT.
#
#   OUT=/tmp/out scripts/gpu_finance_check.sh [--build-only | --no-build]
#   (--build-only, then --no-build: two calls if one 10-minute device call is too short)
set -u
mode=${1:-}
OUT=${OUT:-$PWD/out/gpu_finance}
mkdir -p "$OUT"
B=build-gpu-finance
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
if [ "$mode" != "--no-build" ]; then
cmake -S . -B $B $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_EXAMPLES=ON \
  > "$OUT/configure.log" 2>&1 || { echo "configure failed"; tail -30 "$OUT/configure.log"; exit 1; }
cmake --build $B -j "$(nproc)" --target test_chain test_pricer test_one_asset bench_option_chain option_chain \
  > "$OUT/build.log" 2>&1 || { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
fi
[ "$mode" = "--build-only" ] && { echo "built $B"; exit 0; }
T=$(dirname "$(find $B -name test_chain -type f | head -1)")
status() { if [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
"$T/test_chain" > "$OUT/test_chain.log" 2>&1; r_chain=$?
"$T/test_pricer" --gtest_filter='Executor.*' > "$OUT/test_pricer_gpu.log" 2>&1; r_pricer=$?
EX=$(find $B -name option_chain -type f -perm -u+x | head -1)
"$EX" --input examples/option_chain/chain.csv --backend cuda --print > "$OUT/option_chain_cuda.log" 2>&1; r_ex=$?
"$EX" --input examples/option_chain/chain.csv --backend host --print > "$OUT/option_chain_host.log" 2>&1
r_san=skipped
if command -v compute-sanitizer > /dev/null; then
  compute-sanitizer --tool memcheck "$T/test_chain" --gtest_filter='Chain.Cuda*' > "$OUT/sanitizer.log" 2>&1
  r_san=$(grep -o "ERROR SUMMARY: [0-9]* error" "$OUT/sanitizer.log" | tail -1)
fi
BENCH=$(find $B -name bench_option_chain -type f | head -1)
# Quadratic time levels and a 1 sd cluster (the benchmark's defaults): order 2 for American
# puts; "r" runs add Richardson extrapolation over the half grid (the 1e-4 configuration).
RUNS="301x150r 401x200r 201x100r 401x200"
for g in $RUNS; do
  grid=${g%r}
  extra=""
  [ "$g" != "$grid" ] && extra="--richardson"
  "$BENCH" --gpu --no-quantlib --count 680000 --nodes ${grid%x*} --steps ${grid#*x} --host-count 4000 --sample 128 \
    $extra > "$OUT/bench_$g.log" 2>&1
done
echo
echo "== adi finance GPU check ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
echo "| check | result |"
echo "|---|---|"
echo "| test_chain (GPU chain = one-contract path) | $(status $r_chain): $(grep -E '^\[  (PASSED|SKIPPED|FAILED)' "$OUT/test_chain.log" | tr '\n' ' ') |"
echo "| test_pricer Executor.* | $(status $r_pricer) |"
echo "| option_chain example, cuda | $(status $r_ex) |"
echo "| example cuda vs host rows identical to 1e-9? | $(paste -d'|' <(grep -E '^(put|call)' "$OUT/option_chain_cuda.log") <(grep -E '^(put|call)' "$OUT/option_chain_host.log") | awk -F'|' '{split($1,a,",");split($2,b,",");d=a[9]-b[9];if(d<0)d=-d;if(d>m)m=d}END{printf "max |price diff| %.2e", m}') |"
echo "| compute-sanitizer memcheck (chain) | $r_san |"
echo
for g in $RUNS; do
  echo "-- bench_option_chain $g --"
  grep -E "^\| |reference check|worst|NaN" "$OUT/bench_$g.log"
done
