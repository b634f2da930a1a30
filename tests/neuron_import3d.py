#!/usr/bin/env python3
"""NEURON 8.2 run of an SWC cell loaded the way users load it (tests/adi/test_hines_neuron.cpp).

The cell is built by NEURON itself: Import3d_SWC_read + Import3d_GUI(r, 0).instantiate(None),
cm and Ra in every section, nseg by the d_lambda rule with lambda_f (stdlib.hoc), so adi's
Import3d geometry and discretisation are checked against NEURON's, not against a copy of them.

Model file (whitespace separated, one record per line):
  swc PATH
  params dt steps every v_init cm Ra d_lambda freq
  pas g e                         pas everywhere (g_pas S/cm2, e_pas mV)
  hh SECTYPES                     hh (NEURON's defaults) in sections whose type name is listed
                                  (e.g. "soma,axon"), pas elsewhere
  stim SECTION x amp del dur      an IClamp (SECTION = NEURON name, e.g. soma[0])
  syn SECTION x tau e weight t0 [t1 ...]   an ExpSyn driven by a VecStim-free NetCon event list
  detect SECTION x threshold      spike times of SECTION(x) (NetCon threshold) written to OUT.spikes
  copies K / threads K / cache_efficient 0|1   (timing)

Usage:
  neuron_import3d.py MODEL OUT      writes "section NAME NSEG" lines, then one line per recorded
                                    step: t, v(root 0), then per section v at its nseg segment
                                    centres and at 1 (sections in h.allsec() order)
  neuron_import3d.py MODEL --time   prints "neuron_seconds_per_step S compartments N" and
                                    "neuron_best_chunk_seconds_per_step S" (fastest tenth), steps
                                    run by ParallelContext.psolve; thread CPU time with 1 thread
  neuron_import3d.py MODEL --geometry OUT   per section: name parent parentx nseg L, per
                                    segment area and ri (for debugging the geometry)
"""
import sys
import time


def read_model(path):
    m = {"copies": 1, "threads": 1, "cache_efficient": 0, "stims": [], "syns": [], "hh": None, "pas": (0.001, -70), "detect": None}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            k = w[0]
            if k == "swc":
                m["swc"] = w[1]
            elif k == "params":
                m.update(dt=float(w[1]), steps=int(w[2]), every=int(w[3]), v_init=float(w[4]), cm=float(w[5]),
                         ra=float(w[6]), d_lambda=float(w[7]), freq=float(w[8]))
            elif k == "pas":
                m["pas"] = (float(w[1]), float(w[2]))
            elif k == "hh":
                m["hh"] = set(w[1].split(","))
            elif k == "stim":
                m["stims"].append((w[1], float(w[2]), float(w[3]), float(w[4]), float(w[5])))
            elif k == "syn":
                m["syns"].append((w[1], float(w[2]), float(w[3]), float(w[4]), float(w[5]), [float(t) for t in w[6:]]))
            elif k == "detect":
                m["detect"] = (w[1], float(w[2]), float(w[3]))
            elif k in ("copies", "threads", "cache_efficient"):
                m[k] = int(w[1])
            else:
                raise SystemExit("neuron_import3d.py: unknown record '%s'" % k)
    return m


class Cell:
    """A holder for one copy's sections (Import3d's Python-object instantiate)."""


_readers = {}


def load(h, path, copy):
    if path not in _readers:  # the file read once; copies instantiated from the same reader
        r = h.Import3d_SWC_read()
        r.quiet = 1
        r.input(path)
        _readers[path] = (r, h.Import3d_GUI(r, 0))
    i3d = _readers[path][1]
    if copy == 0:
        i3d.instantiate(None)  # how users load one cell: top-level soma[], dend[], ...
        return None
    cell = Cell()  # further copies (timing): sections owned by an object, so names do not clash
    i3d.instantiate(cell)
    return cell


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    from neuron import h
    h.load_file("stdlib.hoc")
    h.load_file("import3d.hoc")
    m = read_model(sys.argv[1])
    cells, holders = [], []
    total = 0
    for c in range(m["copies"]):
        holders.append(load(h, m["swc"], c))
        # the copy's sections: those created since (allsec lists sections in creation order)
        secs = list(h.allsec())
        cells.append(secs[total:])
        total = len(secs)
    for cell in cells:
        for sec in cell:
            sec.cm = m["cm"]
            sec.Ra = m["ra"]
        for sec in cell:
            sec.nseg = int((sec.L / (m["d_lambda"] * h.lambda_f(m["freq"], sec=sec)) + 0.9) / 2) * 2 + 1
        for sec in cell:
            kind = sec.name().split("[")[0].split(".")[-1]
            if m["hh"] is not None and kind in m["hh"]:
                sec.insert("hh")
            else:
                sec.insert("pas")
                for seg in sec:
                    seg.pas.g = m["pas"][0]
                    seg.pas.e = m["pas"][1]
    if sys.argv[2] == "--geometry":
        with open(sys.argv[3], "w") as out:
            for sec in cells[0]:
                ps = sec.parentseg()
                out.write("%s %s %.17g %d %.17g" % (sec.name(), ps.sec.name() if ps else "-", ps.x if ps else 0,
                                                    sec.nseg, sec.L))
                for seg in sec:
                    out.write(" %.17g %.17g" % (seg.area(), seg.ri()))
                out.write(" %.17g\n" % sec(1).ri())
        return
    keep = []
    names0 = [s.name() for s in cells[0]]
    for cell in cells:
        by_name = dict((s.name().split(".")[-1], s) for s in cell)
        for name, x, amp, delay, dur in m["stims"]:
            ic = h.IClamp(by_name[name](x))
            ic.amp = amp
            setattr(ic, "del", delay)
            ic.dur = dur
            keep.append(ic)
        for name, x, tau, e, weight, times in m["syns"]:
            syn = h.ExpSyn(by_name[name](x))
            syn.tau = tau
            syn.e = e
            nc = h.NetCon(None, syn)
            nc.weight[0] = weight
            keep += [syn, nc]
            for t in times:
                keep.append((nc, t))
    spikes = None
    if m["detect"] is not None:
        name, x, thr = m["detect"]
        sec = dict((s.name(), s) for s in cells[0])[name]
        det = h.NetCon(sec(x)._ref_v, None, sec=sec)
        det.threshold = thr
        spikes = h.Vector()
        det.record(spikes)
        keep.append(det)
    h.secondorder = 0
    h.dt = m["dt"]
    cvode = h.CVode()
    cvode.active(0)
    cvode.cache_efficient(m["cache_efficient"])
    pc = h.ParallelContext()
    if m["threads"] > 1:
        pc.nthread(m["threads"])
    if sys.argv[2] == "--time":
        pc.set_maxstep(10)  # psolve needs it; no NetCons between cells here
    h.finitialize(m["v_init"])
    for item in keep:
        if isinstance(item, tuple):
            item[0].event(item[1])
    if sys.argv[2] == "--time":
        n = sum(sum(s.nseg + 1 for s in cell) for cell in cells)
        steps = max(10, m["steps"])
        # NEURON's own run loop (ParallelContext.psolve: the fixed steps in C, no Python per step),
        # 10 chunks: the mean, and the fastest chunk (the least disturbed). One thread: the
        # thread's CPU time (robust on a loaded machine); several: wall time.
        clock = time.thread_time if m["threads"] == 1 else time.perf_counter
        h.fadvance()
        chunk, best, done = steps // 10, float("inf"), 0
        t0 = clock()
        while done < steps:
            c0, tb = clock(), h.t
            pc.psolve(h.t + chunk * h.dt)
            did = max(1, round((h.t - tb) / h.dt))  # the steps psolve took (chunk, or one less by round-off)
            best = min(best, (clock() - c0) / did)
            done += did
        seconds = clock() - t0
        print("neuron_seconds_per_step %.9g compartments %d" % (seconds / done, n))
        print("neuron_best_chunk_seconds_per_step %.9g" % best)
        return
    secs = cells[0]
    root = h.SectionRef(sec=secs[0]).root
    refs = [root(0)._ref_v]
    for sec in secs:
        refs += [seg._ref_v for seg in sec]
        refs.append(sec(1)._ref_v)
    with open(sys.argv[2], "w") as out:
        for sec in secs:
            out.write("section %s %d\n" % (sec.name(), sec.nseg))

        def record():
            out.write("%.17g " % h.t + " ".join("%.17g" % r[0] for r in refs) + "\n")
        record()
        for step in range(1, m["steps"] + 1):
            h.fadvance()
            if step % m["every"] == 0:
                record()
    if spikes is not None:
        with open(sys.argv[2] + ".spikes", "w") as out:
            out.write("".join("%.17g\n" % t for t in spikes))


if __name__ == "__main__":
    main()
