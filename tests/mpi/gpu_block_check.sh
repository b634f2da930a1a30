#!/usr/bin/env bash
# Device check of the block partition passes (issue 7, h7b): build the block test and
# bench_mpi_block with CUDA + MPI, run the block tests on 1..4 ranks sharing the GPU(s),
# compute-sanitizer memcheck on small 2-rank device cases, and the benchmark (64x64x2048,
# M = 5, fp64, lines along z: 1 rank = the single-device plan; 2 ranks = device passes vs
# host mirrors). Logs and summary.txt in $OUT.
#
#   OUT=/tmp/o tests/mpi/gpu_block_check.sh
set -u
OUT=${OUT:-block-check-out}
BUILD=${BUILD:-build-dev}
. "$(dirname "$0")/check_common.sh"
export OMP_NUM_THREADS=4
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader >"$S" 2>&1
configure_check
build_check test_distributed_block_tridiagonal bench_mpi_block
T="$BUILD/tests/test_distributed_block_tridiagonal"
Bn="$BUILD/benchmarks/bench_mpi_block"
step "block tests np2" 120 "$OUT/tests.log" $MPI -n 2 "$T"
CS="compute-sanitizer --tool memcheck --error-exitcode 7"
step "memcheck np2 M5 fp64" 60 "$OUT/memcheck.log" $MPI -n 2 $CS "$Bn" --n 6x5x40 --m 5 --reps 1
step "memcheck np2 M8 fp32" 60 "$OUT/memcheck.log" $MPI -n 2 $CS "$Bn" --n 7x3x24 --m 8 --reps 1 --float
step "memcheck np2 M2 fp64" 60 "$OUT/memcheck.log" $MPI -n 2 $CS "$Bn" --n 5x5x9 --m 2 --reps 1
step "memcheck np2 singular" 60 "$OUT/memcheck.log" $MPI -n 2 $CS "$T" --gtest_filter='*OneGpu*:*DeviceSubsegments*'
step "bench np1" 60 "$OUT/bench.log" $MPI -n 1 "$Bn" --n 64x64x2048 --m 5 --reps 10
step "bench np2" 90 "$OUT/bench.log" $MPI -n 2 "$Bn" --n 64x64x2048 --m 5 --reps 10
for np in 1 3 4; do step "block tests np$np" 120 "$OUT/tests.log" $MPI -n $np "$T"; done
grep -A8 "^bench_mpi_block" "$OUT/bench.log" >>"$S"
