#!/usr/bin/env bash
# Host-CPU measurements on any Linux machine (the GPU machine's CPU included): the host
# tridiagonal sweeps against the machine's copy bandwidth, before/after a base revision,
# and the host-thread policy under load. Builds host-only (no CUDA, no VTK, no MPI) into
# build-host (and build-host-base for .base/), logs under $OUT.
#
#   scripts/export_base.sh 9c88e98    # here, once, for the before/after table (carry .base;
#                                     # 9c88e98: the host Y/Z sweeps before stop 29)
#   scripts/host_check.sh [--build-only | --no-build] [--cores N] [--rounds R] [--full] [--heat]
#
#   --cores N   run everything pinned to the first N processors (default 2: the size of
#               the CI/dev VMs), so the figures compare with theirs
#   --rounds R  base/new alternations for table 1 (default 3: A B A B A B)
#   --full      also table 2: every row of bench_cpu_tridiagonal (this tree; ~1-2 min)
#   --heat      also table 3: heat3d --n 128 ms per step, idle and with one core busy
#   --steps K   heat3d steps per run for --heat (default 200)
#   (HOST_CHECK_CMAKE_ARGS: extra CMake arguments, e.g. a compiler launcher)
#
# Tables at the end:
#  1. Y and Z sweeps (256 x 256 x 128, fp32/fp64, automatic and shared bands) in % of the
#     copy bandwidth each run measured, this tree against .base/ when it exists, runs
#     alternated; median of the rounds [lowest-highest];
#  2. (--full) bench_cpu_tridiagonal on N threads (X/Y/Z, % of copy, x LAPACK);
#  3. (--heat) heat3d --n 128: default team, 1 thread and N threads, idle and loaded.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/out}
build=$root/build-host
base_src=$root/.base
base_build=$root/build-host-base
do_build=1 run=1 cores=2 steps=200 rounds=3 full=0 heat=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) do_build=0 ;;
    --build-only) run=0 ;;
    --cores) cores=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --steps) steps=$2; shift ;;
    --full) full=1 ;;
    --heat) heat=1 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "host_check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$out"
log=$out/host_check.log
: > "$log"
say() { echo "$*" | tee -a "$log"; }
have_base=0
[ -d "$base_src" ] && have_base=1

say "== host_check.sh $(date -u +%FT%TZ) on $(hostname)"
say "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) processors"
say "flags: $(grep -o -w -E 'avx512f|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
say "caches: $(lscpu | sed -n 's/^\(L[123][di]* cache\): *\(.*\)/\1 \2/p' | tr '\n' ';')"
if [ $have_base = 1 ]; then
  say "base: .base/ at $(cat "$base_src/REVISION" 2>/dev/null || echo '?'); this tree: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '(no git)')"
else
  say "base: none (scripts/export_base.sh REV and carry .base for the before/after table)"
fi

configure_and_build() {  # src build targets...
  local src=$1 dir=$2; shift 2
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=OFF -DADI_WITH_VTK=OFF \
    -DADI_WITH_MPI=OFF -DADI_WITH_PYTHON=OFF -DADI_BUILD_TESTS=OFF -DADI_BUILD_EXAMPLES=ON \
    -DADI_BUILD_BENCHMARKS=ON ${HOST_CHECK_CMAKE_ARGS:-} >>"$out/host_build.log" 2>&1 &&
    cmake --build "$dir" -j "$(nproc)" --target "$@" >>"$out/host_build.log" 2>&1
}
if [ $do_build = 1 ]; then
  : > "$out/host_build.log"
  t0=$(date +%s)
  targets=(bench_cpu_tridiagonal)
  [ $heat = 1 ] && targets+=(heat3d)
  ok=1
  configure_and_build "$root" "$build" "${targets[@]}" || ok=0
  if [ $ok = 1 ] && [ $have_base = 1 ]; then configure_and_build "$base_src" "$base_build" bench_cpu_tridiagonal || ok=0; fi
  if [ $ok = 1 ]; then
    say "build: ok ($(( $(date +%s) - t0 )) s, $(nproc) jobs)"
  else
    say "build: FAILED (see host_build.log)"; tail -30 "$out/host_build.log"; exit 1
  fi
fi
[ $run = 1 ] || exit 0
last=$((cores - 1))
pin="taskset -c 0-$last"
bench=$build/benchmarks/bench_cpu_tridiagonal
base_bench=$base_build/benchmarks/bench_cpu_tridiagonal
[ -x "$bench" ] || { say "no $bench (build first)"; exit 1; }
if [ $have_base = 1 ] && [ ! -x "$base_bench" ]; then say "no $base_bench: base skipped"; have_base=0; fi

# --- 1. Y/Z before/after ---------------------------------------------------------------
filter='^(copy|(float|double)/(Y|Z)/(automatic|shared_bands))'
runs=()
for r in $(seq "$rounds"); do
  for which in base new; do
    [ $which = base ] && [ $have_base = 0 ] && continue
    bin=$bench
    [ $which = base ] && bin=$base_bench
    f=$out/yz.$which.$r.log
    OMP_NUM_THREADS=$cores $pin "$bin" --benchmark_filter="$filter" --benchmark_repetitions=3 \
      --benchmark_report_aggregates_only=true > "$f" 2>&1 || say "$which run $r: exit $?"
    runs+=("$f")
  done
done
say ""
say "== 1. Y/Z sweeps, $cores threads pinned to processors 0-$last, $rounds rounds alternated" \
    "(each: median of 3 repetitions, in % of the copy bandwidth that run measured)"
say "copy GB/s per run: $(for f in "${runs[@]}"; do printf '%s=%s ' "$(basename "$f" .log | cut -d. -f2-)" \
    "$(sed -n 's/^copy_GB\/s: *\([0-9.]*\).*/\1/p' "$f" | head -1 | cut -c1-5)"; done)"
# Rows: name -> per build: of_copy of each round, and ms.
awk -v have_base=$have_base '
  FNR == 1 { split(FILENAME, p, "/"); n = split(p[length(p)], q, "."); which = q[n - 2] }
  /_median/ && /of_copy=/ && $1 !~ /^copy/ {
    row = $1; sub("/real_time_median", "", row);
    oc = ""; for (i = 1; i <= NF; ++i) if ($i ~ /^of_copy=/) oc = substr($i, 9) * 100;
    if (!(row in seen)) { seen[row] = 1; order[++nrows] = row }
    k = row SUBSEP which; cnt[k]++; v[k, cnt[k]] = oc; ms[k, cnt[k]] = $2 " " $3
  }
  function stat(k,   i, j, t, m, a) {
    m = cnt[k]; if (m == 0) return "-";
    for (i = 1; i <= m; ++i) a[i] = v[k, i];
    for (i = 1; i <= m; ++i) for (j = i + 1; j <= m; ++j) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    med = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2;
    return sprintf("%.0f%% [%.0f-%.0f]", med, a[1], a[m])
  }
  END {
    if (have_base) { print "| row | base: % of copy [range] | new: % of copy [range] | new ms (last round) |"; print "|---|---:|---:|---:|" }
    else { print "| row | % of copy [range] | ms (last round) |"; print "|---|---:|---:|" }
    for (r = 1; r <= nrows; ++r) {
      row = order[r]; kn = row SUBSEP "new"; kb = row SUBSEP "base";
      if (have_base) printf "| %s | %s | %s | %s |\n", row, stat(kb), stat(kn), ms[kn, cnt[kn]];
      else printf "| %s | %s | %s |\n", row, stat(kn), ms[kn, cnt[kn]];
    }
  }' "${runs[@]}" | tee -a "$log"

# --- 2. every row of this tree ---------------------------------------------------------
if [ $full = 1 ]; then
  say ""
  say "== 2. bench_cpu_tridiagonal (this tree), $cores threads pinned to processors 0-$last"
  OMP_NUM_THREADS=$cores $pin "$bench" --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true > "$out/bench_cpu.log" 2>&1
  grep -E "copy_GB/s|omp_threads" "$out/bench_cpu.log" | tee -a "$log"
  sed -n '/^Summary/,$p' "$out/bench_cpu.log" | tee -a "$log"
fi

# --- 3. heat3d under load --------------------------------------------------------------
if [ $heat = 1 ]; then
  heatrun() {  # threads
    $pin "$build/examples/heat/heat3d" --n 128 --steps "$steps" --no-output --threads "$1" 2>&1 |
      awk '/per step/ { s = 0; for (i = 1; i <= NF; ++i) if ($(i+1) ~ /^ms/) s += $i; printf "%.1f", s }'
  }
  say ""
  say "== 3. heat3d --n 128 --steps $steps, ms per step (sum of the parts), $cores processors"
  say "| machine state | default (threads 0) | 1 thread | $cores threads |"
  say "|---|---:|---:|---:|"
  for rep in 1 2; do
    say "| idle (run $rep) | $(heatrun 0) | $(heatrun 1) | $(heatrun "$cores") |"
  done
  taskset -c "$last" yes > /dev/null &
  busy=$!
  sleep 1
  for rep in 1 2; do
    say "| processor $last kept busy by yes (run $rep) | $(heatrun 0) | $(heatrun 1) | $(heatrun "$cores") |"
  done
  kill $busy
fi
(cd "$out" && tar czf host_logs.tgz ./*.log 2>/dev/null)
say ""
say "logs: $out/host_check.log; all logs in host_logs.tgz (yz.{base,new}.R.log, bench_cpu.log, host_build.log)"
