#!/usr/bin/env python3
"""adi.solve_tridiagonal from Python against the C++ call and the Python peers, on an n^3 box
(default 256^3) along each axis, fp32 and fp64, full bands (a, b, c shaped like d).

    bench_solve_tridiagonal.py [--cpu] [--gpu] [--overhead] [--n 256] [--reps 20] [--warmup 3]
                               [--dtypes float32,float64] [--scipy-lines 1024] [--json FILE]

--overhead: the per-call cost of the Python call alone, on small boxes where the solve is
cheap: adi.solve_tridiagonal with out= and without, a TridiagonalPlan's solve, against the
C++ call timed the same way (TridiagonalPlan.time(each=True): one solve between two
synchronisations) and back to back (a C++ loop), on NumPy arrays and, with --gpu, CuPy and
PyTorch ones (runs with the part(s) chosen; on by default).

CPU (NumPy arrays): adi.solve_tridiagonal (out= given: the C++ fast path), the C++ call
itself (TridiagonalPlan.time(each=True): the median of single C++ solves, no Python, timed
like adi's calls; the mean of a C++ loop is inflated by preemption on a loaded machine), a NumPy-vectorised
Thomas (one Python step per row, vector operations across the lines) and a loop of
scipy.linalg.solve_banded over the lines (timed on --scipy-lines lines and scaled to all of
them). % copy: bytes the solve must move (read a, b, c, d; write u: 5 arrays) per second,
against np.copyto of one array (read + write).

GPU (CuPy and PyTorch arrays, when present), two ways, each against the C++ call timed the
same way: one call (synchronise, start the host clock, call, synchronise the stream, stop:
the latency a caller sees, Python included) against TridiagonalPlan.time(each=True), and
back to back (CUDA events around a loop of calls: the launch overlapped) against
TridiagonalPlan.time (a C++ loop). Peers, back to back like adi's loop (and one call each,
in the JSON): jax.lax.linalg.tridiagonal_solve (jit, the moveaxis to the last axis it needs
inside; host clock around calls dispatched back to back and one block_until_ready); cuSPARSE
gtsv2StridedBatch through CuPy's binding (lines along the last axis; other axes pay the
transposes a caller would) and gtsvInterleavedBatch on axis 0 (whose lines are
interleaved), CUDA events around a loop of calls. % copy for adi and for each peer: the minimum
traffic of a solve (a, b, c, d read, u written: 5 arrays) per second against a CuPy copy
of one array (read + write) measured in the same run; a peer above 33% of the copy
bandwidth cannot be beaten 3x by any solver that moves the same 5 arrays, which the table
says. Pivot checks off everywhere (cuSPARSE and JAX check nothing either), as in
bench_cuda_tridiagonal. Medians of --reps runs after --warmup.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

# JAX otherwise takes 75% of the GPU's memory when first used, starving CuPy and PyTorch.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

try:
    import adi
except ImportError as e:  # pragma: no cover
    sys.exit(f"bench_solve_tridiagonal: cannot import adi ({e}); pip install ./python or set PYTHONPATH=<build>/python")


def median_wall(f: Callable[[], Any], reps: int, warmup: int, sync: Callable[[], None] = lambda: None) -> float:
    for _ in range(warmup):
        f()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def problem(shape, dtype, seed=1):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape).astype(dtype)
    c = rng.uniform(-1, 1, shape).astype(dtype)
    b = rng.uniform(2.5, 4.0, shape).astype(dtype)
    d = rng.standard_normal(shape).astype(dtype)
    return a, b, c, d


def thomas_numpy(a, b, c, d, axis):
    """The NumPy-vectorised Thomas algorithm: rows one at a time, all lines at once."""
    a, b, c, d = (np.moveaxis(x, axis, 0) for x in (a, b, c, d))
    n = d.shape[0]
    cp = np.empty_like(d)
    dp = np.empty_like(d)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = 1.0 / (b[i] - a[i] * cp[i - 1])
        cp[i] = c[i] * m
        dp[i] = (d[i] - a[i] * dp[i - 1]) * m
    u = dp
    for i in range(n - 2, -1, -1):
        u[i] -= cp[i] * u[i + 1]
    return np.moveaxis(u, 0, axis)


def scipy_loop(a, b, c, d, axis, lines):
    """solve_banded per line over the first `lines` lines; returns seconds per line."""
    from scipy.linalg import solve_banded

    A, B, C, D = (np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis]) for x in (a, b, c, d))
    n = D.shape[1]
    ab = np.empty((3, n), dtype=D.dtype)
    t0 = time.perf_counter()
    for l in range(lines):
        ab[0, 1:] = C[l, :-1]
        ab[1] = B[l]
        ab[2, :-1] = A[l, 1:]
        solve_banded((1, 1), ab, D[l], check_finite=False)
    return (time.perf_counter() - t0) / lines


def fmt(x: Optional[float], unit: float = 1e3, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x * unit:.{digits}g}"


def pct(seconds: Optional[float], nbytes: int, copy_gbs: float) -> str:
    if not seconds:
        return "n/a"
    return f"{100.0 * nbytes / seconds / 1e9 / copy_gbs:.0f}%"


# --- CPU ----------------------------------------------------------------------------------

def run_cpu(args, results: List[Dict[str, Any]]) -> None:
    n = args.n
    shape = (n, n, n)
    print(f"\n== CPU: adi.solve_tridiagonal on NumPy {n}^3, full bands; medians of {args.reps} after "
          f"{args.warmup} warm-up ==")
    src = np.ones(shape, np.float64)
    dst = np.empty_like(src)
    t_copy = median_wall(lambda: np.copyto(dst, src), args.reps, args.warmup)
    copy_gbs = 2 * src.nbytes / t_copy / 1e9
    print(f"copy bandwidth (np.copyto, read + write): {copy_gbs:.1f} GB/s")
    try:
        import scipy  # noqa: F401

        have_scipy = True
    except ImportError:
        have_scipy = False
    print("| dtype | axis | adi ms | % copy | C++ call ms | adi / C++ | NumPy Thomas ms | SciPy solve_banded loop ms "
          "| best peer / adi |")
    print("|---|---|---|---|---|---|---|---|---|")
    for dtype in args.dtypes:
        a, b, c, d = problem(shape, dtype)
        u = np.empty_like(d)
        nbytes = 5 * d.nbytes
        for axis in (0, 1, 2):
            t_adi = median_wall(lambda: adi.solve_tridiagonal(a, b, c, d, axis=axis, out=u, check_pivots=False),
                                args.reps, args.warmup)
            plan = adi.TridiagonalPlan(shape, dtype, axis=axis, check_pivots=False)
            t_cpp = plan.time(a, b, c, d, u, repeats=args.reps, each=True)  # a median of single calls, like adi's
            ref = thomas_numpy(a, b, c, d, axis)
            err = float(np.abs(ref - u).max() / np.abs(ref).max())
            t_np = median_wall(lambda: thomas_numpy(a, b, c, d, axis), max(3, args.reps // 4), 1)
            t_sp = None
            if have_scipy:
                per_line = scipy_loop(a, b, c, d, axis, min(args.scipy_lines, n * n))
                t_sp = per_line * n * n
            peers = [t for t in (t_np, t_sp) if t]
            best = min(peers)
            name = f"| {np.dtype(dtype).name} | {'zyx'[axis]} (axis {axis})"
            print(f"{name} | {fmt(t_adi)} | {pct(t_adi, nbytes, copy_gbs)} "
                  f"| {fmt(t_cpp)} | {t_adi / t_cpp:.2f} | {fmt(t_np)} | {fmt(t_sp)} | {best / t_adi:.1f}x |")
            results.append(dict(device="cpu", dtype=np.dtype(dtype).name, axis=axis, adi=t_adi, cpp=t_cpp,
                                numpy_thomas=t_np, scipy_loop=t_sp, copy_gbs=copy_gbs, max_rel_diff=err))
    if have_scipy:
        print(f"(SciPy: solve_banded per line timed on {min(args.scipy_lines, n * n)} lines, scaled to {n * n}.)")
    else:
        print("(SciPy not installed: no solve_banded column.)")
    worst = max(abs(r["max_rel_diff"]) for r in results if r["device"] == "cpu")
    print(f"largest relative difference adi vs NumPy Thomas: {worst:.1e}")


# --- GPU ----------------------------------------------------------------------------------

def cuda_events_median(lib: str, f: Callable[[], Any], reps: int, warmup: int) -> float:
    """Median GPU time of f() between events recorded on the current stream (seconds)."""
    if lib == "cupy":
        import cupy as cp

        for _ in range(warmup):
            f()
        cp.cuda.get_current_stream().synchronize()
        times = []
        for _ in range(reps):
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            e0.record()
            f()
            e1.record()
            e1.synchronize()
            times.append(cp.cuda.get_elapsed_time(e0, e1) * 1e-3)
        return statistics.median(times)
    import torch

    for _ in range(warmup):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        f()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3)
    return statistics.median(times)


def cupy_loop_time(f: Callable[[], Any], reps: int) -> float:
    """GPU time per call of `reps` back-to-back calls (Python launch overlapped with the GPU)."""
    import cupy as cp

    f()
    cp.cuda.get_current_stream().synchronize()
    e0, e1 = cp.cuda.Event(), cp.cuda.Event()
    e0.record()
    for _ in range(reps):
        f()
    e1.record()
    e1.synchronize()
    return cp.cuda.get_elapsed_time(e0, e1) * 1e-3 / reps


def cusparse_peer(cp, a, b, c, d, u, axis):
    """A function running cuSPARSE's batched gtsv on the box (None, reason when unavailable)."""
    try:
        from cupy_backends.cuda.libs import cusparse as cs
        from cupy.cuda import device as cdev
    except ImportError as e:
        return None, f"no CuPy cuSPARSE binding ({e})"
    handle = cdev.get_cusparse_handle()
    prefix = "s" if a.dtype == np.float32 else "d"
    n = d.shape[axis]
    batch = d.size // n
    if axis == 0 and hasattr(cs, prefix + "gtsvInterleavedBatch"):
        size = getattr(cs, prefix + "gtsvInterleavedBatch_bufferSizeExt")
        solve = getattr(cs, prefix + "gtsvInterleavedBatch")
        # interleaved: element k of system s at k*batch + s, as axis 0 of a C-ordered box
        dl, dd, du = (x.copy() for x in (a, b, c))  # the algorithm overwrites the bands
        buf = cp.empty(size(handle, 0, n, dl.data.ptr, dd.data.ptr, du.data.ptr, u.data.ptr, batch), np.uint8)

        def run():
            cs.setStream(handle, cp.cuda.get_current_stream().ptr)
            solve(handle, 0, n, dl.data.ptr, dd.data.ptr, du.data.ptr, u.data.ptr, batch, buf.data.ptr)
        return run, "gtsvInterleavedBatch (algo 0, in place on u)"
    if not hasattr(cs, prefix + "gtsv2StridedBatch"):
        return None, "CuPy has no gtsv2StridedBatch binding"
    size = getattr(cs, prefix + "gtsv2StridedBatch_bufferSizeExt")
    solve = getattr(cs, prefix + "gtsv2StridedBatch")
    last = axis == d.ndim - 1
    T = (lambda x: x) if last else (lambda x: cp.ascontiguousarray(cp.moveaxis(x, axis, -1)))
    probe = T(d)
    buf = cp.empty(size(handle, n, probe.data.ptr, probe.data.ptr, probe.data.ptr, probe.data.ptr, batch, n), np.uint8)

    def run():
        cs.setStream(handle, cp.cuda.get_current_stream().ptr)
        dl, dd, du = T(a), T(b), T(c)
        x = u if last else T(d)
        solve(handle, n, dl.data.ptr, dd.data.ptr, du.data.ptr, x.data.ptr, batch, n, buf.data.ptr)
        if not last:
            u[...] = cp.moveaxis(x, -1, axis)
    return run, "gtsv2StridedBatch" + ("" if last else " + transposes to and from the last axis")


def jax_peer(a, b, c, d, axis):
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        gpu = jax.devices("gpu")[0]
    except Exception as e:  # noqa: BLE001
        return None, f"JAX GPU unavailable ({type(e).__name__}: {e})"
    dl, dd, du, rhs = (jax.device_put(jnp.asarray(x), gpu) for x in (a, b, c, d))

    @jax.jit
    def f(dl, dd, du, rhs):
        m = lambda x: jnp.moveaxis(x, axis, -1)  # noqa: E731
        x = jax.lax.linalg.tridiagonal_solve(m(dl), m(dd), m(du), m(rhs)[..., None])[..., 0]
        return jnp.moveaxis(x, -1, axis)

    def run(reps=1):  # reps calls dispatched back to back, then one wait
        for _ in range(reps):
            x = f(dl, dd, du, rhs)
        x.block_until_ready()
    return run, "jax.lax.linalg.tridiagonal_solve (jit, moveaxis inside)"


def run_gpu(args, results: List[Dict[str, Any]]) -> None:
    if not adi.cuda_compiled():
        print("\n== GPU: skipped: this adi build has no CUDA ==")
        return
    if not adi.cuda_available():
        print("\n== GPU: skipped: no CUDA device ==")
        return
    try:
        import cupy as cp
    except ImportError:
        cp = None
    try:
        import torch

        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    if cp is None:
        print("\n== GPU: CuPy not installed: no copy bandwidth, CuPy rows or cuSPARSE peer ==")
    n = args.n
    shape = (n, n, n)
    print(f"\n== GPU: adi.solve_tridiagonal on {n}^3 device arrays, full bands, pivot checks off; medians of "
          f"{args.reps} after {args.warmup} warm-up ==")
    copy_gbs = float("nan")
    if cp is not None:
        src = cp.ones(shape, np.float64)
        dst = cp.empty_like(src)
        t_copy = cuda_events_median("cupy", lambda: cp.copyto(dst, src), args.reps, args.warmup)
        copy_gbs = 2 * src.nbytes / t_copy / 1e9
        print(f"copy bandwidth (CuPy copy, read + write): {copy_gbs:.0f} GB/s")
        del src, dst
    notes = set()
    rows = []
    for dtype in args.dtypes:
        ha, hb, hc, hd = problem(shape, dtype)
        nbytes = 5 * hd.nbytes  # the minimum traffic of a solve: a, b, c, d read, u written
        for axis in (0, 1, 2):
            row = dict(device="gpu", dtype=np.dtype(dtype).name, axis=axis, copy_gbs=copy_gbs, nbytes=nbytes)
            if cp is not None:
                ga, gb, gc, gd = (cp.asarray(x) for x in (ha, hb, hc, hd))
                gu = cp.empty_like(gd)
                call = lambda: adi.solve_tridiagonal(ga, gb, gc, gd, axis=axis, out=gu, check_pivots=False)  # noqa
                sync = cpp_wait("cupy")
                row["adi_cupy_one"] = one_call_median(call, sync, args.reps, args.warmup)
                row["adi_cupy_loop"] = cupy_loop_time(call, args.reps)
                row["adi_cupy_new_loop"] = cupy_loop_time(
                    lambda: adi.solve_tridiagonal(ga, gb, gc, gd, axis=axis, check_pivots=False), args.reps)
                plan = adi.TridiagonalPlan(shape, dtype, axis=axis, check_pivots=False, device="cuda")
                row["cpp_one"] = plan.time(ga, gb, gc, gd, gu, repeats=args.reps, each=True)
                row["cpp_loop"] = plan.time(ga, gb, gc, gd, gu, repeats=args.reps)
                row["kernel"] = plan.kernel
                try:
                    run, note = cusparse_peer(cp, ga, gb, gc, gd, cp.empty_like(gd), axis)
                except Exception as e:  # noqa: BLE001
                    run, note = None, f"setup failed: {type(e).__name__}: {e}"
                notes.add(f"cuSPARSE axis {axis}: {note}")
                if run is not None:
                    try:
                        row["cusparse_one"] = cuda_events_median("cupy", run, args.reps, args.warmup)
                        row["cusparse"] = cupy_loop_time(run, args.reps)
                    except Exception as e:  # noqa: BLE001
                        notes.add(f"cuSPARSE failed: {type(e).__name__}: {e}")
                del ga, gb, gc, gd, gu
                cp.get_default_memory_pool().free_all_blocks()
            if torch is not None:
                ta, tb, tc, td = (torch.from_numpy(x).cuda() for x in (ha, hb, hc, hd))
                tu = torch.empty_like(td)
                call = lambda: adi.solve_tridiagonal(ta, tb, tc, td, axis=axis, out=tu, check_pivots=False)  # noqa
                row["adi_torch_one"] = one_call_median(call, cpp_wait("torch"), args.reps,
                                                       args.warmup)
                if cp is None:
                    plan = adi.TridiagonalPlan(shape, dtype, axis=axis, check_pivots=False, device="cuda")
                    row["cpp_one"] = plan.time(ta, tb, tc, td, tu, repeats=args.reps, each=True)
                    row["cpp_loop"] = plan.time(ta, tb, tc, td, tu, repeats=args.reps)
                del ta, tb, tc, td, tu
                torch.cuda.empty_cache()
            run, note = jax_peer(ha, hb, hc, hd, axis)
            notes.add(f"JAX: {note}")
            if run is not None:
                try:
                    row["jax_one"] = median_wall(run, args.reps, args.warmup)
                    run(args.warmup)
                    t0 = time.perf_counter()
                    run(args.reps)
                    row["jax"] = (time.perf_counter() - t0) / args.reps
                except Exception as e:  # noqa: BLE001
                    notes.add(f"JAX failed: {type(e).__name__}: {e}")
            rows.append(row)
            results.append(row)
    g = lambda r, k: r.get(k)  # noqa: E731

    def ratio(x, y):
        return f"{x / y:.2f}" if x and y else "n/a"

    print("\n-- adi against the C++ call, timed the same way (target: ratio <= 1.10) --")
    print("| dtype | axis | kernel | adi CuPy 1 call ms | C++ 1 call ms | ratio | adi PyTorch 1 call ms | ratio "
          "| adi CuPy loop ms | C++ loop ms | ratio | adi CuPy out=None loop ms | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dtype']} | {'zyx'[r['axis']]} (axis {r['axis']}) | {r.get('kernel', 'n/a')} "
              f"| {fmt(g(r, 'adi_cupy_one'))} | {fmt(g(r, 'cpp_one'))} | {ratio(g(r, 'adi_cupy_one'), g(r, 'cpp_one'))} "
              f"| {fmt(g(r, 'adi_torch_one'))} | {ratio(g(r, 'adi_torch_one'), g(r, 'cpp_one'))} "
              f"| {fmt(g(r, 'adi_cupy_loop'))} | {fmt(g(r, 'cpp_loop'))} "
              f"| {ratio(g(r, 'adi_cupy_loop'), g(r, 'cpp_loop'))} "
              f"| {fmt(g(r, 'adi_cupy_new_loop'))} | {ratio(g(r, 'adi_cupy_new_loop'), g(r, 'cpp_loop'))} |")
    print(f"\n-- adi against the Python peers, each back to back (calls queued, one wait; one call each in "
          f"the JSON); % copy = 5 arrays (5 x n^3 values: a, b, c, d read, u written) per second against the "
          f"copy bandwidth ({copy_gbs:.0f} GB/s, this run) --")
    print("| dtype | axis | adi CuPy ms | adi % copy | JAX ms | JAX % copy | cuSPARSE ms | cuSPARSE % copy "
          "| best peer / adi | best peer's % copy | 3x reachable (peer < 33%) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        nb = r["nbytes"]
        adi_t = g(r, "adi_cupy_loop") or g(r, "adi_torch_one")
        peers = [t for t in (g(r, "jax"), g(r, "cusparse")) if t]
        best = min(peers) if peers else None
        speed = f"{best / adi_t:.1f}x" if best and adi_t else "n/a"
        best_pct = 100.0 * nb / best / 1e9 / copy_gbs if best and copy_gbs == copy_gbs else None
        reach = "n/a" if best_pct is None else ("yes" if best_pct < 100.0 / 3 else "no")
        print(f"| {r['dtype']} | {'zyx'[r['axis']]} (axis {r['axis']}) | {fmt(adi_t)} | {pct(adi_t, nb, copy_gbs)} "
              f"| {fmt(g(r, 'jax'))} | {pct(g(r, 'jax'), nb, copy_gbs)} | {fmt(g(r, 'cusparse'))} "
              f"| {pct(g(r, 'cusparse'), nb, copy_gbs)} | {speed} "
              f"| {'n/a' if best_pct is None else f'{best_pct:.0f}%'} | {reach} |")
        r["best_peer_pct_copy"] = best_pct
    for note in sorted(notes):
        print(f"  {note}")
    print("Targets: adi within 10% of the C++ call timed the same way (ratio <= 1.10); >= 3x the best Python "
          "peer, reachable only where that peer moves its 5 arrays at < 33% of the copy bandwidth.")


def cpp_wait(lib: str) -> Callable[[], None]:
    """A wait for the library's current stream made in C++ (cudaStreamSynchronize, the GIL
    released): the same wait TridiagonalPlan.time(each=True) makes after the C++ call, so that
    one timed Python call and one timed C++ call differ only by the call (CuPy's and PyTorch's
    own synchronize wrappers differ from each other by microseconds of Python)."""
    from adi import _core

    if lib == "cupy":
        import cupy as cp

        s = cp.cuda.get_current_stream()
        return _core.StreamWait(cp.cuda.Device().id, s.ptr)
    import torch

    dev = torch.cuda.current_device()
    return _core.StreamWait(dev, torch.cuda.current_stream(dev).cuda_stream)


def one_call_median(f: Callable[[], Any], sync: Callable[[], None], reps: int, warmup: int) -> float:
    """Median host time of one call between two stream synchronisations (seconds): what
    TridiagonalPlan.time(each=True) measures of the C++ call."""
    for _ in range(warmup):
        f()
    times = []
    for _ in range(reps):
        sync()
        t0 = time.perf_counter()
        f()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# --- per-call overhead ---------------------------------------------------------------------

def run_overhead(args, results: List[Dict[str, Any]], devices: List[str]) -> None:
    """Microseconds per call on small boxes, where the Python handling is most of the call."""
    if not devices:
        return
    print(f"\n== Per-call cost on small boxes (fp64, full bands, pivot checks on), microseconds, "
          f"medians of {args.reps} ==")
    print("| arrays | shape | axis | adi out= | adi out=None | plan.solve | C++ 1 call | C++ loop "
          "| adi out= minus C++ 1 call |")
    print("|---|---|---|---|---|---|---|---|---|")
    cases = [((64,), 0), ((8, 8, 8), 0), ((8, 8, 8), 2), ((32, 32), 1)]
    for dev in devices:
        if dev == "numpy":
            mk, sync = np.asarray, (lambda: None)
        elif dev == "cupy":
            try:
                import cupy as cp
            except ImportError:
                continue
            mk, sync = cp.asarray, cpp_wait("cupy")
        else:
            try:
                import torch

                if not torch.cuda.is_available():
                    continue
            except ImportError:
                continue
            mk, sync = (lambda x: torch.from_numpy(x).cuda()), cpp_wait("torch")
        for shape, axis in cases:
            a, b, c, d = (mk(x) for x in problem(shape, np.float64))
            u = mk(np.empty(shape))
            inner = 200  # calls per timed sample (host: the clock's resolution)
            per = lambda f: one_call_median(lambda: [f() for _ in range(inner)], sync, args.reps,  # noqa: E731
                                            args.warmup) / inner
            t_out = per(lambda: adi.solve_tridiagonal(a, b, c, d, axis=axis, out=u))
            t_new = per(lambda: adi.solve_tridiagonal(a, b, c, d, axis=axis))
            plan = adi.TridiagonalPlan(shape, np.float64, axis=axis, device="cpu" if dev == "numpy" else "cuda")
            t_plan = per(lambda: plan.solve(a, b, c, d, out=u))
            t_one = plan.time(a, b, c, d, u, repeats=max(args.reps, 200), each=True)
            t_loop = plan.time(a, b, c, d, u, repeats=max(args.reps, 200))
            if dev != "numpy":  # the device case: compare one synchronised call with one
                t_out = one_call_median(lambda: adi.solve_tridiagonal(a, b, c, d, axis=axis, out=u), sync,
                                        max(args.reps, 200), args.warmup)
            us = lambda t: f"{t * 1e6:.2f}"  # noqa: E731
            print(f"| {dev} | {shape} | {axis} | {us(t_out)} | {us(t_new)} | {us(t_plan)} | {us(t_one)} "
                  f"| {us(t_loop)} | {us(t_out - t_one)} |")
            results.append(dict(device=dev, part="overhead", shape=shape, axis=axis, adi_out=t_out, adi_new=t_new,
                                plan_solve=t_plan, cpp_one=t_one, cpp_loop=t_loop))
    print("(host rows: back-to-back calls, per call; device rows: adi out= is one call between two stream "
          "synchronisations, like C++ 1 call; out=None and plan.solve back to back.)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpu", action="store_true", help="CPU part only (default: both)")
    p.add_argument("--gpu", action="store_true", help="GPU part only (default: both)")
    p.add_argument("--overhead", action="store_true", help="only the per-call cost on small boxes")
    p.add_argument("--no-overhead", action="store_true", help="skip the per-call cost table")
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--scipy-lines", type=int, default=1024)
    p.add_argument("--json", help="write the measurements here")
    args = p.parse_args(argv)
    args.dtypes = [np.dtype(x).type for x in args.dtypes.split(",")]
    both = not args.cpu and not args.gpu
    results: List[Dict[str, Any]] = []
    import platform

    print(f"adi {adi.__version__} from {os.path.dirname(adi.__file__)}; Python {platform.python_version()}, "
          f"NumPy {np.__version__}; {os.cpu_count()} CPUs; CUDA build: {adi.cuda_compiled()}")
    devices = (["numpy"] if args.cpu or both else []) + \
        (["cupy", "torch"] if (args.gpu or both) and adi.cuda_available() else [])
    if not args.no_overhead:
        run_overhead(args, results, devices)
    if not args.overhead and (args.cpu or both):
        run_cpu(args, results)
    if not args.overhead and (args.gpu or both):
        run_gpu(args, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
