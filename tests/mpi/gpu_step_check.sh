#!/usr/bin/env bash
# Device check of issue 18, "the distributed step as fast as the single one" (h-mpi, stop 29),
# for one call on a 2-GPU machine (nvidia-h100-x2 / nvidia-h200-x2, one rank per GPU, NCCL,
# Open MPI not CUDA-aware). What changed and is checked here:
#   - the split axis's partition passes with shared bands keep alpha, gamma as one row for all
#     lines (4 arrays of traffic less per split stage): the standalone kernel self-check
#     against Thomas (tests/mpi/partition_device_selfcheck.cu, shared and full bands, S = 1..17),
#     the distributed tridiagonal and AdiSolver device tests (distributed = single-rank);
#   - the halo exchange of device fields through NCCL on the stream (no host copy, no host
#     wait; host staging before): test_halo_exchange (every transport = host exchange);
#   - compute-sanitizer memcheck on 2 ranks (tests/mpi/sanitizer_verdict.sh: NCCL's start-up
#     API-error reports ignored, nothing else) of the device halo tests and of a small heat step;
#   - the tables of #18: the heat step's weak scaling at 512^3 per GPU per split (z, y, x; NCCL
#     halo, and host-staged halo for comparison), strong scaling of a 512^3 global step on 2
#     GPUs, the public case 128x128x4096 fp64 split along z; the card, the copy bandwidth and
#     the NCCL (NVLink) bandwidth measured in the run;
#   - (stop 30) the split y / z stage's right-hand side formed inside the partition passes
#     (5 arrays instead of 7): selfcheck "stage" cases, DistributedAdiDevice.StageInPasses, and
#     every table row of the heat step twice, "z" (in the passes, the default) and "z sep.rhs"
#     (the separate pass, as before);
#   - (stop 30) a profile of one z-split step on rank 0 (bench_mpi_heat --profile: the second
#     timed step inside cudaProfilerStart/Stop): nsys (every kernel and copy of the step, NCCL's
#     too, and the GPU's idle time inside it) and ncu (DRAM bytes per kernel of ours, in fields),
#     printed as short tables by tests/mpi/profile_table.py: where the split stage's time goes.
#   - (stop 31) the partition passes along y and z with each thread's rows loaded a chunk ahead of
#     their stores (two register buffers of 4 rows; DistributedOptions::device_prefetch, default
#     on): selfcheck "prefetch" cases (odd lengths 7, 257; S up to 17), DistributedAdiDevice.Prefetch
#     (every split direction, S = 1 / automatic / 3, in the passes and apart), and the tables as
#     a same-run A/B: "z" (prefetch) against "z no-pf" (one row at a time, as before); the z
#     path of 0cb3d0a (the last stage in the passes, into V_old) against "z sep.rhs"; the ncu
#     table of one z-split step with and without prefetch, and of one x-split step (the larger
#     of the two left items: the explicit part folded into the x split, or the public case).
#   - (stop 32) the partition passes also request rows into L2 ahead of their register loads
#     (Y, Z: 16 rows ahead; X: each line's next tile, one bulk prefetch per line and array) and
#     the X tiles of a stage read V once per row, its neighbours by shuffle (the x-split reduce
#     read 3.44 fields where 2 are expected); DistributedOptions::device_l2_prefetch, default on:
#     selfcheck "pf 2" cases (every alignment of odd-length rows), DistributedAdiDevice.Prefetch
#     (v = 7, 8 without it), and every table as a same-run A/B: "z" (L2, the default) against
#     "z no-l2" (stop 31's passes); public case with and without (--no-l2); the ncu tables of a
#     z- and an x-split step with and without (L2 request and miss sectors too); at the end one
#     before/after table of #18's rows (tests/mpi/step_before_after.py);
#   - the weak rows also with the operator's explicit fold forced to `separate` ("z sep.fold",
#     bench_mpi_heat --fold both): the same as "z" unless adi/operator.cpp folds with a subdomain
#     (h-mpi3's patch, /work/notes/gpu/s32/mpi3_operator_stencil_fold_with_subdomain.patch).
#   - (stop 33) the split passes with shared bands in the SPIKE form (DistributedOptions::device_spike
#     / ADI_PARTITION_SPIKE=1|0, the default of device plans since the end of stop 33): each rank's
#     segments solved by the single-GPU kernels with their ends cut (an ADI stage by the fused stage
#     kernel, right-hand side included), the line-independent spikes, the back pass one read and
#     one write per row the spikes reach: DistributedAdiDevice.Spike, the tridiagonal device tests
#     again with ADI_PARTITION_SPIKE=0 (the partition passes), one memcheck of the heat step with
#     the partition passes and with SPIKE, rows "z spike", "y spike", "x spike" (the default) against
#     "z", "y", "x" (--spike off: the partition passes) in the tables, ncu of a z- and an x-split
#     step (partition passes / SPIKE). (Stop 33's shared-memory ring of the y / z reduce,
#     device_ring, was removed in stop 34: SPIKE was faster wherever it applied, run s34/1.) To keep
#     the pair of calls under ~8 minutes this run leaves out what stop 32 measured and this branch
#     does not change: the halo tests and memcheck, the "no-l2" / "sep.fold" rows, the public case
#     without L2 requests.
# Logs tarred into $OUT/logs.tgz; tables at the end of stdout. Run part ~2-3 minutes.
#
#   OUT=/tmp/o tests/mpi/gpu_step_check.sh                # build (build-mpi-gpu) + run
#   OUT=/tmp/o tests/mpi/gpu_step_check.sh --build-only   # build only
#   OUT=/tmp/o tests/mpi/gpu_step_check.sh --no-build     # run an existing build-mpi-gpu
set -u
OUT=${OUT:-step-check-out}
BUILD=${BUILD:-build-mpi-gpu}
build=1
run=1
for a in "$@"; do
  case $a in
    --build-only) run=0 ;;
    --no-build) build=0 ;;
    *) echo "usage: $0 [--build-only|--no-build]" >&2; exit 2 ;;
  esac
done
. "$(dirname "$0")/check_common.sh"
export OUT OMP_NUM_THREADS=4 MEMCHECK_TIMEOUT=${MEMCHECK_TIMEOUT:-120}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1
  nvidia-smi topo -m 2>&1 | head -3
  mpiexec --version 2>&1 | head -1
  git log --oneline -1 2>/dev/null
} >"$S"
SELF="$BUILD/partition_device_selfcheck"
if [ $build = 1 ]; then
  configure_check -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_TESTS=ON -DADI_WITH_PYTHON=OFF
  build_check test_distributed_adi test_distributed_tridiagonal bench_mpi_heat bench_mpi_tridiagonal
  if nvcc -std=c++17 -O2 -arch=sm_90 -DADI_HAVE_CUDA -I. tests/mpi/partition_device_selfcheck.cu solvers/cuda/partition_local_passes.cu \
    -o "$SELF" >>"$OUT/build.log" 2>&1; then
    echo "selfcheck build ok ($(el))" >>"$S"
  else
    echo "selfcheck build FAILED ($(el))" >>"$S"
  fi
fi
if [ $run = 0 ]; then
  cat "$S"
  exit 0
fi
B=$BUILD
NG=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$NG" -ge 2 ] || echo "only $NG GPU(s): 2 ranks share one, NCCL cases skip (loudly), no scaling figures" >>"$S"
# 1. Correctness.
[ -x "$SELF" ] && step "partition kernels selfcheck" 90 "$OUT/tests.log" "$SELF"
step "tridiagonal device np2" 90 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_tridiagonal" \
  --gtest_filter='*Device*'
step "adi device np2" 240 "$OUT/tests.log" $MPI -n 2 "$B/tests/test_distributed_adi" --gtest_filter='*Device*'
# (the default is the SPIKE form since stop 33: the partition passes apart)
step "tridiagonal device np2, partition" 60 "$OUT/tests.log" $MPI -x ADI_PARTITION_SPIKE=0 -n 2 \
  "$B/tests/test_distributed_tridiagonal" --gtest_filter='*DeviceMemory*:*DeviceZeroPivot*'
grep -hE "SKIPPED:|NOT tested|TransportsMatchHost:|partition_device_selfcheck:|^FAIL stage|StageInPasses:|Prefetch:|Spike:|SpikeArithmetic:" "$OUT/tests.log" |
  sort -u >>"$S"
# 2. memcheck on 2 ranks (one log per rank).
memcheck_step "memcheck heat step np2, partition / spike" "$OUT/cs_heat_new" \
  "$B/benchmarks/bench_mpi_heat" --n 40 --reps 1 --splits x,y,z --spike both --no-nccl-bandwidth
# 3. The tables.
H="$B/benchmarks/bench_mpi_heat"
step "heat weak np2" 200 "$OUT/heat.log" $MPI -n 2 "$H" --n 512 --reps 5 --splits z,y,x --spike both
step "heat strong np2" 150 "$OUT/heat.log" $MPI -n 2 "$H" --n 512 --reps 5 --splits z,y,x --strong --spike both
step "public np2" 90 "$OUT/public.log" $MPI -n 2 "$B/benchmarks/bench_mpi_tridiagonal" --memory device
# 4. Profile of one z-split step on rank 0 (512^3 per GPU, the weak row): where the split stage's
# time goes. nsys: every kernel and copy of the step (NCCL kernels too) and the GPU's idle time
# inside it; ncu: DRAM bytes of our kernels (NCCL's are left out: replaying them would hang the
# pair), in units of one field. Both on rank 0 only, the other rank runs plainly.
prof_rank0() {  # prof_rank0 NAME TIMEOUT PROFILER-ARGS... -- CMD...
  local name=$1 limit=$2 pa=()
  shift 2
  while [ "$1" != "--" ]; do pa+=("$1"); shift; done
  shift
  step "$name" "$limit" "$OUT/profile.log" $MPI -n 2 bash -c 'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then exec "$@";
    else shift '"${#pa[@]}"'; exec "$@"; fi' _ "${pa[@]}" "$@"
}
PH=("$H" --n 512 --reps 3 --splits z --no-nccl-bandwidth --profile)
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /usr/local/cuda/nsight-systems-*/bin/nsys \
  /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | tail -1)
if [ -n "$NSYS" ]; then
  for v in passes; do  # (the separate pass: in the ncu table; one nsys run keeps the script under 480 s)
    prof_rank0 "nsys z split step, rhs $v" 60 "$NSYS" profile --capture-range=cudaProfilerApi --capture-range-end=stop \
      -t cuda -o "$OUT/z_step_$v" -f true -- "${PH[@]}" --rhs $v
    "$NSYS" stats -r cuda_gpu_trace -f csv "$OUT/z_step_$v.nsys-rep" >"$OUT/nsys_trace_$v.csv" 2>>"$OUT/profile.log"
  done
else
  echo "nsys: not found (PATH, /usr/local/cuda, /opt/nvidia/nsight-systems)" >>"$S"
fi
if command -v ncu >/dev/null; then
  # both steps in one run (two profiler ranges: the partition passes (--spike off), then SPIKE); the same for x
  BASE_METRICS=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum
  L2_METRICS=lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum
  NCU=(ncu --profile-from-start off --kernel-name-base demangled --kernel-name regex:adi::
    --metrics $BASE_METRICS,$L2_METRICS --csv --print-units base)
  prof_rank0 "ncu z split steps" 120 "${NCU[@]}" --log-file "$OUT/ncu_z.csv" -- "${PH[@]}" --spike both
  if ! grep -q '"Metric Name"' "$OUT/ncu_z.csv" 2>/dev/null; then  # (an L2 metric this ncu does not know: without them)
    echo "ncu: no rows with the L2 metrics; again without them" >>"$S"
    NCU=(ncu --profile-from-start off --kernel-name-base demangled --kernel-name regex:adi::
      --metrics $BASE_METRICS --csv --print-units base)
    prof_rank0 "ncu z split steps (base metrics)" 120 "${NCU[@]}" --log-file "$OUT/ncu_z.csv" -- "${PH[@]}" --spike both
  fi
  prof_rank0 "ncu x split steps" 120 "${NCU[@]}" --log-file "$OUT/ncu_x.csv" -- "$H" --n 512 --reps 3 --splits x \
    --no-nccl-bandwidth --profile --spike both
else
  echo "ncu: not found" >>"$S"
fi
rm -f "$OUT"/*.sqlite
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls *.log *.csv summary.txt 2>/dev/null) 2>/dev/null
rm -f "$OUT"/cs_*.log
grep -E " rc=" "$S" | cut -c1-160 >"$OUT/verdicts.txt"
{
  echo
  for v in passes; do  # (the separate pass: in the ncu table; one nsys run keeps the script under 480 s)
    echo "== Profile of one z-split step, 512^3 per GPU, rank 0, split stage's right-hand side: $v (nsys: all GPU work of the step in order; idle = launch gaps / waits) =="
    python3 tests/mpi/profile_table.py nsys "$OUT/nsys_trace_$v.csv" 2>&1 | tail -24
    echo
  done
  echo "== One z-split step under ncu, 512^3 per GPU, rank 0 (kernels serialised; GB/s achieved; arrays = DRAM bytes / one 512^3 fp64 field;"
  echo "   L2 rd / miss: L2 read sectors the SMs requested / that missed, in fields)"
  echo "   step 1: the partition passes (--spike off; L2 prefetch: reduce_kernel<.., 4, true> / back_kernel<.., 4, true>),"
  echo "   step 2: the SPIKE form, the default (the single-GPU kernel of the cut segments, spike_*_kernel: device_spike), same run =="
  python3 tests/mpi/profile_table.py ncu "$OUT/ncu_z.csv" $((512 * 512 * 512 * 8)) 2>&1 | tail -60
  echo
  echo "== One x-split step under ncu, step 1: the partition passes (--spike off: reduce_rows_kernel / back_rows_kernel),"
  echo "   step 2: the SPIKE form, the default (the single-GPU kernel of the cut segments, spike_*_kernel: device_spike), same run =="
  python3 tests/mpi/profile_table.py ncu "$OUT/ncu_x.csv" $((512 * 512 * 512 * 8)) 2>&1 | tail -40
  grep -m3 -hE "ERR_NVGPUCTRPERM|==ERROR==|==WARNING== No kernels" "$OUT/profile.log" "$OUT/ncu_z.csv" "$OUT/ncu_x.csv" 2>/dev/null
  echo
  echo "== Public case 128x128x4096 fp64 split along z on 2 GPUs (per-line bands: reduce_kernel<.., 0, 0, 4, 0>; unchanged"
  echo "   by stop 33: SPIKE takes shared bands only) =="
  grep -hE "^\| ranks|^\|---|^\| 2 \| device" "$OUT/public.log"
  grep -hE "^device memory, 2 rank|^bench_mpi_tridiagonal:" "$OUT/public.log"
  echo
  echo "== Heat step (Douglas, fp64, Dirichlet): weak scaling 512^3 per GPU, then strong scaling 512^3 in all =="
  echo "   (split 'z spike' etc.: the split passes in the SPIKE form, the default (stop 33, device_spike); 'z' etc.: the"
  echo "    partition passes, --spike off (stop 32: rows requested into L2 ahead of register buffers); same run)"
  grep -hE "^bench_mpi_heat:|^\||^NCCL bandwidth|^transport of|^strong scaling|^WARNING" "$OUT/heat.log"
  echo
  echo "== #18's rows, the default (the SPIKE form, device_spike) against the partition passes (--spike off), same run =="
  python3 tests/mpi/step_before_after.py "$OUT/heat.log" "$OUT/public.log" spike default 2>&1
  echo
  echo "== Verdicts (again) =="
  cat "$OUT/verdicts.txt"
  echo "done ($(el))"
} >>"$S"
cat "$S"
