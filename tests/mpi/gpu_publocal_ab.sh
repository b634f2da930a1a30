#!/usr/bin/env bash
# Device A/B of y by truncated sweeps in the per-line SPIKE form (issue 18, stop 40, h-publocal):
# one call on a 2-GPU machine (nvidia-h100-x2 / nvidia-h200-x2, one rank per GPU, NCCL), ~5-6
# minutes with the build of test_distributed_tridiagonal and bench_mpi_tridiagonal.
#
# What it measures: the public case (128x128x4096 fp64 along z, 2 ranks: 16,384 lines of 2048 per
# GPU), allgather over NCCL, the partition passes and the SPIKE form (R = 64, y by
# cuda_thomas_pcr_long by name: no measuring) in the same run, with
#   ADI_SPIKE_Y_STREAM=0  y by the single-device kernel (cuda_thomas_pcr_long, 5 arrays at 52% of
#                         copy: 0.67 ms of the 0.83 ms per solve at stop 40)
#   ADI_SPIKE_Y_STREAM=1  y by truncated sweeps (common::spike_y_part; 2 parts a line, a thread per
#                         (line, part), c*, y* in a 48-row ring in shared memory: 5.16 arrays)
#   ADI_SPIKE_Y_STREAM=2  the same, a, b, c, d requested into L2 32 rows ahead
#   ADI_SPIKE_Y_STREAM=3  the loads double-buffered (the next 8 rows' in flight while 8 are made)
#   ADI_SPIKE_Y_STREAM=4  3 and 2
# and with ADI_SPIKE_WINDOWS_SIDE=1 (the spike windows on a side stream beside y: variants "0s",
# "3s", "4s"), pass 1 "0 1 2 3 4 0s 3s 4s", pass 2 "0 4s" (PASS1 / PASS2 set others). Look at
# "y ms" (y alone, on the stream) and "local ms"; "diff vs first row" compares each SPIKE row's solution
# with the same run's partition row (expect ~1e-15); a row named "fell back" means a line's
# truncation was refused (it should not be, for these bands).
#
# Steps (each under a timeout; verdicts in summary.txt, tables at the end of stdout):
#   1. build test_distributed_tridiagonal, bench_mpi_tridiagonal;
# Stop 41: ADI_SPIKE_Y_STREAM=3 is the default now (0 the old y), and device plans take the SPIKE form
# from 1024 rows a segment (DistributedOptions::spike_lines_rows; SpikeLinesByLength*); the variants
# below still set the variable, so the table compares the same forms as at stop 40.
#   2. tests on 2 ranks: SpikeYPart (the function against Thomas, odd sizes, both precisions,
#      NaN-poisoned), SpikeYStreamDevice (the plan on device memory, every axis, periodic and not,
#      weak rows refused -> partition passes, against one domain), SpikeLinesDevice (unchanged form);
#      then DeviceMemory, DeviceNccl, DeviceZeroPivot*, SpikeLinesDevice with ADI_SPIKE_LINES=1
#      ADI_SPIKE_Y_STREAM=4 ADI_SPIKE_WINDOWS_SIDE=1;
#   3. bench_mpi_tridiagonal A/B rows (10 runs, ~6-8 s each);
#   4. memcheck of a small 2-rank solve, ADI_SPIKE_Y_STREAM=${MEMCHECK_Y:-4} ADI_SPIKE_WINDOWS_SIDE=1 (650-row
#      segments: 4 parts).
#
#   OUT=/tmp/o tests/mpi/gpu_publocal_ab.sh              # build + run
#   OUT=/tmp/o tests/mpi/gpu_publocal_ab.sh --no-build   # run an existing build-mpi-gpu
#   PASS2= MEMCHECK=0 OUT=/tmp/o tests/mpi/gpu_publocal_ab.sh   # leaner: ~4.5 minutes (build ~3)
set -u
OUT=${OUT:-publocal-ab-out}
BUILD=${BUILD:-build-mpi-gpu}
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-75}
summary_header
build_unless "${1:-}" test_distributed_tridiagonal bench_mpi_tridiagonal
B=$BUILD
T="$B/benchmarks/bench_mpi_tridiagonal"
# 2. Correctness.
step "tridiagonal SpikeYPart, SpikeYStreamDevice, SpikeLinesDevice, SpikeLinesByLength* np2" 120 "$OUT/tests.log" $MPI -n 2 \
  "$B/tests/test_distributed_tridiagonal" --gtest_filter='*SpikeYPart*:*SpikeYStream*:*SpikeLinesDevice*:*SpikeLinesByLength*'
# (the full-band device tests again with y by truncated sweeps and the windows beside it)
step "tridiagonal device np2, SPIKE form, ADI_SPIKE_Y_STREAM=4 ADI_SPIKE_WINDOWS_SIDE=1" 90 "$OUT/tests.log" $MPI \
  -x ADI_SPIKE_LINES=1 -x ADI_SPIKE_Y_STREAM=4 -x ADI_SPIKE_WINDOWS_SIDE=1 -n 2 "$B/tests/test_distributed_tridiagonal" \
  --gtest_filter='*DeviceMemory*:*DeviceNccl*:*DeviceZeroPivot*:*SpikeLinesDevice*'
grep -hE "SKIPPED:|SpikeY|SpikeLines \(|Failure|FAILED|Expected|Which is|Value of" "$OUT/tests.log" | sort | uniq -c |
  head -30 >>"$S"
# 3. The A/B rows, alternating.
# A variant: the ADI_SPIKE_Y_STREAM form, "s" after it: the windows on a side stream too
# (ADI_SPIKE_WINDOWS_SIDE=1). Pass 1 every variant, pass 2 the likely best again with the old one.
PASS1=${PASS1-0 1 2 3 4 0s 3s 4s}
PASS2=${PASS2-0 4s}
run_variant() {  # run_variant VARIANT PASS
  local v=$1 k=$2 y=${1%s} side=0
  [ "$v" != "$y" ] && side=1
  step "public np2 ADI_SPIKE_Y_STREAM=$y ADI_SPIKE_WINDOWS_SIDE=$side pass $k" 60 "$OUT/public_${v}_$k.log" $MPI \
    -x ADI_SPIKE_Y_STREAM=$y -x ADI_SPIKE_WINDOWS_SIDE=$side -n 2 "$T" --memory device --strategy allgather \
    --transport nccl --reps 20 --form all --spike-window 64 --spike-kernel cuda_thomas_pcr_long
}
for v in $PASS1; do run_variant "$v" 1; done
for v in $PASS2; do run_variant "$v" 2; done
{  # the table now (memcheck below may run out of time)
  echo
  echo "== The public case (128x128x4096 fp64, 2 ranks, allgather + NCCL): y by pcr_long (0) / truncated sweeps (1; 2 + L2 requests; 3 double-buffered; 4 both); s: windows on a side stream =="
  grep -hE "^device memory" "$OUT"/public_*.log | sort -u
  echo "| variant | pass | row | ms/solve | local ms | exchange ms | wait ms | model ms | diff vs partition | y ms |"
  for k in 1 2; do
    if [ $k = 1 ]; then L=$PASS1; else L=$PASS2; fi
    for v in $L; do
      grep -hE "^\| 2 \| device \| allgather" "$OUT/public_${v}_$k.log" 2>/dev/null |
        awk -F'|' -v y="$v" -v k="$k" '{ gsub(/^ +| +$/, "", $4); printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", y, k, $4, $6, $7, $8, $10, $12, $15, $16 }'
    done
  done
  echo
  echo "(variants 1-4, s against 0: the SPIKE rows' ms/solve, local ms and y ms; the partition rows are the same code in all runs)"
} >>"$S"
# 4. memcheck on 2 ranks: a small solve with y by truncated sweeps (segments of 650 rows: 4 parts, truncated).
export ADI_SPIKE_Y_STREAM=${MEMCHECK_Y:-4} ADI_SPIKE_WINDOWS_SIDE=1
[ "${MEMCHECK:-1}" = 1 ] && memcheck_step "memcheck public-like np2, ADI_SPIKE_Y_STREAM=$ADI_SPIKE_Y_STREAM ADI_SPIKE_WINDOWS_SIDE=1" "$OUT/cs_ystream" "$T" --n 16x8x1300 --memory device \
  --reps 1 --strategy allgather --transport nccl --form spike --spike-window 64 --spike-kernel cuda_thomas_pcr_long
unset ADI_SPIKE_Y_STREAM ADI_SPIKE_WINDOWS_SIDE
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log summary.txt 2>/dev/null) 2>/dev/null
rm -f "$OUT"/cs_*.log
verdicts_footer >>"$S"
cat "$S"
