"""Batched tridiagonal solves along one axis of an array of any strides (adi/tridiagonal.hpp)."""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, List, Optional, Sequence, Tuple

import numpy as np

from . import _arrays, _core
from ._errors import InvalidArgumentError

LineKey = Tuple[int, int, int, int, int, int]


class _PlanCache:
    """C++ plans by (layout, dtype, device, stream, options, thread): built on first use."""

    def __init__(self, limit: Optional[int]) -> None:
        self.limit = limit
        self.plans: "OrderedDict[Hashable, Any]" = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        key = (key, threading.get_ident())  # a plan is not thread-safe: one per thread
        with self.lock:
            plan = self.plans.get(key)
            if plan is not None:
                self.plans.move_to_end(key)
                return plan
        plan = build()
        with self.lock:
            self.plans[key] = plan
            if self.limit is not None:
                while len(self.plans) > self.limit:
                    self.plans.popitem(last=False)
        return plan

    def clear(self) -> None:
        with self.lock:
            self.plans.clear()


_cache = _PlanCache(limit=32)
_fast = _core.FastCache(32)  # the C++ fast path's plans (no-copy NumPy / CuPy / PyTorch calls with out=)


def clear_plan_cache() -> None:
    """Frees the plans (and their workspaces) that solve_tridiagonal keeps per shape."""
    _cache.clear()
    _fast.clear()


def line_set(shape: Sequence[int], strides: Sequence[int], axis: int) -> Optional[Tuple[LineKey, List[int]]]:
    """The LineSet of the lines along `axis` of an array (strides in elements) and the base
    offsets to solve it at: one offset when the other axes fold into two (count, stride)
    pairs, several when more than two remain. None when the layout has no LineSet (a
    negative or zero stride along the axis, or elements sharing an address)."""
    n, s = int(shape[axis]), int(strides[axis])
    if n > 1 and s <= 0:
        return None
    if n <= 1:
        s = 1
    base, dims = 0, []
    for i, (e, st) in enumerate(zip(shape, strides)):
        e, st = int(e), int(st)
        if i == axis or e == 1:
            continue
        if st < 0:
            base += (e - 1) * st
            st = -st
        if st == 0:
            return None
        dims.append((e, st))
    dims.sort(key=lambda d: d[1])
    if len(dims) > 2:  # fold axes that nest exactly (a dense block), smallest stride first
        merged = [dims[0]]
        for e, st in dims[1:]:
            e0, s0 = merged[-1]
            if st == e0 * s0:
                merged[-1] = (e0 * e, s0)
            else:
                merged.append((e, st))
        dims = merged
    inner = dims[:2] + [(1, 1)] * (2 - min(len(dims), 2))
    offsets = [base]
    for e, st in dims[2:]:
        offsets = [o + k * st for o in offsets for k in range(e)]
    (c0, s0), (c1, s1) = inner
    return (n, s, c0, s0, c1, s1), offsets


def _band_to_full(lib: _arrays.Library, band: Any, like: Any, axis: int, ndim: int, dtype: np.dtype) -> Any:
    out = lib.empty_like(like, dtype)
    if _arrays_ndim(band, lib) == 1 and ndim > 1:
        shape = [1] * ndim
        shape[axis] = -1
        band = lib.reshape(band, shape)
    lib.copy_into(out, band)
    return out


def _arrays_ndim(x: Any, lib: _arrays.Library) -> int:
    return len(lib.view(x).shape) if lib.name == "dlpack" else len(x.shape)


def _solve(a: Any, b: Any, c: Any, d: Any, axis: int, periodic: bool, out: Any, check_pivots: bool, kernel: str,
           cache: _PlanCache, repeats: int = 0) -> Any:
    lib = _arrays.library_of(d)
    if lib.name == "numpy" and not isinstance(d, np.ndarray):
        d = np.asarray(d)
    dv = lib.view(d)
    ndim = len(dv.shape)
    if ndim == 0:
        raise InvalidArgumentError("d: a 0-d array has no line to solve; pass an array of at least one axis")
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"axis = {axis} is out of range for d of {ndim} axes")
    axis %= ndim
    n = int(dv.shape[axis])
    bands = []
    for name, x in (("a", a), ("b", b), ("c", c)):
        if lib.name in ("numpy", "torch") and lib.device < 0:
            x = lib.asarray(x)
        elif type(x).__module__.split(".")[0] != lib.name:
            x = lib.asarray(x)  # e.g. a NumPy band for a device d: moved to the device (n values)
        bands.append((name, x, lib.view(x)))
    dtype = _arrays.result_dtype(dv.dtype, *(v.dtype for _, _, v in bands))
    for name, x, v in bands:
        if tuple(v.shape) != tuple(dv.shape) and tuple(v.shape) != (n,):
            raise InvalidArgumentError(
                f"{name}: shape {tuple(v.shape)} is neither d's shape {tuple(dv.shape)} nor ({n},) (one band shared "
                f"by every line along axis {axis}); pass full bands shaped like d or 1-D bands of {n} values")
    shared = all(tuple(v.shape) == (n,) for _, _, v in bands) and ndim > 1

    # The output, and where the solve writes (u itself unless its layout has no LineSet).
    jax_out = lib.name == "jax"
    if jax_out:
        if out is not None:
            raise InvalidArgumentError("out: JAX arrays are immutable; leave out=None (a new array is returned)")
        u = lib.fresh_copy(d, dtype)
    elif out is None:
        u = lib.empty_like(d, dtype)
    else:
        u = out
    uv = lib.view(u)
    if tuple(uv.shape) != tuple(dv.shape):
        raise InvalidArgumentError(f"out: shape {tuple(uv.shape)} differs from d's shape {tuple(dv.shape)}")
    if uv.dtype != dtype:
        raise InvalidArgumentError(f"out: dtype {uv.dtype} differs from the result's {dtype}; pass a {dtype} array")
    if not uv.writable:
        raise InvalidArgumentError("out: the array is read-only; pass a writable array")
    shared_address = uv.strides is not None and any(st == 0 and e > 1 for e, st in zip(uv.shape, uv.strides))
    if shared_address and 0 not in tuple(uv.shape):
        raise InvalidArgumentError("out: elements share an address (a zero stride, e.g. a broadcast view); "
                                   "pass an array with an address per element")
    if 0 in tuple(uv.shape):  # nothing to solve (a plan needs n >= 1)
        return 0.0 if repeats else lib.finish(u)
    work, wv = u, uv
    layout = line_set(uv.shape, uv.strides, axis) if uv.strides is not None else None
    d_in_place = jax_out or _arrays.same_memory(dv, uv)
    for attempt in range(2):
        if layout is None or attempt == 1:  # solve in a dense buffer, copy back at the end
            work = lib.empty(dv.shape, dtype)
            wv = lib.view(work)
            layout = line_set(wv.shape, wv.strides, axis)
            if d_in_place:
                lib.copy_into(work, u)
            d_in_place = False
        if d_in_place:
            d_addr, keep_d = wv.address, None
        elif dv.strides == wv.strides and dv.dtype == dtype and dv.strides is not None:
            d_addr, keep_d = dv.address, dv
        else:
            lib.copy_into(work, d)
            d_addr, keep_d = wv.address, None
        addresses, keep = [], []
        ok = True
        for name, x, v in bands:
            if shared:
                if v.strides == (1,) and v.dtype == dtype:
                    addresses.append(v.address)
                    keep.append(v)
                else:
                    y = lib.asarray(x, dtype) if lib.name == "jax" else lib.empty((n,), dtype)
                    if lib.name != "jax":
                        lib.copy_into(y, x)
                    yv = lib.view(y)
                    addresses.append(yv.address)
                    keep.append(yv)
            elif v.strides == wv.strides and v.dtype == dtype and tuple(v.shape) == tuple(wv.shape):
                addresses.append(v.address)
                keep.append(v)
            else:
                if lib.name == "jax":
                    y = lib.fresh_copy(lib.jnp.broadcast_to(lib.jnp.reshape(x, _bshape(v.shape, ndim, axis)),
                                                            wv.shape), dtype)
                else:
                    y = _band_to_full(lib, x, work, axis, ndim, dtype)
                yv = lib.view(y)
                if yv.strides != wv.strides:  # work has gaps empty_like does not keep: use a dense buffer
                    ok = False
                    break
                addresses.append(yv.address)
                keep.append(yv)
        if ok:
            break
    assert layout is not None
    lines, offsets = layout
    stream = lib.stream()
    key = (lines, dtype.name, lib.device, stream, bool(periodic), kernel, bool(check_pivots))
    plan = cache.get(key, lambda: _core.TridiagonalPlan(lines, dtype.name, lib.device, stream, bool(periodic), kernel,
                                                         bool(check_pivots)))
    if repeats:  # < 0: each solve timed alone
        return plan.time(addresses[0], addresses[1], addresses[2], d_addr, wv.address, shared, offsets, abs(repeats),
                         repeats < 0)
    plan.solve(addresses[0], addresses[1], addresses[2], d_addr, wv.address, shared, offsets)
    del keep, keep_d
    if work is not u:
        lib.copy_into(u, work)
    return lib.finish(u)


def _bshape(shape: Sequence[int], ndim: int, axis: int) -> Tuple[int, ...]:
    if len(shape) == ndim:
        return tuple(shape)
    s = [1] * ndim
    s[axis] = int(shape[0])
    return tuple(s)


def solve_tridiagonal(a: Any, b: Any, c: Any, d: Any, axis: int = -1, periodic: bool = False, out: Any = None, *,
                      check_pivots: bool = True, kernel: str = "automatic") -> Any:
    """Solves every tridiagonal system along ``axis`` of ``d``.

    Row i of every line: ``a[i]*u[i-1] + b[i]*u[i] + c[i]*u[i+1] = d[i]``. Non-periodic lines
    ignore ``a[0]`` and ``c[n-1]``; periodic (cyclic) lines couple ``u[0]`` and ``u[n-1]``
    through them (Sherman-Morrison).

    Args:
        a, b, c: the bands, each either shaped like ``d`` (one coefficient per element) or
            1-D of ``n = d.shape[axis]`` values shared by every line (all three 1-D: the
            C++ ``SharedBands``, the fast path of constant-coefficient operators).
        d: right-hand sides: a NumPy array of any strides (views, transposes, negative
            strides), or a CUDA array of CuPy, PyTorch, JAX or any DLPack producer.
        axis: the axis the systems run along.
        periodic: cyclic systems.
        out: where to write the solution (same shape as ``d``, the result's dtype, any
            strides); may be ``d`` itself (in place). None: a new array like ``d``, of the
            same library (a new JAX array for JAX input).
        check_pivots: raise :class:`SingularSystemError` (with ``.system``, ``.row``) on a
            zero or non-finite pivot. On a GPU this synchronises the stream; False leaves
            the solve asynchronous on the caller's stream.
        kernel: ``"automatic"`` or a C++ kernel name (``adi.kernel_names()``).

    Returns:
        ``out`` (or the new array).

    A call whose arrays need no copy (NumPy, CuPy or PyTorch arrays of one dtype; full bands
    with ``d``'s strides or three contiguous 1-D bands; ``out`` with ``d``'s strides, or
    ``out=None`` and a C- or Fortran-contiguous ``d``) is resolved in C++ with the plan taken
    from a per-process cache keyed on (layout, dtype, device, stream, options, thread): a few
    microseconds over the C++ call. Any other goes through the general path below.

    The result is float32 when every input is float32, float64 otherwise. Arrays are used
    in place whenever their strides are a LineSet (every layout NumPy slicing and
    transposing produces, negative strides across lines included); a band, ``d`` or ``out``
    is copied only when it is not: a different dtype, strides that are not whole elements
    or differ between ``d`` and a full band, a negative stride along ``axis``, or a band
    broadcast with zero strides. The C++ plan of each layout is built on first use and
    cached (:func:`clear_plan_cache`); :class:`TridiagonalPlan` holds plans of its own.
    """
    u = _fast.solve(a, b, c, d, out, axis, periodic, check_pivots, kernel)
    if u is not None:
        return u
    return _solve(a, b, c, d, axis, periodic, out, check_pivots, kernel, _cache)


class TridiagonalPlan:
    """Repeated solves of one problem shape with fixed options, with the C++ plan built now.

    ``plan = adi.TridiagonalPlan((256, 256, 256), axis=0)``;
    ``plan.solve(a, b, c, d, out=u)`` runs it (arrays of other strides, devices or
    streams build further plans inside this object); ``plan.kernel`` names the kernel the
    C++ dispatch chose; ``plan.time(...)`` times the C++ call without Python in the loop.
    """

    def __init__(self, shape: Sequence[int], dtype: Any = np.float64, axis: int = -1, *, periodic: bool = False,
                 kernel: str = "automatic", check_pivots: bool = True, device: str = "cpu") -> None:
        self.shape = tuple(int(e) for e in shape)
        self.dtype = np.dtype(dtype)
        ndim = len(self.shape)
        if not -ndim <= axis < ndim:
            raise InvalidArgumentError(f"axis = {axis} is out of range for a shape of {ndim} axes")
        self.axis = axis % ndim
        self.periodic, self._kernel_option, self.check_pivots = bool(periodic), kernel, bool(check_pivots)
        self.device = _parse_device(device)
        self._cache = _PlanCache(limit=None)
        self._fast = _core.FastCache(1 << 20)
        layout = line_set(self.shape, _arrays._c_strides(self.shape), self.axis)
        assert layout is not None
        self._first = _core.TridiagonalPlan(layout[0], _arrays.result_dtype(self.dtype).name, self.device, 0,
                                            self.periodic, kernel, self.check_pivots)

    @property
    def kernel(self) -> str:
        """The kernel the C++ plan runs for C-contiguous arrays of the planned shape."""
        return str(self._first.kernel)

    def solve(self, a: Any, b: Any, c: Any, d: Any, out: Any = None) -> Any:
        """As :func:`solve_tridiagonal` with this plan's axis and options."""
        self._check(d)
        u = self._fast.solve(a, b, c, d, out, self.axis, self.periodic, self.check_pivots, self._kernel_option)
        if u is not None:
            return u
        return _solve(a, b, c, d, self.axis, self.periodic, out, self.check_pivots, self._kernel_option, self._cache)

    def time(self, a: Any, b: Any, c: Any, d: Any, out: Any, repeats: int = 20, *, each: bool = False) -> float:
        """Seconds per solve of the C++ call: what the library costs without Python.

        ``each=False``: one untimed solve, then ``repeats`` solves back to back in a C++ loop,
        the device synchronised at the end (launches overlap the GPU's work). ``each=True``:
        the median over ``repeats`` of one solve timed alone (synchronise, start the clock,
        solve, synchronise, stop), the way a caller timing one call sees it; compare it with
        ``adi.solve_tridiagonal`` timed the same way (the benchmark does)."""
        self._check(d)
        return float(_solve(a, b, c, d, self.axis, self.periodic, out, self.check_pivots, self._kernel_option,
                            self._cache, repeats=-repeats if each else repeats))

    def _check(self, d: Any) -> None:
        if tuple(d.shape) == self.shape:  # the common case without a conversion per axis
            return
        shape = tuple(int(e) for e in d.shape)
        if shape != self.shape:
            raise InvalidArgumentError(f"d: shape {shape} differs from the plan's {self.shape}")

    def __repr__(self) -> str:
        return (f"<adi.TridiagonalPlan shape={self.shape} axis={self.axis} dtype={self.dtype} "
                f"kernel={self.kernel} periodic={self.periodic}>")


def _parse_device(device: Any) -> int:
    if device is None or device == "cpu" or device == -1:
        return -1
    if isinstance(device, int):
        return device
    text = str(device)
    if text == "cuda":
        return 0
    if text.startswith("cuda:") and text[5:].isdigit():
        return int(text[5:])
    raise InvalidArgumentError(f"device = {device!r} is not 'cpu', 'cuda' or 'cuda:N'")


def kernel_names() -> List[str]:
    """The tridiagonal kernels a plan may be forced to run (``kernel=``)."""
    return list(_core.kernel_names())


__all__ = ["solve_tridiagonal", "TridiagonalPlan", "clear_plan_cache", "kernel_names", "line_set"]
