#!/usr/bin/env bash
# Device check of the split stage's overheads (issue 18, stop 38, h-splitstage): one call on a
# 2-GPU machine (nvidia-h100-x2 / nvidia-h200-x2, one rank per GPU, NCCL), ~5.5 minutes with the build.
#
# What it measures (old = the four switches 0, new = all 1; the halo change is in both):
#   ADI_SPIKE_PREPARE_PCR (DistributedOptions::spike_prepare_pcr): the SPIKE form's spikes by
#     parallel cyclic reduction, a thread per row, and their reach by block reductions, instead of
#     two one-thread Thomas sweeps and a one-thread scan (spike_prepare_kernel: 84 us under ncu per
#     strong 512^3 step on an H200, runs/8: the bands change every step, AdiSolver's s = theta
#     (t1 - t0) differing from theta dt in its last bits; 4.9 us in the weak 512x512x1024 case,
#     where dt = 2/1023^2 happens to round back exactly).
#   ADI_SPIKE_BACK_BATCHED (DistributedOptions::spike_back_batched): spike_compact_back's rows after
#     the last full batch of 8 as one predicated batch, not one load at a time (~45 reached rows:
#     5 batches + 5 single round trips; 88 us under ncu for 0.36 fields); the same values.
#   ADI_SPIKE_HALF (DistributedOptions::spike_half_exchange): on a 2-rank line the compact tail swaps
#     8 + L values (what the other rank needs: rank 0 rank 1's y_0, rank 1 rank 0's y_{m-1}) through
#     one NCCL send/recv instead of allgathering 8 + 2L (4.2 MB each way, 41 us timed); the same values.
#   ADI_BOUNDARY_REUSE (Operator): a split stage's set_boundary(t_old, U) skipped when the step's
#     first stage already bounded U at that time (one faces_kernel of three per step, 22 us under ncu).
#   HaloExchange: no pack of a slab without a neighbour (one pack kernel of two per exchange; both runs).
#
# Steps (each under a timeout; verdicts in summary.txt, tables at the end of stdout):
#   1. build test_distributed_tridiagonal, test_distributed_adi, test_halo_exchange, bench_mpi_heat;
#   2. tests on 2 ranks: DistributedTridiagonal.SpikePreparePcrDevice (parallel vs sequential spikes,
#      bands changed between solves; the batched tail: the same error exactly), SpikeCompact* (the halves
#      swapped against the allgather: the same error exactly; host staging and NCCL), DistributedAdiDevice.SpikeCompact + SpikeFormsBeforeStop39 (stop 38's SpikePreparePcr) with
#      ADI_BOUNDARY_REUSE=1 (AdiSolver against one domain), HaloExchangeDevice.*;
#   3. bench_mpi_heat, Douglas fp64 (SPIKE form, compact tail: the defaults): strong 512^3 in all,
#      old / new / old / new (splits z, y, x; each with its 1-GPU row), weak 512^3 per GPU old / new;
#   4. memcheck of a small 2-rank heat step, new switches;
#   5. ncu of one strong z-split step on rank 0, new switches (compare runs/8's ncu_z.csv: old).
#
#   OUT=/tmp/o tests/mpi/gpu_splitstage_ab.sh              # build + run
#   OUT=/tmp/o tests/mpi/gpu_splitstage_ab.sh --no-build   # run an existing build-mpi-gpu
#   AB_PAIRS=1 OUT=/tmp/o tests/mpi/gpu_splitstage_ab.sh   # one strong old/new pair instead of two
set -u
OUT=${OUT:-splitstage-ab-out}
BUILD=${BUILD:-build-mpi-gpu}
case "${1:-}" in
  "") build=1 ;;
  --no-build) build=0 ;;
  *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
esac
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-60}
summary_header
if [ $build = 1 ]; then
  configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF -DADI_BUILD_EXAMPLES=OFF
  build_check test_distributed_adi test_distributed_tridiagonal test_halo_exchange bench_mpi_heat
fi
B=$BUILD
H="$B/benchmarks/bench_mpi_heat"
OLD=(-x ADI_SPIKE_PREPARE_PCR=0 -x ADI_SPIKE_BACK_BATCHED=0 -x ADI_SPIKE_HALF=0 -x ADI_BOUNDARY_REUSE=0)
NEW=(-x ADI_SPIKE_PREPARE_PCR=1 -x ADI_SPIKE_BACK_BATCHED=1 -x ADI_SPIKE_HALF=1 -x ADI_BOUNDARY_REUSE=1)
# 2. Correctness (short timeouts: a hang costs at most these).
step "tridiagonal SpikePreparePcr, SpikeCompact np2" 75 "$OUT/tests.log" $MPI -n 2 \
  "$B/tests/test_distributed_tridiagonal" --gtest_filter='*SpikePreparePcr*:*SpikeCompact*'
step "adi device np2 SpikeCompact, SpikePreparePcr, ADI_BOUNDARY_REUSE=1" 90 "$OUT/tests.log" $MPI \
  -x ADI_BOUNDARY_REUSE=1 -n 2 "$B/tests/test_distributed_adi" \
  --gtest_filter='DistributedAdiDevice.SpikeCompact:DistributedAdiDevice.SpikeFormsBeforeStop39'
step "halo device np2" 45 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_halo_exchange"
grep -hE "SKIPPED:|Spike|Failure|FAILED" "$OUT/tests.log" | sort -u | head -20 >>"$S"
# 3. The A/B rows: old, new, old, new (strong), old, new (weak); the env decides per run.
heat_ab_rows "${AB_PAIRS:-2}"  # (AB_PAIRS=1: one strong pair, ~25 s less)
# 4. memcheck (one log per rank; NCCL's start-up API-error reports ignored by sanitizer_verdict.sh).
export ADI_SPIKE_PREPARE_PCR=1 ADI_SPIKE_BACK_BATCHED=1 ADI_SPIKE_HALF=1 ADI_BOUNDARY_REUSE=1
memcheck_step "memcheck heat step np2, new switches" "$OUT/cs_heat" \
  "$H" --n 40 --reps 2 --splits z,x --no-nccl-bandwidth
# 5. ncu of one strong z-split step on rank 0 (the other rank runs plainly), new switches.
if command -v ncu >/dev/null; then
  step "ncu strong z split, new switches" 60 "$OUT/profile.log" $MPI "${NEW[@]}" -n 2 bash -c \
    'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then exec ncu --profile-from-start off --kernel-name-base demangled \
       --kernel-name regex:adi:: --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
       --print-units base --log-file "$OUT/ncu_z.csv" "$@"; else exec "$@"; fi' _ \
    "$H" --n 512 --reps 3 --splits z --strong --no-nccl-bandwidth --profile
else
  echo "ncu: not found" >>"$S"
fi
unset ADI_SPIKE_PREPARE_PCR ADI_SPIKE_BACK_BATCHED ADI_SPIKE_HALF ADI_BOUNDARY_REUSE
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.csv summary.txt 2>/dev/null) 2>/dev/null
rm -f "$OUT"/cs_*.log
{
  echo
  echo "== bench_mpi_heat rows (Douglas fp64, SPIKE compact tail; old = ADI_SPIKE_PREPARE_PCR=0 ADI_SPIKE_BACK_BATCHED=0 ADI_SPIKE_HALF=0 ADI_BOUNDARY_REUSE=0, new = all 1) =="
  for f in heat_strong_old heat_strong_new heat_weak_old heat_weak_new; do
    echo "-- $f"
    grep -hE "^\| [0-9]|^strong scaling|^WARNING" "$OUT/$f.log"
  done
  echo
  echo "== A/B old -> new (ms; medians of each run; strong: the runs' 1-GPU rows and speed-ups; split = the split axis's stage) =="
  python3 - "$OUT" <<'EOF'
import os, sys
sys.path.insert(0, "tests/mpi")
from splitwait_table import COLS, runs  # the logs' parser (one dict per run)
def rows(path):  # ms, explicit, halo, boundary, x, y, z, exchange per split
    if not os.path.exists(path):
        raise OSError(path)
    return [{k: [v[c] for c in COLS] for k, v in r.items()} for r in runs(path)]
d = sys.argv[1]
print("| run | split | step ms old -> new | speed-up over 1 GPU old -> new (strong) | split stage ms | boundary ms | halo ms |")
print("|---|---|---|---|---|---|---|")
for kind in ("strong", "weak"):
    try:
        old, new = rows(os.path.join(d, "heat_%s_old.log" % kind)), rows(os.path.join(d, "heat_%s_new.log" % kind))
    except OSError as e:
        print("missing:", e)
        continue
    for i, (o, n) in enumerate(zip(old, new)):
        for s in ("z", "y", "x"):
            if s not in o or s not in n:
                continue
            a, b = o[s], n[s]
            ax = 4 + "xyz".index(s)
            sp = "-"
            if kind == "strong" and "-" in o and "-" in n:
                sp = "%.2fx -> %.2fx (1 GPU %.3f / %.3f)" % (o["-"][0] / a[0], n["-"][0] / b[0], o["-"][0], n["-"][0])
            print("| %s %d | %s | %.3f -> %.3f (%+.1f%%, %+.3f) | %s | %.3f -> %.3f | %.3f -> %.3f | %.3f -> %.3f |" % (
                kind, i + 1, s, a[0], b[0], 100 * (b[0] / a[0] - 1), b[0] - a[0], sp, a[ax], b[ax], a[3], b[3], a[2], b[2]))
EOF
  echo
  echo "== One strong z-split step (512^3 in all, rank 0) under ncu, new switches (spike_prepare_pcr_kernel, one faces_kernel fewer;"
  echo "   compare /work/notes/gpu/s38/runs/8/zsplit/ncu_z.csv step 2: spike_prepare_kernel 84 us, faces_kernel x3) =="
  python3 tests/mpi/profile_table.py ncu "$OUT/ncu_z.csv" $((512 * 512 * 256 * 8)) 2>&1 | tail -30
  verdicts_footer
} >>"$S"
cat "$S"
