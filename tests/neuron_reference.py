#!/usr/bin/env python3
"""NEURON 8.2 reference for adi's Hines solver (tests/adi/test_hines.cpp, benchmarks).

Builds the cell that adi::discretise produced, section by section, with NEURON's own
discretisation of a section without 3-d points (nrn_area_ri: cylinders per segment of the
given diameter), so both simulators solve the same equations:

  * one NEURON Section per adi Section, connect(child(0), parent(parent_x));
  * sec.L = L, sec.nseg = nseg, then seg.diam = d_j for segment j (adi's mean diameter);
  * cm, Ra, the pas mechanism (g_pas, e_pas) everywhere; one IClamp;
  * fixed step, implicit Euler (secondorder = 0, no CVode), h.dt = dt.

Node mapping (adi compartment order): node 0 = root section(0); per section, in order,
seg j = sec((j + 0.5) / nseg), then sec(1).

Input file (whitespace separated, one record per line):
  params dt steps every v_init cm Ra g_pas e_pas
  stim section x amp del dur
  copies K                (optional: K identical cells, for timing)
  threads K               (optional: ParallelContext.nthread(K), cells spread over threads)
  section parent parent_x L nseg d_0 ... d_{nseg-1}     (one line per section, in order)

Usage:
  neuron_reference.py MODEL OUT     writes one line per recorded step: t v_0 ... v_{n-1}
  neuron_reference.py MODEL --time  runs the steps and prints
                                    "neuron_seconds_per_step <s> compartments <n>" and
                                    "neuron_best_chunk_seconds_per_step <s>" (fastest tenth)
"""
import sys
import time


def read_model(path):
    model = {"sections": [], "copies": 1, "threads": 1, "stim": None}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "params":
                dt, steps, every, v_init, cm, ra, g, e = w[1:9]
                model.update(dt=float(dt), steps=int(steps), every=int(every), v_init=float(v_init),
                             cm=float(cm), ra=float(ra), g=float(g), e=float(e))
            elif w[0] == "stim":
                model["stim"] = (int(w[1]), float(w[2]), float(w[3]), float(w[4]), float(w[5]))
            elif w[0] == "copies":
                model["copies"] = int(w[1])
            elif w[0] == "threads":
                model["threads"] = int(w[1])
            elif w[0] == "section":
                parent, px, L, nseg = int(w[1]), float(w[2]), float(w[3]), int(w[4])
                diams = [float(x) for x in w[5:5 + nseg]]
                if len(diams) != nseg:
                    raise SystemExit("neuron_reference.py: section line with %d diameters, nseg %d" % (len(diams), nseg))
                model["sections"].append((parent, px, L, nseg, diams))
            else:
                raise SystemExit("neuron_reference.py: unknown record '%s'" % w[0])
    return model


def build(h, model, copy):
    secs = []
    for k, (parent, px, L, nseg, diams) in enumerate(model["sections"]):
        sec = h.Section(name="c%d_s%d" % (copy, k))
        sec.L = L
        sec.nseg = nseg
        for seg, d in zip(sec, diams):
            seg.diam = d
        sec.cm = model["cm"]
        sec.Ra = model["ra"]
        sec.insert("pas")
        for seg in sec:
            seg.pas.g = model["g"]
            seg.pas.e = model["e"]
        if parent >= 0:
            sec.connect(secs[parent](px), 0)
        secs.append(sec)
    return secs


def nodes(secs, model):
    # (section, x) of every adi compartment, in adi's order.
    out = [(secs[0], 0.0)]
    for sec, (_, _, _, nseg, _) in zip(secs, model["sections"]):
        out += [(sec, (j + 0.5) / nseg) for j in range(nseg)]
        out.append((sec, 1.0))
    return out


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    from neuron import h
    model = read_model(sys.argv[1])
    h.secondorder = 0
    h.dt = model["dt"]
    cells = [build(h, model, c) for c in range(model["copies"])]
    clamps = []
    if model["stim"] is not None:
        sec_index, x, amp, delay, dur = model["stim"]
        for secs in cells:
            ic = h.IClamp(secs[sec_index](x))
            ic.amp = amp
            setattr(ic, "del", delay)
            ic.dur = dur
            clamps.append(ic)
    cvode = h.CVode()
    cvode.active(0)
    if model["threads"] > 1:
        h.ParallelContext().nthread(model["threads"])
    h.finitialize(model["v_init"])
    if sys.argv[2] == "--time":
        n = len(nodes(cells[0], model)) * len(cells)
        # Steps in 10 chunks: the mean over all steps, and the fastest chunk (on a shared
        # machine the least disturbed one; bench_hines reports both).
        steps = max(1, model["steps"])
        chunk = max(1, steps // 10)
        best = float("inf")
        done = 0
        t0 = time.perf_counter()
        while done < steps:
            k = min(chunk, steps - done)
            c0 = time.perf_counter()
            for _ in range(k):
                h.fadvance()
            best = min(best, (time.perf_counter() - c0) / k)
            done += k
        seconds = time.perf_counter() - t0
        print("neuron_seconds_per_step %.9g compartments %d" % (seconds / steps, n))
        print("neuron_best_chunk_seconds_per_step %.9g" % best)
        return
    where = nodes(cells[0], model)
    refs = [sec(x)._ref_v for sec, x in where]
    with open(sys.argv[2], "w") as out:
        def record():
            out.write("%.17g " % h.t + " ".join("%.17g" % r[0] for r in refs) + "\n")
        record()
        for step in range(1, model["steps"] + 1):
            h.fadvance()
            if step % model["every"] == 0:
                record()


if __name__ == "__main__":
    main()
