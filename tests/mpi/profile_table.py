#!/usr/bin/env python3
"""Short kernel-time tables of one profiled step (tests/mpi/gpu_step_check.sh, issue 18).

  profile_table.py nsys TRACE.csv            # nsys stats -r cuda_gpu_trace -f csv output
  profile_table.py ncu NCU.csv FIELD_BYTES   # ncu --csv --print-units base output

nsys: per kernel name (templates and parameters cut): launches, GPU time, share of the step's
span (first start to last end on the GPU), and the GPU's idle time inside the span (launch gaps,
host waits). ncu: per launch: time, DRAM bytes read / written, GB/s and "arrays" = DRAM bytes /
FIELD_BYTES (one field of the rank's box), the unit of the traffic model; where the log has them
(lts__t_sectors_srcunit_tex_op_read.sum / _lookup_miss.sum), the L2 read sectors the SMs
requested and those that missed, in fields too ("L2 rd", "miss").
"""
import csv
import io
import re
import sys
from collections import OrderedDict


def short(name, width=64):
    name = re.sub(r"^void ", "", name).replace("(anonymous namespace)::", "").replace("<unnamed>::", "")
    name = re.sub(r"\(.*$", "", name)  # parameters
    out, depth = "", 0
    for ch in name:  # cut template arguments
        if ch == "<":
            depth += 1
            if depth == 1:
                out += "<..>"
            continue
        if ch == ">":
            depth -= 1
            continue
        if depth == 0:
            out += ch
    out = out.replace("adi::cuda_backend::", "")
    full = name.replace("adi::cuda_backend::", "")
    if len(full) <= width:  # template arguments kept where they fit (reduce_kernel<double, true, true>)
        return full
    return out if len(out) <= width else out[: width - 3] + "..."


def table_from(text, key):
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if key in l:
            return list(csv.DictReader(io.StringIO("\n".join(lines[i:]))))
    return []


def nsys(path):
    rows = table_from(open(path, errors="replace").read(), "Start (ns)")
    if not rows:
        print("nsys: no GPU trace rows in %s (capture range empty or nsys failed)" % path)
        return
    ev = []
    for r in rows:
        try:
            s, d = float(r["Start (ns)"]), float(r["Duration (ns)"])
        except (KeyError, ValueError):
            continue
        ev.append((s, d, short(r.get("Name", "?"))))
    ev.sort()
    t0, t1 = ev[0][0], max(s + d for s, d, _ in ev)
    busy, cur_s, cur_e = 0.0, None, None
    for s, d, _ in ev:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                busy += cur_e - cur_s
            cur_s, cur_e = s, s + d
        else:
            cur_e = max(cur_e, s + d)
    busy += cur_e - cur_s
    agg = OrderedDict()
    for s, d, n in ev:
        c = agg.setdefault(n, [0, 0.0, s])
        c[0] += 1
        c[1] += d
    span = t1 - t0
    print("%-64s %5s %10s %7s" % ("kernel / copy (in order of first start)", "count", "GPU us", "% span"))
    for n, (c, d, _) in agg.items():
        print("%-64s %5d %10.1f %6.1f%%" % (n[:64], c, d / 1e3, 100 * d / span))
    print("span (first start to last end) %.1f us; GPU busy %.1f us; GPU idle inside the span %.1f us (%.1f%%)"
          % (span / 1e3, busy / 1e3, (span - busy) / 1e3, 100 * (span - busy) / span))


def ncu(path, field_bytes):
    rows = table_from(open(path, errors="replace").read(), '"Metric Name"')
    if not rows:
        print("ncu: no metric rows in %s (no kernel matched, or counters not permitted: see ncu.log)" % path)
        return
    k = OrderedDict()
    for r in rows:
        e = k.setdefault(r["ID"], {"name": short(r["Kernel Name"], 56)})
        try:
            e[r["Metric Name"]] = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            pass
    ks = list(k.values())
    # Several profiled steps in one log: a new step starts where the first two kernels recur.
    starts = [0]
    for i in range(2, len(ks) - 1):
        if ks[i]["name"] == ks[0]["name"] and ks[i + 1]["name"] == ks[1]["name"]:
            starts.append(i)
    starts.append(len(ks))
    l2 = any("lts__t_sectors_srcunit_tex_op_read.sum" in e for e in ks)
    for j in range(len(starts) - 1):
        print("%-50s %3s %9s %9s %9s %6s %6s%s" % ("step %d: kernel (launches summed by name)" % (j + 1), "n", "us",
                                                  "MB read", "MB write", "GB/s", "arrays",
                                                  " %6s %6s" % ("L2 rd", "miss") if l2 else ""))
        agg = OrderedDict()
        for e in ks[starts[j]:starts[j + 1]]:
            a = agg.setdefault(e["name"], [0, 0.0, 0.0, 0.0, 0.0, 0.0])
            a[0] += 1
            a[1] += e.get("gpu__time_duration.sum", 0.0)
            a[2] += e.get("dram__bytes_read.sum", 0.0)
            a[3] += e.get("dram__bytes_write.sum", 0.0)
            a[4] += 32.0 * e.get("lts__t_sectors_srcunit_tex_op_read.sum", 0.0)
            a[5] += 32.0 * e.get("lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", 0.0)
        tt = tb = 0.0
        for name, (c, t, r, w, lr, lm) in agg.items():
            tt += t
            tb += r + w
            print("%-50s %3d %9.1f %9.1f %9.1f %6.0f %6.2f%s" % (name[:50], c, t / 1e3, r / 1e6, w / 1e6,
                                                              (r + w) / t if t else 0, (r + w) / field_bytes,
                                                              " %6.2f %6.2f" % (lr / field_bytes, lm / field_bytes)
                                                              if l2 else ""))
        print("%-50s %3s %9.1f %19.1f %6.0f %6.2f" % ("step %d sum (kernels serialised by ncu)" % (j + 1), "",
                                                    tt / 1e3, tb / 1e6, tb / tt if tt else 0, tb / field_bytes))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] in ("nsys", "ncu"):
        try:
            open(sys.argv[2]).close()
        except OSError:
            sys.exit("%s: no %s (the profiler did not run or wrote nothing: see profile.log)" % (sys.argv[1], sys.argv[2]))
    if len(sys.argv) >= 3 and sys.argv[1] == "nsys":
        nsys(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "ncu":
        ncu(sys.argv[2], float(sys.argv[3]))
    else:
        sys.exit(__doc__)
