#!/usr/bin/env python3
"""Registers, stack and spills of every CUDA kernel, base against this tree, without a GPU.

Compiles each named solvers/cuda/<tu>.cu of .base/ (scripts/export_base.sh REV) and of this
tree to PTX for sm_90 with the library's flags, assembles both with `ptxas -v`, and prints
the kernels whose resources differ. Same registers, stack and spills is the first check that
a refactoring kept the generated code (the GPU benchmarks, scripts/gpu_compare.sh, are the
second).

    scripts/export_base.sh main
    scripts/compare_ptxas.py tridiagonal_cuda tridiagonal_cuda_fp64 thomas_pcr_fused_stage ...
"""
import os, re, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
nvcc = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")


def resources(src_root, tu, work):
    ptx = os.path.join(work, os.path.basename(src_root) + "_" + tu + ".ptx")
    subprocess.run([nvcc, "-DADI_HAVE_CUDA=1", "-I" + src_root, "-O3", "-DNDEBUG", "-arch=sm_90", "-std=c++17",
                    "--expt-relaxed-constexpr", "-ptx", os.path.join(src_root, "solvers/cuda", tu + ".cu"), "-o", ptx],
                   check=True)
    log = subprocess.run([ptxas, "-arch=sm_90", "-O3", "-v", ptx, "-o", ptx + ".cubin"], check=True,
                         capture_output=True, text=True).stderr
    out, cur = {}, None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            # anonymous namespaces carry a per-path hash: drop it so base and new match
            cur = re.sub(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+", "ANON", m.group(1))
            out[cur] = {}
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur:
            out[cur].update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            out[cur]["regs"] = int(m.group(1))
    return out


def main():
    base = os.path.join(root, ".base")
    if not os.path.isdir(base):
        sys.exit("compare_ptxas.py: no .base/ (run scripts/export_base.sh REV first)")
    same_all = 0
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "b")), os.makedirs(os.path.join(work, "n"))
        for tu in sys.argv[1:]:
            b = resources(base, tu, os.path.join(work, "b"))
            n = resources(root, tu, os.path.join(work, "n"))
            same = [k for k in b if b[k] == n.get(k)]
            same_all += len(same)
            print(f"{tu}: {len(b)} kernels (base), {len(n)} (new); same registers/stack/spills: {len(same)}")
            for k in sorted(set(b) | set(n)):
                if b.get(k) != n.get(k):
                    print(f"   {k[:100]}: {b.get(k)} -> {n.get(k)}")
    print(f"kernels with the same resources: {same_all}")


if __name__ == "__main__":
    main()
