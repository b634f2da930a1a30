#!/usr/bin/env bash
# The Python package's GPU checks (issue 21), for one H100: builds adi and the module adi._core
# with CUDA for sm_90 (VTK and MPI off) against the python3 on PATH (pybind11 from its CMake
# package, `python3 -m pybind11`, or PyTorch's bundled copy), runs the pytest suites (host
# suites, then the GPU suite with CuPy / PyTorch / JAX arrays), the C++ benchmark
# bench_cuda_tridiagonal (the C++ call's figures) and benchmarks/python/bench_solve_tridiagonal.py
# (the per-call cost on small boxes; 256^3 along each axis, fp32/fp64, against the C++ call
# timed the same way, JAX and cuSPARSE, with each peer's % of the copy bandwidth), and prints
# the tables and a verdict on the two targets (adi within 10% of the C++ call; >= 3x the best
# Python peer, and whether that peer leaves room for 3x). Logs under $OUT. About 3-4 minutes
# on 16 cores (build ~1.5 min with ccache cold).
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
"$PY" benchmarks/python/bench_solve_tridiagonal.py --cpu --reps 5 --scipy-lines 256 --json "$OUT/bench_python_cpu.json" \
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
grep -E "^\||^-- |^== |copy bandwidth|^  |^\(|Targets|skipped" "$OUT/bench_python_gpu.log"
echo
echo "-- Python: bench_solve_tridiagonal.py --cpu --"
grep -E "^\||^-- |^== |copy bandwidth|^\(|largest" "$OUT/bench_python_cpu.log"
echo
echo "-- Verdict (from $OUT/bench_python_gpu.json) --"
"$PY" - "$OUT/bench_python_gpu.json" <<'PYEOF'
import json, sys
try:
    rows = [r for r in json.load(open(sys.argv[1])) if r.get("device") == "gpu"]
except Exception as e:  # noqa: BLE001
    sys.exit(f"no GPU rows ({type(e).__name__}: {e})")
if not rows:
    sys.exit("no GPU rows: the GPU part was skipped (see bench_python_gpu.log)")
def span(key, ref):
    v = [r[key] / r[ref] for r in rows if r.get(key) and r.get(ref)]
    return (min(v), max(v)) if v else None
for key, ref, what in (("adi_cupy_one", "cpp_one", "adi CuPy, one call / C++ one call"),
                       ("adi_torch_one", "cpp_one", "adi PyTorch, one call / C++ one call"),
                       ("adi_cupy_loop", "cpp_loop", "adi CuPy, back to back / C++ loop"),
                       ("adi_cupy_new_loop", "cpp_loop", "adi CuPy out=None, back to back / C++ loop")):
    s = span(key, ref)
    if s:
        print(f"{what}: {s[0]:.2f}-{s[1]:.2f} ({'met' if s[1] <= 1.10 else 'MISSED'}: target <= 1.10)")
for r in rows:
    adi_t = r.get("adi_cupy_loop") or r.get("adi_torch_one")
    peers = {k: r[k] for k in ("jax", "cusparse") if r.get(k)}
    if not adi_t or not peers:
        continue
    name, best = min(peers.items(), key=lambda kv: kv[1])
    pct = r.get("best_peer_pct_copy")
    room = "n/a" if pct is None else ("peer < 33% of copy: 3x possible" if pct < 100 / 3 else
                                      "peer >= 33% of copy: 3x impossible for any 5-array solver")
    print(f"{r['dtype']} axis {r['axis']}: best peer {name} {best / adi_t:.1f}x slower than adi "
          f"({'met' if best / adi_t >= 3 else 'missed'}: target >= 3x); {room}"
          + ("" if pct is None else f" ({pct:.0f}%)"))
PYEOF
