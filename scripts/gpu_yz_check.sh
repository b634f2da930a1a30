#!/usr/bin/env bash
# Issue 16, the batched solves: every direction >= 85% of copy in fp32 and fp64 on the card
# it runs on, and the dispatch table fitting that card. Builds (VTK, MPI, Python off; sm_90;
# build dir build-yz) only bench_cuda_tridiagonal and the tests of the Y/Z and X kernels,
# runs bench_cuda_tridiagonal on the dense boxes 256^3, 240x256x256 and 512^3 (every
# candidate kernel, the dispatch's pick marked '*', the measured plan, cuSPARSE; % of the
# copy bandwidth measured in the same run), then the same-run A/B of the register kernel's
# copy stream (ADI_PCR_STRIDED_GROUPS = 1: as before; stop 31's warp: 16-byte cp.async of the
# warp's rows, the default; bulk, 4 and 2 commit groups; the Y/Z hybrid rows of the three boxes
# and the 256^3 Y tuning rows, two passes, alternating), then the tests (the Y/Z suite at each
# setting; compute-sanitizer memcheck and racecheck on the register kernel's warp and bulk forms).
# The stream forms bulk, 2 and 4 are timing-only (issue 15 item 8): the default build lacks them, so
# the A/B, their test runs and the bulk sanitizer run use a second build, build-yz-unroll
# (-DADI_CUDA_UNROLL_ALL=ON; bench_cuda_tridiagonal and test_thomas_pcr_strided only); --no-unroll
# skips it and those rows (then the A/B is 1 / warp of the default build), and the default build is
# checked to say so and run the default when asked for a form it lacks.
# Last, where ncu exists (--no-ncu skips it): Nsight Compute on the register kernel (256^3 fp64 Y,
# per-line bands) with the copy stream as before (1) and the warp form: registers, blocks per SM,
# achieved occupancy, stalls, DRAM throughput, sectors per request of the copies and stores.
#
#   scripts/gpu_yz_check.sh [--build-only | --no-build] [--no-tests] [--no-512] [--no-ncu] [--no-unroll]
#                           [--build-dir DIR]
#
# Logs under $OUT (default <repo>/out): yz_logs.tgz (build.log, ctest.log, sanitizer.log,
# bench_boxes.log, bench_512.log, bench_sweep.log, bench_groups.log, ncu_*.txt) and summary.txt. The output ends
# with the tables (the A/B table last), also in tables.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=$root/build-yz
do_build=1 do_tests=1 do_ncu=1 build_only=0 big=1 unroll=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-only) build_only=1 ;;
    --no-tests) do_tests=0 ;;
    --no-512) big=0 ;;
    --no-ncu) do_ncu=0 ;;
    --no-unroll) unroll=0 ;;
    --build-dir) build=$2; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "gpu_yz_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
logs=$out/yz_logs
. "$root/scripts/gtest_runs.sh"
summary_start "$out"
mkdir -p "$logs"
tests=(test_thomas_pcr_strided test_thomas_strided test_thomas_naive test_thomas_pcr_hybrid
       test_tridiagonal_cuda_dispatch test_interleaved_batch)
note "== gpu_yz_check.sh $(date -u +%FT%TZ) on $(hostname), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"

if [ $do_build = 1 ]; then
  if ! cuda_build "$logs/build.log" "$build" bench_cuda_tridiagonal "${tests[@]}"; then
    tar -czf "$out/yz_logs.tgz" -C "$out" yz_logs 2>/dev/null
    exit 1
  fi
  if [ $unroll = 1 ]; then  # the timing-only stream forms (bulk, 2, 4): ADI_CUDA_UNROLL_ALL
    t0=$(date +%s)
    launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    if cmake -S "$root" -B "$build-unroll" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
         -DADI_WITH_PYTHON=OFF -DADI_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON \
         -DADI_BUILD_TESTS=ON -DADI_CUDA_UNROLL_ALL=ON "${launcher[@]}" >"$logs/build_unroll.log" 2>&1 &&
       cmake --build "$build-unroll" -j "$(nproc)" --target bench_cuda_tridiagonal test_thomas_pcr_strided \
         >>"$logs/build_unroll.log" 2>&1; then
      note "build (ADI_CUDA_UNROLL_ALL=ON, $build-unroll): ok ($(( $(date +%s) - t0 )) s)"
    else
      tail -40 "$logs/build_unroll.log"
      note "build (ADI_CUDA_UNROLL_ALL=ON): FAILED (build_unroll.log): the stream forms bulk, 2, 4 are skipped"
      unroll=0 status=1
    fi
  fi
fi
[ $unroll = 1 ] && [ ! -x "$build-unroll/tests/test_thomas_pcr_strided" ] &&
  { note "no $build-unroll (--no-build without it): the stream forms bulk, 2, 4 are skipped"; unroll=0; }
[ $build_only = 1 ] && exit 0
bench=$build/benchmarks/bench_cuda_tridiagonal
# The binaries of a copy stream form: bulk, 2 and 4 only in the ADI_CUDA_UNROLL_ALL build.
form_build() { case "$1" in bulk|2|4) echo "$build-unroll" ;; *) echo "$build" ;; esac; }

# Benchmarks first, on an idle device.
t0=$(date +%s)
"$bench" --no-tune --no-layouts --no-sweep --no-long --reps 15 >"$logs/bench_boxes.log" 2>&1 ||
  { status=1; note "bench 256^3 + 240x256x256: FAILED (exit $?)"; }
note "bench 256^3, 240x256x256: $(( $(date +%s) - t0 )) s"
if [ $big = 1 ]; then
  t1=$(date +%s)
  "$bench" --boxes 512x512x512 --no-tune --no-layouts --no-sweep --no-long --reps 7 >"$logs/bench_512.log" 2>&1 ||
    { status=1; note "bench 512^3: FAILED (exit $?)"; }
  note "bench 512^3: $(( $(date +%s) - t1 )) s"
fi
t1=$(date +%s)
# The line-length sweep (2^24 values, per-line bands), for the dispatch rows by line length.
"$bench" --boxes "" --no-tune --no-layouts --no-long --reps 7 >"$logs/bench_sweep.log" 2>&1 ||
  { status=1; note "bench sweep: FAILED (exit $?)"; }
ADI_PCR_STRIDED_GROUPS=1 "$bench" --boxes "" --no-tune --no-layouts --no-long --reps 7 \
  >"$logs/bench_sweep_g1.log" 2>&1 || { status=1; note "bench sweep (groups 1): FAILED (exit $?)"; }
note "bench sweep: $(( $(date +%s) - t1 )) s"
t1=$(date +%s)
# Same-run A/B of the register kernel's copy stream: cp.async in 1 commit group (as before), the
# warp's rows in 16-byte pieces (warp, the default), the bulk copy engine, 4 and 2 commit groups;
# the Y/Z hybrid rows of the three boxes and the 256^3 Y tuning rows; two passes. (prefetch and
# prefetch2, the warp form plus L2 prefetches, lost every row on both cards: dropped at stop 32.)
groups=(1 warp bulk 4 2)
[ $unroll = 1 ] || { groups=(1 warp); note "A/B: stream forms bulk, 4, 2 skipped (no ADI_CUDA_UNROLL_ALL build)"; }
stream_env() { echo "ADI_PCR_STRIDED_GROUPS=$1"; }
boxes_ab=256x256x256,240x256x256
[ $big = 1 ] && boxes_ab=$boxes_ab,512x512x512
: >"$logs/bench_groups.log"
for pass in 1 2; do
  for g in "${groups[@]}"; do
    echo "### pass $pass groups $g" >>"$logs/bench_groups.log"
    env $(stream_env "$g") timeout 60 "$(form_build "$g")/benchmarks/bench_cuda_tridiagonal" --boxes "$boxes_ab" --no-layouts --no-sweep --no-long --reps 7 \
      --filter "pcr_strided" >>"$logs/bench_groups.log" 2>&1 || { status=1; note "bench groups=$g pass $pass: FAILED (exit $?)"; }
  done
done
note "bench A/B groups ${groups[*]} x 2 passes: $(( $(date +%s) - t1 )) s"

if [ $do_tests = 1 ]; then
  t0=$(date +%s)
  run_gtests "$logs/ctest.log" 200 "$build/tests" "${tests[@]}"
  note "tests: $(( $(date +%s) - t0 )) s"
  forms=(1 2 4 bulk)  # warp is the default (stop 31) the loop above ran
  [ $unroll = 1 ] || { forms=(1); note "test_thomas_pcr_strided at 2, 4, bulk: skipped (no ADI_CUDA_UNROLL_ALL build)"; }
  for g in "${forms[@]}"; do
    echo "### test_thomas_pcr_strided with $(stream_env "$g") ($(form_build "$g"))" >>"$logs/ctest.log"
    if env $(stream_env "$g") timeout 100 "$(form_build "$g")/tests/test_thomas_pcr_strided" >"$logs/test_g$g.log" 2>&1; then
      note "test_thomas_pcr_strided, $(stream_env "$g"): passed ($(grep -oE '^\[  PASSED  \] [0-9]+' "$logs/test_g$g.log"))"
    else
      note "test_thomas_pcr_strided, $(stream_env "$g"): FAILED (test_g$g.log)"
      grep -m2 -B2 -A8 'Failure$' "$logs/test_g$g.log" | head -24 | tee -a "$summary"
      status=1
    fi
    cat "$logs/test_g$g.log" >>"$logs/ctest.log"
  done
  # The default build asked for a form it lacks: one message on stderr, the default run, tests pass.
  if ADI_PCR_STRIDED_GROUPS=2 timeout 100 "$build/tests/test_thomas_pcr_strided" --gtest_filter='*.ManyTilesSmall' \
       >"$logs/test_missing_form.log" 2>&1 &&
     [ "$(grep -c 'ADI_PCR_STRIDED_GROUPS=2: this build does not compile' "$logs/test_missing_form.log")" = 1 ]; then
    note "default build, ADI_PCR_STRIDED_GROUPS=2 (a form it lacks): passed, said so once, ran the default"
  else
    note "default build, ADI_PCR_STRIDED_GROUPS=2 (a form it lacks): FAILED or no single message (test_missing_form.log)"
    status=1
  fi
  cat "$logs/test_missing_form.log" >>"$logs/ctest.log"
  echo "### FullSegments with ADI_PCR_STRIDED_FULL_PATH=0 (the general path)" >>"$logs/ctest.log"
  if ADI_PCR_STRIDED_FULL_PATH=0 timeout 100 "$build/tests/test_thomas_pcr_strided" --gtest_filter='*.FullSegments' \
       >>"$logs/ctest.log" 2>&1; then
    note "test_thomas_pcr_strided *.FullSegments, general path (ADI_PCR_STRIDED_FULL_PATH=0): passed"
  else
    note "test_thomas_pcr_strided *.FullSegments, general path (ADI_PCR_STRIDED_FULL_PATH=0): FAILED"
    status=1
  fi
  : >"$logs/sanitizer.log"
  runs=("warp memcheck" "warp racecheck" "1 memcheck")
  [ $unroll = 1 ] && runs+=("bulk memcheck")
  for run in "${runs[@]}"; do
    set -- $run
    note "compute-sanitizer $2 with ADI_PCR_STRIDED_GROUPS=$1:"
    ADI_PCR_STRIDED_GROUPS=$1 run_sanitizer "$logs/sanitizer.log" 60 $2 "$(form_build "$1")/tests/test_thomas_pcr_strided" \
      '*.ManyTilesSmall'
  done
fi

ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ $do_ncu = 1 ] && [ -x "$ncu" ]; then
  # The limiter before and after: the register kernel at 256^3 fp64 Y, per-line bands, with the
  # copy stream as before (1) and as the warp's 16-byte pieces.
  t1=$(date +%s)
  for g in 1 warp; do
    ADI_PCR_STRIDED_GROUPS=$g timeout 60 "$ncu" --clock-control none --kernel-name "regex:pcr_strided_registers" \
      --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
      --metrics smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,$(printf 'l1tex__t_%s_pipe_lsu_mem_global_op_%s.sum,' sectors ldgsts requests ldgsts sectors st requests st)$(printf 'smsp__average_warps_issue_stalled_%s_per_issue_active.ratio,' long_scoreboard barrier short_scoreboard wait mio_throttle lg_throttle math_pipe_throttle not_selected | sed 's/,$//') \
      "$bench" --boxes 256x256x256 --no-tune --no-layouts --no-sweep --no-long --reps 3 \
      --filter "256x256x256 fp64 y thomas_pcr_strided (hybrid) full" >"$logs/ncu_$g.txt" 2>&1 ||
      note "ncu groups=$g: exit $? (see ncu_$g.txt)"
  done
  note "ncu: $(( $(date +%s) - t1 )) s"
fi
tar -czf "$out/yz_logs.tgz" -C "$out" yz_logs 2>/dev/null

section() { echo; echo "=== $*"; }
# The tables, also in $OUT/tables.txt (the output's tail may be cut).
{
  for g in 1 warp; do
    [ -s "$logs/ncu_$g.txt" ] || continue
    section "Nsight Compute: register kernel, 256^3 fp64 Y, per-line bands, ADI_PCR_STRIDED_GROUPS=$g (ncu_$g.txt)"
    grep -E "registers_kernel|DRAM Throughput|Compute \(SM\) Throughput|Duration|Issued Warp|No Eligible|Warp Cycles Per Issued|Active Warps Per|Eligible Warps|inst_executed|dram__bytes|stalled|l1tex__t_|Registers Per Thread|Block Limit (Registers|Shared Mem)|Achieved Occupancy|Achieved Active Warps|Theoretical Occupancy" "$logs/ncu_$g.txt" | head -34
  done
  [ -s "$logs/failures.txt" ] && { section "first test failures (failures.txt)"; head -30 "$logs/failures.txt"; }
  for f in bench_boxes.log bench_512.log; do
    [ -s "$logs/$f" ] || continue
    section "dense boxes ($f): the targets; dispatch rows with a faster kernel (gap > 0.5%)"
    grep -m2 -E "^(device|copy)" "$logs/$f"
    sed -n '/^== Summary/,/^$/p' "$logs/$f"
    sed -n '/^== Dispatch against/,/^$/p' "$logs/$f" | awk 'NR<=2 {print; next}
      { for (i = 1; i <= NF; ++i) if ($i ~ /%$/) { g = $i + 0; n++; if (g > 0.5) { print; w++ } } }
      END { printf "(%d dispatch rows, %d with a gap > 0.5%%)\n", n, w }'
  done
  for f in bench_sweep.log bench_sweep_g1.log; do
    [ -s "$logs/$f" ] || continue
    section "line-length sweep, 2^24 values, Y, per-line bands: the dispatch's pick (*) against the fastest ($f; _g1: the hybrid with ADI_PCR_STRIDED_GROUPS=1, the copy stream before stop 31)"
    grep -m2 -E "^(device|copy)" "$logs/$f"
    awk '/^n=[0-9]+ +fp[0-9]+ +y / && / \| / {
        split($0, h, "|"); nf = split(h[1], f, " "); key = f[1] " " f[2] " " f[3];
        k = ""; star = 0; for (i = 4; i <= nf - 4; ++i) { if (f[i] == "*") star = 1; else k = k (k == "" ? "" : " ") f[i] }
        ms = f[nf - 2] + 0;
        if (!(key in best) || ms < best[key]) { best[key] = ms; bk[key] = k }
        if (star) { pick[key] = ms; pk[key] = k }
        if (!(key in seen)) { seen[key] = 1; order[++n] = key } }
      END { printf "%-18s %-30s %9s %-30s %9s %6s\n", "line", "dispatch", "ms", "fastest", "ms", "gap";
        for (i = 1; i <= n; ++i) { key = order[i];
          printf "%-18s %-30s %9.4f %-30s %9.4f %5.1f%%\n", key, pk[key], pick[key], bk[key], best[key],
                 (pick[key] > 0 ? 100 * (pick[key] / best[key] - 1) : 0) } }' "$logs/$f"
  done
  section "A/B: register kernel copy stream, ADI_PCR_STRIDED_GROUPS $(echo "${groups[*]}" | sed 's| | / |g') (warp: the default since stop 31; 1: before), ms, two passes (bench_groups.log)"
  grep -m2 -E "^(device|copy)" "$logs/bench_groups.log"
  echo "(warp, bulk: only where every tile is whole and 16-byte aligned, else the run is setting 1: e.g. 240x256x256 fp32 Y)"
  awk -v settings="${groups[*]}" '
    BEGIN { ns = split(settings, gs, " ") }
    /^### pass/ { pass = $3; g = $5; next }
    / \| / && $0 ~ /thomas_pcr_strided/ && $0 !~ /measured/ {
      split($0, h, "|"); nf = split(h[1], f, " ");
      if (f[nf - 3] != "full" && f[nf - 3] != "shared") next;  # a benchmark row, not a table
      k = ""; for (i = 4; i <= nf - 4; ++i) if (f[i] != "*") k = k (k == "" ? "" : " ") f[i];
      sub(/thomas_pcr_strided \(hybrid\)/, "hybrid", k);
      key = sprintf("%-11s %s %s %-22s %-6s", f[1], f[2], f[3], k, f[nf - 3]);
      if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
      ms[key, pass, g] = f[nf - 2]; pc[key, pass, g] = f[nf];
    }
    END {
      hdr = sprintf("%-51s", "row (ms: pass 1 | pass 2)");
      for (p = 1; p <= 2; ++p) { for (j = 1; j <= ns; ++j) hdr = hdr sprintf(" %6s", gs[j]); if (p == 1) hdr = hdr " |" }
      print hdr " | best %copy: g1 -> fastest | default";
      for (i = 1; i <= nk; ++i) {
        key = order[i]; line = sprintf("%-51s", key);
        for (p = 1; p <= 2; ++p) { for (j = 1; j <= ns; ++j) line = line sprintf(" %6s", ms[key, p, gs[j]]); if (p == 1) line = line " |" }
        b1 = 0; bb = 0; bg = "";
        for (p = 1; p <= 2; ++p) for (j = 1; j <= ns; ++j) { v = pc[key, p, gs[j]] + 0;
          if (gs[j] == "1" && v > b1) b1 = v; if (v > bb) { bb = v; bg = gs[j] } }
        # the default (warp) against the fastest setting, in ms (best of two passes)
        bw = 0; bf = 0;
        for (p = 1; p <= 2; ++p) for (j = 1; j <= ns; ++j) { m = ms[key, p, gs[j]] + 0; if (m <= 0) continue;
          if (gs[j] == "warp" && (bw == 0 || m < bw)) bw = m; if (bf == 0 || m < bf) bf = m }
        print line sprintf(" | %5.1f -> %5.1f (%s) | warp %+5.1f%% of fastest", b1, bb, bg, bf > 0 ? 100 * (bw / bf - 1) : 0);
      }
    }' "$logs/bench_groups.log"
  section "summary"
  cat "$summary"
} 2>&1 | tee "$out/tables.txt"
exit $status
