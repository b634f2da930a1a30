#!/usr/bin/env bash
# One command from a fresh Debian 12 clone to a picture: installs the missing Debian
# packages, configures, builds, and runs the 3D heat demo (writes build/heat3d_out/heat3d.pvd).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ADI_BUILD_DIR:-$root/build}
"$root/scripts/install_deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_BUILD_TESTS=OFF -DADI_BUILD_BENCHMARKS=OFF
cmake --build "$build" --target heat3d -j "$(nproc)"
cd "$build"
./examples/heat/heat3d --output heat3d_out "$@"
echo "Open $build/heat3d_out/heat3d.pvd in ParaView."
