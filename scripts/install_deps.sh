#!/usr/bin/env bash
# Installs the Debian 12 packages adi needs, only those missing. When everything is
# already there it touches neither apt nor the network (fast path).
# Usage: scripts/install_deps.sh [--with-picture]   (--with-picture: python3-vtk9 and
# python3-matplotlib, used by scripts/render_png.py to draw docs/heat3d.png)
set -euo pipefail

packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev libbenchmark-dev libcli11-dev
          libvtk9-dev liblapacke-dev libopenblas-dev libopenmpi-dev openmpi-bin
          libquantlib0-dev
          python3-neuron)  # NEURON 8.2: the reference of tests/adi/test_hines.cpp and bench_hines
for arg in "$@"; do
  case "$arg" in
    --with-picture) packages+=(python3-vtk9 python3-matplotlib) ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "install_deps.sh: unknown option '$arg' (accepted: --with-picture, --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  # "install ok installed" is dpkg's state for a fully installed package.
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install_deps.sh: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install_deps.sh: not root and no sudo; install as root: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install_deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install_deps.sh: done"
