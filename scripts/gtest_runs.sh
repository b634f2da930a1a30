# Sourced by the GPU check scripts (scripts/gpu_long_check.sh, scripts/gpu_yz_check.sh, ...): runs
# GoogleTest binaries one after another into one log and notes each one's counts; and the
# scripts' common start (summary_start, note, gpu_banner) and single-GPU build (cuda_build), below.
#
#   . "$root/scripts/gtest_runs.sh"; summary_start "$out"   # $out/summary.txt, note, status=0
#
#   run_gtests LOG LIMIT_S BUILD_TESTS_DIR test...
#
# Each binary runs under `timeout LIMIT_S`; its part of LOG starts with "### <name>". Uses the
# caller's `note` (prints and appends to the summary), `$summary` and `status` (set to 1 when a
# binary exits non-zero). The first failures' context goes to failures.txt beside LOG.
# note TEXT...: prints TEXT and appends it to $summary.
note() { echo "$*" | tee -a "$summary"; }

# summary_start DIR: DIR created, summary=DIR/summary.txt created empty, status=0.
summary_start() {
  mkdir -p "$1"
  summary=$1/summary.txt
  : >"$summary"
  status=0
}

run_gtests() {
  local log=$1 limit=$2 dir=$3 t rc part passed skipped failed
  shift 3
  : >"$log"
  for t in "$@"; do
    echo "### $t" >>"$log"
    timeout "$limit" "$dir/$t" >>"$log" 2>&1
    rc=$?
    part=$(awk -v t="### $t" '$0==t{p=1;next} /^### /{p=0} p' "$log")
    passed=$(echo "$part" | grep -oE '^\[  PASSED  \] [0-9]+' | grep -oE '[0-9]+$' || echo 0)
    skipped=$(echo "$part" | grep -cE '^\[  SKIPPED \] [A-Za-z].*\([0-9]+ ms\)$')
    failed=$(echo "$part" | grep -cE '^\[  FAILED  \] [A-Za-z].*\([0-9]+ ms\)$')
    [ $rc = 0 ] || status=1
    note "test $t: exit $rc, passed ${passed:-0}, failed $failed, skipped $skipped"
    echo "$part" | grep -E '^\[  (FAILED  |SKIPPED )\] [A-Za-z].*\([0-9]+ ms\)$' | head -8 | sed 's/^/  /' | tee -a "$summary"
  done
  awk '/^\[  FAILED  \]/' "$log" | sort -u | head -20 | sed 's/^/  /' | tee -a "$summary"
  grep -B2 -A12 'Failure$' "$log" | head -60 >"$(dirname "$log")/failures.txt"
}

# run_sanitizer LOG LIMIT_S TOOL BINARY FILTER
#
# compute-sanitizer TOOL (memcheck, racecheck, synccheck) on the GoogleTest BINARY's tests
# matching FILTER, under `timeout LIMIT_S`, appended to LOG after "### TOOL FILTER"; notes
# clean, or errors (status=1). SANITIZER overrides the compute-sanitizer found on PATH.
run_sanitizer() {
  local log=$1 limit=$2 tool=$3 bin=$4 filter=$5
  local san=${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
  echo "### $tool $filter" >>"$log"
  if timeout "$limit" "$san" --tool "$tool" --error-exitcode 99 "$bin" --gtest_filter="$filter" >>"$log" 2>&1; then
    note "sanitizer $tool $(basename "$bin") ($filter): clean"
  else
    note "sanitizer $tool $(basename "$bin") ($filter): ERRORS or timeout (see $(basename "$log"))"
    status=1
  fi
}

# gpu_banner NAME: the summary's first lines: the script, the time, the host, the commit ($root's),
# and the GPU where nvidia-smi exists. Uses the caller's `note`, `$summary`, `$root`.
gpu_banner() {
  note "== $1 $(date -u +%FT%TZ) on $(hostname), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
  command -v nvidia-smi >/dev/null &&
    nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 |
    sed 's/^/gpu: /' | tee -a "$summary"
  return 0
}

# cuda_build LOG BUILD_DIR TARGET...: configures $root into BUILD_DIR for one GPU (Release, Ninja,
# CUDA sm_90, benchmarks and tests; no VTK, MPI or Python; ccache where installed) and builds the
# targets, the output into LOG; notes "build: ok (N s)", or prints LOG's tail, notes "build:
# FAILED" and returns 1 (the caller exits).
cuda_build() {
  local log=$1 dir=$2 t0 launcher=()
  shift 2
  t0=$(date +%s)
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  if cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
       -DADI_WITH_PYTHON=OFF -DADI_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_BENCHMARKS=ON \
       -DADI_BUILD_TESTS=ON "${launcher[@]}" >"$log" 2>&1 &&
     cmake --build "$dir" -j "$(nproc)" --target "$@" >>"$log" 2>&1; then
    note "build: ok ($(( $(date +%s) - t0 )) s)"
  else
    tail -40 "$log"
    note "build: FAILED (see $(basename "$log"))"
    return 1
  fi
}
