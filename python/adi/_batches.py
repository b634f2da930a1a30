"""Block-tridiagonal, variable-size tridiagonal and batched Cholesky solves."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays, _core
from ._errors import InvalidArgumentError
from ._tridiagonal import _PlanCache

_cache = _PlanCache(limit=32)


def _renamed(old: str, old_value: Any, new: str, value: Any) -> Any:
    """The value of keyword ``new``, or of its former spelling ``old`` (kept for one release,
    with a DeprecationWarning) when the caller still passes that."""
    if old_value is None:
        return value
    import warnings

    warnings.warn(f"the keyword '{old}' is now '{new}' (the same option name in every plan family)",
                  DeprecationWarning, stacklevel=3)
    return old_value


# --- block tridiagonal ----------------------------------------------------------------

def _block_layout(vshape, vstrides, bstrides) -> Optional[Tuple[Tuple[int, int, int, int], List[Tuple[int, int]]]]:
    """(count0, sys0 pair, count1, sys1 pair) of the system axes (all but the last two of d)
    for the vector and block families, and (vector, block) offsets; None if not expressible."""
    dims = []
    for e, sv, sb in zip(vshape[:-2], vstrides[:-2], bstrides[:-3]):
        if e == 1:
            continue
        if sv <= 0 or sb <= 0:
            return None
        dims.append((int(e), int(sv), int(sb)))
    dims.sort(key=lambda x: x[1])
    if len(dims) > 2:
        merged = [dims[0]]
        for e, sv, sb in dims[1:]:
            e0, v0, b0 = merged[-1]
            if sv == e0 * v0 and sb == e0 * b0:
                merged[-1] = (e0 * e, v0, b0)
            else:
                merged.append((e, sv, sb))
        dims = merged
    inner = dims[:2] + [(1, 0, 0)] * (2 - min(len(dims), 2))
    offsets = [(0, 0)]
    for e, sv, sb in dims[2:]:
        offsets = [(ov + k * sv, ob + k * sb) for ov, ob in offsets for k in range(e)]
    return (inner[0], inner[1]), offsets


def solve_block_tridiagonal(a: Any, b: Any, c: Any, d: Any, *, periodic: bool = False, out: Any = None,
                            check_pivots: bool = True, kernel: str = "automatic",
                            pivot_tolerance: float = 0.0) -> Any:
    """Solves batches of block-tridiagonal systems (block size M = 2..8, adi/block_tridiagonal.hpp).

    Block row i of every system: ``A_i u_{i-1} + B_i u_i + C_i u_{i+1} = d_i``.

    Args:
        a, b, c: blocks of shape ``(..., n, M, M)`` (``a[..., i, r, k]`` is entry (r, k) of
            A_i); ``A_0`` and ``C_{n-1}`` are not read unless ``periodic``.
        d: right-hand sides of shape ``(..., n, M)``; the leading axes number the systems.
        periodic: block-cyclic systems.
        out: the solution (d's shape; may be d). None: a new array.
        check_pivots: raise :class:`SingularBlockError` (``.system``, ``.row``) on a singular
            pivot block.
        kernel, pivot_tolerance: as ``adi::BlockTridiagonalOptions``.

    Any strides are used in place when a, b, c share theirs and each block's (r, k) entries
    are evenly spaced (row-major); otherwise the blocks are copied (contiguous). The C++
    plan of each layout is cached per process; :class:`BlockTridiagonalPlan` holds its own.
    """
    return _solve_block(a, b, c, d, periodic, out, check_pivots, kernel, pivot_tolerance, _cache)


def _solve_block(a: Any, b: Any, c: Any, d: Any, periodic: bool, out: Any, check_pivots: bool, kernel: str,
                 pivot_tolerance: float, cache: _PlanCache) -> Any:
    lib = _arrays.library_of(d)
    d = lib.asarray(d) if lib.name == "numpy" else d
    dv = lib.view(d)
    if len(dv.shape) < 2:
        raise InvalidArgumentError(f"d: shape {tuple(dv.shape)} must be (..., n, M)")
    n, m = int(dv.shape[-2]), int(dv.shape[-1])
    views = []
    for name, x in (("a", a), ("b", b), ("c", c)):
        x = lib.asarray(x)
        v = lib.view(x)
        if tuple(v.shape) != tuple(dv.shape) + (m,):
            raise InvalidArgumentError(
                f"{name}: shape {tuple(v.shape)} must be d's shape plus M: {tuple(dv.shape) + (m,)}")
        views.append([x, v])
    dtype = _arrays.result_dtype(dv.dtype, *(v.dtype for _, v in views))

    def block_ok(v):
        return (v.strides is not None and v.dtype == dtype and v.strides[-2] == m * v.strides[-1]
                and v.strides == views[0][1].strides)

    if not all(block_ok(v) for _, v in views):
        for xv in views:
            y = lib.empty(xv[1].shape, dtype)
            lib.copy_into(y, xv[0])
            xv[0], xv[1] = y, lib.view(y)
    u = lib.empty_like(d, dtype) if out is None else out
    uv = lib.view(u)
    if tuple(uv.shape) != tuple(dv.shape) or uv.dtype != dtype:
        raise InvalidArgumentError(f"out: must have d's shape {tuple(dv.shape)} and dtype {dtype}")
    bstr = views[0][1].strides
    layout = None if uv.strides is None else _block_layout(uv.shape, uv.strides, bstr)
    work, wv = u, uv
    if layout is None or uv.strides[-1] <= 0 or uv.strides[-2] <= 0:
        work = lib.empty(dv.shape, dtype)
        wv = lib.view(work)
        if _arrays.same_memory(dv, uv):
            lib.copy_into(work, d)
            dv = wv
        layout = _block_layout(wv.shape, wv.strides, bstr)
    if layout is None:  # the blocks' system axes do not follow d's: blocks copied to d's order
        for xv in views:
            y = lib.empty(xv[1].shape, dtype)
            lib.copy_into(y, xv[0])
            xv[0], xv[1] = y, lib.view(y)
        bstr = views[0][1].strides
        layout = _block_layout(wv.shape, wv.strides, bstr)
    if _arrays.same_memory(dv, wv):
        d_addr = wv.address
    elif dv.strides == wv.strides and dv.dtype == dtype:
        d_addr = dv.address
    else:
        lib.copy_into(work, d)
        d_addr = wv.address
    ((c0, v0, b0), (c1, v1, b1)), offsets = layout
    vec = (int(wv.strides[-2]), v0, v1, int(wv.strides[-1]))
    blk = (int(bstr[-3]), b0, b1, int(bstr[-1]))
    stream = lib.stream()
    key = ("block", m, n, c0, c1, vec, blk, dtype.name, lib.device, stream, periodic, kernel, pivot_tolerance,
           check_pivots)
    plan = cache.get(key, lambda: _core.BlockTridiagonalPlan(m, n, c0, c1, vec, blk, dtype.name, lib.device, stream,
                                                             periodic, kernel, pivot_tolerance, check_pivots))
    if 0 not in dv.shape:
        plan.solve(views[0][1].address, views[1][1].address, views[2][1].address, d_addr, wv.address, offsets)
    if work is not u:
        lib.copy_into(u, work)
    return lib.finish(u)


class BlockTridiagonalPlan:
    """Repeated block-tridiagonal solves of one shape with fixed options, like
    :class:`TridiagonalPlan`: ``plan = adi.BlockTridiagonalPlan((systems, n, M))``;
    ``plan.solve(a, b, c, d, out=u)`` reuses the C++ plan (and its workspace) built at
    construction for C-contiguous arrays; other strides, devices or streams build further
    plans inside this object. ``shape`` is d's shape ``(..., n, M)``; a, b, c are
    ``(..., n, M, M)``. ``plan.kernel`` and ``plan.workspace_bytes`` describe the first plan.
    """

    def __init__(self, shape: Sequence[int], dtype: Any = np.float64, *, periodic: bool = False,
                 kernel: str = "automatic", check_pivots: bool = True, pivot_tolerance: float = 0.0,
                 device: str = "cpu") -> None:
        from ._tridiagonal import _parse_device

        self.shape = tuple(int(e) for e in shape)
        if len(self.shape) < 2:
            raise InvalidArgumentError(f"shape: {self.shape} must be d's shape (..., n, M)")
        self.dtype = _arrays.result_dtype(np.dtype(dtype))
        self.periodic, self.check_pivots = bool(periodic), bool(check_pivots)
        self._kernel_option, self.pivot_tolerance = kernel, float(pivot_tolerance)
        self.device = _parse_device(device)
        self._cache = _PlanCache(limit=None)
        n, m = self.shape[-2], self.shape[-1]
        vstr = _arrays._c_strides(self.shape)
        bstr = _arrays._c_strides(self.shape + (m,))
        layout = _block_layout(self.shape, vstr, bstr)
        assert layout is not None
        ((c0, v0, b0), (c1, v1, b1)), _ = layout
        vec = (int(vstr[-2]), v0, v1, int(vstr[-1]))
        blk = (int(bstr[-3]), b0, b1, int(bstr[-1]))
        key = ("block", m, n, c0, c1, vec, blk, self.dtype.name, self.device, 0, self.periodic, kernel,
               self.pivot_tolerance, self.check_pivots)
        self._first = self._cache.get(key, lambda: _core.BlockTridiagonalPlan(
            m, n, c0, c1, vec, blk, self.dtype.name, self.device, 0, self.periodic, kernel, self.pivot_tolerance,
            self.check_pivots))

    @property
    def kernel(self) -> str:
        """The kernel the C++ plan runs for C-contiguous arrays of the planned shape."""
        return str(self._first.kernel)

    @property
    def workspace_bytes(self) -> int:
        return int(self._first.workspace_bytes)

    def solve(self, a: Any, b: Any, c: Any, d: Any, out: Any = None) -> Any:
        """As :func:`solve_block_tridiagonal` with this plan's options."""
        shape = tuple(int(e) for e in d.shape)
        if shape != self.shape:
            raise InvalidArgumentError(f"d: shape {shape} differs from the plan's {self.shape}")
        return _solve_block(a, b, c, d, self.periodic, out, self.check_pivots, self._kernel_option,
                            self.pivot_tolerance, self._cache)

    def __repr__(self) -> str:
        return f"<adi.BlockTridiagonalPlan shape={self.shape} dtype={self.dtype} kernel={self.kernel}>"


# --- variable-size batches ------------------------------------------------------------

Systems = Union[Any, Sequence[Any]]


def _sizes_array(sizes: Sequence[int]) -> np.ndarray:
    s = np.ascontiguousarray(np.asarray(sizes), dtype=np.int32)
    if s.ndim != 1:
        raise InvalidArgumentError("sizes: must be a 1-D sequence of system sizes")
    return s


class VariableTridiagonalPlan:
    """``adi::VariableTridiagonalPlan`` for systems of different sizes.

    ``layout="compact"`` (``CompactBatch``): system s occupies ``sizes[s]`` consecutive values
    from ``sum(sizes[:s])``; arrays hold ``total`` values. ``layout="sorted"``
    (``SortedInterleaved``): the plan's own layout, systems sorted by size (largest first),
    chunks of 32 interleaved and padded to their largest size, which the GPU reads coalesced;
    arrays hold ``span`` values. :meth:`pack` turns a compact array into it (once, e.g. at the
    start of a simulation), :meth:`unpack` turns a solution back. Sizes may be 0. Built once
    per batch; ``solve`` allocates nothing when ``out`` is given. On a GPU ``kernel="automatic"``
    is ``"truncated"`` for both layouts (not periodic; out of place, else the exact kernel):
    docs/variable_batch.md.

    ``plan = adi.VariableTridiagonalPlan([5, 1, 300], layout="sorted")``;
    ``A, B, C, D = (plan.pack(x) for x in (a, b, c, d))``; ``u = plan.unpack(plan.solve(A, B, C, D))``.
    """

    def __init__(self, sizes: Sequence[int], dtype: Any = np.float64, *, periodic: bool = False,
                 kernel: str = "automatic", check_pivots: bool = True, device: str = "cpu", stream: int = 0,
                 layout: str = "compact", method: Optional[str] = None) -> None:
        from ._tridiagonal import _parse_device

        kernel = _renamed("method", method, "kernel", kernel)

        self.sizes = _sizes_array(sizes)
        self.dtype = np.dtype(dtype)
        self.device = _parse_device(device)
        self.layout = layout
        self._plan = _core.VariableTridiagonalPlan(self.sizes, self.dtype.name, self.device, stream, periodic, kernel,
                                                   check_pivots, layout)

    @property
    def kernel(self) -> str:
        """The kernel the plan runs (``adi::variable_kernel_name``)."""
        return str(self._plan.kernel)

    @property
    def total(self) -> int:
        """The sum of the sizes: values a compact (packed) array holds."""
        return int(self._plan.total)

    @property
    def span(self) -> int:
        """Values each array passed to :meth:`solve` holds (``total`` for the compact layout;
        the padded, interleaved extent for ``"sorted"``)."""
        return int(self._plan.span)

    def _array(self, lib: _arrays.Library, x: Any, count: int, name: str, what: str) -> Tuple[Any, _arrays.View]:
        x = lib.asarray(x)
        v = lib.view(x)
        if len(v.shape) == 1 and (v.strides != (1,) or v.dtype != self.dtype):
            y = lib.empty((v.shape[0],), self.dtype)
            lib.copy_into(y, x)
            x, v = y, lib.view(y)
        if tuple(v.shape) != (count,):
            raise InvalidArgumentError(f"{name}: shape {tuple(v.shape)} must be ({count},) ({what})")
        return x, v

    def _out(self, lib: _arrays.Library, out: Any, count: int) -> Tuple[Any, _arrays.View]:
        u = lib.empty((count,), self.dtype) if out is None else out
        uv = lib.view(u)
        if tuple(uv.shape) != (count,) or uv.strides != (1,) or uv.dtype != self.dtype or not uv.writable:
            raise InvalidArgumentError(f"out: must be a writable contiguous {self.dtype} array of {count} values")
        return u, uv

    def _what(self) -> str:
        return ("the sizes' sum, systems back to back" if self.layout == "compact" else
                "the plan's span: arrays in the sorted layout, made by pack()")

    def solve(self, a: Any, b: Any, c: Any, d: Any, out: Any = None) -> Any:
        """Solves every system; a, b, c, d 1-D arrays of ``span`` values in the plan's layout
        (host or device); returns ``out`` (or a new array) in the same layout."""
        lib = _arrays.library_of(d)
        arrays = [self._array(lib, x, self.span, name, self._what())
                  for name, x in (("a", a), ("b", b), ("c", c), ("d", d))]
        u, uv = self._out(lib, out, self.span)
        self._plan.solve(*(v.address for _, v in arrays), uv.address)
        return lib.finish(u)

    def pack(self, x: Any, out: Any = None) -> Any:
        """A compact array (``total`` values, systems back to back) in the plan's layout
        (``span`` values; the sorted layout's padding is zero)."""
        lib = _arrays.library_of(x)
        x, v = self._array(lib, x, self.total, "x", "the sizes' sum, systems back to back")
        u, uv = self._out(lib, out, self.span)
        if self.layout == "compact":
            if uv.address != v.address:
                lib.copy_into(u, x)
            return lib.finish(u)
        self._plan.pack(v.address, uv.address)
        return lib.finish(u)

    def unpack(self, y: Any, out: Any = None) -> Any:
        """An array in the plan's layout (``span`` values) as a compact one (``total`` values)."""
        lib = _arrays.library_of(y)
        y, v = self._array(lib, y, self.span, "y", self._what())
        u, uv = self._out(lib, out, self.total)
        if self.layout == "compact":
            if uv.address != v.address:
                lib.copy_into(u, y)
            return lib.finish(u)
        self._plan.unpack(v.address, uv.address)
        return lib.finish(u)


def solve_variable_tridiagonal(a: Systems, b: Systems, c: Systems, d: Systems, sizes: Optional[Sequence[int]] = None,
                               *, periodic: bool = False, kernel: str = "automatic",
                               check_pivots: bool = True, method: Optional[str] = None) -> Any:
    """Solves tridiagonal systems of different sizes (cuThomasVBatch, adi/variable_tridiagonal.hpp).

    Either packed 1-D arrays with ``sizes`` (returns the packed solution), or lists of 1-D
    arrays, one per system (``sizes`` None; returns a list; the lists are packed by a copy).
    Rows as in :func:`solve_tridiagonal`; periodic systems couple their own ends.
    ``kernel``: ``"automatic"``, ``"reference"`` or ``"stop_at_size"`` (CompactBatch).
    """
    kernel = _renamed("method", method, "kernel", kernel)
    if sizes is None:
        if not isinstance(d, (list, tuple)):
            raise InvalidArgumentError("sizes: pass the system sizes with packed arrays, or lists of arrays")
        sizes = [len(x) for x in d]
        packed = [np.concatenate([np.asarray(x, dtype=np.float64).ravel() for x in y]) if len(y) else np.empty(0)
                  for y in (a, b, c, d)]
        dtype = _arrays.result_dtype(*(np.asarray(x).dtype for y in (a, b, c, d) for x in y)) if len(d) else np.float64
        plan = _variable_plan(sizes, dtype, periodic, kernel, check_pivots, -1)
        u = plan.solve(*(p.astype(dtype) for p in packed))
        return np.split(u, np.cumsum(sizes)[:-1]) if len(sizes) else []
    lib = _arrays.library_of(d)
    dtype = _arrays.result_dtype(*(lib.view(lib.asarray(x)).dtype for x in (a, b, c, d)))
    return _variable_plan(sizes, dtype, periodic, kernel, check_pivots, lib.device, lib.stream()).solve(a, b, c, d)


def _variable_plan(sizes, dtype, periodic, kernel, check_pivots, device, stream=0) -> VariableTridiagonalPlan:
    s = _sizes_array(sizes)
    key = ("variable", s.tobytes(), np.dtype(dtype).name, device, stream, periodic, kernel, check_pivots)
    return _cache.get(key, lambda: VariableTridiagonalPlan(s, dtype, periodic=periodic, kernel=kernel,
                                                           check_pivots=check_pivots,
                                                           device="cpu" if device < 0 else f"cuda:{device}",
                                                           stream=stream))


# --- batched Cholesky -----------------------------------------------------------------

class BatchedCholeskyPlan:
    """``adi::BatchedCholeskyPlan`` of SPD matrices of sizes 0..512, column-major.

    ``layout="compact"`` (``CompactBatch``): the matrices back to back in one 1-D array
    (matrix s holds ``sizes[s]**2`` values). ``info = plan.factor(A)`` factors in place (L in
    the lower triangle; ``info[s] = j+1`` for a matrix not positive definite at column j,
    LAPACK's convention); ``plan.solve(L, B, nrhs)`` overwrites the packed right-hand sides
    B (``sizes[s]*nrhs`` values each, column-major) with the solutions.

    ``layout="pointers"`` (``PointerBatch``, MAGMA's vbatched interface): each matrix is its
    own 2-D array, column-major (``numpy.asfortranarray``, or a block ``big[:n, :n]`` of a
    Fortran-ordered array) with leading dimension ``ld[s]`` (default ``max(1, n_s)``; the
    arrays' strides must match it); ``factor(list_of_matrices)`` factors each in place and
    ``solve(list_of_factors, list_of_rhs, nrhs)`` overwrites each right-hand side
    (``(n_s,)`` or ``(n_s, nrhs)`` column-major, its own leading dimension). A symmetric
    C-ordered matrix may be passed as ``m.T`` (the same values, column-major).

    ``check_pivots=True`` makes ``factor`` raise :class:`SingularSystemError` (``.system``
    the matrix, ``.row`` its column) for the first matrix that is not positive definite
    (formerly ``throw_on_failure``).
    """

    def __init__(self, sizes: Sequence[int], dtype: Any = np.float64, *, device: str = "cpu",
                 check_pivots: bool = False, layout: str = "compact", ld: Optional[Sequence[int]] = None,
                 throw_on_failure: Optional[bool] = None) -> None:
        from ._tridiagonal import _parse_device

        check_pivots = _renamed("throw_on_failure", throw_on_failure, "check_pivots", check_pivots)
        if layout not in ("compact", "pointers"):
            raise InvalidArgumentError(f"layout = {layout!r} is not 'compact' (matrices back to back) or 'pointers' "
                                       "(one array per matrix)")
        if ld is not None and layout != "pointers":
            raise InvalidArgumentError("ld: leading dimensions apply to layout='pointers' only")
        self.sizes = _sizes_array(sizes)
        self.dtype = np.dtype(dtype)
        self.device = _parse_device(device)
        self.layout = layout
        self.ld: Optional[np.ndarray] = None
        if layout == "pointers":
            self.ld = np.maximum(self.sizes, 1) if ld is None else _sizes_array(ld)
        self._plan = _core.BatchedCholeskyPlan(self.sizes, self.dtype.name, self.device, 0, bool(check_pivots),
                                               self.ld)
        s = self.sizes.astype(np.int64)
        self.matrix_values = int((s * s).sum())

    @property
    def kernels(self) -> str:
        return str(self._plan.kernels)

    def _packed(self, x: Any, count: int, name: str) -> _arrays.View:
        lib = _arrays.library_of(x)
        v = lib.view(x)
        if v.strides != (1,) or v.dtype != self.dtype or tuple(v.shape) != (count,) or not v.writable:
            raise InvalidArgumentError(
                f"{name}: must be a writable contiguous 1-D {self.dtype} array of {count} values (packed, in place)")
        return v

    def _require(self, layout: str, what: str) -> None:
        if self.layout != layout:
            shape = "a list of arrays, one per matrix" if self.layout == "pointers" else "one packed 1-D array"
            raise InvalidArgumentError(f"{what}: this plan has layout={self.layout!r}: pass {shape}")

    def _pointers(self, lib: _arrays.Library, arrays: Sequence[Any], name: str, rows_only: bool,
                  nrhs: int = 1) -> Tuple[Any, Optional[Any]]:
        """The device (or host) array of pointers to the column-major arrays, and for
        right-hand sides (rows_only) the array of their leading dimensions."""
        if len(arrays) != len(self.sizes):
            raise InvalidArgumentError(f"{name}: {len(arrays)} arrays for {len(self.sizes)} matrices; pass one per matrix")
        ptrs = np.zeros(len(self.sizes), np.uint64)
        lds = np.ones(len(self.sizes), np.int32)
        for s, x in enumerate(arrays):
            n = int(self.sizes[s])
            if x is None:
                if n:
                    raise InvalidArgumentError(f"{name}[{s}]: None for a {n} x {n} matrix; None is for size 0 only")
                continue
            v = _arrays.library_of(x).view(x)
            want = ((n,), (n, nrhs)) if rows_only else ((n, n),)
            if tuple(v.shape) not in want or v.dtype != self.dtype or not v.writable:
                raise InvalidArgumentError(
                    f"{name}[{s}]: a writable {self.dtype} array of shape {' or '.join(map(str, want))} is needed; "
                    f"got {tuple(v.shape)} {v.dtype}")
            if n == 0:
                continue
            st = v.strides
            col = 1 if len(st) == 1 or n == 1 else st[0]
            ld = max(n, 1) if len(st) == 1 or st[1] == 0 or (len(v.shape) == 2 and v.shape[1] == 1) else st[1]
            if col != 1 or ld < n or (not rows_only and n > 1 and ld != int(self.ld[s])):
                need = f"leading dimension {int(self.ld[s])}" if not rows_only else "a leading dimension >= n"
                raise InvalidArgumentError(
                    f"{name}[{s}]: strides {st} (elements) are not column-major with {need}; pass "
                    f"numpy.asfortranarray(x) (or x.T for a symmetric C-ordered matrix)")
            ptrs[s] = v.address
            lds[s] = ld
        dev_ptrs = ptrs if lib.device < 0 else lib.asarray(ptrs)
        dev_lds = None if not rows_only else (lds if lib.device < 0 else lib.asarray(lds))
        return dev_ptrs, dev_lds

    def factor(self, a: Any) -> Any:
        """Factors in place; returns ``info`` (int32, one entry per matrix, 0: factored)."""
        if self.layout == "pointers":
            if not isinstance(a, (list, tuple)):
                self._require("compact", "a")
            lib = _arrays.library_of(next((x for x in a if x is not None), np.empty(0)))
            ptrs, _ = self._pointers(lib, a, "a", rows_only=False)
            info = lib.empty((len(self.sizes),), np.int32)
            self._plan.factor_pointers(lib.view(ptrs).address, lib.view(info).address)
            return lib.finish(info)
        if isinstance(a, (list, tuple)):
            self._require("pointers", "a")
        lib = _arrays.library_of(a)
        v = self._packed(a, self.matrix_values, "a")
        info = lib.empty((len(self.sizes),), np.int32)
        self._plan.factor(v.address, lib.view(info).address)
        return lib.finish(info)

    def solve(self, l: Any, b: Any, nrhs: int = 1, info: Any = None) -> Any:
        """Overwrites ``b`` with the solutions (matrices whose ``info`` entry is not 0 are
        skipped; info None: none skipped); returns ``b``."""
        if self.layout == "pointers":
            if not isinstance(b, (list, tuple)) or not isinstance(l, (list, tuple)):
                self._require("compact", "l, b")
            lib = _arrays.library_of(next((x for x in b if x is not None), np.empty(0)))
            lp, _ = self._pointers(lib, l, "l", rows_only=False)
            bp, ldb = self._pointers(lib, b, "b", rows_only=True, nrhs=int(nrhs))
            iv = 0 if info is None else lib.view(info).address
            self._plan.solve_pointers(lib.view(lp).address, lib.view(bp).address, int(nrhs), lib.view(ldb).address, iv)
            return b
        if isinstance(b, (list, tuple)):
            self._require("pointers", "b")
        lib = _arrays.library_of(b)
        lv = self._packed(l, self.matrix_values, "l")
        bv = self._packed(b, int(self.sizes.astype(np.int64).sum()) * nrhs, "b")
        iv = 0 if info is None else lib.view(info).address
        self._plan.solve(lv.address, bv.address, int(nrhs), iv)
        return b


def cholesky_solve(matrices: Sequence[Any], rhs: Sequence[Any]) -> List[np.ndarray]:
    """Solves ``A_s x_s = b_s`` for a list of SPD matrices of different sizes (host, NumPy):
    packs them column-major, factors and solves with one :class:`BatchedCholeskyPlan`.
    Raises :class:`SingularSystemError` naming the first matrix that is not positive definite."""
    mats = [np.asarray(m) for m in matrices]
    rhs_ = [np.asarray(x) for x in rhs]
    if len(mats) != len(rhs_):
        raise InvalidArgumentError(f"rhs: {len(rhs_)} right-hand sides for {len(mats)} matrices")
    dtype = _arrays.result_dtype(*(m.dtype for m in mats + rhs_)) if mats else np.dtype(np.float64)
    sizes = [m.shape[0] for m in mats]
    for s, (m, x) in enumerate(zip(mats, rhs_)):
        if m.ndim != 2 or m.shape[0] != m.shape[1]:
            raise InvalidArgumentError(f"matrices[{s}]: shape {m.shape} is not square")
        if x.shape[0] != m.shape[0]:
            raise InvalidArgumentError(f"rhs[{s}]: {x.shape[0]} rows for a {m.shape[0]} x {m.shape[0]} matrix")
    nrhs = max([x.shape[1] if x.ndim == 2 else 1 for x in rhs_] + [1])
    if any((x.shape[1] if x.ndim == 2 else 1) != nrhs for x in rhs_):
        raise InvalidArgumentError("rhs: every right-hand side needs the same number of columns")
    plan = BatchedCholeskyPlan(sizes, dtype, check_pivots=True)
    a = np.concatenate([m.astype(dtype).ravel(order="F") for m in mats]) if mats else np.empty(0, dtype)
    b = np.concatenate([x.astype(dtype).reshape(x.shape[0], nrhs).ravel(order="F") for x in rhs_]) if mats else a
    plan.factor(a)
    plan.solve(a, b, nrhs)
    out, o = [], 0
    for m, x in zip(mats, rhs_):
        k = m.shape[0] * nrhs
        out.append(b[o:o + k].reshape(x.shape, order="F"))
        o += k
    return out
