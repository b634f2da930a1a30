#!/usr/bin/env bash
# Device A/B of the x split's row alignment (issue 18, stop 38, h-splitx): one call on a 2-GPU
# machine (nvidia-h200-x2 / nvidia-h100-x2, one rank per GPU, NCCL), ~5 minutes with the build.
#
# Why (docs/mpi.md, "Stop 38 (h-splitx)"): in the weak x row (runs s38/9) the y and z stages, which
# do not cross ranks, take 1.141 / 1.211 ms against 0.930 / 0.969 on one GPU (+0.45 ms, more than
# the split x stage's own +0.40), and the x stage's stencil runs at 1792 GB/s against 1942 (ncu).
# Only the x split changes the rows: an x-split piece holds 513 values per row (512 + a ghost), its
# row pitch 520 values = 4160 bytes, so rows start at alternating 64-byte offsets; every other
# split keeps 512 values = 4096 bytes per row. ADI_FIELD_ROW_ALIGN=128 pads rows to 128 bytes (528
# values): every row on a 128-byte line again. 1 GPU at 512^3 and the y/z splits: unchanged pitch.
#
# Steps (each under a timeout; verdicts in summary.txt, tables at the end of stdout):
#   1. build test_distributed_adi, bench_mpi_heat (build-mpi-gpu);
#   2. on 2 ranks with ADI_FIELD_ROW_ALIGN=128: DistributedAdi.LocalShape (the pitch) and
#      DistributedAdiDevice.EverySchemeEveryBoundaryEveryGrid3D / MatchesHost / SpikeCompact (the
#      AdiSolver split along x, y, z against one domain, the padded fields);
#   3. bench_mpi_heat, Douglas fp64, SPIKE form, splits x and z (z: the control, pitch unchanged):
#      weak 512^3 per GPU and strong 512^3 in all, old (64-byte rows) and new (128), order A B B A;
#      and one GPU at 513^3 (rows of 513 values, pitch 520 -> 528; no MPI), A B B A;
#   4. ncu of one weak x-split step on rank 0 with ADI_FIELD_ROW_ALIGN=128 (compare with s38/9's
#      ncu_x.csv: stencil_columns_shared 1207 us, fused_stage_lean 1220 + 1296 us).
#
#   OUT=/tmp/o tests/mpi/gpu_splitx_ab.sh              # build + run
#   OUT=/tmp/o tests/mpi/gpu_splitx_ab.sh --no-build   # run an existing build-mpi-gpu
set -u
OUT=${OUT:-splitx-ab-out}
BUILD=${BUILD:-build-mpi-gpu}
build=1
for a in "$@"; do
  case $a in
    --no-build) build=0 ;;
    *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
  esac
done
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4
summary_header
if [ $build = 1 ]; then
  configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF -DADI_BUILD_EXAMPLES=OFF
  build_check test_distributed_adi bench_mpi_heat
fi
B=$BUILD
H="$B/benchmarks/bench_mpi_heat"
NEW="-x ADI_FIELD_ROW_ALIGN=128"
OLD="-x ADI_FIELD_ROW_ALIGN=64"  # (the default since stop 39 is 128: the old form asked for)
step "adi device np2, ADI_FIELD_ROW_ALIGN=128" 90 "$OUT/tests.log" $MPI $NEW -n 2 "$B/tests/test_distributed_adi" \
  --gtest_filter='DistributedAdi.LocalShape:DistributedAdiDevice.EverySchemeEveryBoundaryEveryGrid3D:DistributedAdiDevice.MatchesHost:DistributedAdiDevice.SpikeCompact'
grep -hE "SKIPPED:|Failure|FAILED" "$OUT/tests.log" | sort -u | head -20 >>"$S"
# 3. A B B A: "old" = 64-byte rows (ADI_FIELD_ROW_ALIGN=64; the default before stop 39), "new" = 128.
for order in old new new old; do
  env=$OLD
  [ $order = new ] && env=$NEW
  step "heat weak $order" 45 "$OUT/heat.log" $MPI $env -n 2 "$H" --n 512 --reps 5 --splits x,z --spike on \
    --no-nccl-bandwidth
  step "heat strong $order" 45 "$OUT/heat.log" $MPI $env -n 2 "$H" --n 512 --reps 7 --splits x,z --spike on \
    --strong --no-nccl-bandwidth
done
# 3b. One GPU, 513^3 (rows of 513 values as in the x split, no MPI effects): pitch 520 -> 528.
for order in old new new old; do
  env=$OLD
  [ $order = new ] && env=$NEW
  step "heat one513 $order" 30 "$OUT/heat.log" $MPI $env -n 1 "$H" --n 513 --reps 5 --no-nccl-bandwidth
done
# 4. ncu of one weak x-split step (rank 0; the other rank runs plainly), new rows.
if command -v ncu >/dev/null; then
  step "ncu weak x split, ADI_FIELD_ROW_ALIGN=128" 75 "$OUT/profile.log" $MPI $NEW -n 2 bash -c \
    'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then exec ncu --profile-from-start off --kernel-name-base demangled \
       --kernel-name regex:adi:: --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv \
       --print-units base --log-file "$OUT/ncu_x128.csv" "$@"; else exec "$@"; fi' _ \
    "$H" --n 512 --reps 3 --splits x --no-nccl-bandwidth --profile --spike on
else
  echo "ncu: not found" >>"$S"
fi
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.csv summary.txt 2>/dev/null) 2>/dev/null
{
  echo
  echo "== bench_mpi_heat rows (Douglas fp64, SPIKE form; each block's ### line says old / new) =="
  grep -hE "^### heat|^\| [12] " "$OUT/heat.log"
  echo
  echo "== A/B: old (64-byte rows) -> new (ADI_FIELD_ROW_ALIGN=128), medians of the two runs each (ms) =="
  python3 - "$OUT/heat.log" <<'EOF'
import re, statistics, sys
runs, cur = {}, None  # (weak|strong, old|new) -> list of {split: [ms, expl, halo, bnd, x, y, z, exch]}
for line in open(sys.argv[1]):
    m = re.match(r"### heat (weak|strong|one513) (old|new)", line)
    if m:
        cur = {}
        runs.setdefault((m.group(1), m.group(2)), []).append(cur)
    elif cur is not None and line.startswith("| ") and not line.startswith("| ranks"):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        try:
            cur[c[1]] = [float(x) for x in c[3:11]]
        except ValueError:
            pass
def med(kind, order, split, col):
    v = [r[split][col] for r in runs.get((kind, order), []) if split in r]
    return statistics.median(v) if v else float("nan")
print("| run | split | step ms old -> new | 1 GPU ms | weak eff. / strong speed-up old -> new | x stage | y stage | z stage |")
print("|---|---|---|---|---|---|---|---|")
for kind in ("weak", "strong"):
    for split in ("x", "z"):
        o, n, ref = med(kind, "old", split, 0), med(kind, "new", split, 0), med(kind, "old", "-", 0)
        if kind == "weak":
            sc = "%.0f%% -> %.0f%%" % (100 * ref / o, 100 * ref / n)
        else:
            sc = "%.2fx -> %.2fx" % (ref / o, ref / n)
        st = " | ".join("%.3f -> %.3f" % (med(kind, "old", split, c), med(kind, "new", split, c)) for c in (4, 5, 6))
        print("| %s | %s | %.3f -> %.3f (%+.1f%%) | %.3f | %s | %s |" % (kind, split, o, n, 100 * (n / o - 1), ref, sc, st))
cols = lambda o: [statistics.median([r["-"][c] for r in runs.get(("one513", o), []) if "-" in r] or [float("nan")])
                  for c in (0, 4, 5, 6)]
o, n = cols("old"), cols("new")
print("| 1 GPU 513^3 | - | %.3f -> %.3f (%+.1f%%) | - | - | %.3f -> %.3f | %.3f -> %.3f | %.3f -> %.3f |" % (
    o[0], n[0], 100 * (n[0] / o[0] - 1), o[1], n[1], o[2], n[2], o[3], n[3]))
print("(1 GPU 512^3 and the z split keep 512 values = 4096 bytes per row either way: their change is noise)")
EOF
  echo
  echo "== One weak x-split step (512^3 per GPU, rank 0) under ncu, ADI_FIELD_ROW_ALIGN=128 (s38/9 old: stencil 1207,"
  echo "   thomas_pcr 929, fused_stage_lean 1220 + 1296 us) =="
  python3 tests/mpi/profile_table.py ncu "$OUT/ncu_x128.csv" $((528 * 512 * 512 * 8)) 2>&1 | tail -30
  echo
  echo "== Verdicts =="
  grep -E " rc=" "$S" | cut -c1-200
  echo "done ($(el))"
} >>"$S"
cat "$S"
