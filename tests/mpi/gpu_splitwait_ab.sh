#!/usr/bin/env bash
# Device check of the split stage's host wait and the halo's NCCL launches (issue 18, stop 39,
# h-splitwait): one call on a 2-GPU machine (nvidia-h100-x2 / nvidia-h200-x2, one rank per GPU,
# NCCL), ~6 minutes with the build (no ncu; NCU=1 adds one profile of a strong z step, ~40 s;
# AB_PAIRS=2 a second strong old/new pair, ~20 s).
#
# What it measures (old = the five switches 0, new = all 1; singles: one switch on):
#   ADI_SPLIT_DEFER (Operator + DistributedTridiagonalPlan::defer_settle): inside an AdiSolver step
#     a split axis's device solve returns once its work is queued instead of ending with
#     cudaStreamSynchronize (finish_device: the pivot flag's read-back and the phase events); its
#     end (flag, SingularSystem, exchange time) waits on an event in Operator::settle() at the
#     step's end. Expected: the GPU no longer idles while the host queues the work after the split
#     stage (z split: the step's last boundary kernel; x / y splits: the later stages' launches).
#   ADI_HALO_ONE_GROUP (HaloExchange): an axis's two NCCL send/receive pairs as one NCCL group
#     (nccl::neighbour_exchange): one NCCL kernel launch per halo exchange instead of two.
#   ADI_SPIKE_BACK_SPREAD (DistributedOptions::spike_back_spread): the compact tail's correction
#     (spike_compact_back, 87 us under ncu at 2.2 TB/s, a thread per line: ~1.7 waves of blocks at
#     512^2 lines) as the lines' reduced solves, then the reached rows over (line, batch of 8) items
#     on about one wave of blocks (grid-stride); the same values.
#   ADI_SPIKE_REACH_COARSE (DistributedOptions::spike_reach_coarse): the spikes' reach at epsilon / 8
#     instead of 1e-3 epsilon (a heat stage at 512^3: 40 rows corrected per line end instead of 45).
#   ADI_SPLIT_LEAN (Operator + DistributedTridiagonalPlan::bands_key): the spikes' one-block check
#     launch skipped while the Operator's bands are unchanged, the flag's memset while known clear.
#
# Steps (each under a timeout; verdicts in summary.txt, tables at the end of stdout):
#   1. build test_distributed_tridiagonal, test_distributed_adi, test_halo_exchange, bench_mpi_heat;
#   2. tests on 2 ranks: DistributedTridiagonal.DeviceDeferredSettle (deferred = waiting solve
#      bitwise, a zero pivot thrown by settle() / the next solve on every rank), the existing
#      DeviceZeroPivotEveryTransport, SpikePreparePcrDevice (now also: the spread correction gives
#      the same error exactly; the coarse reach within tolerance and a few ulps of the default);
#      DistributedAdiDevice.SplitDeferred with the switches on
#      (AdiSolver against one domain; compact / default tail / spread + coarse / partition; HV: two
#      split solves a step); HaloExchangeDevice.* with ADI_HALO_ONE_GROUP=1;
#   3. bench_mpi_heat, Douglas fp64 (the defaults: SPIKE, compact tail, stop 39's switches): strong
#      512^3 in all old / new (x AB_PAIRS; splits z, y, x; each with its 1-GPU row; WEAK=1: weak
#      512^3 per GPU old / new too), then strong with one switch at a time (defer, group, spread,
#      reach, lean);
#   4. memcheck of a small 2-rank heat step (splits z, x), the five switches on.
#
#   OUT=/tmp/o tests/mpi/gpu_splitwait_ab.sh              # build + run
#   OUT=/tmp/o tests/mpi/gpu_splitwait_ab.sh --no-build   # run an existing build-mpi-gpu
#   AB_PAIRS=2 OUT=/tmp/o tests/mpi/gpu_splitwait_ab.sh   # two strong old/new pairs (~20 s more)
set -u
OUT=${OUT:-splitwait-ab-out}
BUILD=${BUILD:-build-mpi-gpu}
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-60}
summary_header
build_unless "${1:-}" test_distributed_adi test_distributed_tridiagonal test_halo_exchange bench_mpi_heat
B=$BUILD
H="$B/benchmarks/bench_mpi_heat"
SW=(ADI_SPLIT_DEFER ADI_HALO_ONE_GROUP ADI_SPIKE_BACK_SPREAD ADI_SPIKE_REACH_COARSE ADI_SPLIT_LEAN)
env_of() {  # env_of V0 V1 V2 V3 V4: mpiexec -x options giving the switches SW these values
  local i=0 v
  for v in "$@"; do printf -- '-x\n%s=%s\n' "${SW[$i]}" "$v"; i=$((i + 1)); done
}
mapfile -t OLD < <(env_of 0 0 0 0 0)
mapfile -t NEW < <(env_of 1 1 1 1 1)
mapfile -t DEFER < <(env_of 1 0 0 0 0)
mapfile -t GROUP < <(env_of 0 1 0 0 0)
mapfile -t SPREAD < <(env_of 0 0 1 0 0)
mapfile -t REACH < <(env_of 0 0 0 1 0)
mapfile -t LEAN < <(env_of 0 0 0 0 1)
# 2. Correctness (short timeouts: a hang costs at most these).
step "tridiagonal DeviceDeferredSettle, DeviceZeroPivot, SpikePreparePcrDevice np2" 120 "$OUT/tests.log" $MPI -n 2 \
  "$B/tests/test_distributed_tridiagonal" \
  --gtest_filter='*DeviceDeferredSettle*:*DeviceZeroPivotEveryTransport*:*SpikePreparePcrDevice*'
step "adi device np2 SplitDeferred, the five switches" 90 "$OUT/tests.log" $MPI "${NEW[@]}" \
  -n 2 "$B/tests/test_distributed_adi" --gtest_filter='DistributedAdiDevice.SplitDeferred'
step "halo device np2, ADI_HALO_ONE_GROUP=1" 45 "$OUT/tests.log" $MPI -x ADI_HALO_ONE_GROUP=1 -n 2 \
  "$B/tests/test_halo_exchange"
grep -hE "SKIPPED:|SplitDeferred|SpikePreparePcr \(|Failure|FAILED" "$OUT/tests.log" | sort -u | head -20 >>"$S"
# 3. The A/B rows: old, new, old, new (strong), old, new (weak); the env decides per run.
heat_ab_rows "${AB_PAIRS:-1}" "${WEAK:-0}"  # (AB_PAIRS=2: two strong pairs, ~20 s more; WEAK=1: weak rows, ~22 s)
for v in defer group spread reach lean; do  # one switch at a time (strong; compare the same run's 1-GPU row)
  case $v in
    defer) E=("${DEFER[@]}") ;; group) E=("${GROUP[@]}") ;; spread) E=("${SPREAD[@]}") ;;
    reach) E=("${REACH[@]}") ;; *) E=("${LEAN[@]}") ;;
  esac
  step "heat strong np2 $v only" 60 "$OUT/heat_strong_$v.log" $MPI "${E[@]}" -n 2 "$H" --n 512 --reps 7 \
    --splits z,y,x --strong --no-nccl-bandwidth
done
# 4. memcheck (one log per rank; NCCL's start-up API-error reports ignored by sanitizer_verdict.sh).
export ADI_SPLIT_DEFER=1 ADI_HALO_ONE_GROUP=1 ADI_SPIKE_BACK_SPREAD=1 ADI_SPIKE_REACH_COARSE=1 ADI_SPLIT_LEAN=1
memcheck_step "memcheck heat step np2, the five switches" "$OUT/cs_heat" \
  "$H" --n 40 --reps 2 --splits z,x --no-nccl-bandwidth
if [ "${NCU:-0}" = 1 ] && command -v ncu >/dev/null; then
  step "ncu strong z split, the five switches" 60 "$OUT/profile.log" $MPI -n 2 bash -c \
    'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then exec ncu --profile-from-start off --kernel-name-base demangled \
       --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
       --print-units base --log-file "$OUT/ncu_z.csv" "$@"; else exec "$@"; fi' _ \
    "$H" --n 512 --reps 3 --splits z --strong --no-nccl-bandwidth --profile
fi
unset ADI_SPLIT_DEFER ADI_HALO_ONE_GROUP ADI_SPIKE_BACK_SPREAD ADI_SPIKE_REACH_COARSE ADI_SPLIT_LEAN
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.csv summary.txt 2>/dev/null) 2>/dev/null
rm -f "$OUT"/cs_*.log
{
  echo
  echo "== bench_mpi_heat rows (Douglas fp64, defaults; old = the five switches 0 (ADI_SPLIT_DEFER ADI_HALO_ONE_GROUP ADI_SPIKE_BACK_SPREAD ADI_SPIKE_REACH_COARSE ADI_SPLIT_LEAN), new = all 1) =="
  for f in heat_strong_old heat_strong_new heat_weak_old heat_weak_new heat_strong_defer heat_strong_group heat_strong_spread heat_strong_reach heat_strong_lean; do
    echo "-- $f"
    grep -hE "^\| [0-9]|^strong scaling|^WARNING" "$OUT/$f.log" 2>/dev/null
  done
  echo
  echo "== A/B (ms; medians of each run; strong: speed-up over the same run's 1-GPU row; split = the split axis's stage) =="
  python3 "$(dirname "$0")/splitwait_table.py" "$OUT"
  verdicts_footer
} >>"$S"
cat "$S"
