#!/usr/bin/env bash
# GPU check for issue 17 (neurons as NEURON builds them). Run from the repository root on the
# GPU machine; logs and the summary table go to $OUT (default ./gpu_neuron_out).
#   scripts/gpu_neuron_check.sh
# The GPU machine has no NEURON: the NEURON comparisons ran on the CPU machine (docs/hines.md);
# here the GPU runs the Import3d cells and is compared with the host (test_hines_cuda's
# PassiveNeuronsMatchTheHost, which reads the real cells through the Import3d default).
set -u
OUT=${OUT:-$PWD/gpu_neuron_out}
mkdir -p "$OUT"
B=build-gpu-neuron
JOBS=$(nproc)
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
: > "$OUT/summary.txt"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_EXAMPLES=ON -DADI_BUILD_BENCHMARKS=ON \
  > "$OUT/configure.log" 2>&1 || { log "configure FAILED (configure.log)"; exit 1; }
cmake --build $B -j"$JOBS" --target test_hines test_hines_neuron test_hines_cpu test_hines_cuda test_swc \
  bench_cuda_hines bench_hines_neuron neuron > "$OUT/build.log" 2>&1 || { log "build FAILED (build.log)"; exit 1; }
log "build ok"
status=0
for t in test_swc test_hines test_hines_neuron test_hines_cpu test_hines_cuda; do
  (cd $B && timeout 900 ./tests/$t > "$OUT/$t.log" 2>&1)
  rc=$?
  [ $rc -ne 0 ] && status=1
  log "$t: rc $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$t.log" | tr '\n' ' ')"
done
# The neuron example: Import3d cells passive on the GPU, fp64 and fp32; active (host) ring.
C=tests/data/morphologies
(cd $B && ./examples/neuron/neuron --swc ../$C/allen-177300.01.02.01.swc --swc ../$C/04a_pyramidal4aACC.CNG.swc \
   --neurons 10000 --t-end 5 --backend cuda --no-output > "$OUT/example_cuda_fp64.log" 2>&1); log "example cuda fp64: rc $? $(grep 'ns per' "$OUT/example_cuda_fp64.log")"
(cd $B && ./examples/neuron/neuron --swc ../$C/allen-177300.01.02.01.swc --swc ../$C/04a_pyramidal4aACC.CNG.swc \
   --neurons 10000 --t-end 5 --backend cuda --precision float --no-output > "$OUT/example_cuda_fp32.log" 2>&1); log "example cuda fp32: rc $? $(grep 'ns per' "$OUT/example_cuda_fp32.log")"
(cd $B && ./examples/neuron/neuron --swc ../$C/04a_pyramidal4aACC.CNG.swc --active --neurons 100 --t-end 50 --amp 1 \
   --no-output > "$OUT/example_active.log" 2>&1); log "example active (host, 16 cores): rc $? $(grep -E 'spikes|ns per' "$OUT/example_active.log" | tr '\n' ' ')"
# Benchmarks: the GPU layouts/kernels (quick), and the host populations on this machine's cores.
(cd $B && timeout 1200 ./benchmarks/bench_cuda_hines --quick > "$OUT/bench_cuda_hines.log" 2>&1); log "bench_cuda_hines --quick: rc $?"
(cd $B && timeout 1200 ./benchmarks/bench_hines_neuron --no-neuron --repeat 1 > "$OUT/bench_hines_neuron.log" 2>&1); log "bench_hines_neuron --no-neuron --repeat 1: rc $?"
{
  echo
  echo "## Summary (tables)"
  echo
  grep -E '^\|' "$OUT/bench_hines_neuron.log"
  echo
  grep -E '^\|' "$OUT/bench_cuda_hines.log" | head -80
} | tee -a "$OUT/summary.txt"
exit $status
