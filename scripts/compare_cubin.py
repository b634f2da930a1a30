#!/usr/bin/env python3
"""Machine code of every CUDA kernel, base against this tree, without a GPU or a disassembler.

Compiles each named solvers/cuda/<tu>.cu of .base/ (scripts/export_base.sh REV) and of this
tree to an sm_90 cubin with the library's flags and compares each kernel's .text section:
its length in instructions, whether it is byte-identical to the base, and otherwise the
counts of the opcodes that changed (the low 9 bits of each 128-bit sm_90 instruction name
the operation; the few named below were matched by hand, others print as hex). Byte-identical
code is the strongest evidence that a refactoring kept a kernel's speed, where cuobjdump /
nvdisasm are not installed (scripts/compare_ptxas.py compares only registers and spills).

    scripts/export_base.sh a517daf
    scripts/compare_cubin.py thomas_variable thomas_variable_fp64 [--only contiguous]
    scripts/compare_cubin.py block_thomas_float_m5 block_thomas_double_m5   # generated units too (one M each)
    scripts/compare_cubin.py group_fused_stage   # a group unit (CMakeLists.txt) against its members compiled alone
    scripts/compare_cubin.py group_small=group_small+group_cholesky+option_chain   # regrouped units (stop 34)
    ADI_CUBIN_FLAGS=-DADI_CUDA_UNROLL_ALL=1 scripts/compare_cubin.py partition_local_passes   # extra nvcc flags, both trees
    scripts/compare_cubin.py --builds /tmp/base-build /tmp/new-build
        # every kernel of two whole builds of adi_cuda (e.g. scripts/cuda_compile_time.sh's), from
        # the sm_90 cubins embedded in their objects (the real flags; fatbins zstd-compressed by
        # nvcc 13 need the zstd program), matched by name whatever unit holds them; no .base/
    scripts/compare_cubin.py block_thomas_float_m2_3_4_5_6_7_8=block_thomas_float_m2_3_4_5+block_thomas_float_m6+block_thomas_float_m7+block_thomas_float_m8
                                           # NEW=BASE1+BASE2+...: one unit of this tree against several of the base
    scripts/compare_cubin.py --list /tmp/build [N]
        # where a build's machine code is: per unit its kernels and sm_90 instructions, the N
        # largest kernels of each (default 8); the instructions go roughly with cicc + ptxas time
"""
import collections, os, re, struct, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
nvcc = os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc")
OPS = {0x181: "LDG", 0x186: "STG", 0x182: "LDC", 0x023: "FFMA", 0x020: "FMUL", 0x021: "FADD", 0x108: "MUFU",
       0x147: "BRA", 0x00c: "ISETP", 0x00b: "FSETP", 0x008: "FSEL", 0x02b: "DFMA", 0x028: "DMUL", 0x029: "DADD",
       0x02a: "DSETP", 0x14d: "EXIT", 0x118: "NOP", 0x002: "MOV", 0x024: "IMAD", 0x025: "IMAD.WIDE",
       0x010: "IADD3", 0x011: "LEA", 0x007: "SEL", 0x012: "LOP3", 0x019: "SHF", 0x145: "BSSY", 0x141: "BSYNC"}


def source(src_root, tu, work):
    """solvers/cuda/<tu>.cu, or a unit CMake generates from solvers/cuda/instances/<family>_m.cu.in
    (tu = <family>_<float|double>_m<M>[_<M>...], e.g. block_thomas_float_m6 or
    block_thomas_float_m2_3_4_5; M = 0: the rolled block partition passes), written into work.
    Templates before stop 31 take one M (@ADI_M@), later ones a list (@ADI_INSTANCES@)."""
    if tu.endswith(".cu"):  # a written group unit
        return tu
    path = os.path.join(src_root, "solvers/cuda", tu + ".cu")
    m = re.fullmatch(r"(\w+?)_(float|double)_m(\d+(?:_\d+)*)", tu)
    if os.path.exists(path) or not m:
        return path
    sizes = m.group(3).split("_")
    text = open(os.path.join(src_root, "solvers/cuda/instances", m.group(1) + "_m.cu.in")).read()
    path = os.path.join(work, tu + ".cu")
    text = text.replace("@ADI_T@", m.group(2)).replace("@ADI_M@", sizes[0])
    open(path, "w").write(text.replace("@ADI_INSTANCES@", "\n".join("ADI_INSTANCE(%s)" % x for x in sizes)))
    return path


def group_members(tu, src_root=root):
    """The members of a group unit group_<name> (CMakeLists.txt's _adi_cuda_groups of src_root)."""
    text = open(os.path.join(src_root, "CMakeLists.txt")).read()
    m = re.search(r'"%s:([\w.,]+)"' % re.escape(tu[len("group_"):]), text)
    return m.group(1).split(",") if m else []


def anon(name):
    """The name with each anonymous namespace (its length prefix and identifier, which name the
    unit and may end in a counter: _GLOBAL__N__<hash>_<len>_<unit>_cu_<hash>[_<n>]) as ANON."""
    out, i = "", 0
    for m in re.finditer(r"(\d+)_GLOBAL__N__", name):
        if m.start() < i:
            continue
        digits, at = m.group(1), m.start(1) + len(m.group(1))
        for k in range(len(digits)):  # the length prefix may follow digits of the previous name
            n = int(digits[k:])
            if re.fullmatch(r"_GLOBAL__N__[0-9a-f]{8}_\d+_\w+_cu_[0-9a-f]{8}(_\d+)?", name[at:at + n]):
                out += name[i:m.start(1) + k] + "ANON"
                i = at + n
                break
    return out + name[i:]


def kernels(src_root, tu, work):
    if tu.startswith("group_") and not os.path.exists(os.path.join(src_root, "solvers/cuda", tu + ".cu")):
        # A group unit (stop 32): a tree with the group compiles one unit that includes its members
        # (as its own CMakeLists.txt lists them: a group's members may differ between trees);
        # a tree without the group compiles this tree's members alone, compared as one set.
        members = group_members(tu, src_root) or group_members(tu)
        members = [x for x in members if os.path.exists(os.path.join(src_root, "solvers/cuda", x))]
        if not group_members(tu, src_root):
            out = {}
            for x in members:
                out.update(kernels(src_root, x[:-3], work))
            return out
        path = os.path.join(work, os.path.basename(src_root) + "_" + tu + ".cu")
        open(path, "w").write("".join('#include "solvers/cuda/%s"\n' % x for x in members))
        tu = path
    cubin = os.path.join(work, os.path.basename(src_root) + "_" + os.path.basename(tu) + ".cubin")
    extra = os.environ.get("ADI_CUBIN_FLAGS", "").split()  # e.g. -DADI_CUDA_UNROLL_ALL=1 (both trees)
    subprocess.run([nvcc, "-DADI_HAVE_CUDA=1", "-I" + src_root, "-O3", "-DNDEBUG", "-arch=sm_90", "-std=c++17",
                    "--expt-relaxed-constexpr", *extra, "-cubin", source(src_root, tu, work), "-o", cubin], check=True)
    return cubin_sections(open(cubin, "rb").read())


def cubin_sections(d):
    """{kernel name: .text bytes} of one sm_90 cubin (an ELF image)."""
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = secs[shstrndx][4]
    out = {}
    for s in secs:
        name = d[names + s[0]:d.index(b"\0", names + s[0])].decode()
        if name.startswith(".text."):
            out[anon(name[6:])] = d[s[4]:s[4] + s[5]]
    return out


def object_cubins(obj):
    """The cubins (ELF entries) of an object's .nv_fatbin section (fatbin: 16-byte header, then
    entries of kind 1 = PTX, 2 = ELF, each with its own header: kind, header and payload sizes,
    the compressed size where nvcc compressed the payload)."""
    d = subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", obj, "/dev/stdout"],
                       capture_output=True, check=True).stdout
    out, pos = [], 0
    while pos + 16 <= len(d):
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", d, pos)
        if magic != 0xBA55ED50:
            break
        off = pos + hsize
        while off < pos + hsize + fsize:
            kind, _, ehsize, size, packed = struct.unpack_from("<HHIQQ", d, off)
            payload = d[off + ehsize:off + ehsize + size]
            if kind == 2:
                if payload[:4] == b"\x28\xb5\x2f\xfd":  # a zstd frame of `packed` bytes, then padding
                    payload = subprocess.run(["zstd", "-dc"], input=payload[:packed], capture_output=True,
                                             check=True).stdout
                out.append(payload)
            off += ehsize + size
        pos += hsize + fsize
    return out


def build_kernels(build):
    """{kernel: (object, .text)} of every object of adi_cuda in a build folder."""
    out = {}
    for dirpath, _, files in os.walk(os.path.join(build, "CMakeFiles", "adi_cuda.dir")):
        for f in files:
            if f.endswith(".o"):
                for cubin in object_cubins(os.path.join(dirpath, f)):
                    for k, code in cubin_sections(cubin).items():
                        unit = f[:-len(".cu.o")]
                        if k in out:  # the same name in two units (each compiles its own copy)
                            print(f"note: {k[:100]} in {out[k][0]} and {unit}")
                            k += " (" + unit + ")"
                        out[k] = (unit, code)
    return out


def compare_builds(base_build, new_build):
    b, n = build_kernels(base_build), build_kernels(new_build)
    same = [k for k in b if k in n and b[k][1] == n[k][1]]
    print(f"{base_build}: {len(b)} kernels in {len({v[0] for v in b.values()})} units; "
          f"{new_build}: {len(n)} in {len({v[0] for v in n.values()})}")
    for k in sorted(set(b) | set(n)):
        if k in b and k in n and b[k][1] == n[k][1]:
            continue
        where = "only base" if k not in n else "only new" if k not in b else "differs"
        bk, nk = b.get(k, ("", b""))[1], n.get(k, ("", b""))[1]
        print(f"   {where}: {k[:110]}\n      instructions {len(bk) // 16} -> {len(nk) // 16}")
    print(f"kernels with byte-identical machine code: {len(same)} of {len(set(b) | set(n))}")


def list_build(build, top):
    by = collections.defaultdict(list)
    for k, (unit, code) in build_kernels(build).items():
        by[unit].append((len(code) // 16, k))
    total = sum(n for v in by.values() for n, _ in v)
    for unit, v in sorted(by.items(), key=lambda x: -sum(n for n, _ in x[1])):
        print(f"{unit}: {len(v)} kernels, {sum(n for n, _ in v)} instructions")
        for n, k in sorted(v, reverse=True)[:top]:
            print(f"   {n:7d}  {k[:140]}")
    print(f"total: {sum(len(v) for v in by.values())} kernels, {total} instructions in {len(by)} units")


def opcodes(code):
    c = collections.Counter()
    for i in range(0, len(code), 16):
        w, = struct.unpack_from("<Q", code, i)
        c[OPS.get(w & 0x1FF, hex(w & 0x1FF))] += 1
    return c


def main():
    args = sys.argv[1:]
    if args[:1] == ["--builds"] and len(args) == 3:
        return compare_builds(args[1], args[2])
    if args[:1] == ["--list"] and len(args) in (2, 3):
        return list_build(args[1], int(args[2]) if len(args) == 3 else 8)
    only = ""
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    base = os.path.join(root, ".base")
    if not os.path.isdir(base) or not args:
        sys.exit(__doc__)
    same_all = total = 0
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(os.path.join(work, "b")), os.makedirs(os.path.join(work, "n"))
        for tu in args:
            tu, _, parts = tu.partition("=")  # NEW=BASE1+BASE2: the base's kernels from other units
            b = {}
            for x in (parts.split("+") if parts else [tu]):
                b.update(kernels(base, x, os.path.join(work, "b")))
            n = kernels(root, tu, os.path.join(work, "n"))
            print(f"{tu}: {len(b)} kernels (base), {len(n)} (new)")
            for k in sorted(set(b) | set(n)):
                if only not in k:
                    continue
                bk, nk = b.get(k, b""), n.get(k, b"")
                total += 1
                same_all += bk == nk
                verdict = "identical" if bk == nk else "differs"
                print(f"   {k[:110]}\n      instructions {len(bk) // 16} -> {len(nk) // 16}: {verdict}")
                if bk != nk:
                    hb, hn = opcodes(bk), opcodes(nk)
                    print("      " + ", ".join(f"{o} {hb[o]}->{hn[o]}" for o in sorted(set(hb) | set(hn), key=str)
                                              if hb[o] != hn[o]))
    print(f"kernels with byte-identical machine code: {same_all} of {total}")


if __name__ == "__main__":
    main()
