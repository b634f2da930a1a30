#!/usr/bin/env bash
# Device check of issue 18's MPI items (h-mpi, stop 28), for one call on a 2-GPU machine
# (nvidia-h100-x2 / nvidia-h200-x2, one rank per GPU, Open MPI not CUDA-aware, NCCL): builds
# only what it runs (CUDA for sm_90, MPI on, VTK off), then
#   1. the block tests on 2 ranks (NCCL: reduced block rows exchanged and solved on the
#      devices; host staging; the singular-system checks) and on 1 rank,
#   2. the scalar NCCL tests on 2 ranks (the shared communicator code),
#   3. compute-sanitizer memcheck on the NCCL path (2 ranks), NCCL's own start-up API-error
#      reports ignored and nothing else (tests/mpi/sanitizer_verdict.sh),
#   4. the tables: NCCL communicator creation (once per axis) and plan + first solve of the
#      plans after it (public case 128x128x4096 on 2 GPUs, bench_mpi_tridiagonal), block
#      lines M = 5, 64x64x2048 fp64 on 1 GPU vs 2 GPUs and the speed-up (bench_mpi_block),
#   5. the CFD example on the GPUs (test_distributed_euler on 2 ranks; the vortex on 1 CPU rank
#      and on 2 GPUs, the density errors side by side), built apart: a failure there stops nothing.
# Logs in $OUT, tables at the end of $OUT/summary.txt (printed). About 4-5 minutes.
#
#   OUT=/tmp/o tests/mpi/gpu_block_check.sh
#   NOBUILD=1 BUILD=build-host OUT=/tmp/o tests/mpi/gpu_block_check.sh   # an existing build (host dry run)
set -u
OUT=${OUT:-block-check-out}
BUILD=${BUILD:-build-dev}
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-150}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
  nvidia-smi topo -m 2>&1 | head -3
  nvidia-smi nvlink -s -i 0 2>&1 | head -3
  mpiexec --version 2>&1 | head -1
} >"$S"
if [ "${NOBUILD:-0}" != 1 ]; then  # NOBUILD=1 BUILD=dir: use an existing build
  configure_check
  build_check test_distributed_block_tridiagonal test_distributed_tridiagonal bench_mpi_block bench_mpi_tridiagonal
fi
T="$BUILD/tests/test_distributed_block_tridiagonal"
TS="$BUILD/tests/test_distributed_tridiagonal"
Bn="$BUILD/benchmarks/bench_mpi_block"
Bt="$BUILD/benchmarks/bench_mpi_tridiagonal"
NG=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$NG" -ge 2 ] || echo "only $NG GPU(s): 2 ranks share one, NCCL cases skip (loudly)" >>"$S"
# 1-2. Tests (one rank per GPU on 2 ranks).
step "block tests np2" 150 "$OUT/tests.log" $MPI -n 2 "$T"
step "block tests np1" 90 "$OUT/tests.log" $MPI -n 1 "$T"
step "scalar nccl np2" 90 "$OUT/tests.log" $MPI -n 2 "$TS" \
  --gtest_filter='*DeviceNccl*:*UnsupportedTransports*:*DeviceZeroPivot*'
grep -hE "SKIPPED:|NOT tested" "$OUT/tests.log" | sort -u >>"$S"
# 3. memcheck on the NCCL path, one log per rank; the verdict ignores only NCCL's start-up probing.
memcheck_step "memcheck block nccl np2" "$OUT/cs_block" "$Bn" --n 6x5x40 --m 5 --reps 1 --no-mirrors --no-baseline
memcheck_step "memcheck scalar nccl np2" "$OUT/cs_scalar" "$Bt" --memory device --n 16x16x256 --strategy allgather \
  --transport nccl --reps 2
# 4. Benchmarks.
step "bench public np2" 120 "$OUT/bench.log" $MPI -n 2 "$Bt" --memory device
step "bench block np1" 90 "$OUT/blockbench.log" $MPI -n 1 "$Bn" --n 64x64x2048 --m 5 --reps 10
step "bench block np2" 150 "$OUT/blockbench.log" $MPI -n 2 "$Bn" --n 64x64x2048 --m 5 --reps 10 --subsegments 4,64
# 5. The CFD example on the GPUs (device memory, NCCL): its tests on 2 ranks, then the vortex on
# 1 rank (CPU) and 2 ranks (GPUs): the density errors must agree. Its build failing stops nothing above.
if cmake --build "$BUILD" -j"$(nproc)" --target test_distributed_euler euler_vortex_mpi >>"$OUT/build.log" 2>&1; then
  E="$BUILD/examples/cfd/euler_vortex_mpi"
  step "cfd tests np2" 150 "$OUT/cfd.log" $MPI -n 2 "$BUILD/tests/test_distributed_euler"
  step "cfd vortex cpu np1" 60 "$OUT/cfd.log" $MPI -n 1 "$E" --n 128 --t-end 2 --threads 8
  step "cfd vortex gpu np2" 60 "$OUT/cfd.log" $MPI -n 2 "$E" --n 128 --t-end 2 --procs 2x1x1 --backend cuda
  step "cfd vortex cpu np1 3d" 60 "$OUT/cfd.log" $MPI -n 1 "$E" --dims 3 --n 48 --nz 12 --u0 0.5 --w0 1 --t-end 1 \
    --threads 8
  step "cfd vortex gpu np2 3d" 60 "$OUT/cfd.log" $MPI -n 2 "$E" --dims 3 --n 48 --nz 12 --procs 1x1x2 --u0 0.5 \
    --w0 1 --t-end 1 --backend cuda
else
  echo "cfd build FAILED ($(el))" >>"$S"
fi
{
  echo
  echo "== Public case 128x128x4096 fp64 on 2 GPUs (NCCL creation once, then plan + first solve per plan) =="
  grep -E "^\| ranks|^\|---|^\| 2 \| device" "$OUT/bench.log"
  grep -E "^device memory, 2 rank|^bench_mpi_tridiagonal:" "$OUT/bench.log"
  echo
  echo "== Block lines M = 5, 64x64x2048 fp64 along z: 1 GPU vs 2 GPUs =="
  grep -E "^bench_mpi_block:|^\||^block lines|^not run" "$OUT/blockbench.log"
  echo
  echo "== CFD vortex: 1 rank CPU vs 2 GPUs (the density errors agree) =="
  grep -E "^### |^(ranks|backend|density error|time) " "$OUT/cfd.log" 2>/dev/null
  echo "done ($(el))"
} >>"$S"
cat "$S"
