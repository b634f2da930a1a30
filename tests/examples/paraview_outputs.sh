#!/usr/bin/env bash
# CTest paraview_outputs: runs every example briefly with output on, then opens each output
# with ParaView's readers (scripts/paraview/check_outputs.py under pvpython) and checks the
# arrays: names, one value per point, the number of points, all finite.
#   paraview_outputs.sh PVPYTHON WORKDIR BINDIR [MPIEXEC]
# Exits 77 (CTest SKIP_RETURN_CODE: reported as skipped, never as passed) when PVPYTHON is
# not there: scripts/install_deps.sh --with-paraview installs it.
set -euo pipefail
pvpython=$1 work=$2 bin=$3 mpiexec=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -x "$pvpython" ]]; then
  echo "SKIPPED: no pvpython ('$pvpython'); install ParaView with scripts/install_deps.sh --with-paraview" >&2
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
export OMP_NUM_THREADS=1
run() { echo "+ $*"; "$@" > "$work/last.log" 2>&1 || { cat "$work/last.log"; echo "FAILED: $*" >&2; exit 1; }; }
run "$bin/heat/heat3d" --n 9 --steps 4 --every 2 --output "$work/heat3d"
run "$bin/black_scholes/black_scholes" --assets 2 --payoff spread --strike 5 --nodes 17 --steps 4 --output "$work/bs"
run "$bin/black_scholes/black_scholes" --model heston --nodes 17 --variance-nodes 9 --steps 4 --output "$work/heston"
run "$bin/cfd/euler_vortex" --n 12 --steps 2 --output "$work/euler"
run "$bin/neuron/neuron" --class big-high --neurons 2 --t-end 0.5 --every 10 --output "$work/neuron"
specs=("$work/heat3d/heat3d.pvd=u,error@729"
       "$work/bs/price.vtr=price@289"
       "$work/heston/price.vtr=price@153"
       "$work/euler/euler_vortex.pvd=density,u,v,w,pressure,density_error@144"
       "$work/neuron/neuron.pvd=radius,voltage")
if [[ -n "$mpiexec" && -x "$bin/heat/heat3d_mpi" ]]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  run "$mpiexec" -n 2 "$bin/heat/heat3d_mpi" --n 9 --steps 2 --procs 2x1x1 --output "$work/heat3d_mpi"
  run "$mpiexec" -n 2 "$bin/cfd/euler_vortex_mpi" --n 12 --steps 2 --procs 1x2x1 --output "$work/euler_mpi"
  specs+=("$work/heat3d_mpi/heat3d.pvd=u,error@729"
          "$work/euler_mpi/euler_vortex.pvd=density,u,v,w,pressure,density_error@144")
fi
rc=0
"$pvpython" "$here/../../scripts/paraview/check_outputs.py" "${specs[@]}" > "$work/check.log" 2>&1 || rc=$?
grep -v '^ *[0-9]* *0x' "$work/check.log" || true   # ParaView's stack dumps, if any, without addresses
if [[ $rc -ne 0 ]]; then
  echo "FAILED: ParaView could not read the outputs (pvpython exit $rc)" >&2
  exit 1
fi
