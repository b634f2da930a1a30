"""Device arrays: CuPy, PyTorch and JAX arrays and a DLPack-only producer, solved in place on
the GPU on the caller's stream, against the fp64 host reference. Every test skips loudly
(the reason is printed by pytest -rs) without a CUDA build, a device, or the library."""
from __future__ import annotations

import numpy as np
import pytest

import adi
from conftest import assert_close, dominant_bands, reference_tridiagonal

pytestmark = pytest.mark.gpu

SHAPES = [(257, 5, 6), (5, 33, 6), (5, 6, 1), (2, 3, 255)]


def need_gpu():
    if not adi.cuda_compiled():
        pytest.skip("adi was built without CUDA (configure with -DADI_WITH_CUDA=ON): GPU test not run")
    if not adi.cuda_available():
        pytest.skip("no CUDA device answers: GPU test not run")


def need_cupy():
    need_gpu()
    return pytest.importorskip("cupy", reason="CuPy is not installed: CuPy GPU test not run")


def need_torch():
    need_gpu()
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: PyTorch GPU test not run")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device: PyTorch GPU test not run")
    return torch


def host_problem(shape, dtype, seed=7):
    rng = np.random.default_rng(seed)
    a, b, c = dominant_bands(rng, shape, dtype)
    return a, b, c, rng.standard_normal(shape).astype(dtype)


# --- CuPy ---------------------------------------------------------------------------------

@pytest.mark.parametrize("periodic", [False, True], ids=["plain", "periodic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_cupy_every_axis(shape, axis, dtype, periodic):
    cp = need_cupy()
    a, b, c, d = host_problem(shape, dtype)
    ga, gb, gc, gd = (cp.asarray(x) for x in (a, b, c, d))
    out = cp.full(shape, cp.nan, dtype=dtype)
    u = adi.solve_tridiagonal(ga, gb, gc, gd, axis=axis, periodic=periodic, out=out)
    assert u is out
    assert_close(cp.asnumpy(u), reference_tridiagonal(a, b, c, d, axis, periodic), dtype)
    # a new CuPy array when out is None
    v = adi.solve_tridiagonal(ga, gb, gc, gd, axis=axis, periodic=periodic)
    assert isinstance(v, cp.ndarray)
    assert_close(cp.asnumpy(v), reference_tridiagonal(a, b, c, d, axis, periodic), dtype)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cupy_views_shared_bands_in_place(axis):
    cp = need_cupy()
    a, b, c, d = host_problem((20, 18, 22), np.float64)
    view = lambda x: x[::2, ::-1, 1:].transpose(1, 2, 0)  # noqa: E731
    ga, gb, gc, gd = (view(cp.asarray(x)) for x in (a, b, c, d))
    ha, hb, hc, hd = (view(x) for x in (a, b, c, d))
    assert_close(cp.asnumpy(adi.solve_tridiagonal(ga, gb, gc, gd, axis=axis)),
                 reference_tridiagonal(ha, hb, hc, hd, axis), np.float64)
    n = hd.shape[axis]
    sa, sb, sc = (x.ravel()[:n].copy() for x in (a, b, c))
    sb = np.abs(sb) + 3
    # 1-D shared bands given as NumPy arrays: moved to the device (n values)
    gd2 = gd.copy()
    adi.solve_tridiagonal(sa, sb, sc, gd2, axis=axis, out=gd2)
    assert_close(cp.asnumpy(gd2), reference_tridiagonal(sa, sb, sc, hd, axis), np.float64)


def test_cupy_stream_and_plan_time():
    cp = need_cupy()
    a, b, c, d = host_problem((64, 64, 64), np.float32)
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        ga, gb, gc, gd = (cp.asarray(x) for x in (a, b, c, d))
        u = adi.solve_tridiagonal(ga, gb, gc, gd, axis=1, check_pivots=False)  # asynchronous, on s
        from adi import _tridiagonal

        streams = list(_tridiagonal._fast.streams()) + [key[0][3] for key in _tridiagonal._cache.plans]
        assert s.ptr in streams, "plan not built for the caller's stream"
        plan = adi.TridiagonalPlan((64, 64, 64), np.float32, axis=1, device="cuda")
        assert plan.time(ga, gb, gc, gd, cp.empty_like(gd), repeats=3) > 0
    s.synchronize()
    assert_close(cp.asnumpy(u), reference_tridiagonal(a, b, c, d, 1), np.float32)


def test_cupy_singular_and_other_families():
    cp = need_cupy()
    b = cp.ones((4, 6))
    b[3, 2] = 0
    with pytest.raises(adi.SingularSystemError) as e:
        adi.solve_tridiagonal(cp.zeros((4, 6)), b, cp.zeros((4, 6)), cp.ones((4, 6)))
    # The host names the line; the CUDA kernels raise one flag for the batch (system -1).
    assert e.value.system in (3, -1)
    rng = np.random.default_rng(1)
    m, n = 3, 17
    A = rng.uniform(-0.3, 0.3, (5, n, m, m))
    C = rng.uniform(-0.3, 0.3, (5, n, m, m))
    B = rng.uniform(-0.3, 0.3, (5, n, m, m)) + 4 * np.eye(m)
    D = rng.standard_normal((5, n, m))
    ref = adi.solve_block_tridiagonal(A, B, C, D)
    got = adi.solve_block_tridiagonal(*(cp.asarray(x) for x in (A, B, C, D)))
    assert_close(cp.asnumpy(got), ref, np.float64)
    sizes = [3, 0, 33, 1]
    tot = sum(sizes)
    va, vc = rng.uniform(-1, 1, (2, tot))
    vb = rng.uniform(2.5, 4, tot)
    vd = rng.standard_normal(tot)
    ref = adi.solve_variable_tridiagonal(va, vb, vc, vd, sizes)
    got = adi.solve_variable_tridiagonal(*(cp.asarray(x) for x in (va, vb, vc, vd)), sizes)
    assert_close(cp.asnumpy(got), ref, np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_cupy_new_plans_and_layouts(dtype):
    """BlockTridiagonalPlan, SortedInterleaved variable batches and a Cholesky PointerBatch
    on CuPy arrays, against the host results (NaN-poisoned outputs)."""
    cp = need_cupy()
    rng = np.random.default_rng(5)
    m, n = 4, 33
    A, C = rng.uniform(-0.3, 0.3, (2, 3, n, m, m)).astype(dtype)
    B = (rng.uniform(-0.3, 0.3, (3, n, m, m)) + 4 * np.eye(m)).astype(dtype)
    D = rng.standard_normal((3, n, m)).astype(dtype)
    ref = adi.solve_block_tridiagonal(A, B, C, D)
    plan = adi.BlockTridiagonalPlan((3, n, m), dtype, device="cuda")
    out = cp.full((3, n, m), cp.nan, dtype)
    for _ in range(2):
        plan.solve(*(cp.asarray(x) for x in (A, B, C, D)), out=out)
        assert_close(cp.asnumpy(out), ref.astype(float), dtype)
    sizes = [0, 1, 2, 3, 31, 33, 255, 257, 5]
    tot = sum(sizes)
    va, vc = rng.uniform(-1, 1, (2, tot)).astype(dtype)
    vb = rng.uniform(2.5, 4, tot).astype(dtype)
    vd = rng.standard_normal(tot).astype(dtype)
    ref = adi.VariableTridiagonalPlan(sizes, dtype).solve(va, vb, vc, vd)
    vplan = adi.VariableTridiagonalPlan(sizes, dtype, device="cuda", layout="sorted")
    packed = [vplan.pack(cp.asarray(x)) for x in (va, vb, vc, vd)]
    vout = cp.full(vplan.span, cp.nan, dtype)
    vplan.solve(*packed, out=vout)
    assert_close(cp.asnumpy(vplan.unpack(vout)), ref.astype(float), dtype)
    csizes = [0, 1, 2, 31, 33, 5]
    mats = []
    for k in csizes:
        x = rng.standard_normal((k, k))
        mats.append((x @ x.T + k * np.eye(k)).astype(dtype))
    rhs = [rng.standard_normal(k).astype(dtype) for k in csizes]
    dm = [cp.asfortranarray(cp.asarray(x)) for x in mats]
    db = [cp.asarray(x) for x in rhs]
    cplan = adi.BatchedCholeskyPlan(csizes, dtype, device="cuda", layout="pointers")
    info = cplan.factor(dm)
    assert cp.asnumpy(info).tolist() == [0] * len(csizes)
    cplan.solve(dm, db, 1, info=info)
    for mat, r, x in zip(mats, rhs, db):
        if len(r):
            assert_close(cp.asnumpy(x), np.linalg.solve(mat.astype(float), r.astype(float)), dtype)


@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_fast_path_new_output_on_device(lib):
    """out=None on the device: the result is allocated by the fast path, like d."""
    from adi import _tridiagonal

    mod = need_cupy() if lib == "cupy" else need_torch()
    a, b, c, d = host_problem((9, 33, 7), np.float32)
    put = (lambda x: mod.asarray(x)) if lib == "cupy" else (lambda x: mod.from_numpy(x).cuda())
    ga, gb, gc, gd = (put(x) for x in (a, b, c, d))
    adi.clear_plan_cache()
    for axis in (0, 1, 2):
        u = adi.solve_tridiagonal(ga, gb, gc, gd, axis=axis)
        assert type(u) is type(gd) and tuple(u.shape) == d.shape
        host = u.get() if lib == "cupy" else u.cpu().numpy()
        assert_close(host, reference_tridiagonal(a, b, c, d, axis), np.float32)
    assert len(_tridiagonal._fast) == 3 and len(_tridiagonal._cache.plans) == 0


def test_dlpack_only_producer():
    cp = need_cupy()

    class OnlyDLPack:  # a library adi knows nothing about, reachable through DLPack alone
        def __init__(self, x):
            self.x = x

        def __dlpack__(self, stream=None):
            return self.x.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.x.__dlpack_device__()

    a, b, c, d = host_problem((9, 33, 7), np.float64)
    g = [cp.asarray(x) for x in (a, b, c, d)]
    w = [OnlyDLPack(x) for x in g]
    adi.solve_tridiagonal(*w, axis=1, out=w[3])  # in place, no copy
    assert_close(cp.asnumpy(g[3]), reference_tridiagonal(a, b, c, d, 1), np.float64)
    with pytest.raises(adi.UnsupportedError, match="out="):
        adi.solve_tridiagonal(*w, axis=1)


# --- PyTorch ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_torch_every_axis(shape, axis, dtype):
    torch = need_torch()
    a, b, c, d = host_problem(shape, dtype)
    ta, tb, tc, td = (torch.from_numpy(x).cuda() for x in (a, b, c, d))
    u = adi.solve_tridiagonal(ta, tb, tc, td, axis=axis)
    assert isinstance(u, torch.Tensor) and u.is_cuda
    assert_close(u.cpu().numpy(), reference_tridiagonal(a, b, c, d, axis), dtype)
    # transposed (non-contiguous) tensors, in place
    tt = [x.transpose(0, 2) for x in (ta, tb, tc, td)]
    dd = tt[3].clone()
    adi.solve_tridiagonal(tt[0], tt[1], tt[2], dd, axis=axis, out=dd)
    ht = [np.swapaxes(x, 0, 2) for x in (a, b, c, d)]
    assert_close(dd.cpu().numpy(), reference_tridiagonal(*ht, axis), dtype)


def test_torch_stream_and_grad_tensors():
    torch = need_torch()
    a, b, c, d = host_problem((32, 40, 48), np.float32)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        ta, tb, tc, td = (torch.from_numpy(x).cuda() for x in (a, b, c, d))
        td.requires_grad_(True)
        u = adi.solve_tridiagonal(ta, tb, tc, td, axis=0, check_pivots=False)
        from adi import _tridiagonal

        streams = list(_tridiagonal._fast.streams()) + [key[0][3] for key in _tridiagonal._cache.plans]
        assert s.cuda_stream in streams, "plan not built for the caller's stream"
    s.synchronize()
    assert_close(u.cpu().numpy(), reference_tridiagonal(a, b, c, d, 0), np.float32)


# --- JAX ----------------------------------------------------------------------------------

def test_jax_arrays():
    need_gpu()
    jax = pytest.importorskip("jax", reason="JAX is not installed: JAX GPU test not run")
    try:
        jax.devices("gpu")
    except RuntimeError:
        pytest.skip("JAX has no GPU backend: JAX GPU test not run")
    import jax.numpy as jnp

    a, b, c, d = host_problem((16, 33, 8), np.float32)
    ja, jb, jc, jd = (jax.device_put(jnp.asarray(x), jax.devices("gpu")[0]) for x in (a, b, c, d))
    u = adi.solve_tridiagonal(ja, jb, jc, jd, axis=1)
    assert isinstance(u, jax.Array)
    assert_close(np.asarray(u), reference_tridiagonal(a, b, c, d, 1), np.float32)
    np.testing.assert_array_equal(np.asarray(jd), d)  # inputs untouched (JAX arrays are immutable)
    with pytest.raises(adi.InvalidArgumentError, match="immutable"):
        adi.solve_tridiagonal(ja, jb, jc, jd, out=jd)


# --- finance: American exercise under Heston and on 2-3 assets on the device ---------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["fp64", "fp32"])
def test_american_heston_and_two_assets_on_the_device(dtype):
    need_gpu()
    from adi import finance as fin

    # The Ikonen-Toivanen / Clarke-Parrott put (reference 0.520038) and a 2-asset basket put.
    heston = fin.HestonModel(spot=10, v0=0.0625, kappa=5, theta=0.16, sigma=0.9, rho=0.1, rate=0.1)
    put = fin.Contract.vanilla("put", 10, 0.25, "american")
    two = fin.BlackScholesModel([fin.Asset(100, 0.2), fin.Asset(100, 0.3)], [1, 0.3, 0.3, 1], 0.08)
    basket = fin.Contract.basket("put", 100, 1.0)
    basket.exercise = fin.Exercise.american
    tol = 1e-12 if dtype == np.float64 else 5e-5  # relative to the price (tests/adi/finance/test_american_gpu.cpp)
    for model, contract, kw in ((heston, put, dict(nodes=80, variance_nodes=40, steps=40)),
                                (two, basket, dict(nodes=41, steps=20))):
        host = fin.price(model, contract, fin.method(step_grading=2, **kw), dtype=dtype)
        dev = fin.price(model, contract, fin.method(step_grading=2, device="cuda", **kw), dtype=dtype)
        assert abs(dev.price - host.price) <= tol * abs(host.price)
        np.testing.assert_allclose(dev.values, host.values, rtol=0, atol=20 * tol * np.abs(host.values).max())
    with pytest.raises(adi.InvalidArgumentError, match="peaceman-rachford"):
        fin.price(heston, put, fin.method(scheme="peaceman-rachford", device="cuda"))
