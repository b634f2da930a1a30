#!/usr/bin/env python3
"""Issue 18's rows, after against before in one run (tests/mpi/gpu_step_check.sh).

  step_before_after.py HEAT.log PUBLIC.log [TAG [default]]

HEAT.log: bench_mpi_heat's weak and strong runs with rows "z" (the default) and "z TAG" (TAG,
default "no-l2": the same case with the switch off, same run); PUBLIC.log: bench_mpi_tridiagonal's
allgather / nccl rows, the default run's and, if there is one, a later run's (e.g. given
--no-l2: "before"; without it the public case is unchanged by the switch: "(same)").
Prints one markdown table: weak per-GPU efficiency and ms per split, strong speed-ups, public ms.
"default" after TAG: the TAG rows are the default form and the untagged rows the form with its
switch off (TAG "spike": bench_mpi_heat --spike both labels the SPIKE rows, the default since
stop 33, "z spike" and the partition passes', --spike off, "z"): the default's column first.
"""
import re
import sys


def heat_blocks(text):
    """[(strong?, {split: (ms, per_gpu_eff)}, ref_ms)] per bench_mpi_heat output."""
    out = []
    for block in re.split(r"(?m)^bench_mpi_heat: ", text)[1:]:
        strong = "strong scaling" in block.splitlines()[0]
        rows, ref = {}, None
        for line in block.splitlines():
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) < 16 or not c[0].isdigit():
                continue
            ms, eff = float(c[3]), c[14]
            if c[1] == "-":
                ref = ms
            else:
                rows[c[1]] = (ms, eff)
        out.append((strong, rows, ref))
    return out


def public_rows(text):
    """ms/solve of the 2-rank device allgather / nccl rows, in order of appearance."""
    ms = []
    for line in text.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) > 5 and c[0] == "2" and c[1] == "device" and c[2].split()[:1] == ["allgather"] and c[3] == "nccl":
            try:
                ms.append(float(c[4]))
            except ValueError:
                pass
    return ms


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    heat = open(sys.argv[1], errors="replace").read()
    pub = open(sys.argv[2], errors="replace").read()
    tag = sys.argv[3] if len(sys.argv) > 3 else "no-l2"
    weak = strong = None
    for s, rows, ref in heat_blocks(heat):
        if s and strong is None:
            strong = (rows, ref)
        elif not s and weak is None:
            weak = (rows, ref)

    def cell(block, split, kind):
        if not block or not block[1] or split not in block[0]:
            return "-"
        ms, eff = block[0][split]
        return ("%s (%.3f ms)" % (eff, ms)) if kind == "weak" else ("%.2fx (%.3f ms)" % (block[1] / ms, ms))

    # the suffixes of the first and the second column's rows
    if len(sys.argv) > 4 and sys.argv[4] == "default":
        first, second = " " + tag, ""
        print("| 2 GPUs, one rank each | default (the '<split> %s' rows) | %s off (the '<split>' rows, same run) | target |"
              % (tag, tag))
    else:
        first, second = "", " " + tag
        print("| 2 GPUs, one rank each | after (default) | before (%s, same run) | target |" % tag)
    print("|---|---|---|---|")
    ref = ("%.3f ms" % weak[1]) if weak and weak[1] else "-"
    print("| heat step 1 GPU, 512^3 | %s | (same) | |" % ref)
    for sp, tgt in (("z", "90%"), ("y", "90%"), ("x", "85%")):
        print("| weak %s, per-GPU eff. | %s | %s | %s |" % (sp, cell(weak, sp + first, "weak"), cell(weak, sp + second, "weak"), tgt))
    ref = ("%.3f ms" % strong[1]) if strong and strong[1] else "-"
    print("| strong 512^3, 1 GPU | %s | (same) | |" % ref)
    for sp in ("z", "y", "x"):
        print("| strong %s, speed-up | %s | %s | 1.8x |" % (sp, cell(strong, sp + first, "strong"), cell(strong, sp + second, "strong")))
    if weak and any(k.endswith(" sep.fold") for k in weak[0]):
        for sp in ("z", "y", "x"):
            print("| weak %s, explicit fold as built / forced separate | %s | %s | |"
                  % (sp, cell(weak, sp, "weak"), cell(weak, sp + " sep.fold", "weak")))
    ms = public_rows(pub)
    after = "%.3f ms" % ms[0] if ms else "-"
    before = "%.3f ms" % ms[-1] if len(ms) > 1 else "(same)" if ms else "-"
    print("| public 128x128x4096 fp64, allgather + NCCL | %s | %s | 0.6 ms |" % (after, before))
    return 0


if __name__ == "__main__":
    sys.exit(main())
