#!/usr/bin/env bash
# Installs the Debian 12 packages adi needs, only those missing. When everything is
# already there it touches neither apt nor the network (fast path).
# Usage: scripts/install_deps.sh [--with-picture] [--with-paraview]
#   --with-picture: python3-vtk9 and python3-matplotlib (scripts/render_png.py)
#   --with-paraview: ParaView 5.11 (paraview, xvfb) and its pvpython, for the paraview_outputs
#     test and scripts/paraview/render_heat3d.py. Measured on the 2-core CI machine: 76
#     packages, 67 MB download, ~700 MB on disk, 3.5 min; python3-paraview (pvpython) would
#     remove libvtk9-dev, so it is unpacked into /opt/python3-paraview instead (106 MB).
set -euo pipefail
paraview=0
pvsite=/opt/python3-paraview

packages=(cmake ninja-build g++ libeigen3-dev libgtest-dev libbenchmark-dev libcli11-dev
          libvtk9-dev liblapacke-dev libopenblas-dev libopenmpi-dev openmpi-bin
          libquantlib0-dev
          gfortran  # the Fortran module adi (bindings/fortran) and its example and test
          python3-neuron   # NEURON 8.2: the reference of tests/adi/test_hines.cpp and bench_hines
          python3-dev python3-pybind11 python3-numpy python3-pytest)  # the Python package (python/, python_tests)
for arg in "$@"; do
  case "$arg" in
    --with-picture) packages+=(python3-vtk9 python3-matplotlib) ;;
    --with-paraview) packages+=(paraview xvfb xauth); paraview=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install_deps.sh: unknown option '$arg' (accepted: --with-picture, --with-paraview, --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  # "install ok installed" is dpkg's state for a fully installed package.
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
need_pvpython=0
if [[ $paraview -eq 1 && ! -x /usr/bin/pvpython && ! -x $pvsite/usr/bin/pvpython ]]; then need_pvpython=1; fi
if [[ ${#missing[@]} -eq 0 && $need_pvpython -eq 0 ]]; then
  echo "install_deps.sh: all ${#packages[@]} packages present"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install_deps.sh: not root and no sudo; install as root: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "install_deps.sh: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [[ $need_pvpython -eq 1 ]]; then
  # Debian 12's python3-paraview conflicts with python3-vtk9, which libvtk9-dev needs: unpack
  # it beside them instead (scripts/paraview/*.py put its modules first on sys.path).
  echo "install_deps.sh: unpacking python3-paraview into $pvsite"
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -qq python3-paraview)
  "${sudo[@]}" mkdir -p "$pvsite"
  "${sudo[@]}" dpkg-deb -x "$tmp"/python3-paraview_*.deb "$pvsite"
  rm -rf "$tmp"
fi
echo "install_deps.sh: done"
