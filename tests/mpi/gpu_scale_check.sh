#!/usr/bin/env bash
# Scale-out runs on a machine of several GPUs (issue 19: four and eight GPUs), one rank per
# GPU, in one device call: the public case (128x128x4096 fp64 split along z) on 1, 2, 4 (, 8)
# GPUs, the sweep weak scaling at 512^3 per GPU, the full heat step's weak scaling
# (bench_mpi_heat), the device tests of the distributed AdiSolver on all GPUs, and memcheck
# of the device halo exchange on 4 ranks. Tables at the end; logs under $OUT.
#
#   OUT=/tmp/o tests/mpi/gpu_scale_check.sh [--quick]     # on the multi-GPU machine
#
# --quick: the benchmarks only (no tests, no memcheck); --tests-only: the tests and memcheck only.
# NPS="1 4" (say): only those rank counts (default: 1, 2 and every power of two up to the GPUs).
# On 4 x H200 (stop 46) the benchmarks at NPS="1 4" took ~50 s after a 64-s build, and the 11 device
# tests of the distributed AdiSolver ~50 s each on 4 ranks: run --quick and --tests-only as two
# 10-minute calls.
set -u
OUT=${OUT:-scale-check-out}
BUILD=${BUILD:-build-scale}
quick=0 benches=1
[ "${1:-}" = "--quick" ] && quick=1
[ "${1:-}" = "--tests-only" ] && benches=0
. "$(dirname "$0")/check_common.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | sort | uniq -c
  nvidia-smi topo -m 2>&1 | head -$((gpus + 1))
  mpiexec --version 2>&1 | head -1
} >"$S"
if [ -z "${NPS:-}" ]; then
  NPS="1 2"
  [ "$gpus" -ge 4 ] && NPS="1 2 4"
  [ "$gpus" -ge 8 ] && NPS="1 2 4 8"
fi
configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF
build_check bench_mpi_tridiagonal bench_mpi_heat test_distributed_adi test_halo_exchange
echo "GPUs: $gpus, rank counts: $NPS" >>"$S"
B=$BUILD
export OMP_NUM_THREADS=4
step "nccl probe np$gpus" 60 "$OUT/bench.log" $MPI -n "$gpus" "$B/benchmarks/bench_mpi_tridiagonal" --nccl-probe
if [ $benches = 1 ]; then
  for np in $NPS; do
    step "public np$np" 90 "$OUT/bench.log" $MPI -n "$np" "$B/benchmarks/bench_mpi_tridiagonal" --memory device
  done
  for np in $NPS; do
    step "weak np$np" 120 "$OUT/weak.log" $MPI -n "$np" "$B/benchmarks/bench_mpi_tridiagonal" --weak 512 --split z \
      --memory device --reps 5
  done
  for np in $NPS; do
    sp=z; [ "$np" -gt 1 ] && sp=z,y,x; [ "$np" -ge 4 ] && sp=z,y,x,zy
    step "heat np$np" 180 "$OUT/heatbench.log" $MPI -n "$np" "$B/benchmarks/bench_mpi_heat" --n 512 --reps 3 --splits $sp
  done
fi
if [ $quick = 0 ]; then
  step "device adi np$gpus" 560 "$OUT/tests.log" $MPI -n "$gpus" "$B/tests/test_distributed_adi" --gtest_filter='*Device*'
  step "device halo np$gpus" 120 "$OUT/tests.log" $MPI -n "$gpus" "$B/tests/test_halo_exchange" --gtest_filter='*Device*'
  # One log per rank, judged by sanitizer_verdict.sh (NCCL's start-up probing ignored, nothing else):
  # the ranks' reports interleave in one log and lose their backtraces' owner.
  MEMCHECK_RANKS=4 MEMCHECK_TIMEOUT=180 memcheck_step "memcheck halo np4" "$OUT/sanitizer" \
    "$B/tests/test_halo_exchange" --gtest_filter='HaloExchangeDevice.*'
fi
grep -E "nccl probe" "$OUT/bench.log" | sort -u >>"$S"
grep -E "^\||time |per part|copy bandwidth" "$OUT/bench.log" "$OUT/weak.log" "$OUT/heatbench.log" >>"$S"
echo "done ($(el))" >>"$S"
cat "$S"
