#!/usr/bin/env bash
# Device check of issue 18 (stop 35): the public case (bench_mpi_tridiagonal --memory device,
# 128x128x4096 fp64 split along z over 2 ranks, per-line bands) in the per-line SPIKE form
# (DistributedOptions::spike_lines: y by the single-device plan, each line's spikes on windows of
# R rows at its ends, checked; a rank whose lines' spikes have not decayed falls back to the
# partition passes). One call on a 2-GPU machine (one rank per GPU, NCCL), ~5 minutes with the
# build (test_distributed_tridiagonal and bench_mpi_tridiagonal only):
#   - test_distributed_tridiagonal, every test on 2 ranks (SpikeLinesDevice: the new form on
#     full bands against the one-domain solve, every axis, odd sizes, fp64 and fp32, windows that
#     truncate, hold, or do not hold the spikes, weakly dominant rows that force the fall-back on
#     one rank), and the full-band device tests (DeviceMemory / DeviceNccl / DeviceZeroPivot) again
#     with ADI_SPIKE_LINES=1 (the new form, off by default);
#   - the public case, rows of the partition passes and of the SPIKE form (R = 64, 128; y by the
#     dispatch's kernel, the measured one, cuda_thomas_pcr_long; column "y ms": y alone) in the
#     same run, twice (NCCL, automatic strategy), and one rank's box (128x128x2048) on one GPU;
#   - memcheck on 2 ranks of a small solve in both forms.
#   OUT=/tmp/o tests/mpi/gpu_public_check.sh
set -u
OUT=${OUT:-public-check-out}
BUILD=${BUILD:-build-mpi-gpu}
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-150}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
  git log --oneline -1 2>/dev/null
} >"$S"
configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF
build_check test_distributed_tridiagonal bench_mpi_tridiagonal test_distributed_adi
B=$BUILD
T="$B/benchmarks/bench_mpi_tridiagonal"
NG=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$NG" -ge 2 ] || echo "only $NG GPU(s): 2 ranks share one, NCCL cases skip (loudly)" >>"$S"
# 1. Correctness.
step "tridiagonal all tests np2" 150 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_tridiagonal"
# The heat step's shared-band SPIKE path (its spike kernels are templated on this branch): every
# scheme x boundary x split against one domain, 2 ranks (DistributedAdiDevice.*, ~1-2 min).
step "adi device np2 (shared-band SPIKE)" 240 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_adi" \
  --gtest_filter='*Device*'
# (the full-band device tests again in the per-line SPIKE form, off by default)
step "tridiagonal device np2, SPIKE form" 60 "$OUT/tests.log" $MPI -x ADI_SPIKE_LINES=1 -n 2 \
  "$B/tests/test_distributed_tridiagonal" --gtest_filter='*DeviceMemory*:*DeviceNccl*:*DeviceZeroPivot*'
grep -hE "SKIPPED:|NOT tested|SpikeLines \(|SpikeArithmetic:|FAILED|Failure|Expected|Which is|Value of|axis [xyz]" \
  "$OUT/tests.log" | sort | uniq -c | head -60 >>"$S"
# 2. The public case: partition passes and the SPIKE form (R = 64, 128) in the same run, twice.
for k in 1 2; do
  step "public np2 run $k" 150 "$OUT/public.log" $MPI -n 2 "$T" --memory device --strategy automatic \
    --transport nccl --reps 20 --spike-window 64,128 --spike-kernel automatic,measure,cuda_thomas_pcr_long
done
# y's cost alone: one GPU solving one rank's box (16,384 lines of 2048) with the single-device plan.
step "one rank's box on one GPU" 60 "$OUT/public.log" $MPI -n 1 "$T" --memory device --n 128x128x2048 --reps 20
{  # the table now (memcheck below may run out of time)
  echo
  echo "== The public case (128x128x4096 fp64, 2 ranks, NCCL): partition passes vs the per-line SPIKE form =="
  grep -hE "^bench_mpi|^device memory" "$OUT/public.log" | sort -u
  grep -hE "^\| (ranks|1|2) \|" "$OUT/public.log" | cut -d'|' -f2-16
  echo
} >>"$S"
# 3. memcheck on 2 ranks: a small solve in both forms (R = 64 truncates the 150-row segments).
memcheck_step "memcheck public-like np2, partition + SPIKE" "$OUT/cs_public" "$T" --n 16x8x300 --memory device \
  --reps 1 --strategy allgather --transport nccl --spike-window 64
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log summary.txt 2>/dev/null) 2>/dev/null
rm -f "$OUT"/cs_*.log
{
  echo "done ($(el))"
} >>"$S"
cat "$S"
