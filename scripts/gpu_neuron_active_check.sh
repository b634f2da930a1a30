#!/usr/bin/env bash
# GPU check of the active neuron population on a CUDA executor (issue 17: adi::ActiveNeurons with
# Executor::cuda, solvers/cuda/hines_active.cu). Run from the repository root on the GPU machine;
# logs and the summary table go to $OUT (default ./gpu_neuron_active_out).
#   scripts/gpu_neuron_active_check.sh
# Builds with VTK off for sm_90; runs the GPU-vs-host tests (a GPU test that skips counts as a
# failure here: this machine has a GPU), compute-sanitizer memcheck on small cases, the neuron
# example's --active --backend cuda (fp64, fp32) beside the host, and the large active
# population benchmark (GPU fp64/fp32 and adi on all host cores; NEURON is not installed here:
# its column comes from `bench_hines_neuron --large-only --no-gpu --neuron-max 10000` on the CPU
# machine).
set -u
OUT=${OUT:-$PWD/gpu_neuron_active_out}
mkdir -p "$OUT"
B=${B:-build-gpu-neuron}
JOBS=$(nproc)
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_EXAMPLES=ON -DADI_BUILD_BENCHMARKS=ON \
  > "$OUT/configure.log" 2>&1 || { log "configure FAILED (configure.log)"; exit 1; }
cmake --build $B -j"$JOBS" --target test_hines test_hines_active_cuda bench_hines_neuron neuron \
  > "$OUT/build.log" 2>&1 || { log "build FAILED (build.log)"; exit 1; }
log "build ok"
status=0
# Tests: the host active tests, then the GPU population against the host.
(cd $B && timeout 900 ./tests/test_hines --gtest_filter='HinesActive*' > "$OUT/test_hines_active_host.log" 2>&1)
rc=$?; [ $rc -ne 0 ] && status=1
log "test_hines HinesActive*: rc $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/test_hines_active_host.log" | tr '\n' ' ')"
(cd $B && timeout 1200 ./tests/test_hines_active_cuda > "$OUT/test_hines_active_cuda.log" 2>&1)
rc=$?; [ $rc -ne 0 ] && status=1
grep -q '^\[  SKIPPED \]' "$OUT/test_hines_active_cuda.log" && { status=1; log "GPU tests SKIPPED on a GPU machine"; }
log "test_hines_active_cuda: rc $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/test_hines_active_cuda.log" | tr '\n' ' ')"
grep -E 'identical|fp32|max relative' "$OUT/test_hines_active_cuda.log" | sed 's/^/   /' | tee -a "$OUT/summary.txt"
# compute-sanitizer on small cases (memcheck must be clean; initcheck reported only).
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
SMALL='HinesActiveCuda.TinyPopulations:HinesActiveCuda.NonFiniteVoltageIsReported:HinesActiveCuda.FloatRingFollowsHost'
(cd $B && timeout 1200 "$CS" --tool memcheck --error-exitcode 99 ./tests/test_hines_active_cuda --gtest_filter="$SMALL" \
  > "$OUT/memcheck.log" 2>&1)
rc=$?; [ $rc -ne 0 ] && status=1
log "compute-sanitizer memcheck: rc $rc, $(grep -E 'ERROR SUMMARY' "$OUT/memcheck.log" | tail -1)"
(cd $B && timeout 1200 "$CS" --tool initcheck ./tests/test_hines_active_cuda --gtest_filter='HinesActiveCuda.TinyPopulations' \
  > "$OUT/initcheck.log" 2>&1)
log "compute-sanitizer initcheck (report only): rc $?, $(grep -E 'ERROR SUMMARY' "$OUT/initcheck.log" | tail -1)"
# The example: a ring of 10,000 active cells on the GPU (fp64, fp32) and on the host.
C=tests/data/morphologies
for run in "cuda double" "cuda float" "cpu double"; do
  set -- $run
  (cd $B && timeout 900 ./examples/neuron/neuron --swc ../$C/04a_pyramidal4aACC.CNG.swc --active --neurons 10000 \
     --stim-neurons 10 --t-end 50 --amp 1 --backend $1 --precision $2 --no-output > "$OUT/example_active_$1_$2.log" 2>&1)
  rc=$?; [ $rc -ne 0 ] && status=1
  log "example --active --backend $1 --precision $2: rc $rc $(grep -E 'spikes|ns per' "$OUT/example_active_$1_$2.log" | tr '\n' ' ')"
done
# Benchmark: large active populations, GPU beside all host cores.
(cd $B && timeout 2400 ./benchmarks/bench_hines_neuron --large-only --no-neuron > "$OUT/bench_hines_neuron_large.log" 2>&1)
rc=$?; [ $rc -ne 0 ] && status=1
log "bench_hines_neuron --large-only --no-neuron: rc $rc"
{
  echo
  echo "## Summary (table)"
  echo
  grep -E '^(Active|\|)' "$OUT/bench_hines_neuron_large.log"
} | tee -a "$OUT/summary.txt"
exit $status
