#!/usr/bin/env bash
# One command from a fresh Debian 12 clone to a picture: installs the missing Debian
# packages, configures, builds, and runs the 3D heat demo (writes build/heat3d_out/heat3d.pvd).
#
# Usage: scripts/demo.sh [heat3d options]     e.g. scripts/demo.sh --n 128 --steps 100 --every 10
#        scripts/demo.sh --help               this text (installs, builds and runs nothing)
# heat3d options: --n N (nodes per axis, default 64), --nx/--ny/--nz, --steps, --dt or --cfl,
# --t-end (any two of --steps, --dt, --t-end fix the third), --scheme douglas|craig-sneyd|
# modified-craig-sneyd|hundsdorfer-verwer|peaceman-rachford, --theta, --rannacher K,
# --precision float|double, --backend cpu|cuda, --threads T, --every K, --output DIR,
# --no-output, --max-error E. All of them: build/examples/heat/heat3d --help.
# Environment: ADI_BUILD_DIR (default build). Exit codes: those of heat3d (README "Exit codes").
set -euo pipefail
for arg in "$@"; do
  if [[ "$arg" == "-h" || "$arg" == "--help" ]]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
  fi
done
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ADI_BUILD_DIR:-$root/build}
"$root/scripts/install_deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_BUILD_TESTS=OFF -DADI_BUILD_BENCHMARKS=OFF
cmake --build "$build" --target heat3d -j "$(nproc)"
cd "$build"
out=heat3d_out
extra=(--output "$out")
prev=
for arg in "$@"; do
  case "$arg" in
    --no-output) extra=(); out= ;;
    --output=*) extra=(); out=${arg#--output=} ;;
  esac
  [[ "$prev" == "--output" ]] && { extra=(); out=$arg; }
  prev=$arg
done
./examples/heat/heat3d "${extra[@]}" "$@"   # set -e: a failed run stops here, with heat3d's exit code
if [[ -n "$out" ]]; then
  case "$out" in /*) ;; *) out="$build/$out" ;; esac
  echo "Open $out/heat3d.pvd in ParaView (Debian 12: apt-get install paraview)."
fi
