#!/usr/bin/env python3
"""Compares two spike files of the same ring ("cell time_ms" per line, any order): NEURON's
(benchmarks/neuron/ring.hoc) and adi's (bench_neuron_ring). Standard library only.

    compare_spikes.py NEURON_FILE ADI_FILE DT [--t-end T]

Per cell, the k-th spike of one file is paired with the k-th of the other. Prints one line
    spikes_compare neuron N adi A cells_fired C count_mismatch_cells M max_dt_ms D beyond_dt B verdict V
and exits 0 when every cell has the same number of spikes and every pair is within one time step
(DT); spikes within one step of --t-end are left out of the count check (a crossing detected on
the last step by one side only). Otherwise exits 1 and lists the first differences.
"""
import sys
from collections import defaultdict


def read(path):
    spikes = defaultdict(list)
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and not w[0].startswith("#"):
                spikes[int(float(w[0]))].append(float(w[1]))
    for v in spikes.values():
        v.sort()
    return spikes


def main():
    args = sys.argv[1:]
    t_end = None
    if "--t-end" in args:
        i = args.index("--t-end")
        t_end = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 3:
        raise SystemExit(__doc__)
    a, b, dt = read(args[0]), read(args[1]), float(args[2])
    tol = dt * (1 + 1e-9)
    late = (t_end - tol) if t_end is not None else float("inf")
    mismatched, beyond, worst, notes = 0, 0, 0.0, []
    for cell in sorted(set(a) | set(b)):
        x, y = a.get(cell, []), b.get(cell, [])
        xe, ye = [t for t in x if t < late], [t for t in y if t < late]
        if len(xe) != len(ye):
            mismatched += 1
            if len(notes) < 10:
                notes.append("cell %d: NEURON %d spikes %s, adi %d spikes %s" % (cell, len(x), x[:5], len(y), y[:5]))
        for s, t in zip(x, y):
            d = abs(s - t)
            worst = max(worst, d)
            if d > tol:
                beyond += 1
                if len(notes) < 10:
                    notes.append("cell %d: NEURON %.6f ms, adi %.6f ms" % (cell, s, t))
    n_a, n_b = sum(len(v) for v in a.values()), sum(len(v) for v in b.values())
    ok = mismatched == 0 and beyond == 0 and n_a > 0
    print("spikes_compare neuron %d adi %d cells_fired %d count_mismatch_cells %d max_dt_ms %.3g beyond_dt %d verdict %s"
          % (n_a, n_b, len(set(a) | set(b)), mismatched, worst, beyond, "agree" if ok else "DIFFER"))
    for n in notes:
        print("  " + n)
    if n_a == 0:
        print("  no spikes: the comparison says nothing (check the stimulus)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
