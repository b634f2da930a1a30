#!/usr/bin/env bash
# The GPU checks of the C API / Fortran / column-major block work (issue 21), for one H100:
# builds adi with CUDA for sm_90 (no VTK, no MPI), runs the C API tests (device paths through
# adi_buffer), the CUDA block tests (column-major against row-major, both kernels, both
# precisions), the C example on the GPU, compute-sanitizer on the column-major block test,
# the Fortran test, and the block benchmark (row- vs column-major rows), then prints a table.
# Logs under $OUT.
#
#   OUT=/tmp/out scripts/gpu_capi_check.sh [--build-only | --no-build]
#   (--build-only, then --no-build: two calls if one 10-minute device call is too short)
set -u
mode=${1:-}
OUT=${OUT:-$PWD/out/gpu_capi}
mkdir -p "$OUT"
B=build-gpu-capi
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
TARGETS="test_c_api c_api_pure_c c_api_example test_block_thomas_cuda test_block_tridiagonal bench_cuda_block_tridiagonal"
command -v gfortran > /dev/null && TARGETS="$TARGETS test_adi_fortran fortran_implicit_step"
if [ "$mode" != "--no-build" ]; then
cmake -S . -B $B $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=ON -DADI_BUILD_BENCHMARKS=ON -DADI_BUILD_EXAMPLES=ON \
  -DADI_BUILD_C_API=ON > "$OUT/configure.log" 2>&1 || { echo "configure failed"; tail -30 "$OUT/configure.log"; exit 1; }
cmake --build $B -j "$(nproc)" --target $TARGETS > "$OUT/build.log" 2>&1 ||
  { echo "build failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
fi
[ "$mode" = "--build-only" ] && { echo "built $B"; exit 0; }
find_exe() { find $B -name "$1" -type f -perm -u+x | head -1; }
status() { if [ "$1" -eq 0 ]; then echo pass; else echo "FAIL ($1)"; fi; }
summary() { grep -E '^\[  (PASSED|SKIPPED|FAILED) ' "$1" | tr '\n' ' '; }
"$(find_exe test_c_api)" > "$OUT/test_c_api.log" 2>&1; r_capi=$?
"$(find_exe c_api_pure_c)" > "$OUT/c_api_pure_c.log" 2>&1; r_purec=$?
"$(find_exe test_block_thomas_cuda)" > "$OUT/test_block_thomas_cuda.log" 2>&1; r_block=$?
"$(find_exe test_block_tridiagonal)" > "$OUT/test_block_tridiagonal.log" 2>&1; r_plan=$?
"$(find_exe c_api_example)" --cuda > "$OUT/c_api_example_cuda.log" 2>&1; r_ex=$?
r_f=skipped; r_fex=skipped
if [ -n "$(find_exe test_adi_fortran)" ]; then
  "$(find_exe test_adi_fortran)" > "$OUT/test_adi_fortran.log" 2>&1; r_f=$(status $?)
  "$(find_exe fortran_implicit_step)" > "$OUT/fortran_implicit_step.log" 2>&1; r_fex=$(status $?)
fi
r_san=skipped
if command -v compute-sanitizer > /dev/null; then
  compute-sanitizer --tool memcheck "$(find_exe test_block_thomas_cuda)" --gtest_filter='*ColumnMajor*' \
    > "$OUT/sanitizer.log" 2>&1
  r_san=$(grep -o "ERROR SUMMARY: [0-9]* error" "$OUT/sanitizer.log" | tail -1)
fi
"$(find_exe bench_cuda_block_tridiagonal)" --grid=96 > "$OUT/bench_cuda_block.log" 2>&1; r_bench=$?
echo
echo "== adi C API / Fortran / column-major blocks GPU check ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
echo "| check | result |"
echo "|---|---|"
echo "| test_c_api (device paths via adi_buffer) | $(status $r_capi): $(summary "$OUT/test_c_api.log") |"
echo "| c_api_pure_c | $(status $r_purec) |"
echo "| test_block_thomas_cuda (incl. ColumnMajorBlocksMatchRowMajor) | $(status $r_block): $(summary "$OUT/test_block_thomas_cuda.log") |"
echo "| test_block_tridiagonal | $(status $r_plan): $(summary "$OUT/test_block_tridiagonal.log") |"
echo "| c_api_example --cuda | $(status $r_ex): $(head -1 "$OUT/c_api_example_cuda.log") |"
echo "| Fortran test / example | $r_f / $r_fex |"
echo "| compute-sanitizer memcheck (column-major CUDA block test) | $r_san |"
echo "| bench_cuda_block_tridiagonal | $(status $r_bench) |"
echo
echo "-- SKIPPED lines (must be none on the GPU machine) --"
grep -h "SKIPPED:" "$OUT"/test_*.log | sort | uniq -c | head
echo
echo "-- block benchmark: row- vs column-major (ms per solve, shuffle kernel) --"
echo "| prec M | interleaved | interl-colmaj | ratio | contiguous | contig-colmaj | ratio |"
echo "|---|---|---|---|---|---|---|"
awk '$1 ~ /^fp(32|64)$/ && $6 == "shuffle" && ($2 == "interleaved" || $2 == "interl-colmaj" || $2 == "contiguous" || $2 == "contig-colmaj") {
       key = $1 " M=" $3; ms[key, $2] = $7; keys[key] = 1 }
     END { for (k in keys) printf "| %s | %s | %s | %.3f | %s | %s | %.3f |\n", k, ms[k, "interleaved"], ms[k, "interl-colmaj"],
             ms[k, "interleaved"] > 0 ? ms[k, "interl-colmaj"] / ms[k, "interleaved"] : 0, ms[k, "contiguous"],
             ms[k, "contig-colmaj"], ms[k, "contiguous"] > 0 ? ms[k, "contig-colmaj"] / ms[k, "contiguous"] : 0 }' "$OUT/bench_cuda_block.log" | sort -V
echo "(full table: $OUT/bench_cuda_block.log)"
