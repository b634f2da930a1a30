#!/usr/bin/env bash
# Device check of issue 15 item 8 (the serial CUDA compile time halved; stops 31, 32):
# every kernel whose machine code the compile-time work changed, tested, and timed against
# the form before it in the same run. Two builds of one tree (CUDA sm_90, MPI on, VTK and
# Python off): build-bc (the default) and build-bc-unroll (-DADI_CUDA_UNROLL_ALL=ON: the
# forms before the compile-time work). What differs between them, by section:
#   bp   (stop 31) fp64 block partition M = 7, 8 rolled: bench_cuda_block_partition (reduce +
#        back-substitution, M = 2..8, fp64/fp32, S = 1 and 4); tests
#        test_distributed_block_tridiagonal (device, 2 ranks sharing the GPU and 1 rank),
#        test_block_partition_rolled;
#   oc   (stop 31) the option chain's warp kernel, set-up rolled and time step inlined once:
#        bench_option_chain --gpu-configs over every warp size class; test_chain;
#   bt   block Thomas: bench_cuda_block_tridiagonal (every M, layout, kernel; periodic; CFD
#        grid); test_block_thomas_cuda;
#   long thomas_pcr_long: bench_cuda_tridiagonal --long-only (public case, every launch shape,
#        clusters, shared bands, batches) and its Y line-length sweep rows (--filter pcr_long);
#        test_thomas_pcr_long, test_tridiagonal_cuda_dispatch, compute-sanitizer racecheck /
#        synccheck on the small cases, memcheck on the shapes.
#   bt and long measured stop 32's two changes (block Thomas M = 6..8 without the unit-stride
#   kernel form; thomas_pcr_long with the band kind and cluster read at run time), both
#   reverted after this check (docs/design.md, "Serial CUDA compile time"). Since then both
#   builds compile the same kernels there: an A/A run (the noise of the 3% rule) until a new
#   form is put behind ADI_CUDA_UNROLL_ALL, which makes them an A/B again. Since stop 37 bt's
#   "shared" rows are such an A/B: the default build runs the shuffles for them (the shared
#   exchange only with ADI_CUDA_UNROLL_ALL); its "shuffle" rows stay an A/A.
# Benchmarks first (default / unrolled / default / unrolled), then tests, then the tables:
# bp and oc side by side (best of 2 runs each); bt and long through compare_bench_logs.py (base =
# the unrolled build; rows more than 3% slower in both pairs, and the median new/base).
#
#   OUT=/tmp/o scripts/gpu_build_check.sh --build-only     # both builds (~4 min on 16 cores)
#   OUT=/tmp/o scripts/gpu_build_check.sh --no-build       # tests + benchmarks (~5 min)
#   scripts/gpu_build_check.sh [--sections bt,long]        # both in one call; sections: bp,oc,bt,long
# Logs under $OUT (default <repo>/out): build.log, tests.log, bp_{new,old}_{1,2}.log,
# oc_{new,old}_{1,2}.log, {bt,long,sweep}.{new,base}{,2}.log, sanitizer.log, summary.txt; the
# tables at the end of the output.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
new=$root/build-bc old=$root/build-bc-unroll
do_build=1 do_run=1 sections=bp,oc,bt,long
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-only) do_run=0 ;;
    --sections) sections=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/{/^#/p}' "$0"; exit 0 ;;
    *) echo "gpu_build_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
has() { [[ ",$sections," == *",$1,"* ]]; }
start=$(date +%s)
# Within one 10-minute device call: the sanitizers are skipped past this many seconds.
late() { [ $(( $(date +%s) - start )) -gt "${BUILD_CHECK_BUDGET_S:-420}" ]; }
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
    benches="" tests=""
    has bp && benches+=" bench_cuda_block_partition" tests+=" test_distributed_block_tridiagonal test_block_partition_rolled"
    has oc && benches+=" bench_option_chain" tests+=" test_chain"
    has bt && benches+=" bench_cuda_block_tridiagonal" tests+=" test_block_thomas_cuda"
    has long && benches+=" bench_cuda_tridiagonal" tests+=" test_thomas_pcr_long test_tridiagonal_cuda_dispatch"
    dir=$new targets="$benches $tests"
    extra=()
    if [ $b = old ]; then dir=$old targets=$benches extra=(-DADI_CUDA_UNROLL_ALL=ON); fi
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
    sfx=$([ $r = 1 ] || echo $r) kind=$([ $b = old ] && echo base || echo new)  # compare_bench_logs.py names
    if has bp; then
      timeout 120 "$dir/benchmarks/bench_cuda_block_partition" "${bp_args[@]}" >"$out/bp_${b}_$r.log" 2>&1 ||
        { status=1; note "bench_cuda_block_partition ($b, run $r): FAILED (exit $?)"; }
    fi
    if has oc; then
      timeout 120 "$dir/benchmarks/bench_option_chain" "${oc_args[@]}" >"$out/oc_${b}_$r.log" 2>&1 ||
        { status=1; note "bench_option_chain ($b, run $r): FAILED (exit $?)"; }
    fi
    if has bt; then
      timeout 200 "$dir/benchmarks/bench_cuda_block_tridiagonal" >"$out/bt.$kind$sfx.log" 2>&1 ||
        { status=1; note "bench_cuda_block_tridiagonal ($b, run $r): FAILED (exit $?)"; }
    fi
    if has long; then
      timeout 200 "$dir/benchmarks/bench_cuda_tridiagonal" --long-only >"$out/long.$kind$sfx.log" 2>&1 ||
        { status=1; note "bench_cuda_tridiagonal --long-only ($b, run $r): FAILED (exit $?)"; }
      timeout 150 "$dir/benchmarks/bench_cuda_tridiagonal" --no-tune --no-layouts --no-long --filter pcr_long --reps 10 \
        >"$out/sweep.$kind$sfx.log" 2>&1 || { status=1; note "bench_cuda_tridiagonal sweep ($b, run $r): FAILED (exit $?)"; }
    fi
  done
  note "benchmarks, round $r: $(( $(date +%s) - t0 )) s"
done

t0=$(date +%s)
gt=()
has oc && gt+=(test_chain)
has bp && gt+=(test_block_partition_rolled)
has bt && gt+=(test_block_thomas_cuda)
has long && gt+=(test_thomas_pcr_long test_tridiagonal_cuda_dispatch)
run_gtests "$out/tests.log" 300 "$new/tests" "${gt[@]}"
if has long; then  # the cluster kernels: races, barriers, distributed shared memory
  : >"$out/sanitizer.log"
  for tool in racecheck synccheck; do
    late && { note "sanitizer $tool: skipped (time budget; run again with --no-build --sections long)"; continue; }
    run_sanitizer "$out/sanitizer.log" 120 $tool "$new/tests/test_thomas_pcr_long" '*.Small'
  done
  late && note "sanitizer memcheck: skipped (time budget)" ||
    run_sanitizer "$out/sanitizer.log" 150 memcheck "$new/tests/test_thomas_pcr_long" '*.LaunchShapes'
fi
has bp && for np in 2 1; do
  log=$out/tests_mpi_np$np.log
  timeout 200 $MPI -n $np "$new/tests/test_distributed_block_tridiagonal" --gtest_filter='*Device*:*OneGpu*' --gtest_color=no >"$log" 2>&1
  rc=$?
  [ $rc = 0 ] || status=1
  note "test test_distributed_block_tridiagonal (device, $np ranks): exit $rc, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
  grep -E '^\[  FAILED  \] [A-Za-z]' "$log" | sort -u | head -8 | sed 's/^/  /' | tee -a "$summary"
done
note "tests: $(( $(date +%s) - t0 )) s"

section() { echo; echo "================================ $* ================================"; }
has bp && section "block partition passes: default (fp64 M = 7, 8 rolled) vs ADI_CUDA_UNROLL_ALL, best of 2 runs each"
has bp && /usr/bin/python3 - "$out" <<'EOF' | tee -a "$summary"
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
has oc && section "option chain warp kernel: default (set-up rolled, step inlined once) vs ADI_CUDA_UNROLL_ALL, best of 2 runs"
has oc && /usr/bin/python3 - "$out" <<'EOF' | tee -a "$summary"
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
if has bt || has long; then
  section "block Thomas (bt), thomas_pcr_long (long, sweep): default vs ADI_CUDA_UNROLL_ALL (= base), 2 pairs"
  cmp=()
  has bt && cmp+=(bt)
  has long && cmp+=(long sweep)
  /usr/bin/python3 "$root/scripts/compare_bench_logs.py" "$out" "${cmp[@]}" | tee -a "$summary"
fi
if has long; then
  section "thomas_pcr_long rows, ms: base (unrolled build) runs 1 / 2 against default runs 1 / 2"
  /usr/bin/python3 - "$out" <<'EOF' | tee -a "$summary"
import sys
out = sys.argv[1]
def rows(kind):
    runs = []
    for sfx in ("", "2"):
        d = {}
        for f in ("long", "sweep"):
            try:
                lines = open(f"{out}/{f}.{kind}{sfx}.log", errors="replace").read().splitlines()
            except OSError:
                continue
            for line in lines:
                t = line.split()
                if "pcr_long" not in line or not ({"fp32", "fp64"} & set(t[:4])):
                    continue
                i = next((k for k, x in enumerate(t) if x.replace(".", "", 1).isdigit() and "." in x), None)
                if i is not None:
                    d[f + ": " + " ".join(t[:i]).replace(" *", "")] = float(t[i])
        runs.append(d)
    return runs
b, n = rows("base"), rows("new")
keys = [k for k in b[0] if all(k in r for r in b + n)]
print("| row | base ms | default ms | change (best of 2) |")
print("|---|---:|---:|---:|")
for k in keys:
    x, y = min(r[k] for r in b), min(r[k] for r in n)
    print(f"| {k} | {' / '.join('%.4f' % r[k] for r in b)} | {' / '.join('%.4f' % r[k] for r in n)} | {100 * (y / x - 1):+.1f}% |")
EOF
fi
has bp && { section "raw: bp_new_1.log"; cat "$out/bp_new_1.log"; }
has oc && { section "raw: oc_new_1.log (GPU rows)"; grep -E '^\|' "$out/oc_new_1.log" | tail -12; }
[ -s "$out/failures.txt" ] && { section "first test failures (failures.txt)"; head -40 "$out/failures.txt"; }
section "summary"
cat "$summary"
exit $status
