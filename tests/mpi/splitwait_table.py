#!/usr/bin/env python3
"""The A/B table of tests/mpi/gpu_splitwait_ab.sh: bench_mpi_heat logs of OUT (heat_strong_old.log,
heat_strong_new.log: two runs each; heat_weak_old/new.log: one; heat_strong_defer/group/spread/reach/lean.log:
one switch on) -> markdown rows old -> new per split (step, speed-up over the same run's 1-GPU row,
the split axis's stage, boundary, halo, exchange; ms, the runs' medians)."""
import os
import sys

COLS = ("ms", "explicit", "halo", "boundary", "x", "y", "z", "exchange")


def runs(path):
    """One dict per run in the log (a '### ' step header starts one): split -> the row's values."""
    out, blk = [], None
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return []
    for line in lines:
        if line.startswith("### "):
            blk = {}
            out.append(blk)
        elif blk is not None and line.startswith("| ") and not line.startswith("| ranks"):
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            try:
                blk[c[1]] = dict(zip(COLS, (float(x) for x in c[3:11])))
            except (ValueError, IndexError):
                pass
    return [b for b in out if b]


def speedup(run, s):
    return run["-"]["ms"] / run[s]["ms"] if "-" in run and s in run else None


def row(label, s, a, b):
    ax = "xyz"[("x", "y", "z").index(s)] if s in ("x", "y", "z") else "z"
    sa, sb = speedup(a, s), speedup(b, s)
    sp = "%.2fx -> %.2fx" % (sa, sb) if sa and sb else "-"
    x, y = a[s], b[s]
    print("| %s | %s | %.3f -> %.3f (%+.1f%%, %+.3f) | %s | %.3f -> %.3f | %.3f -> %.3f | %.3f -> %.3f | %.3f -> %.3f |"
          % (label, s, x["ms"], y["ms"], 100 * (y["ms"] / x["ms"] - 1), y["ms"] - x["ms"], sp, x[ax], y[ax],
             x["boundary"], y["boundary"], x["halo"], y["halo"], x["exchange"], y["exchange"]))


def main(d):
    print("| run | split | step ms old -> new | strong: speed-up, weak: efficiency (same run's 1-GPU row) | split stage ms | boundary ms | halo ms | exchange ms |")
    print("|---|---|---|---|---|---|---|---|")
    for kind in ("strong", "weak"):
        old, new = runs(os.path.join(d, "heat_%s_old.log" % kind)), runs(os.path.join(d, "heat_%s_new.log" % kind))
        for i, (o, n) in enumerate(zip(old, new)):
            for s in ("z", "y", "x"):
                if s in o and s in n:
                    row("%s %d" % (kind, i + 1), s, o, n)
    old = runs(os.path.join(d, "heat_strong_old.log"))
    for v, what in (("defer", "ADI_SPLIT_DEFER only"), ("group", "ADI_HALO_ONE_GROUP only"),
                    ("spread", "ADI_SPIKE_BACK_SPREAD only"), ("reach", "ADI_SPIKE_REACH_COARSE only"),
                    ("lean", "ADI_SPLIT_LEAN only")):
        single = runs(os.path.join(d, "heat_strong_%s.log" % v))
        if old and single:
            for s in ("z", "y", "x"):
                if s in old[-1] and s in single[0]:
                    row("strong, old (last) -> %s" % what, s, old[-1], single[0])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
