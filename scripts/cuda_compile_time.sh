#!/usr/bin/env bash
# The serial CUDA compile time of adi_cuda (issue 15 item 8): configures a build of SRC for
# sm_90 without ccache, builds adi_cuda with -j1 through a compiler launcher that runs each
# nvcc under /usr/bin/time, and prints user + sys CPU seconds per unit and their sum. CPU
# seconds (all of nvcc's children: cudafe++, cicc, ptxas, the host compiler) move far less
# with the machine's load than wall time; on a shared machine alternate base and new runs.
# Beside each unit: its __global__ instantiations (host stubs in the object, nm). Generated
# units: the block sizes of a family (<family>_<T>_m<M..>.cu) or a group of light units
# (group_<name>.cu, CMakeLists.txt's _adi_cuda_groups).
#
#   scripts/cuda_compile_time.sh [SRC] [BUILD] [cmake args...]    e.g. -DADI_WITH_MPI=OFF
#   SRC defaults to this tree, BUILD to /tmp/adi-cuda-time; the per-unit log is BUILD/units.txt.
#   ADI_COMPILE_PHASES=1: each nvcc also writes `nvcc --time` rows to BUILD/phases.csv, and the
#   summary adds seconds per phase (preprocessing, cudafe++, cicc, ptxas, fatbinary, host
#   compiler) summed over the units: wall time of each phase, so only on a quiet machine ~ CPU.
#   Two such builds' kernels, byte for byte: scripts/compare_cubin.py --builds BASE_BUILD BUILD.
set -euo pipefail
if [ "${1:-}" = "--launch" ]; then  # the launcher: --launch LOG nvcc ... -o OUT ...
  shift; log=$1; shift
  out="" prev=""
  for a in "$@"; do [ "$prev" = "-o" ] && out=$a; prev=$a; done
  phases=(); [ "${ADI_COMPILE_PHASES:-0}" = 1 ] && phases=(--time "$(dirname "$log")/phases.csv")
  exec /usr/bin/time -f "%U %S %e $(basename "$out" .o) $PWD/$out" -a -o "$log" "$@" "${phases[@]}"
fi
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
b=${2:-/tmp/adi-cuda-time}
shift $(( $# > 2 ? 2 : $# ))
rm -rf "$b" && mkdir -p "$b"
cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DADI_WITH_VTK=OFF -DADI_WITH_PYTHON=OFF -DADI_BUILD_TESTS=OFF -DADI_BUILD_EXAMPLES=OFF \
  -DADI_BUILD_BENCHMARKS=OFF -DADI_BUILD_C_API=OFF "-DCMAKE_CUDA_COMPILER_LAUNCHER=$self;--launch;$b/units.txt" \
  "$@" > "$b/configure.log" 2>&1 || { tail -20 "$b/configure.log"; exit 1; }
cmake --build "$b" -j1 --target adi_cuda > "$b/build.log" 2>&1 || { tail -30 "$b/build.log"; exit 1; }
kernels() { nm "$1" 2>/dev/null | grep -o '__device_stub__[^ ]*' | sed -E 's/(E5__tmp|E8__handle|\.cold)$//' | sort -u | wc -l; }
sort -k4 "$b/units.txt" | while read -r u s e name obj; do
  printf "%8.1f  %-44s %4d kernels\n" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$name" "$(kernels "$obj")"
done
awk '{s += $1 + $2; n++} END {printf "%8.1f  total CPU seconds, %d units (%s)\n", s, n, "'"$src"'"}' "$b/units.txt"
if [ -f "$b/phases.csv" ]; then  # nvcc --time rows: file, phase, inputs, output, arch, tool, ms, unit
  awk -F' *, *' '$8 ~ /ms/ && $2 != "nvcc (driver)" {
    p = $2 ~ /preprocessing/ ? "preprocessing" : $2 ~ /compiling/ ? "host compiler" : $2; t[p] += $7 / 1000}
    END {for (p in t) printf "%8.1f  %s (nvcc --time, wall s summed over the units)\n", t[p], p}' "$b/phases.csv" | sort -rn
fi
