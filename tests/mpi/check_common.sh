# Sourced by the device check scripts of tests/mpi (gpu_mpi_check.sh, gpu_block_check.sh,
# gpu_scale_check.sh, gpu_transport_check.sh): what they share. Set OUT and BUILD first.
#
#   OUT=${OUT:-x-check-out}; BUILD=${BUILD:-build-dev}
#   . "$(dirname "$0")/check_common.sh"
#
# Gives: $OUT created; Open MPI's environment for a container run as root (oversubscribed, no
# cross-memory attach); MPI (the mpiexec command line); S (the summary file); el (seconds
# since start); summary_header (starts the summary: date, GPUs, MPI, commit); verdicts_footer; step NAME TIMEOUT LOG cmd... (runs cmd under a timeout into LOG and appends
# "NAME rc=.. (.. s) <last verdict line>" to the summary, returning cmd's status);
# configure_check [cmake args] (the CUDA + MPI build for sm_90, VTK off, log in build.log) and
# build_check TARGET... (builds them with every core; on failure writes the log's tail to
# the summary, prints it and exits); memcheck_step NAME LOGPREFIX cmd... (cmd on 2 ranks, or MEMCHECK_RANKS,
# each under compute-sanitizer memcheck into LOGPREFIX.<rank>.log, judged by
# sanitizer_verdict.sh: NCCL's own start-up API-error reports ignored, nothing else);
# build_unless ARG TARGET... (a script's [--no-build]); heat_ab_rows PAIRS (bench_mpi_heat A/B rows).
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Containers often forbid the cross-memory attach of the shared-memory transport.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
MPI="mpiexec --oversubscribe --allow-run-as-root --bind-to none"
S="$OUT/summary.txt"
start=$(date +%s)
el() { echo "$(($(date +%s) - start)) s"; }
step() {  # step NAME TIMEOUT LOG cmd...
  local name=$1 limit=$2 log=$3
  shift 3
  local before
  before=$(cat "$log" 2>/dev/null | wc -l)
  echo "### $name: $*" >>"$log"
  timeout "$limit" "$@" >>"$log" 2>&1
  local rc=$?
  # the verdict of this step's own lines (the log is shared by several steps)
  echo "$name rc=$rc ($(el)) $(tail -n +$((before + 1)) "$log" | grep -E 'verdict|PASSED|FAILED TEST|ERROR SUMMARY|error:' |
    tail -1)" >>"$S"
  return $rc
}
summary_header() {  # a new summary: the date, the GPUs, the MPI library, the commit
  {
    date -u +%FT%TZ
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
    mpiexec --version 2>&1 | head -1
    git log --oneline -1 2>/dev/null
  } >"$S"
}
verdicts_footer() {  # the summary's end (stdout): every step's verdict line, the time taken
  echo
  echo "== Verdicts =="
  grep -E " rc=" "$S" | cut -c1-200
  echo "done ($(el))"
}
configure_check() {  # [extra cmake arguments]
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_VTK=OFF -DADI_WITH_MPI=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 "$@" >"$OUT/build.log" 2>&1
}
build_check() {  # TARGET...
  if ! cmake --build "$BUILD" -j"$(nproc)" --target "$@" >>"$OUT/build.log" 2>&1; then
    echo "build FAILED ($(el))" >>"$S"
    tail -40 "$OUT/build.log" >>"$S"
    cat "$S"
    exit 1
  fi
  echo "build ok ($(el))" >>"$S"
}
build_unless() {  # build_unless "$1" TARGET...: the script's argument "" configures and builds the
  # targets (benchmarks and tests on), --no-build keeps $BUILD as it is, anything else: usage
  case "$1" in
    "") ;;
    --no-build) return 0 ;;
    *) echo "usage: $0 [--no-build]" >&2; exit 2 ;;
  esac
  shift
  configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF -DADI_BUILD_EXAMPLES=OFF
  build_check "$@"
}
heat_ab_rows() {  # heat_ab_rows PAIRS [WEAK]: bench_mpi_heat ($H) on 2 ranks, Douglas fp64, splits z, y, x:
  # strong 512^3 old / new PAIRS times, then (WEAK 1, the default) weak 512^3 per GPU old / new, the
  # environment of each run from the arrays OLD and NEW (mpiexec -x options); logs
  # heat_{strong,weak}_{old,new}.log
  local r v
  local -a E
  for r in $(seq 1 "$1"); do
    for v in old new; do
      if [ $v = old ]; then E=("${OLD[@]}"); else E=("${NEW[@]}"); fi
      step "heat strong np2 $v ($r)" 60 "$OUT/heat_strong_$v.log" $MPI "${E[@]}" -n 2 "$H" --n 512 --reps 7 \
        --splits z,y,x --strong --no-nccl-bandwidth
    done
  done
  [ "${2:-1}" = 1 ] || return 0
  for v in old new; do
    if [ $v = old ]; then E=("${OLD[@]}"); else E=("${NEW[@]}"); fi
    step "heat weak np2 $v" 60 "$OUT/heat_weak_$v.log" $MPI "${E[@]}" -n 2 "$H" --n 512 --reps 3 --splits z,y,x \
      --no-nccl-bandwidth
  done
}
memcheck_step() {  # memcheck_step NAME LOGPREFIX cmd...
  local name=$1 pre=$2
  shift 2
  rm -f "$pre".*.log
  timeout "${MEMCHECK_TIMEOUT:-300}" $MPI -n "${MEMCHECK_RANKS:-2}" bash -c 'exec compute-sanitizer --tool memcheck --leak-check full "$@" \
    >"'"$pre"'.${OMPI_COMM_WORLD_RANK:-0}.log" 2>&1' _ "$@"
  local rc=$? v vrc
  v=$("$(dirname "${BASH_SOURCE[0]}")/sanitizer_verdict.sh" "$pre".*.log)
  vrc=$?
  echo "$name rc=$rc ($(el)) $v" >>"$S"
  [ $vrc = 0 ] || grep -h -m3 -A8 "^========= [A-Z]" "$pre".*.log | head -40 >>"$S"
  [ $rc = 0 ] && [ $vrc = 0 ]
}
