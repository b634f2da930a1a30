#!/usr/bin/env bash
# The Python package's GPU checks (issue 21), for one H100: builds adi and the module adi._core
# with CUDA for sm_90 (VTK and MPI off) against the python3 on PATH (pybind11 from its CMake
# package, `python3 -m pybind11`, or PyTorch's bundled copy), runs the pytest suites (host
# suites, then the GPU suite with CuPy / PyTorch / JAX arrays), the C++ benchmark
# bench_cuda_tridiagonal (the C++ call's figures) and benchmarks/python/bench_solve_tridiagonal.py
# (256^3 along each axis, fp32/fp64, against JAX and cuSPARSE), and prints the tables. Logs
# under $OUT.
#
#   OUT=/tmp/out scripts/gpu_python_check.sh [--build-only | --no-build]
#   (--build-only, then --no-build: two calls if one 10-minute device call is too short)
#   PYTHON=/path/to/python3 picks the interpreter; ADI_CMAKE_ARGS adds CMake options.
set -u
mode=${1:-}
OUT=${OUT:-$PWD/out/gpu_python}
mkdir -p "$OUT"
B=build-gpu-python
PY=${PYTHON:-$(command -v python3)}
GEN=""
command -v ninja > /dev/null && GEN="-G Ninja"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
"$PY" - > "$OUT/python_env.txt" 2>&1 <<'PYEOF'
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for m in ("numpy", "pybind11", "pytest", "cupy", "torch", "jax", "scipy"):
    try:
        mod = importlib.import_module(m)
        print(m, getattr(mod, "__version__", "?"))
    except Exception as e:
        print(m, "MISSING", type(e).__name__, e)
PYEOF
if [ "$mode" != "--no-build" ]; then
  cmake -S . -B $B $GEN -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DADI_WITH_VTK=OFF -DADI_WITH_MPI=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DADI_BUILD_TESTS=OFF -DADI_BUILD_EXAMPLES=OFF -DADI_BUILD_BENCHMARKS=ON \
    -DADI_WITH_PYTHON=ON -DPython3_EXECUTABLE="$PY" ${ADI_CMAKE_ARGS:-} > "$OUT/configure.log" 2>&1 \
    || { echo "configure failed"; tail -30 "$OUT/configure.log"; exit 1; }
  grep -E "adi: Python module|adi: CUDA" "$OUT/configure.log"
  cmake --build $B -j "$(nproc)" --target adi_python > "$OUT/build.log" 2>&1 \
    || { echo "build of adi_python failed"; grep -m 20 -B2 -A8 "error" "$OUT/build.log"; exit 1; }
  cmake --build $B -j "$(nproc)" --target bench_cuda_tridiagonal > "$OUT/build_bench.log" 2>&1 \
    || echo "bench_cuda_tridiagonal did not build (see $OUT/build_bench.log); the C++ column comes from TridiagonalPlan.time"
fi
[ "$mode" = "--build-only" ] && { echo "built $B"; exit 0; }
export ADI_PYTHON_PATH=$PWD/$B/python PYTHONPATH=$PWD/$B/python${PYTHONPATH:+:$PYTHONPATH}
status() { case "$1" in 0) echo pass ;; 77) echo "SKIPPED (77)" ;; *) echo "FAIL ($1)" ;; esac; }
"$PY" python/tests/run_tests.py > "$OUT/pytest_host.log" 2>&1; r_host=$?
"$PY" python/tests/run_tests.py --gpu > "$OUT/pytest_gpu.log" 2>&1; r_gpu=$?
BENCH=$(find $B -name bench_cuda_tridiagonal -type f -perm -u+x | head -1)
r_cpp=skipped
if [ -n "$BENCH" ]; then
  "$BENCH" --no-sweep --no-tune --no-layouts > "$OUT/bench_cuda_tridiagonal.log" 2>&1; r_cpp=$(status $?)
fi
"$PY" benchmarks/python/bench_solve_tridiagonal.py --gpu --json "$OUT/bench_python_gpu.json" \
  > "$OUT/bench_python_gpu.log" 2>&1; r_bgpu=$?
"$PY" benchmarks/python/bench_solve_tridiagonal.py --cpu --reps 10 --json "$OUT/bench_python_cpu.json" \
  > "$OUT/bench_python_cpu.log" 2>&1; r_bcpu=$?
echo
echo "== adi Python GPU check ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)) =="
cat "$OUT/python_env.txt"
echo "| check | result |"
echo "|---|---|"
echo "| pytest host suites | $(status $r_host): $(tail -1 "$OUT/pytest_host.log") |"
echo "| pytest GPU suite (CuPy, PyTorch, JAX, DLPack) | $(status $r_gpu): $(grep -E 'passed|failed|skipped' "$OUT/pytest_gpu.log" | tail -1) |"
echo "| bench_cuda_tridiagonal | $r_cpp |"
echo "| bench_solve_tridiagonal.py --gpu / --cpu | $(status $r_bgpu) / $(status $r_bcpu) |"
echo
echo "-- GPU tests skipped (reasons) --"
grep -E "^SKIPPED" "$OUT/pytest_gpu.log" | head -20
grep -E "^(FAILED|ERROR)" "$OUT/pytest_host.log" "$OUT/pytest_gpu.log" | head -20
echo
echo "-- C++: bench_cuda_tridiagonal, 256^3 rows, full bands --"
[ -n "$BENCH" ] && grep -E "^256x256x256 .* full |^grid " "$OUT/bench_cuda_tridiagonal.log" | head -60
[ -n "$BENCH" ] && sed -n '/== Summary/,$p' "$OUT/bench_cuda_tridiagonal.log"
echo
echo "-- Python: bench_solve_tridiagonal.py --gpu --"
grep -E "^\||copy bandwidth|^  |Targets|skipped" "$OUT/bench_python_gpu.log"
echo
echo "-- Python: bench_solve_tridiagonal.py --cpu --"
grep -E "^\||copy bandwidth|^\(|largest" "$OUT/bench_python_cpu.log"
