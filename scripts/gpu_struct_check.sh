#!/usr/bin/env bash
# The device check of the stop-27 structure work (issue 15 items 2, 6, 8; branch h-struct):
# builds adi with CUDA for sm_90 (no VTK, MPI on), runs the GPU tests of every family whose
# plan now picks its backend once at construction (block, large, Cholesky, Hines passive and
# active, variable batch and its pack), the plan conventions (device guard, no allocation in a
# first solve), the option chain (now on the executor's stream), the Euler example on the GPU
# (its CUDA solver now declared through the kernel list), and the MPI tests that use a device
# (halo exchange, distributed scalar and block plans: the device guard; the scalar plan's
# error fields) on 1 and 2 ranks; prints one table at the end. Logs under $OUT.
#
#   OUT=/tmp/out scripts/gpu_struct_check.sh [--build-only | --no-build]
#   (--build-only, then --no-build: two calls if one 10-minute device call is too short)
set -u
mode=${1:-}
OUT=${OUT:-$PWD/out/gpu_struct}
mkdir -p "$OUT"
B=${B:-build-gpu-struct}
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
TESTS="test_block_thomas_cuda test_block_tridiagonal test_partition_large_cuda test_large_tridiagonal
       test_cholesky_vbatched_cuda test_hines_cuda test_hines test_hines_active_cuda test_variable_batch
       test_thomas_variable_cuda test_plan_conventions test_plan_conventions_cuda test_chain test_pricer"
MPI_TESTS="test_bad_input test_halo_exchange test_distributed_tridiagonal test_distributed_block_tridiagonal"
if [ "$mode" != "--no-build" ]; then
  cmake -S . -B $B $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_PYTHON=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=OFF -DADI_BUILD_EXAMPLES=ON \
    > "$OUT/configure.log" 2>&1 || { echo "configure failed"; tail -30 "$OUT/configure.log"; exit 1; }
  # shellcheck disable=SC2086
  cmake --build $B -j "$(nproc)" --target $TESTS $MPI_TESTS euler_vortex \
    > "$OUT/build.log" 2>&1 || { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
fi
[ "$mode" = "--build-only" ] && { echo "built $B"; exit 0; }
status() { if [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
summary() { grep -E '^\[  (PASSED|SKIPPED|FAILED)  \]' "$1" | tr -s ' ' | tr '\n' ' '; }
declare -A rc
for t in $TESTS; do
  exe=$(find $B -name "$t" -type f -perm -u+x | head -1)
  if [ -z "$exe" ]; then rc[$t]=missing; continue; fi
  timeout 300 "$exe" > "$OUT/$t.log" 2>&1
  rc[$t]=$?
done
EX=$(find $B -name euler_vortex -type f -perm -u+x | head -1)
timeout 120 "$EX" --n 32 --t-end 1 --backend cuda --verify-cpu --no-output --max-error 6e-2 > "$OUT/euler_cuda.log" 2>&1
r_euler=$?
MPIEXEC=$(command -v mpiexec || true)
export OMP_NUM_THREADS=2 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
declare -A mrc
for t in $MPI_TESTS; do
  exe=$(find $B -name "$t" -type f -perm -u+x | head -1)
  for np in 1 2; do
    if [ -z "$exe" ] || [ -z "$MPIEXEC" ]; then mrc[$t.$np]=missing; continue; fi
    timeout 240 "$MPIEXEC" -n $np "$exe" > "$OUT/${t}_np$np.log" 2>&1
    mrc[$t.$np]=$?
  done
done
echo
echo "== adi structure GPU check, h-struct ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
echo "| test | result | gtest summary |"
echo "|---|---|---|"
for t in $TESTS; do
  r=${rc[$t]}
  if [ "$r" = missing ]; then echo "| $t | missing |  |"; continue; fi
  echo "| $t | $(status "$r") | $(summary "$OUT/$t.log") |"
done
echo "| euler_vortex --backend cuda --verify-cpu | $(status $r_euler) | $(grep -iE 'max|error' "$OUT/euler_cuda.log" | tail -1) |"
for t in $MPI_TESTS; do
  for np in 1 2; do
    r=${mrc[$t.$np]}
    if [ "$r" = missing ]; then echo "| mpi $t np$np | missing |  |"; continue; fi
    echo "| mpi $t np$np | $(status "$r") | $(summary "$OUT/${t}_np$np.log") |"
  done
done
echo
echo "-- failures (first 30 lines) --"
grep -hE "FAILED|Failure|error:" "$OUT"/*.log | grep -v "^\[  PASSED" | head -30
