#!/usr/bin/env bash
# The MPI part of the device check (issue 7): build adi::mpi with CUDA, run the MPI tests
# under mpiexec on 1..4 ranks, compute-sanitizer on a small 2-rank device case, then the
# benchmarks: the public distributed case (128x128x4096 fp64 split along z) on 1 and 2
# GPUs, the heat-sweep weak-scaling series on the GPUs, the distributed AdiSolver (heat3d_mpi,
# host and device; its tests on device memory) and the full-step GPU benchmark bench_mpi_heat. Logs to $OUT (default ./mpi-check-out).
#
#   OUT=/tmp/o tests/mpi/gpu_mpi_check.sh                 # on the 2-GPU machine
#   DRY=1 BUILD=build-h7 OUT=/tmp/o tests/mpi/gpu_mpi_check.sh   # host dry run, small sizes
set -u
OUT=${OUT:-mpi-check-out}
BUILD=${BUILD:-build-dev}
DRY=${DRY:-0}
. "$(dirname "$0")/check_common.sh"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1
  nvidia-smi topo -m 2>&1 | head -4
  mpiexec --version 2>&1 | head -1
  ompi_info --parsable --all 2>/dev/null | grep -i "mpi_built_with_cuda_support:value" || echo "ompi_info: no cuda support line"
} >"$S"

if [ "$DRY" = 1 ]; then
  PUB="--n 32x32x512"; WEAK=48; HEATN=32; NPS="1 2"; T=8
else
  PUB=""; WEAK=512; HEATN=256; NPS="1 2 3 4"; T=16
  configure_check
  build_check test_distributed_tridiagonal test_distributed_block_tridiagonal test_bad_input test_distributed_adi \
    test_halo_exchange test_distributed_euler bench_mpi_tridiagonal heat3d_mpi
fi
B="$BUILD"
# The device heat step (the distributed AdiSolver): its benchmark.
if [ "$DRY" != 1 ]; then
  cmake --build "$BUILD" -j"$(nproc)" --target bench_mpi_heat >>"$OUT/build.log" 2>&1 || echo "bench_mpi_heat build FAILED" >>"$S"
fi
export OMP_NUM_THREADS=4
# 1. The device partition passes first (the new code), then the benchmarks, then everything else.
step "device np2" 90 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_tridiagonal" --gtest_filter='*DeviceMemory*'
# Transports (h7t): device tests of every transport that can run, what NCCL says to ranks sharing a GPU.
step "device transports np2" 120 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_tridiagonal" \
  --gtest_filter='*DeviceHostStaging*:*DeviceCudaAwareMpi*:*DeviceNccl*:*UnsupportedTransports*:*DeviceZeroPivot*'
step "nccl probe np2" 30 "$OUT/bench.log" $MPI -n 2 "$B/benchmarks/bench_mpi_tridiagonal" --nccl-probe
step "bench public np1" 60 "$OUT/bench.log" $MPI -n 1 "$B/benchmarks/bench_mpi_tridiagonal" --memory device $PUB
step "bench public np2" 90 "$OUT/bench.log" $MPI -n 2 "$B/benchmarks/bench_mpi_tridiagonal" --memory device $PUB
SUBS="1 4 32"; SPLITS=zy
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" = 1 ]; then SUBS=1; SPLITS=z; echo "one GPU: 2 ranks share it" >>"$S"; fi
for sub in $SUBS; do  # sub-segments per segment: one thread per line, fewer and more than automatic
  step "bench public np2 S=$sub" 60 "$OUT/bench.log" $MPI -n 2 "$B/benchmarks/bench_mpi_tridiagonal" --memory device \
    --strategy allgather --subsegments $sub $PUB
done
if [ "$DRY" = 1 ]; then
  step "bench public np2 host" 90 "$OUT/bench.log" $MPI -n 2 "$B/benchmarks/bench_mpi_tridiagonal" --memory host $PUB
fi
step "weak np1" 60 "$OUT/weak.log" $MPI -n 1 "$B/benchmarks/bench_mpi_tridiagonal" --weak $WEAK --split z \
  --memory device --reps 5
step "weak np2" 90 "$OUT/weak.log" $MPI -n 2 "$B/benchmarks/bench_mpi_tridiagonal" --weak $WEAK --split $SPLITS \
  --memory device --reps 5
# Host distributed AdiSolver weak scaling: HEATN^3 nodes per rank, T threads per rank.
step "heat np1" 90 "$OUT/heat.log" $MPI -n 1 "$B/examples/heat/heat3d_mpi" --n $HEATN --steps 5 --threads $T \
  --no-output
step "heat np2 x" 90 "$OUT/heat.log" $MPI -n 2 "$B/examples/heat/heat3d_mpi" --nx $((2 * HEATN - 1)) --n $HEATN \
  --procs 2x1x1 --steps 5 --threads $T --no-output
step "heat np2 z" 90 "$OUT/heat.log" $MPI -n 2 "$B/examples/heat/heat3d_mpi" --nz $((2 * HEATN - 1)) --n $HEATN \
  --procs 1x1x2 --steps 5 --threads $T --no-output
# Device distributed AdiSolver (issue 15): tests first (every scheme x boundary x process grid
# = the single-domain solver to 1e-12, the device halo bit for bit), the example on the GPU,
# the full-step weak scaling.
HB=512; [ "$DRY" = 1 ] && HB=32
step "device adi np2" 600 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_adi" --gtest_filter='*Device*'
step "device halo np2" 120 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_halo_exchange" --gtest_filter='*Device*'
step "heat device np1" 90 "$OUT/heat.log" $MPI -n 1 "$B/examples/heat/heat3d_mpi" --n $HEATN --steps 5 \
  --memory device --no-output
step "heat device np2 z" 90 "$OUT/heat.log" $MPI -n 2 "$B/examples/heat/heat3d_mpi" --nz $((2 * HEATN - 1)) \
  --n $HEATN --procs 1x1x2 --steps 5 --memory device --no-output
step "heat bench np1" 120 "$OUT/heatbench.log" $MPI -n 1 "$B/benchmarks/bench_mpi_heat" --n $HB --reps 5
step "heat bench np2" 180 "$OUT/heatbench.log" $MPI -n 2 "$B/benchmarks/bench_mpi_heat" --n $HB --reps 5 --splits z,y,x
# Device block passes (h7b): their tests, bench_mpi_block (1 rank: the single-device plan; 2 ranks:
# every transport of the device passes, host mirrors, the same global problem on rank 0's GPU alone),
# memcheck on a small 2-rank case (NCCL's start-up API-error reports ignored: sanitizer_verdict.sh).
BLK="--n 64x64x2048"; [ "$DRY" = 1 ] && BLK="--n 8x8x64"
[ "$DRY" != 1 ] && { cmake --build "$BUILD" -j"$(nproc)" --target bench_mpi_block >>"$OUT/build.log" 2>&1 || echo "bench_mpi_block build FAILED" >>"$S"; }
step "device block np2" 120 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_block_tridiagonal" --gtest_filter='*Device*:*OneGpu*'
step "block bench np1" 60 "$OUT/blockbench.log" $MPI -n 1 "$B/benchmarks/bench_mpi_block" $BLK --m 5
step "block bench np2" 90 "$OUT/blockbench.log" $MPI -n 2 "$B/benchmarks/bench_mpi_block" $BLK --m 5
memcheck_step "memcheck block np2" "$OUT/cs_block" "$B/benchmarks/bench_mpi_block" --n 6x5x40 --m 5 --reps 1 \
  --no-baseline
grep -E "^\|" "$OUT/blockbench.log" >>"$S" 2>/dev/null
export OMP_NUM_THREADS=1
for np in $NPS; do
  for t in test_distributed_tridiagonal test_distributed_block_tridiagonal test_bad_input test_distributed_adi \
    test_halo_exchange test_distributed_euler; do
    step "$t np$np" 600 "$OUT/tests.log" $MPI -n "$np" "$B/tests/$t"
  done
done
memcheck_step "memcheck np2" "$OUT/cs_scalar" "$B/tests/test_distributed_tridiagonal" --gtest_filter='*DeviceMemory*'
grep -E "^\|" "$OUT/bench.log" "$OUT/weak.log" >>"$S"
memcheck_step "memcheck halo np2" "$OUT/cs_halo" "$B/tests/test_halo_exchange" --gtest_filter='HaloExchangeDevice.*'
memcheck_step "memcheck adi np2" "$OUT/cs_adi" "$B/tests/test_distributed_adi" \
  --gtest_filter='DistributedAdiDevice.MatchesHost'
grep -E "^\|" "$OUT/heatbench.log" >>"$S" 2>/dev/null
grep -E "CUDA-aware|time |per part|grid " "$OUT/bench.log" "$OUT/heat.log" | sort -u >>"$S"
grep -E "nccl probe|not run:|automatic transport here" "$OUT/bench.log" "$OUT/tests.log" | sort -u >>"$S"
echo "done ($(el))" >>"$S"
