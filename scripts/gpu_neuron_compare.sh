#!/usr/bin/env bash
# Issue 17's last target on ONE machine: "GPU active population of 100,000 cells >= 50x NEURON on
# all host cores of the same machine". NEURON 8.2 comes from the bundle of
# scripts/make_neuron_bundle.sh (Debian's nrniv + hoc library + its libraries, no Python), carried
# to the GPU machine in .neuron/ (the device tool's `carry`). Run from the repository root:
#
#   scripts/gpu_neuron_compare.sh [--sizes 1000,10000,100000] [--cpu-only] [--no-build]
#
# Environment: OUT (logs + summary, default ./gpu_neuron_compare_out), B (build dir, default
# build-gpu-neuron, the one of gpu_neuron_active_check.sh), NRN (default .neuron/nrniv),
# THREADS (NEURON's and adi host's threads, default nproc), T_END_<cells> (ms simulated at that
# size, defaults below), PRE_MIN (50000: from this size, NEURON builds while adi builds),
# BUSYWAIT (NEURON's pc.thread_busywait: 0, 1 or auto: both at <= 1,000 cells, where a step is
# short enough for it to matter, the faster one for the next sizes, and 1 for the background one).
#
# Per population size, the same network on both sides (benchmarks/neuron/ring.hoc in NEURON,
# build/benchmarks/bench_neuron_ring in adi): copies of the 04a pyramidal cell loaded by Import3d,
# nseg by d_lambda, hh in the soma, pas elsewhere; the first half of the cells get a 2 nA, 3 ms
# pulse at t = 0; each soma's spikes (0 mV) drive an ExpSyn (0.05 uS, tau 2 ms, e 0 mV) on the
# next cell after 1 ms (a ring: the wave then travels on one cell per ~3.4 ms). dt 0.025 ms,
# secondorder 0. NEURON: cvode.cache_efficient(1), pc.nthread(THREADS), pc.psolve(T) timed
# (wall clock, after finitialize). adi: the whole run of the same T timed the same way (after
# construction and initialize), on the GPU in fp64 (and fp32), and on all host cores.
# Then every spike time is compared (NEURON vs adi GPU fp64: the same count per cell, within one
# step), and a table of ns per compartment-step is printed (compartments: NEURON's nodes =
# adi's compartments, 221 per cell).
#
# NEURON takes ~2 ms per cell to build its model (not timed): with a size >= PRE_MIN it builds
# that one in the background while adi builds, and starts its timed run after the build.
# Before the sizes, a self-check: ring.hoc's copies (built from cell 0's 3-D points, fast)
# against Import3d run for every copy (as tests/neuron_import3d.py does): the spikes must be
# identical.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$PWD/gpu_neuron_compare_out}
B=${B:-build-gpu-neuron}
NRN=${NRN:-$ROOT/.neuron/nrniv}
THREADS=${THREADS:-$(nproc)}
BUSYWAIT=${BUSYWAIT:-auto}
SIZES=1000,10000,100000
CPU_ONLY=0
BUILD=1
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --cpu-only) CPU_ONLY=1; shift ;;
    --no-build) BUILD=0; shift ;;
    *) echo "usage: scripts/gpu_neuron_compare.sh [--sizes 1000,10000,100000] [--cpu-only] [--no-build]"; exit 2 ;;
  esac
done
mkdir -p "$OUT"
: > "$OUT/summary.txt"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
SWC=$ROOT/tests/data/morphologies/04a_pyramidal4aACC.CNG.swc
HOC=$ROOT/benchmarks/neuron/ring.hoc
CMP=$ROOT/benchmarks/neuron/compare_spikes.py
DT=0.025
# ms simulated per size: NEURON on 16 cores takes ~2-3 ns per compartment-step, so ~2-15 s a size
# (and 100,000 cells take ~2 min to build in NEURON, not timed). 6 ms at 100,000 cells: the
# pulse's 50,000 spikes at ~2.2 ms and the ring's next spike at ~5.6 ms.
t_end_for() {
  local v="T_END_$1"
  if [ -n "${!v:-}" ]; then echo "${!v}"; return; fi
  if [ "$1" -le 1000 ]; then echo 100; elif [ "$1" -le 10000 ]; then echo 25; else echo 6; fi
}

{
  echo "date: $(date -u)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc) (THREADS=$THREADS)"
  echo "memory: $(free -g | awk '/Mem:/ {print $2 " GiB"}')"
  nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
} > "$OUT/machine.txt"
cat "$OUT/machine.txt" | tee -a "$OUT/summary.txt"

GPU=0
if [ $CPU_ONLY -eq 0 ] && nvidia-smi -L > /dev/null 2>&1; then GPU=1; fi

# 1. The NEURON bundle.
HAVE_NRN=0
# (a copy that lost its executable bits)
[ -e "$NRN" ] && [ ! -x "$NRN" ] && chmod +x "$NRN" "$(dirname "$NRN")/bin/nrniv" 2> /dev/null
if [ -x "$NRN" ]; then
  if "$NRN" --version > "$OUT/neuron_version.txt" 2>&1; then HAVE_NRN=1; fi
fi
if [ $HAVE_NRN -eq 1 ]; then
  log "NEURON: $(head -1 "$OUT/neuron_version.txt") from $NRN"
else
  log "NEURON bundle not found or not runnable at $NRN (build it with scripts/make_neuron_bundle.sh where"
  log "Debian's 'neuron' package is installed, and carry .neuron/): NEURON columns left empty"
  status_nrn=1
fi

# ring.hoc with its parameters: nrn_ring LOG SPIKES CELLS T_END BUSYWAIT COPY_MODE THREADS [GO_FILE]
nrn_ring() {
  local log=$1 spikes=$2 cells=$3 tend=$4 bw=$5 mode=$6 th=$7 go=${8:-} stim=$(( $3 / 2 > 0 ? $3 / 2 : 1 ))
  timeout 900 "$NRN" -nobanner -nogui -c "ncells=$cells" -c "tstop=$tend" -c "nthreads=$th" -c "busywait=$bw" \
    -c "copy_mode=$mode" -c "stim_cells=$stim" -c "amp=2" -c "stim_del=0" -c "stim_dur=3" -c "syn_w=0.05" \
    -c "syn_delay=1" -c "syn_tau=2" -c "syn_e=0" -c "spike_threshold=0" -c "cache_eff=1" -c "dt_ring=$DT" \
    -c 'strdef swc_file' -c "swc_file=\"$SWC\"" -c 'strdef spikes_file' -c "spikes_file=\"$spikes\"" \
    -c 'strdef go_file' -c "go_file=\"$go\"" "$HOC" > "$log" 2>&1
}
# The largest size's NEURON model takes minutes to build (not timed): with --sizes holding
# 50,000 cells or more, NEURON builds and initialises it in the background while adi builds,
# then waits (idle: ring.hoc's go_file) and runs its timed part once the build is done.
PRE_N="" PRE_PID="" PRE_BW=1
[ "$BUSYWAIT" != auto ] && PRE_BW=$BUSYWAIT
largest=$(echo "$SIZES" | tr , '\n' | sort -n | tail -1)
if [ $HAVE_NRN -eq 1 ] && [ $BUILD -eq 1 ] && [ "$largest" -ge "${PRE_MIN:-50000}" ]; then
  PRE_N=$largest
  rm -f "$OUT/go_$PRE_N"
  nrn_ring "$OUT/neuron_${PRE_N}_bw$PRE_BW.log" "$OUT/neuron_${PRE_N}_bw$PRE_BW.spikes" "$PRE_N" "$(t_end_for "$PRE_N")" \
    "$PRE_BW" 0 "$THREADS" "$OUT/go_$PRE_N" &
  PRE_PID=$!
  PRE_T0=$(date +%s)
  log "NEURON $PRE_N cells: building in the background (pid $PRE_PID) while adi builds"
fi
stop_pre() { [ -n "$PRE_PID" ] && kill "$PRE_PID" 2> /dev/null; }

# 2. Build bench_neuron_ring (VTK off, sm_90; the flags of gpu_neuron_active_check.sh).
if [ $BUILD -eq 1 ]; then
  CUDA_FLAGS="-DADI_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
  [ $GPU -eq 0 ] && CUDA_FLAGS="-DADI_WITH_CUDA=OFF"
  t0=$(date +%s)
  cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release $CUDA_FLAGS -DADI_WITH_VTK=OFF \
    -DADI_BUILD_TESTS=ON -DADI_BUILD_EXAMPLES=ON -DADI_BUILD_BENCHMARKS=ON > "$OUT/configure.log" 2>&1 \
    || { log "configure FAILED (configure.log)"; stop_pre; exit 1; }
  cmake --build "$B" -j"$(nproc)" --target bench_neuron_ring > "$OUT/build.log" 2>&1 \
    || { log "build FAILED (build.log)"; tail -30 "$OUT/build.log"; stop_pre; exit 1; }
  log "build ok ($(( $(date +%s) - t0 )) s)"
fi
BENCH=$B/benchmarks/bench_neuron_ring
[ -x "$BENCH" ] || { log "$BENCH missing (run without --no-build)"; stop_pre; exit 1; }
# The background NEURON model: once built, its timed run on an otherwise idle machine.
if [ -n "$PRE_PID" ]; then
  while kill -0 "$PRE_PID" 2> /dev/null && ! grep -q '^ring ready' "$OUT/neuron_${PRE_N}_bw$PRE_BW.log"; do sleep 1; done
  log "NEURON $PRE_N cells: $(grep -m1 '^ring ready' "$OUT/neuron_${PRE_N}_bw$PRE_BW.log" || echo 'not ready (see its log)'); $(( $(date +%s) - PRE_T0 )) s since its start"
  touch "$OUT/go_$PRE_N"
  wait "$PRE_PID"
  PRE_RC=$?
fi

# bench_neuron_ring with the same network (CUDA modules loaded at context creation, not in the
# timed run): adi_ring LOG SPIKES CELLS T_END BACKEND PRECISION
adi_ring() {
  local log=$1 spikes=$2 cells=$3 tend=$4 stim=$(( $3 / 2 > 0 ? $3 / 2 : 1 ))
  CUDA_MODULE_LOADING=EAGER timeout 600 "$BENCH" --swc "$SWC" --cells "$cells" --t-end "$tend" --backend "$5" --precision "$6" --threads "$THREADS" \
    --stim-cells "$stim" --amp 2 --stim-del 0 --stim-dur 3 --syn-weight 0.05 --syn-delay 1 --syn-tau 2 --syn-e 0 \
    --threshold 0 --spikes "$spikes" > "$log" 2>&1
}
field() { grep -m1 '^ring cells ' "$1" 2>/dev/null | awk -v k="$2" '{for (i = 1; i < NF; ++i) if ($i == k) {print $(i + 1); exit}}'; }
fmt() { [ -n "$1" ] && awk -v x="$1" 'BEGIN {printf "%.3f", x}' || echo "-"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1fx", a / b}' || echo "-"; }

status=${status_nrn:-0}
# 3. Self-check of ring.hoc's fast copies against Import3d for every copy (one thread).
if [ $HAVE_NRN -eq 1 ]; then
  nrn_ring "$OUT/selfcheck_copies.log" "$OUT/selfcheck_copies.spikes" 8 50 0 0 1
  nrn_ring "$OUT/selfcheck_import3d.log" "$OUT/selfcheck_import3d.spikes" 8 50 0 1 1
  if [ -s "$OUT/selfcheck_copies.spikes" ] && cmp -s "$OUT/selfcheck_copies.spikes" "$OUT/selfcheck_import3d.spikes"; then
    log "self-check: ring.hoc copies = Import3d per copy ($(wc -l < "$OUT/selfcheck_copies.spikes") identical spikes, 8 cells, 50 ms)"
  else
    log "self-check FAILED: ring.hoc's copies differ from Import3d per copy (selfcheck_*.log)"
    status=1
  fi
fi

ROWS=()
BEST_BW=1
# The table's head; each row is also appended to $OUT/table.md as soon as its size is done (a
# run stopped by a time limit keeps the rows it finished).
HEAD1="| cells | compartments | steps | NEURON ($THREADS threads) | adi GPU fp64 | adi GPU fp32 | adi host fp64 ($THREADS threads) | NEURON / GPU fp64 | NEURON / adi host | NEURON spikes (vs adi $([ $GPU -eq 1 ] && echo 'GPU fp64' || echo host)) |"
HEAD2="|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n%s\n' "$HEAD1" "$HEAD2" > "$OUT/table.md"
IFS=, read -r -a SIZE_LIST <<< "$SIZES"
for n in "${SIZE_LIST[@]}"; do
  tend=$(t_end_for "$n")
  # NEURON, all cores (busywait 0 and 1 up to 1,000 cells, the faster kept; then the faster one).
  nrn_ns="" nrn_bw="" nrn_comp="" nrn_steps=""
  if [ $HAVE_NRN -eq 1 ]; then
    if [ "$BUSYWAIT" = auto ]; then
      if [ "$n" -le 1000 ]; then bws="0 1"; else bws=$BEST_BW; fi
    else
      bws=$BUSYWAIT
    fi
    [ "$n" = "$PRE_N" ] && bws=$PRE_BW
    for bw in $bws; do
      L="$OUT/neuron_${n}_bw$bw.log"
      t0=$(date +%s)
      if [ "$n" = "$PRE_N" ]; then
        rc=$PRE_RC t0=$PRE_T0  # run in the background above
      else
        nrn_ring "$L" "$OUT/neuron_${n}_bw$bw.spikes" "$n" "$tend" "$bw" 0 "$THREADS"
        rc=$?
      fi
      ns=$(field "$L" ns_per_compartment_step)
      log "NEURON $n cells, $THREADS threads, busywait $bw: rc $rc, $(( $(date +%s) - t0 )) s in all, $(grep -m1 '^ring cells ' "$L" | cut -d' ' -f2-)"
      if [ $rc -ne 0 ] || [ -z "$ns" ]; then status=1; tail -5 "$L" | sed 's/^/   /' | tee -a "$OUT/summary.txt"; continue; fi
      if [ -z "$nrn_ns" ] || awk -v a="$ns" -v b="$nrn_ns" 'BEGIN {exit !(a < b)}'; then
        nrn_ns=$ns nrn_bw=$bw nrn_comp=$(field "$L" compartments) nrn_steps=$(field "$L" steps)
        cp "$OUT/neuron_${n}_bw$bw.spikes" "$OUT/neuron_${n}.spikes"
      fi
    done
    [ -n "$nrn_bw" ] && [ "$n" -le 1000 ] && BEST_BW=$nrn_bw
  fi
  # adi: GPU fp64 and fp32, then all host cores (fp64).
  g64="" g32="" host=""
  if [ $GPU -eq 1 ]; then
    for prec in double float; do
      L="$OUT/adi_gpu_${prec}_$n.log"
      adi_ring "$L" "$OUT/adi_gpu_${prec}_$n.spikes" "$n" "$tend" cuda $prec
      rc=$?
      log "adi GPU $prec $n cells: rc $rc, $(grep -m1 '^ring cells ' "$L" | cut -d' ' -f2-)"
      [ $rc -ne 0 ] && { status=1; tail -5 "$L" | sed 's/^/   /' | tee -a "$OUT/summary.txt"; }
      [ $prec = double ] && g64=$(field "$L" ns_per_compartment_step) || g32=$(field "$L" ns_per_compartment_step)
    done
  fi
  L="$OUT/adi_host_$n.log"
  adi_ring "$L" "$OUT/adi_host_$n.spikes" "$n" "$tend" cpu double
  rc=$?
  log "adi host $THREADS threads $n cells: rc $rc, $(grep -m1 '^ring cells ' "$L" | cut -d' ' -f2-)"
  [ $rc -ne 0 ] && { status=1; tail -5 "$L" | sed 's/^/   /' | tee -a "$OUT/summary.txt"; }
  host=$(field "$L" ns_per_compartment_step)
  adi_comp=$(field "$L" compartments)
  if [ -n "$nrn_comp" ] && [ -n "$adi_comp" ] && [ "$nrn_comp" != "$adi_comp" ]; then
    log "WARNING: NEURON has $nrn_comp compartments, adi $adi_comp (ns per compartment-step use each side's own)"
  fi
  # Spikes: NEURON against the GPU fp64 run (or the host run without a GPU).
  spk="-"
  ref=$OUT/adi_host_$n.spikes; [ $GPU -eq 1 ] && ref=$OUT/adi_gpu_double_$n.spikes
  if [ -s "$OUT/neuron_${n}.spikes" ] && [ -e "$ref" ]; then
    python3 "$CMP" "$OUT/neuron_${n}.spikes" "$ref" $DT --t-end "$tend" > "$OUT/spikes_$n.txt" 2>&1
    rc=$?
    [ $rc -ne 0 ] && status=1
    log "spikes $n cells, NEURON vs adi $([ $GPU -eq 1 ] && echo 'GPU fp64' || echo host): $(head -1 "$OUT/spikes_$n.txt")"
    sed -n '2,6p' "$OUT/spikes_$n.txt" | tee -a "$OUT/summary.txt"
    spk=$(awk '{for (i = 1; i < NF; ++i) {if ($i == "neuron") a = $(i + 1); if ($i == "max_dt_ms") d = $(i + 1); if ($i == "verdict") v = $(i + 1)} print a " (" v ", max " d " ms)"}' "$OUT/spikes_$n.txt" | head -1)
  fi
  # The GPU fp64 run's spikes against adi host's (the same code, two backends).
  if [ $GPU -eq 1 ] && [ -e "$OUT/adi_gpu_double_$n.spikes" ]; then
    python3 "$CMP" "$OUT/adi_host_$n.spikes" "$OUT/adi_gpu_double_$n.spikes" $DT --t-end "$tend" > "$OUT/spikes_host_gpu_$n.txt" 2>&1 || status=1
    log "spikes $n cells, adi host vs adi GPU fp64: $(head -1 "$OUT/spikes_host_gpu_$n.txt")"
  fi
  steps=${nrn_steps:-$(field "$L" steps)}
  ROWS+=("| $n | ${adi_comp:-$nrn_comp} | $steps | $(fmt "$nrn_ns")${nrn_bw:+ (bw $nrn_bw)} | $(fmt "$g64") | $(fmt "$g32") | $(fmt "$host") | $(ratio "$nrn_ns" "$g64") | $(ratio "$nrn_ns" "$host") | $spk |")
  echo "${ROWS[-1]}" >> "$OUT/table.md"
done

{
  echo
  echo "## Active ring (04a pyramidal, hh soma + pas), ns per compartment-step, one machine"
  echo
  echo "$(grep -m1 '^cpu' "$OUT/machine.txt"); $(nvidia-smi -L 2>/dev/null | head -1 || echo 'no GPU')"
  echo "NEURON 8.2 (bundle, cache_efficient 1, $THREADS threads, pc.psolve), adi bench_neuron_ring; both: whole run after initialization, wall clock"
  echo
  echo "$HEAD1"
  echo "$HEAD2"
  for r in "${ROWS[@]}"; do echo "$r"; done
  echo
  echo "target (issue 17): NEURON / GPU fp64 >= 50x at 100,000 cells"
} | tee -a "$OUT/summary.txt"
exit $status
