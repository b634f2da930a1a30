#!/usr/bin/env bash
# Builds a self-contained NEURON 8.2 (hoc only, no Python) from the installed Debian 12 packages
# `neuron`, so that it runs on a machine without NEURON (the GPU machine: Ubuntu 24.04, no network,
# Python 3.12, for which Debian's python3-neuron is not built). Issue 17's "GPU >= 50x NEURON on
# all host cores of the same machine" is measured there with it (scripts/gpu_neuron_compare.sh).
#
#   scripts/make_neuron_bundle.sh [DIR]        (default DIR: .neuron at the repository root)
#
# DIR/bin/nrniv          Debian's nrniv (its RUNPATH /usr/lib/nrn is overridden by LD_LIBRARY_PATH)
# DIR/lib/*.so*          libnrniv.so and every library it needs except glibc's and the compiler
#                        runtime (libc, libm, libstdc++, libgcc_s, ld-linux: newer on Ubuntu 24.04)
# DIR/share/nrn/lib/hoc  NEURON's hoc library (stdlib.hoc, import3d.hoc, ...): NEURONHOME=DIR/share/nrn
# DIR/nrniv              the wrapper to run: sets NEURONHOME and LD_LIBRARY_PATH, then
#                        DIR/bin/nrniv -nopython "$@" (hoc only: no Python is looked for)
#
# Checks at the end: the wrapper runs a small hh model under `env -i` (nothing inherited), and
# `ldd` lists what still comes from the system (must be glibc / libstdc++ / libgcc_s only).
# The bundle is not committed (it is ~17 MiB of Debian binaries): add `.neuron/` to
# .git/info/exclude and carry it (the device tool's `carry` list) to the machine that runs it.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$ROOT/.neuron}
NRNIV=/usr/bin/nrniv
LIBNRN=/usr/lib/nrn/libnrniv.so
HOC=/usr/share/nrn/lib/hoc
for f in $NRNIV $LIBNRN $HOC/stdlib.hoc $HOC/import3d.hoc; do
  [ -e "$f" ] || { echo "make_neuron_bundle: $f is missing: install Debian's 'neuron' package (apt-get install neuron)"; exit 1; }
done
rm -rf "$DIR"
mkdir -p "$DIR/bin" "$DIR/lib" "$DIR/share/nrn/lib"
cp "$NRNIV" "$DIR/bin/nrniv"
cp "$LIBNRN" "$DIR/lib/"
# The hoc library (Import3d, stdlib, stdrun); the GUI's bitmaps/demos are not needed.
cp -r "$HOC" "$DIR/share/nrn/lib/hoc"
for f in nrnunits.lib nrn.defaults; do
  [ -e /usr/share/nrn/lib/$f ] && cp /usr/share/nrn/lib/$f "$DIR/share/nrn/lib/"
done
# nrniv runs lib/cleanup at exit (it removes its temporary file); Debian's is a bash script
# (#!/usr/bin/env bash), this one needs only sh.
cat > "$DIR/share/nrn/lib/cleanup" <<'CLEANUP'
#!/bin/sh
rm -f "${TEMP:-/tmp}/oc$1.hl"
CLEANUP
chmod +x "$DIR/share/nrn/lib/cleanup"
# Every library ldd resolves for libnrniv.so, under its soname, but the system's own ones.
keep_system='^(linux-vdso|libc\.so|libm\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux|libpthread\.so|libdl\.so|librt\.so)'
ldd "$LIBNRN" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
  if [[ "$name" =~ $keep_system ]]; then continue; fi
  cp -L "$path" "$DIR/lib/$name"
done
cat > "$DIR/nrniv" <<'WRAP'
#!/bin/sh
# NEURON 8.2 from this bundle (scripts/make_neuron_bundle.sh); arguments as nrniv's.
D=$(cd "$(dirname "$0")" && pwd)
NEURONHOME=$D/share/nrn LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$D/bin/nrniv" -nopython "$@"
WRAP
chmod +x "$DIR/nrniv" "$DIR/bin/nrniv"
# Check 1: a clean environment runs an hh cell through the bundle's stdlib and ParallelContext.
T=$(mktemp -d)
cat > "$T/check.hoc" <<'HOC'
load_file("stdlib.hoc")
load_file("import3d.hoc")
create soma
soma { L = 20 diam = 20 insert hh }
objref ic, pc, nc, tv
soma ic = new IClamp(0.5)
ic.del = 1
ic.dur = 5
ic.amp = 0.3
pc = new ParallelContext()
soma nc = new NetCon(&v(0.5), nil)
tv = new Vector()
nc.record(tv)
pc.set_maxstep(10)
dt = 0.025
finitialize(-65)
pc.psolve(10)
printf("bundle_check spikes %d first %.3f\n", tv.size(), tv.x[0])
quit()
HOC
out=$(env -i HOME="$T" PATH=/usr/bin:/bin "$DIR/nrniv" -nobanner -nogui "$T/check.hoc" 2>&1) || true
rm -rf "$T"
echo "$out" | grep -q '^bundle_check spikes [1-9]' || { echo "make_neuron_bundle: the bundle does not run:"; echo "$out"; exit 1; }
echo "make_neuron_bundle: $(echo "$out" | grep bundle_check)"
# Check 2: what still comes from the system.
sys=$(env -i LD_LIBRARY_PATH="$DIR/lib" ldd "$DIR/bin/nrniv" | awk '$2 == "=>" { print $1, $3 }' | grep -v " $DIR/lib/" || true)
echo "make_neuron_bundle: from the system: $(echo "$sys" | awk '{print $1}' | tr '\n' ' ')"
bad=$(echo "$sys" | awk '{print $1}' | grep -Ev "$keep_system" || true)
[ -z "$bad" ] || { echo "make_neuron_bundle: not in the bundle: $bad"; exit 1; }
echo "make_neuron_bundle: $DIR, $(du -sh "$DIR" | cut -f1) ($(du -sb "$DIR" | cut -f1) bytes)"
