#!/usr/bin/env bash
# The variable-batch GPU benchmark, base against this tree, in one call (issue 15: the
# "ours compact (thread/system)" rows were 1.11-1.12x slower on 2 x H200 between a517daf and
# 8f9c698; thomas_variable_core.hpp now gives every non-periodic variable kernel the base's
# machine code byte for byte: scripts/compare_cubin.py thomas_variable thomas_variable_fp64).
#
#   scripts/export_base.sh a517daf        # here, once: .base/ (carry it to the GPU machine)
#   scripts/gpu_variable_check.sh [--no-tests] [gpu_compare.sh options]
#
# Runs BENCHES=bench_cuda_variable_batch scripts/gpu_compare.sh --no-tests (builds the bench
# of .base/ and of this tree, runs base, new, base, new; logs in $OUT/bench_logs.tgz), then
# builds and runs the variable-batch GPU tests of this tree and the GPU tests of issue 15
# item 9 (the fused stage against the fp64 reference, ...; ctest.log), and ends with the
# table of every "ours" row: base and new ms per pair, new/base, and the verdict (slower
# only if > 3% slower in both pairs), then gpu_compare.sh's summary.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
do_tests=1
args=()
for a in "$@"; do
  if [ "$a" = --no-tests ]; then do_tests=0; else args+=("$a"); fi
done
mkdir -p "$out"
BENCHES=bench_cuda_variable_batch "$root/scripts/gpu_compare.sh" --no-tests "${args[@]}" >"$out/gpu_compare_output.txt" 2>&1
rc=$?
[ $rc = 0 ] || { tail -40 "$out/gpu_compare_output.txt"; echo "gpu_variable_check.sh: gpu_compare.sh exit $rc"; exit $rc; }

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  # The variable-batch tests, and the GPU tests h-tests added or split out (issue 15 item 9):
  # the fused stage against the fp64 reference, the GPU halves of the mixed checks.
  cmake --build "$root/build-new" -j "$(nproc)" --target test_thomas_variable_cuda test_variable_batch \
        test_thomas_pcr_fused_stage test_large_tridiagonal_nondominant test_heston test_american test_chain \
        test_pricer test_c_api >>"$out/build.log" 2>&1 || echo "tests: build FAILED (log: $out/build.log)" | tee -a "$out/summary.txt"
  ctest --test-dir "$root/build-new" --output-on-failure -j 4 --timeout 600 \
        -R 'CudaVariable|VariableBatch|CudaFusedStage|StageReference|LargeNonDominant|^HestonAmerican\.|^American\.|Chain\.Cuda|Executor\.Cuda|CApiExecutor' \
        >"$out/ctest.log" 2>&1
  echo "ctest (variable-batch and h-tests' GPU tests): exit $? ($(( $(date +%s) - t0 )) s): $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1); skipped $(grep -c '\*\*\*Skipped' "$out/ctest.log")" |
    tee -a "$out/summary.txt"
  grep -E '\((Failed|Timeout|Subprocess)|\*\*\*Skipped' "$out/ctest.log" | sed 's/^/  /' | tee -a "$out/summary.txt"
fi

logs=$(mktemp -d)
tar xzf "$out/bench_logs.tgz" -C "$logs"
/usr/bin/env python3 - "$logs" <<'PY' | tee "$out/table.txt"
import os, re, statistics, sys
d, bench = sys.argv[1], "bench_cuda_variable_batch"
def rows(path):
    res, sect = {}, None
    for l in open(path, errors="replace").read().splitlines():
        m = re.match(r"tridiagonal (fp\d+) (.+?): ", l)
        if m:
            sect = m.group(1) + " " + m.group(2)
            continue
        m = re.match(r"\s+(ours .+?|fixed-size .+?|cuSPARSE .+?)\s+([\d.]+) ms", l)
        if m and sect:
            res[(sect, m.group(1).strip())] = float(m.group(2))
    return res
runs = [(rows(f"{d}/{bench}.base{s}.log"), rows(f"{d}/{bench}.new{s}.log")) for s in ("", "2", "3")
        if os.path.exists(f"{d}/{bench}.new{s}.log")]
keys = [k for k in runs[0][0] if all(k in b and k in n for b, n in runs)] if runs else []
print(f"\n{'case':18s} {'row':38s} " + " ".join(f"{'base ms':>9s} {'new ms':>9s} {'new/base':>8s}" for _ in runs) + "  verdict")
slow, comp, ours = [], [], []
for k in keys:
    r = min(n[k] / b[k] for b, n in runs)
    slow += [k] if r > 1.03 else []
    comp += [r] if "compact" in k[1] else []
    ours += [r] if k[1].startswith("ours") else []
    print(f"{k[0]:18s} {k[1]:38s} " + " ".join(f"{b[k]:9.3f} {n[k]:9.3f} {n[k] / b[k]:8.3f}" for b, n in runs)
          + ("  SLOWER" if r > 1.03 else "  ok") + ("  <-- compact" if "compact" in k[1] else ""))
if comp:
    print(f"\ncompact (thread/system) rows: {len(comp)}, new/base (better pair) median {statistics.median(comp):.3f},"
          f" max {max(comp):.3f}   (before the fix, 2 x H200: 1.11-1.12)")
if ours:
    print(f"all 'ours' rows: {len(ours)}, new/base median {statistics.median(ours):.3f}")
print(f"rows > 3% slower in every pair: {len(slow)}" + "".join(f"\n  {a} | {b}" for a, b in slow))
PY
rm -rf "$logs"
echo; cat "$out/summary.txt"
