#!/usr/bin/env bash
# Device check of the SPIKE form's compact tail (issue 18, stop 37, h-zsplit): one call on a
# 2-GPU machine (nvidia-h100-x2 / nvidia-h200-x2, one rank per GPU, NCCL), ~5 minutes with the build.
#
# What changed (DistributedOptions::spike_compact / ADI_SPIKE_COMPACT=1|0, the default since stop 38): the
# split stage's tail after the cut segments' solve. The stop 36 tail (ADI_SPIKE_COMPACT=0): spike_reduce (8 values per line),
# the strategy's NCCL collectives (alltoall: two all_to_all_v and the reduced solve between),
# spike_ends_kernel, spike_correct_lines_kernel (one row in flight per thread). Compact: a pack
# of y's two end values per line + 8 scalars per rank, ONE all_gather (2L + 8 values per rank:
# a quarter of the rows), and one launch per line that forms every rank's reduced rows, solves
# them, and corrects the rows the spikes reach 8 rows at a time.
#
# Steps (each under a timeout; verdicts in summary.txt, tables at the end of stdout):
#   1. build test_distributed_tridiagonal, test_distributed_adi, bench_mpi_heat (build-mpi-gpu);
#   2. tests on 2 ranks: DistributedTridiagonal.SpikeCompact* (compact = the stop 36 tail's error, and
#      one domain), the tridiagonal device tests with ADI_SPIKE_COMPACT=0 (every shared-band SPIKE
#      solve in the default tail of stop 36; the compact tail is the default since stop 38), DistributedAdiDevice.Spike and .SpikeCompact (AdiSolver, both
#      tails against one domain; the cut segments' stage is the lean Y/Z kernel since d4b96da);
#   3. bench_mpi_heat, Douglas fp64, --compact both (rows "z" = the stop 36 tail, "z cpt" = compact):
#      strong 512^3 in all (twice), weak 512^3 per GPU (once); splits z, y, x;
#   4. memcheck of a small 2-rank heat step with the compact tail;
#   5. ncu of one strong z-split step on rank 0, default and compact tail (kernel times, DRAM bytes).
#
#   OUT=/tmp/o tests/mpi/gpu_split_ab.sh              # build + run
#   OUT=/tmp/o tests/mpi/gpu_split_ab.sh --no-build   # run an existing build-mpi-gpu
set -u
OUT=${OUT:-split-ab-out}
BUILD=${BUILD:-build-mpi-gpu}
build=1
for a in "$@"; do
  case $a in
    --no-build) build=0 ;;
    *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
  esac
done
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-75}
summary_header
if [ $build = 1 ]; then
  configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF -DADI_BUILD_EXAMPLES=OFF
  build_check test_distributed_adi test_distributed_tridiagonal bench_mpi_heat
fi
B=$BUILD
H="$B/benchmarks/bench_mpi_heat"
# 2. Correctness (short timeouts: a hang costs at most these).
step "tridiagonal SpikeCompact np2" 60 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_tridiagonal" \
  --gtest_filter='*SpikeCompact*'
step "tridiagonal device np2, ADI_SPIKE_COMPACT=0" 45 "$OUT/tests.log" $MPI -x ADI_SPIKE_COMPACT=0 -n 2 \
  "$B/tests/test_distributed_tridiagonal" --gtest_filter='*DeviceMemory*:*DeviceNccl*:*DeviceHostStaging*:*DeviceZeroPivot*'
# (Spike: the default tail, whose cut segments now take the lean Y/Z stage kernel, d4b96da)
step "adi device np2 Spike, SpikeCompact" 120 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_adi" \
  --gtest_filter='DistributedAdiDevice.Spike*'
grep -hE "SKIPPED:|Spike|Failure|FAILED" "$OUT/tests.log" | sort -u | head -20 >>"$S"
# 3. The A/B rows (the default tail first in each pair, then the compact one).
step "heat strong np2 (1)" 60 "$OUT/heat.log" $MPI -n 2 "$H" --n 512 --reps 7 --splits z,y,x --strong --compact both
step "heat strong np2 (2)" 60 "$OUT/heat.log" $MPI -n 2 "$H" --n 512 --reps 7 --splits z,y,x --strong --compact both \
  --no-nccl-bandwidth
step "heat weak np2" 60 "$OUT/heat.log" $MPI -n 2 "$H" --n 512 --reps 5 --splits z,y,x --compact both --no-nccl-bandwidth
# 4. memcheck (one log per rank; NCCL's start-up API-error reports ignored by sanitizer_verdict.sh).
memcheck_step "memcheck heat step np2, compact tail" "$OUT/cs_heat" \
  "$H" --n 40 --reps 1 --splits z,x --compact on --no-nccl-bandwidth
# 5. ncu of one strong z-split step on rank 0 (the other rank runs plainly): both tails in one run.
if command -v ncu >/dev/null; then
  step "ncu strong z split, both tails" 75 "$OUT/profile.log" $MPI -n 2 bash -c \
    'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then exec ncu --profile-from-start off --kernel-name-base demangled \
       --kernel-name regex:adi:: --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
       --print-units base --log-file "$OUT/ncu_z.csv" "$@"; else exec "$@"; fi' _ \
    "$H" --n 512 --reps 3 --splits z --strong --no-nccl-bandwidth --profile --compact both
else
  echo "ncu: not found" >>"$S"
fi
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.csv summary.txt 2>/dev/null) 2>/dev/null
rm -f "$OUT"/cs_*.log
{
  echo
  echo "== bench_mpi_heat rows (Douglas fp64; 'z' = the default SPIKE tail, 'z cpt' = the compact tail, same run) =="
  grep -hE "^bench_mpi_heat:|^\||^NCCL bandwidth|^strong scaling|^WARNING" "$OUT/heat.log"
  echo
  echo "== A/B: default tail -> compact tail (ms; split = the split axis's stage; exch = its reduced-row exchange) =="
  python3 - "$OUT/heat.log" <<'EOF'
import re, sys
blocks, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("bench_mpi_heat:"):
        cur = {"strong": "strong" in line, "rows": {}}
        blocks.append(cur)
    elif cur is not None and line.startswith("| ") and not line.startswith("| ranks"):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        try:
            cur["rows"][c[1]] = [float(x) for x in c[3:11]]  # ms, explicit, halo, boundary, x, y, z, exchange
        except ValueError:
            pass
print("| run | split | step ms default -> compact | 1 GPU / step (strong: speed-up, weak: efficiency) | split stage ms | exchange ms |")
print("|---|---|---|---|---|---|")
for i, b in enumerate(blocks):
    r = b["rows"]
    ref = r.get("-")
    for s in ("z", "y", "x"):
        if s not in r or s + " cpt" not in r:
            continue
        d, c = r[s], r[s + " cpt"]
        ax = 4 + "xyz".index(s)
        sp = " / ".join("%.2fx" % (ref[0] / v[0]) for v in (d, c)) if ref else "-"
        print("| %s %d | %s | %.3f -> %.3f (%+.1f%%) | %s | %.3f -> %.3f | %.3f -> %.3f |" % (
            "strong" if b["strong"] else "weak", i + 1, s, d[0], c[0], 100 * (c[0] / d[0] - 1), sp, d[ax], c[ax],
            d[7], c[7]))
EOF
  echo
  echo "== One strong z-split step (512^3 in all, rank 0) under ncu: step 1 default tail, step 2 compact tail =="
  python3 tests/mpi/profile_table.py ncu "$OUT/ncu_z.csv" $((512 * 512 * 256 * 8)) 2>&1 | tail -40
  verdicts_footer
} >>"$S"
cat "$S"
