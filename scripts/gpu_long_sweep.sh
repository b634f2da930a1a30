#!/usr/bin/env bash
# The long-line crossover on one GPU (issue 18, stop 36): builds only bench_cuda_tridiagonal (VTK, MPI,
# Python, tests off; sm_90) and runs its --long-sweep (lines of 1536 .. 4096 rows, 4,096 .. 32,768
# of them, fp64 and fp32, per-line and shared bands; every candidate kernel, '*' the dispatch's
# pick, and the measured plan). ~4 minutes on a fresh H100 / H200 with the build.
#   OUT=$OUT/sweep scripts/gpu_long_sweep.sh [--with-tests]
# --with-tests: also builds and runs the CUDA dispatch test and the suites of the kernels the
# crossover picks (test_tridiagonal_cuda_dispatch, test_thomas_pcr_strided, test_thomas_pcr_long).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=${BUILD_DIR:-$root/build-sweep}
tests=OFF targets=bench_cuda_tridiagonal
for arg in "$@"; do
  case $arg in
    --with-tests) tests=ON targets="$targets test_tridiagonal_cuda_dispatch test_thomas_pcr_strided test_thomas_pcr_long" ;;
    *) echo "gpu_long_sweep.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
t0=$(date +%s)
gen=""
command -v ninja > /dev/null && gen="-G Ninja"
cmake -S "$root" -B "$build" $gen -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
  -DADI_WITH_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=$tests -DADI_BUILD_BENCHMARKS=ON \
  -DADI_BUILD_EXAMPLES=OFF > "$out/configure.log" 2>&1 || { echo "configure failed"; tail -30 "$out/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" --target $targets > "$out/build.log" 2>&1 ||
  { echo "build failed"; grep -m 20 -B2 -A8 "error" "$out/build.log"; exit 1; }
echo "build: $(($(date +%s) - t0)) s"
bin=$(find "$build" -name bench_cuda_tridiagonal -type f -perm -u+x | head -1)
"$bin" --long-sweep --reps "${REPS:-20}" > "$out/bench_long_sweep.log" 2>&1
rc=$?
echo "sweep rc $rc, $(($(date +%s) - t0)) s"
if [ $tests = ON ]; then
  for t in test_tridiagonal_cuda_dispatch test_thomas_pcr_strided test_thomas_pcr_long; do
    tb=$(find "$build" -name $t -type f -perm -u+x | head -1)
    timeout 300 "$tb" > "$out/$t.log" 2>&1
    echo "$t: rc $? $(grep -hE '^\[  (PASSED|FAILED|SKIPPED)  \]|^device ' "$out/$t.log" | tr '\n' ' ')"
  done
fi
cat "$out/bench_long_sweep.log"
