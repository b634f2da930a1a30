"""adi.solve_tridiagonal on NumPy arrays against the fp64 dense reference: every axis of a
3-D array, the odd sizes, both precisions, periodic, views and strides, shared bands, the
plan object and the error mapping."""
from __future__ import annotations

import numpy as np
import pytest

import adi
from conftest import SIZES, assert_close, dominant_bands, reference_tridiagonal


def shape_with(n, axis, others=(3, 4)):
    s = list(others)
    s.insert(axis, n)
    return tuple(s)


@pytest.mark.parametrize("periodic", [False, True], ids=["plain", "periodic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_every_axis_sizes_precisions(axis, n, dtype, periodic, rng):
    shape = shape_with(n, axis)
    a, b, c = dominant_bands(rng, shape, dtype)
    d = rng.standard_normal(shape).astype(dtype)
    out = np.full(shape, np.nan, dtype=dtype)  # poisoned: every value must be written
    u = adi.solve_tridiagonal(a, b, c, d, axis=axis, periodic=periodic, out=out)
    assert u is out and u.dtype == dtype
    assert_close(u, reference_tridiagonal(a, b, c, d, axis, periodic), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_shared_bands(axis, dtype, rng):
    shape = (17, 9, 33)
    n = shape[axis]
    a, b, c = dominant_bands(rng, (n,), dtype)
    d = rng.standard_normal(shape).astype(dtype)
    u = adi.solve_tridiagonal(a, b, c, d, axis=axis)
    assert_close(u, reference_tridiagonal(a, b, c, d, axis), dtype)
    # non-contiguous 1-D bands are copied (n values), same answer
    a2, b2, c2 = (np.repeat(x, 2)[::2] for x in (a, b, c))
    assert_close(adi.solve_tridiagonal(a2, b2, c2, d, axis=axis), reference_tridiagonal(a, b, c, d, axis), dtype)


VIEWS = {
    "sliced": lambda x: x[::2, 1:, ::3],
    "transposed": lambda x: x.transpose(2, 0, 1),
    "fortran": lambda x: np.asfortranarray(x),
    "negative_other": lambda x: x[::-1, :, ::-2],
    "negative_all": lambda x: x[::-1, ::-1, ::-1],
    "sub_box": lambda x: x[1:-1, 2:-3, 1:-2],
}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_views_and_strides(view, axis, rng):
    base = (12, 10, 14)
    a, b, c, d = (VIEWS[view](x) for x in (*dominant_bands(rng, base, np.float64), rng.standard_normal(base)))
    ref = reference_tridiagonal(a, b, c, d, axis)
    d_before = d.copy()
    u = adi.solve_tridiagonal(a, b, c, d, axis=axis)
    assert_close(u, ref, np.float64)
    np.testing.assert_array_equal(d, d_before)  # d only read
    # into an output of other strides, and in place
    out = np.full(np.asarray(d).shape[::-1], np.nan).T
    assert_close(adi.solve_tridiagonal(a, b, c, d, axis=axis, out=out), ref, np.float64)
    dd = d.copy(order="K")
    adi.solve_tridiagonal(a, b, c, dd, axis=axis, out=dd)
    assert_close(dd, ref, np.float64)


def test_full_bands_of_other_strides_and_dtypes(rng):
    shape = (8, 9, 10)
    a, b, c = dominant_bands(rng, shape, np.float64)
    b = b.astype(np.float32).astype(np.float64)
    d = rng.standard_normal(shape)
    ref = reference_tridiagonal(a, b, c, d, 1)
    u = adi.solve_tridiagonal(np.asfortranarray(a), b.astype(np.float32), c[:, ::1, :], d, axis=1)
    assert_close(u, ref, np.float64)
    # mixed precision: fp32 bands with fp64 d gives fp64
    assert adi.solve_tridiagonal(a.astype(np.float32), b, c, d, axis=1).dtype == np.float64
    # integers are converted
    ui = adi.solve_tridiagonal(np.zeros(shape, int), np.full(shape, 2), np.zeros(shape, int), np.ones(shape, int))
    np.testing.assert_allclose(ui, 0.5)


@pytest.mark.parametrize("shape,axis", [((3, 4, 5, 6), 2), ((2, 3, 4, 5, 7), 0), ((2, 3, 2, 3, 9), -1)])
def test_more_than_three_axes(shape, axis, rng):
    a, b, c = dominant_bands(rng, shape, np.float64)
    d = rng.standard_normal(shape)
    ref = reference_tridiagonal(a, b, c, d, axis)
    assert_close(adi.solve_tridiagonal(a, b, c, d, axis=axis), ref, np.float64)
    # non-mergeable axes (a strided view): several base offsets of one plan
    sl = tuple(slice(None, None, 2) if e > 2 and i != axis % len(shape) else slice(None) for i, e in enumerate(shape))
    av, bv, cv, dv = (x[sl] for x in (a, b, c, d))
    assert_close(adi.solve_tridiagonal(av, bv, cv, dv, axis=axis), reference_tridiagonal(av, bv, cv, dv, axis),
                 np.float64)


def test_one_dimensional_and_lists():
    u = adi.solve_tridiagonal([0, -1, -1], [2, 2, 2], [-1, -1, 0], [1, 0, 1])
    assert_close(u, reference_tridiagonal([[0, -1, -1]], [[2, 2, 2]], [[-1, -1, 0]], [[1, 0, 1]])[0], np.float64)


def test_plan_object(rng):
    shape = (16, 20, 24)
    plan = adi.TridiagonalPlan(shape, np.float64, axis=1)
    assert plan.kernel in adi.kernel_names()
    a, b, c = dominant_bands(rng, shape, np.float64)
    d = rng.standard_normal(shape)
    out = np.empty(shape)
    for _ in range(3):
        plan.solve(a, b, c, d, out=out)
    assert_close(out, reference_tridiagonal(a, b, c, d, 1), np.float64)
    assert plan.time(a, b, c, d, out, repeats=3) > 0
    with pytest.raises(adi.InvalidArgumentError, match="differs from the plan"):
        plan.solve(a[1:], b[1:], c[1:], d[1:])


@pytest.mark.parametrize("kernel", ["reference", "cpu_thomas", "cpu_thomas_vector"])
def test_forced_kernels(kernel, rng):
    shape = (5, 33, 7)
    a, b, c = dominant_bands(rng, shape, np.float64)
    d = rng.standard_normal(shape)
    assert_close(adi.solve_tridiagonal(a, b, c, d, axis=1, kernel=kernel), reference_tridiagonal(a, b, c, d, 1),
                 np.float64)


def test_singular_system_error():
    shape = (4, 6)
    a, b, c = np.zeros(shape), np.ones(shape), np.zeros(shape)
    b[2, 3] = 0.0
    with pytest.raises(adi.SingularSystemError) as e:
        adi.solve_tridiagonal(a, b, c, np.ones(shape), axis=1)
    assert isinstance(e.value, ArithmeticError) and isinstance(e.value, adi.Error)
    assert e.value.system == 2
    assert "pivot" in str(e.value)
    # check_pivots=False: no exception (and no promise about the values)
    adi.solve_tridiagonal(a, b, c, np.ones(shape), axis=1, check_pivots=False)


def test_invalid_argument_errors():
    d = np.ones((4, 5))
    with pytest.raises(ValueError, match="shape"):
        adi.solve_tridiagonal(np.ones(3), np.ones(5), np.ones(5), d)
    with pytest.raises(adi.InvalidArgumentError, match="axis"):
        adi.solve_tridiagonal(np.ones(5), np.ones(5), np.ones(5), d, axis=2)
    with pytest.raises(adi.InvalidArgumentError, match="dtype"):
        adi.solve_tridiagonal(np.ones(5), np.ones(5), np.ones(5), d.astype(complex))
    with pytest.raises(adi.InvalidArgumentError, match="out: dtype"):
        adi.solve_tridiagonal(np.ones(5), np.ones(5), np.ones(5), d, out=np.empty((4, 5), np.float32))
    ro = np.ones((4, 5))
    ro.flags.writeable = False
    with pytest.raises(adi.InvalidArgumentError, match="read-only"):
        adi.solve_tridiagonal(np.ones(5), np.ones(5), np.ones(5), d, out=ro)
    # a message from C++, unchanged
    with pytest.raises(adi.InvalidArgumentError, match="kernel"):
        adi.solve_tridiagonal(np.ones(5), np.ones(5), np.ones(5), d, kernel="no_such_kernel")


def test_broadcast_output_is_refused():
    d = np.ones((4, 5))
    out = np.lib.stride_tricks.as_strided(np.zeros(5), (4, 5), (0, 8))
    with pytest.raises(adi.InvalidArgumentError, match="share"):
        adi.solve_tridiagonal(np.ones(5), np.full(5, 2.0), np.ones(5), d, out=out)


def test_device_plan_without_cuda():
    if adi.cuda_available():
        pytest.skip("a CUDA device is present: the no-device error is not reachable here")
    with pytest.raises(adi.UnsupportedError, match="CUDA|device"):
        adi.TridiagonalPlan((4, 4), device="cuda")


def test_plan_cache_reuse(rng):
    from adi import _tridiagonal

    adi.clear_plan_cache()
    d = rng.standard_normal((6, 7))
    for _ in range(3):  # no out=: the fast path allocates the result, one cached plan
        u = adi.solve_tridiagonal(np.zeros(7), np.full(7, 2.0), np.zeros(7), d)
        np.testing.assert_allclose(u, d / 2.0, rtol=1e-15)
    assert len(_tridiagonal._fast) == 1 and len(_tridiagonal._cache.plans) == 0
    for _ in range(3):  # int bands: converted on the general path, one cached plan there
        adi.solve_tridiagonal(np.zeros(7, int), np.full(7, 2), np.zeros(7, int), d)
    assert len(_tridiagonal._fast) == 1 and len(_tridiagonal._cache.plans) == 1


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((1,), 0), ((2, 3), 0), ((3, 31), 1), ((33, 2, 5), 1), ((5, 4, 257), 2),
                                        ((255, 3), -2)])
def test_fast_path_new_output(shape, axis, dtype, order, rng):
    """out=None on the fast path: a new array laid out like d (C or Fortran order), the
    solution against the fp64 reference; d is left unchanged."""
    from adi import _tridiagonal

    a, b, c = (np.asarray(x, order=order) for x in dominant_bands(rng, shape, dtype))
    d = np.asarray(rng.standard_normal(shape).astype(dtype), order=order)
    d0 = d.copy()
    adi.clear_plan_cache()
    u = adi.solve_tridiagonal(a, b, c, d, axis=axis)
    assert len(_tridiagonal._fast) == 1 and len(_tridiagonal._cache.plans) == 0
    assert type(u) is np.ndarray and u.dtype == dtype and u.shape == d.shape and u.strides == d.strides
    assert_close(u, reference_tridiagonal(a, b, c, d, axis), dtype)
    np.testing.assert_array_equal(d, d0)


def test_device_array_without_cuda_build_is_refused():
    if adi.cuda_available():
        pytest.skip("a CUDA device is present: the no-CUDA / no-device error is not reachable")

    class FakeDeviceArray:  # what CuPy / Numba / PyTorch present
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (1 << 40, False), "version": 3,
                                    "strides": None}

    x = FakeDeviceArray()
    with pytest.raises(adi.UnsupportedError, match="without CUDA|no CUDA"):
        adi.solve_tridiagonal(x, x, x, x)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_fast_path_matches_general_path(axis, rng):
    from adi import _tridiagonal

    shape = (9, 10, 11)
    a, b, c = dominant_bands(rng, shape, np.float32)
    d = rng.standard_normal(shape).astype(np.float32)
    _tridiagonal.clear_plan_cache()
    fast = np.full(shape, np.nan, np.float32)
    adi.solve_tridiagonal(a, b, c, d, axis=axis, out=fast)
    assert len(_tridiagonal._fast) == 1 and len(_tridiagonal._cache.plans) == 0  # the C++ fast path ran
    general = np.full(shape, np.nan, np.float32, order="F")  # out's strides differ from d's: the general path
    adi.solve_tridiagonal(a, b, c, d, axis=axis, out=general)
    assert len(_tridiagonal._cache.plans) == 1
    np.testing.assert_array_equal(fast, general)
    sa, sb, sc = (np.ascontiguousarray(np.moveaxis(x, axis, -1)[0, 0]) for x in (a, b, c))
    shared = np.full(shape, np.nan, np.float32)
    adi.solve_tridiagonal(sa, sb, sc, d, axis=axis, out=shared)
    assert len(_tridiagonal._fast) == 1 and len(_tridiagonal._cache.plans) == 1  # fast path, same plan
    assert_close(shared, reference_tridiagonal(sa, sb, sc, d, axis), np.float32)


@pytest.mark.parametrize("shape,axis", [((0, 5), 0), ((0, 5), 1), ((3, 0, 4), 2)])
def test_empty_arrays(shape, axis):
    d = np.ones(shape)
    n = shape[axis]
    u = adi.solve_tridiagonal(np.ones(n), np.full(n, 2.0), np.ones(n), d, axis=axis)
    assert u.shape == shape
    out = np.empty(shape)
    assert adi.solve_tridiagonal(np.ones(shape), np.ones(shape), np.ones(shape), d, axis=axis, out=out) is out


@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_fast_path_reads_device_arrays(lib, monkeypatch):
    """Without CUDA: stand-ins for CuPy and PyTorch CUDA arrays (the attributes the C++ fast
    path reads) get as far as the plan, whose CUDA executor is refused. Checks the fast path's
    reading of each library's arrays and current stream on a machine without a GPU."""
    import sys
    import types

    if adi.cuda_compiled():
        pytest.skip("a CUDA build: the stand-ins' fake device pointers must not reach a device")
    backing = np.zeros((3, 4, 5), np.float32)
    address = backing.__array_interface__["data"][0]
    seen = []
    if lib == "cupy":
        cupy, cuda = types.ModuleType("cupy"), types.ModuleType("cupy.cuda")
        cupy.cuda = cuda
        cuda.get_current_stream = lambda: (seen.append("stream"), types.SimpleNamespace(ptr=0))[1]
        cupy.empty_like = lambda x: (seen.append("empty_like"), Array())[1]

        class Array:
            dtype = np.dtype(np.float32)
            data = types.SimpleNamespace(ptr=address, device_id=0)
            shape = (3, 4, 5)
            strides = (80, 20, 4)
        Array.__module__, Array.__name__ = "cupy", "ndarray"
        monkeypatch.setitem(sys.modules, "cupy", cupy)
        monkeypatch.setitem(sys.modules, "cupy.cuda", cuda)
    else:
        torch, tcuda, tC = types.ModuleType("torch"), types.ModuleType("torch.cuda"), types.ModuleType("torch._C")
        torch.float32, torch.float64, torch.cuda, torch._C = object(), object(), tcuda, tC
        tC._cuda_getCurrentRawStream = lambda device: (seen.append("stream"), 0)[1]
        tcuda.current_stream = lambda device: types.SimpleNamespace(cuda_stream=0)
        torch.empty_like = lambda x: (seen.append("empty_like"), Array())[1]

        class Array:
            dtype = torch.float32
            shape = (3, 4, 5)
            is_cuda = True

            def get_device(self):
                return 0

            def data_ptr(self):
                return address

            def stride(self):
                return (20, 5, 1)
        Array.__module__, Array.__name__ = "torch", "Tensor"
        monkeypatch.setitem(sys.modules, "torch", torch)
        monkeypatch.setitem(sys.modules, "torch.cuda", tcuda)
        monkeypatch.setitem(sys.modules, "torch._C", tC)
    x = Array()
    fast = adi._core.FastCache(4)
    with pytest.raises(adi.Error, match="CUDA|device"):
        fast.solve(x, x, x, x, None, 1, False, True, "automatic")
    assert seen == ["empty_like", "stream"]  # d read, the output made like it, the stream asked for
    assert fast.solve(x, x, x, np.zeros((3, 4, 5), np.float32), None, 1, False, True, "automatic") is None


def test_fast_path_read_only_inputs(rng):
    """Read-only bands and d (memory maps, arrays from immutable producers) take the fast path;
    only the output must be writable."""
    from adi import _tridiagonal

    shape = (5, 33)
    a, b, c = dominant_bands(rng, shape, np.float64)
    d = rng.standard_normal(shape)
    for x in (a, b, c, d):
        x.flags.writeable = False
    adi.clear_plan_cache()
    u = adi.solve_tridiagonal(a, b, c, d, axis=1)
    assert len(_tridiagonal._fast) == 1 and len(_tridiagonal._cache.plans) == 0
    assert_close(u, reference_tridiagonal(a, b, c, d, 1), np.float64)
    with pytest.raises(adi.InvalidArgumentError, match="read-only"):
        adi.solve_tridiagonal(a, b, c, d, axis=1, out=d)


def test_new_output_keeps_numpy_subclass(rng):
    """out=None with a NumPy subclass for d: the general path, whose empty_like keeps the subclass."""
    d = np.ma.masked_array(rng.standard_normal((4, 7)))
    u = adi.solve_tridiagonal(np.zeros(7), np.full(7, 2.0), np.zeros(7), d)
    assert isinstance(u, np.ma.MaskedArray)
    np.testing.assert_allclose(np.asarray(u), np.asarray(d) / 2.0, rtol=1e-15)
