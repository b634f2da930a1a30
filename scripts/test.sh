#!/usr/bin/env bash
# One command from a fresh Debian 12 clone to a full test run: installs the missing
# Debian packages, configures with everything found (CUDA compiles when nvcc exists;
# GPU tests skip without a device), builds and runs every test through CTest.
# It also installs ParaView (install_deps.sh --with-paraview, ~3.5 min, ~800 MB on a fresh
# machine) so that the paraview_outputs test opens every example's output in ParaView's own
# readers; ADI_WITH_PARAVIEW=0 skips that install (the test then reports itself skipped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ADI_BUILD_DIR:-$root/build-test}
paraview=--with-paraview
[[ "${ADI_WITH_PARAVIEW:-1}" == 0 ]] && paraview=
"$root/scripts/install_deps.sh" $paraview
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DADI_BUILD_TESTS=ON -DADI_BUILD_EXAMPLES=ON \
      -DADI_BUILD_BENCHMARKS=ON
cmake --build "$build" -j "$(nproc)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" "$@"
