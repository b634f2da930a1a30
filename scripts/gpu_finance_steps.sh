#!/usr/bin/env bash
# The finance steppers' constant step length on the GPU (stop 39, branch h-findt): uniform
# time steps now hand AdiSolver / the Operator the nominal dt = T / N, bitwise the same every
# step (detail::time_step, adi/finance/pricer_detail.hpp), so their bands (pivot checks, the
# diagonal rewrite, SPIKE preparation) are formed once instead of at every step. One H100 call:
# builds the finance targets with CUDA (through gpu_finance_american_check.sh --build-only: its
# configuration and build folder, shared with gpu_finance_check.sh, so a warm folder is reused;
# cold, the library's CUDA units take most of the call: run --build-only first), runs
#   test_pricer Executor.* (European, GPU = host), test_american_gpu (Heston, 2-3 assets
#   American, GPU = host), test_chain Chain.Cuda* (chain kernels = host chain), test_time_steps,
# then an A/B in the same run with the black_scholes example on the GPU:
#   A "wobbling dt": --step-grading 1.000000001 (fp32: 1.00001, as fp32 rounds smaller changes of
#     dt away), levels within 1e-9 (1e-5) of uniform but every step's dt = tb - ta differs, so the
#     bands are re-formed every step (what uniform fp64 steps did before: tb - ta wobbled in its
#     last bits, which fp32's s = float(theta dt) mostly rounded away);
#   B "nominal dt": --step-grading 1, the new path (one dt for every step after the damping).
# Stepping ms (the fastest run after the first of --repeat 6), fp64 and fp32, and B - A prices
# (~1e-9 relative in fp64, ~1e-5 in fp32: the grids differ by that much). Logs under $OUT.
#
#   OUT=/tmp/out scripts/gpu_finance_steps.sh [--build-only | --no-build]
#   (BACKEND=cpu: the same A/B on the host, to check the script without a GPU)
set -u
mode=${1:-}
OUT=${OUT:-$PWD/out/gpu_finance_steps}
mkdir -p "$OUT"
B=${B:-build-gpu-finance}
t_start=$(date +%s)
if [ "$mode" != "--no-build" ]; then
  # The configuration, folder and targets of gpu_finance_american_check.sh, then two more.
  OUT="$OUT/build" B=$B scripts/gpu_finance_american_check.sh --build-only || exit 1
  cmake --build $B -j "$(nproc)" --target test_chain test_time_steps > "$OUT/build.log" 2>&1 ||
    { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
fi
[ "$mode" = "--build-only" ] && { echo "built $B in $(( $(date +%s) - t_start )) s"; exit 0; }
t_built=$(date +%s)
T=$(dirname "$(find $B -name test_american_gpu -type f | head -1)")
EX=$(find $B -name black_scholes -type f -perm -u+x | head -1)
verdict() { grep -E '^\[  (PASSED|SKIPPED|FAILED) +\] [0-9]+ test' "$1" | tr '\n' ' '; }
"$T/test_pricer" --gtest_filter='Executor.*' > "$OUT/test_pricer_gpu.log" 2>&1
"$T/test_american_gpu" > "$OUT/test_american_gpu.log" 2>&1
"$T/test_chain" --gtest_filter='Chain.Cuda*' > "$OUT/test_chain_cuda.log" 2>&1
"$T/test_time_steps" > "$OUT/test_time_steps.log" 2>&1

RUNS="$OUT/bs_runs.log"
: > "$RUNS"
ROWS=()
seconds_of() {  # the fastest stepping time after the first run
  grep -E "^runs " "$1" | sed -e 's/.*stepping s://' -e 's/;.*//' |
    awk '{ m = ""; for (i = 2; i <= NF; ++i) if (m == "" || $i < m) m = $i; print m }'
}
price_of() { grep -E "^price " "$1" | awk '{print $2}'; }
run_case() {  # name, then black_scholes arguments
  local name=$1
  shift
  local common=(--backend "${BACKEND:-cuda}" --no-output --digits 14 --repeat 6)
  local a64 b64 a32 b32
  a64=$(mktemp) b64=$(mktemp) a32=$(mktemp) b32=$(mktemp)
  "$EX" "$@" "${common[@]}" --step-grading 1.000000001 > "$a64" 2>&1
  "$EX" "$@" "${common[@]}" --step-grading 1 > "$b64" 2>&1
  "$EX" "$@" "${common[@]}" --precision float --step-grading 1.00001 > "$a32" 2>&1
  "$EX" "$@" "${common[@]}" --precision float --step-grading 1 > "$b32" 2>&1
  for f in "$a64" "$b64" "$a32" "$b32"; do { echo "=== $name: $*"; cat "$f"; } >> "$RUNS"; done
  ROWS+=("$(awk -v name="$name" -v a64="$(seconds_of "$a64")" -v b64="$(seconds_of "$b64")" \
    -v a32="$(seconds_of "$a32")" -v b32="$(seconds_of "$b32")" -v pa="$(price_of "$a64")" -v pb="$(price_of "$b64")" \
    -v qa="$(price_of "$a32")" -v qb="$(price_of "$b32")" 'BEGIN {
      if (a64 == "" || b64 == "" || a32 == "" || b32 == "") { printf "| %s | FAILED (see bs_runs.log) | | | | | | |", name; exit }
      printf "| %s | %.3f | %.3f | %.2fx | %.3f | %.3f | %.2fx | %.12f | %+.1e | %+.1e |", name, 1e3 * a64, 1e3 * b64,
             a64 / b64, 1e3 * a32, 1e3 * b32, a32 / b32, pb, pb - pa, qb - qa }')")
  rm -f "$a64" "$b64" "$a32" "$b32"
}
BEST3=(--assets 3 --payoff best-of --type call --strike 100 --spot 100 --vol 0.2,0.25,0.3 --div 0.1,0.08,0.05
       --corr 0.3,0.2,0.4 --rate 0.05 --maturity 0.5)
HESTON=(--model heston --spot 10 --strike 10 --maturity 0.25 --rate 0.1 --div 0 --v0 0.0625 --kappa 5 --theta-v 0.16
        --xi 0.9 --rho 0.1 --type put --scheme hundsdorfer-verwer --damping 2)
run_case "3-asset geometric call, European, 65^3 x 64" --assets 3 --payoff geometric --nodes 65 --steps 64
run_case "3-asset best-of call, European, 65^3 x 64" "${BEST3[@]}" --nodes 65 --steps 64
run_case "3-asset best-of call, American, 65^3 x 64" "${BEST3[@]}" --exercise american --nodes 65 --steps 64
run_case "Heston put, European, 320 x 160 x 320" "${HESTON[@]}" --nodes 320 --variance-nodes 160 --steps 320
run_case "Heston put, American, 320 x 160 x 320" "${HESTON[@]}" --exercise american --nodes 320 --variance-nodes 160 \
  --steps 320
run_case "2-asset basket put, American, 321^2 x 321" --assets 2 --payoff basket --type put --strike 100 --spot 100 \
  --vol 0.2,0.3 --div 0 --corr 0.3 --rate 0.08 --exercise american --nodes 321 --steps 321
t_end=$(date +%s)

{
  echo
  echo "== finance constant step length (h-findt), $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) =="
  echo "| check | result |"
  echo "|---|---|"
  echo "| test_pricer Executor.* (GPU = host) | $(verdict "$OUT/test_pricer_gpu.log") |"
  echo "| test_american_gpu | $(verdict "$OUT/test_american_gpu.log") |"
  echo "| test_chain Chain.Cuda* | $(verdict "$OUT/test_chain_cuda.log") |"
  echo "| test_time_steps | $(verdict "$OUT/test_time_steps.log") |"
  echo "| wall time | build $(( t_built - t_start )) s, tests + timing $(( t_end - t_built )) s |"
  grep -hE "Failure|Expected|Which is" "$OUT"/test_*.log | head -12
  echo
  echo "-- ${BACKEND:-cuda} stepping ms (fastest after the first of 6 runs; HV + 2 Rannacher steps). A: dt changing each step"
  echo "-- (grading 1.000000001, fp32 1.00001: the old uniform fp64 behaviour), B: the nominal dt (grading 1, new)."
  echo "-- Prices: B fp64, and B - A. --"
  echo "| case | A fp64 ms | B fp64 ms | A/B | A fp32 ms | B fp32 ms | A/B | price B fp64 | B - A fp64 | B - A fp32 |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
} | tee "$OUT/summary.txt"
