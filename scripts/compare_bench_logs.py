#!/usr/bin/env python3
"""Row-by-row time comparison of two runs of the same benchmarks (scripts/gpu_compare.sh).

usage: compare_bench_logs.py OUTDIR BENCH...   (reads OUTDIR/BENCH.base.log and .new.log,
       and .base2/.new2, .base3/.new3 where they exist: alternated repeat runs)

Lines are paired by their text with the numbers taken out (difflib over the two logs);
in a paired line the time columns are those whose header names a time unit (ms, us, ns)
or "time", or numbers written with a unit ("0.843 ms"). Prints every row whose new time
is more than 3% above the base time in every base/new pair, then per benchmark the count, median and extremes
of new/base.
"""
import difflib
import re
import statistics
import sys

NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?x?%?$")
UNIT = re.compile(r"(^|[^a-z])(ms|us|µs|ns)([^a-z]|$)|time", re.I)


def tokens(line):
    return [t for t in re.split(r"[\s|]+", line.strip()) if t]


def skeleton(line):
    return " ".join("#" if NUM.match(t) else t for t in tokens(line))


def times(line, header):
    """Times on a line: numbers written with a unit ("0.843 ms"); else the columns whose
    header names a time unit; else, under such a header, the first decimal number."""
    tok = tokens(line)
    out = [float(tok[i]) for i in range(len(tok) - 1)
           if NUM.match(tok[i]) and tok[i + 1] in ("ms", "us", "ns", "µs", "s")]
    if out or not header:
        return out
    if len(header) == len(tok):
        out = [float(t.rstrip("x")) for h, t in zip(header, tok)
               if UNIT.search(h) and NUM.match(t) and not t.endswith("%")]
    if not out:
        first = next((t for t in tok if NUM.match(t) and "." in t and not t.endswith("%")), None)
        if first is not None:
            out = [float(first.rstrip("x"))]
    return out


def is_header(line):
    tok = tokens(line)
    return len(tok) >= 2 and not any(NUM.match(t) for t in tok) and any(UNIT.search(t) for t in tok)


def row_ratios(base, new):
    """{(base line, column): (new/base, base text, new text)} over the paired lines."""
    kb, kn = [skeleton(l) for l in base], [skeleton(l) for l in new]
    sm = difflib.SequenceMatcher(a=kb, b=kn, autojunk=False)
    out = {}
    header = None
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            continue
        for i, j in zip(range(i1, i2), range(j1, j2)):
            tok = tokens(base[i])
            if len(tok) >= 2 and not any(NUM.match(t) for t in tok):
                # A line without numbers starts a new table: its time columns, or none
                # (a table of rates, GFLOP/s or GB/s, has no time to compare).
                header = tok if is_header(base[i]) else None
                continue
            for k, (x, y) in enumerate(zip(times(base[i], header), times(new[j], header))):
                if x > 0 and y > 0 and x >= 1e-3:
                    out[(i, k)] = (y / x, base[i].strip(), new[j].strip())
    return out


def compare(name, runs):
    """runs: [(base lines, new lines), ...] of the same benchmark, alternated base/new.
    A row counts as slower only if it is slower in every pair (min of the ratios)."""
    per = [row_ratios(b, n) for b, n in runs]
    keys = set(per[0])
    for p in per[1:]:
        keys &= set(p)
    ratios, slow = [], []
    for key in keys:
        r = min(p[key][0] for p in per)
        ratios.append(r)
        if r > 1.03:
            slow.append((r, per[0][key][1], per[0][key][2]))
    print(f"== {name}: {len(ratios)} times compared over {len(runs)} base/new pair(s)", end="")
    if ratios:
        print(f", new/base median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f};"
              f" {len(slow)} more than 3% slower in every pair")
    else:
        print(" (no time columns recognised)")
    for r, b, n in sorted(slow, reverse=True)[:25]:
        print(f"  {r:.3f}x  base: {b}\n          new:  {n}")
    return ratios, slow


def read(path):
    with open(path, errors="replace") as f:
        return f.read().splitlines()


def main():
    out, benches = sys.argv[1], sys.argv[2:]
    allr, alls = [], []
    for b in benches:
        runs = []
        for suffix in ("", "2", "3"):
            try:
                runs.append((read(f"{out}/{b}.base{suffix}.log"), read(f"{out}/{b}.new{suffix}.log")))
            except OSError:
                break
        if not runs:
            print(f"== {b}: no logs")
            continue
        r, s = compare(b, runs)
        allr += r
        alls += s
    if allr:
        print(f"== all: {len(allr)} times, new/base median {statistics.median(allr):.3f}, "
              f"{len(alls)} rows more than 3% slower in every pair")


if __name__ == "__main__":
    main()
