#!/usr/bin/env bash
# Device check of issue 15 item 8 (the serial CUDA compile time halved; h-build2, stop 31):
# every kernel whose machine code the compile-time work changed, tested, and timed against
# the form before it in the same run. Two builds of one tree (CUDA sm_90, MPI on, VTK and
# Python off): build-bc (the default: fp64 block partition M = 7, 8 rolled, the option chain's
# warp kernel with its once-per-contract set-up rolled and its time step inlined once) and
# build-bc-unroll (-DADI_CUDA_UNROLL_ALL=ON: the fully unrolled forms as before). Then
#   1. tests (default build): test_chain (both option-chain kernels against the host chain),
#      test_distributed_block_tridiagonal's device tests on 2 ranks sharing the GPU (the
#      device block partition passes, M = 2..8, both precisions, sub-segments, singular
#      blocks) and on 1 rank, test_block_partition_rolled (host: rolled = compile-time form);
#   2. bench_cuda_block_partition (reduce + back-substitution, M = 2..8, fp64/fp32, S = 1 and
#      4), default / unrolled / default / unrolled;
#   3. bench_option_chain --gpu-configs over every warp size class (M = 2, 4, 7, 10, 13, 16),
#      default / unrolled / default / unrolled;
#   4. the tables side by side (best of the two runs of each build, change in %).
#
#   OUT=/tmp/o scripts/gpu_build_check.sh --build-only     # both builds (~3-4 min on 16 cores)
#   OUT=/tmp/o scripts/gpu_build_check.sh --no-build       # tests + benchmarks (~2 min)
#   scripts/gpu_build_check.sh                             # both in one call
# Logs under $OUT (default <repo>/out): build.log, tests.log, bp_{new,old}_{1,2}.log,
# oc_{new,old}_{1,2}.log, summary.txt; the tables at the end of the output.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
new=$root/build-bc old=$root/build-bc-unroll
do_build=1 do_run=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-only) do_run=0 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "gpu_build_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
summary=$out/summary.txt
[ $do_build = 1 ] && : >"$summary"
note() { echo "$*" | tee -a "$summary"; }
. "$root/scripts/gtest_runs.sh"
status=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
MPI="mpiexec --oversubscribe --allow-run-as-root --bind-to none"
note "== gpu_build_check.sh $(date -u +%FT%TZ) on $(hostname), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"

if [ $do_build = 1 ]; then
  : >"$out/build.log"
  for b in new old; do
    dir=$new targets="bench_cuda_block_partition bench_option_chain test_chain test_distributed_block_tridiagonal test_block_partition_rolled"
    extra=()
    if [ $b = old ]; then dir=$old targets="bench_cuda_block_partition bench_option_chain" extra=(-DADI_CUDA_UNROLL_ALL=ON); fi
    t0=$(date +%s)
    if cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=ON \
         -DADI_WITH_PYTHON=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON \
         -DADI_BUILD_EXAMPLES=OFF "${extra[@]}" >>"$out/build.log" 2>&1 &&
       cmake --build "$dir" -j "$(nproc)" --target $targets >>"$out/build.log" 2>&1; then
      note "build $b ($(basename "$dir")): ok ($(( $(date +%s) - t0 )) s)"
    else
      tail -40 "$out/build.log"
      note "build $b: FAILED (see build.log)"
      exit 1
    fi
  done
fi
[ $do_run = 0 ] && exit 0

# Benchmarks first, on an idle device; the two builds alternate.
bp_args=(--lines 8192 --rows 128 --reps 10)
oc_args=(--no-quantlib --count 100000 --host-count 200 --sample 16 --cluster 1.5 --nodes 201 --steps 100
         --gpu-configs 64x50:warp,128x64:warp,201x100r:warp,301x150r:warp,401x200r:warp,512x200:warp)
t0=$(date +%s)
for r in 1 2; do
  for b in new old; do
    dir=$new; [ $b = old ] && dir=$old
    timeout 120 "$dir/benchmarks/bench_cuda_block_partition" "${bp_args[@]}" >"$out/bp_${b}_$r.log" 2>&1 ||
      { status=1; note "bench_cuda_block_partition ($b, run $r): FAILED (exit $?)"; }
    timeout 120 "$dir/benchmarks/bench_option_chain" "${oc_args[@]}" >"$out/oc_${b}_$r.log" 2>&1 ||
      { status=1; note "bench_option_chain ($b, run $r): FAILED (exit $?)"; }
  done
done
note "benchmarks: $(( $(date +%s) - t0 )) s"

t0=$(date +%s)
run_gtests "$out/tests.log" 200 "$new/tests" test_chain test_block_partition_rolled
for np in 2 1; do
  log=$out/tests_mpi_np$np.log
  timeout 200 $MPI -n $np "$new/tests/test_distributed_block_tridiagonal" --gtest_filter='*Device*:*OneGpu*' --gtest_color=no >"$log" 2>&1
  rc=$?
  [ $rc = 0 ] || status=1
  note "test test_distributed_block_tridiagonal (device, $np ranks): exit $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$log" | sort -u | head -8 | sed 's/^/  /' | tee -a "$summary"
done
note "tests: $(( $(date +%s) - t0 )) s"

section() { echo; echo "================================ $* ================================"; }
section "block partition passes: default (fp64 M = 7, 8 rolled) vs ADI_CUDA_UNROLL_ALL, best of 2 runs each"
/usr/bin/python3 - "$out" <<'EOF' | tee -a "$summary"
import re, sys, glob
out = sys.argv[1]
def rows(build):
    best = {}
    for f in sorted(glob.glob(f"{out}/bp_{build}_*.log")):
        for line in open(f):
            m = re.match(r"bp (\S+)\s+M=(\d) L=\d+ n=\d+ S=(\d+)\s+([\d.]+) ms\s+([\d.]+) GB/s\s+([\d.]+)% of copy\s+sum\(\|u\|\)=(\S+)", line)
            if m:
                k = (m[1], int(m[2]), int(m[3]))
                ms, pct, s = float(m[4]), float(m[6]), m[7]
                if k not in best or ms < best[k][0]:
                    best[k] = (ms, pct, s)
    return best
n, o = rows("new"), rows("old")
print("| precision | M | S | unrolled ms | % copy | default ms | % copy | change | sum(|u|) equal |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for k in sorted(set(n) | set(o), key=lambda k: (k[2], k[0], k[1])):
    a, b = o.get(k), n.get(k)
    if not a or not b:
        print(f"| {k[0]} | {k[1]} | {k[2]} | {a} | | {b} | | missing | |"); continue
    same = "yes" if a[2] == b[2] else f"{a[2]} vs {b[2]}"
    print(f"| {k[0]} | {k[1]} | {k[2]} | {a[0]:.3f} | {a[1]:.1f} | {b[0]:.3f} | {b[1]:.1f} | {100*(b[0]/a[0]-1):+.1f}% | {same} |")
EOF
section "option chain warp kernel: default (set-up rolled, step inlined once) vs ADI_CUDA_UNROLL_ALL, best of 2 runs"
/usr/bin/python3 - "$out" <<'EOF' | tee -a "$summary"
import sys, glob
out = sys.argv[1]
def rows(build):
    best = {}
    for f in sorted(glob.glob(f"{out}/oc_{build}_*.log")):
        for line in open(f):
            c = [x.strip() for x in line.split("|")]
            if len(c) > 12 and " x " in c[3] and c[1] != "GPU kernel":
                try:
                    t = float(c[4])
                except ValueError:
                    continue
                k = (c[1], c[3])
                if k not in best or t < best[k][0]:
                    best[k] = (t, c[8])
    return best
n, o = rows("new"), rows("old")
print("| kernel | grid | unrolled stepping s | default stepping s | change | max err unrolled / default |")
print("|---|---|---:|---:|---:|---|")
for k in sorted(set(n) | set(o)):
    a, b = o.get(k), n.get(k)
    if not a or not b:
        print(f"| {k[0]} | {k[1]} | {a} | {b} | missing | |"); continue
    print(f"| {k[0]} | {k[1]} | {a[0]:.4f} | {b[0]:.4f} | {100*(b[0]/a[0]-1):+.1f}% | {a[1]} / {b[1]} |")
EOF
section "raw: bp_new_1.log"; cat "$out/bp_new_1.log"
section "raw: oc_new_1.log (GPU rows)"; grep -E '^\|' "$out/oc_new_1.log" | tail -12
[ -s "$out/failures.txt" ] && { section "first test failures (failures.txt)"; head -40 "$out/failures.txt"; }
section "summary"
cat "$summary"
exit $status
