#!/usr/bin/env bash
# The transport part of the issue-7 device check, on its own (gpu_mpi_check.sh runs the
# same steps among the others): build the distributed tridiagonal test and benchmark with
# MPI + CUDA (+ NCCL where found), run the device tests on 1 and 2 ranks, memcheck a small
# 2-rank case through every transport, ask NCCL about ranks sharing a GPU, and the public
# case (128x128x4096 fp64 split along z) per transport on 1 and 2 ranks. Logs to $OUT.
#
#   OUT=/tmp/o tests/mpi/gpu_transport_check.sh
set -u
OUT=${OUT:-transport-check-out}
BUILD=${BUILD:-build-dev}
. "$(dirname "$0")/check_common.sh"
{
  date -u +%FT%TZ
  nvidia-smi -L 2>&1
  ls /usr/include/nccl.h /usr/local/cuda*/include/nccl.h 2>&1
  ldconfig -p 2>/dev/null | grep -i libnccl
} >"$S"
configure_check
grep "adi::mpi: NCCL" "$OUT/build.log" >>"$S"
build_check test_distributed_tridiagonal bench_mpi_tridiagonal
T="$BUILD/tests/test_distributed_tridiagonal"
B="$BUILD/benchmarks/bench_mpi_tridiagonal"
export OMP_NUM_THREADS=4
for np in 1 2; do
  timeout 150 $MPI -n $np "$T" --gtest_filter='*Device*:*Transport*' >"$OUT/tests_np$np.log" 2>&1
  echo "tests np$np rc=$? ($(el))" >>"$S"
  grep -aE "OK \]|FAILED|SKIPPED \]|PASSED|info|verdict|Failure|error" "$OUT/tests_np$np.log" | sort -u | head -40 >>"$S"
done
timeout 30 $MPI -n 2 "$B" --nccl-probe >"$OUT/probe.log" 2>&1
echo "nccl probe rc=$? ($(el))" >>"$S"
grep -a "probe" "$OUT/probe.log" >>"$S"
grep -a "Duplicate GPU" "$OUT/probe.log" | head -2 >>"$S"
timeout 60 $MPI -n 1 "$B" --memory device >"$OUT/bench_np1.log" 2>&1
echo "bench np1 rc=$? ($(el))" >>"$S"
timeout 120 $MPI -n 2 "$B" --memory device >"$OUT/bench_np2.log" 2>&1
echo "bench np2 rc=$? ($(el))" >>"$S"
timeout 60 $MPI -n 2 "$B" --memory device --strategy allgather --transport host_staging --reduced-solve device \
  --reps 20 >"$OUT/bench_np2_repeat.log" 2>&1
echo "bench np2 repeat rc=$? ($(el))" >>"$S"
grep -ahE "^\||not run:|CUDA-aware|memory, " "$OUT/bench_np1.log" "$OUT/bench_np2.log" "$OUT/bench_np2_repeat.log" >>"$S"
# memcheck: a small case through every transport and strategy, and the zero-pivot test.
timeout 120 $MPI -n 2 compute-sanitizer --tool memcheck --error-exitcode 3 "$B" --memory device --n 16x12x64 \
  --reps 2 >"$OUT/sanitizer.log" 2>&1
echo "memcheck bench np2 rc=$? ($(el))" >>"$S"
timeout 90 $MPI -n 2 compute-sanitizer --tool memcheck --error-exitcode 3 "$T" \
  --gtest_filter='*DeviceZeroPivot*' >>"$OUT/sanitizer.log" 2>&1
echo "memcheck zero-pivot np2 rc=$? ($(el))" >>"$S"
grep -aE "ERROR SUMMARY" "$OUT/sanitizer.log" | sort | uniq -c >>"$S"
echo "done ($(el))" >>"$S"
