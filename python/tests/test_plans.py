"""Plan objects and layouts added for issue 21: BlockTridiagonalPlan (reuse), variable-size
batches in SortedInterleaved (pack / solve / unpack) and batched Cholesky through a
PointerBatch (one array per matrix, any leading dimension), against fp64 references, odd
sizes, both precisions, outputs poisoned with NaN."""
from __future__ import annotations

import numpy as np
import pytest

import adi
from conftest import assert_close, tridiagonal_dense
from test_families import block_dense

DTYPES = pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])


# --- BlockTridiagonalPlan --------------------------------------------------------------

def block_problem(rng, shape, m, dtype):
    a = rng.uniform(-0.3, 0.3, shape + (m, m)).astype(dtype)
    c = rng.uniform(-0.3, 0.3, shape + (m, m)).astype(dtype)
    b = (rng.uniform(-0.3, 0.3, shape + (m, m)) + 4 * np.eye(m)).astype(dtype)
    d = rng.standard_normal(shape + (m,)).astype(dtype)
    return a, b, c, d


@DTYPES
@pytest.mark.parametrize("periodic", [False, True], ids=["plain", "periodic"])
@pytest.mark.parametrize("systems,n,m", [((), 1, 2), ((3,), 33, 3), ((2, 3), 31, 5), ((1,), 2, 8), ((5,), 3, 4)])
def test_block_plan_reused(systems, n, m, dtype, periodic, rng):
    plan = adi.BlockTridiagonalPlan(systems + (n, m), dtype, periodic=periodic)
    assert plan.kernel and plan.workspace_bytes >= 0 and "BlockTridiagonalPlan" in repr(plan)
    for _ in range(2):  # fresh data each time, the same C++ plan
        a, b, c, d = block_problem(rng, systems + (n,), m, dtype)
        out = np.full(d.shape, np.nan, dtype)
        assert plan.solve(a, b, c, d, out=out) is out
        for s in np.ndindex(*systems):
            ref = np.linalg.solve(block_dense(a[s].astype(float), b[s].astype(float), c[s].astype(float), periodic),
                                  d[s].astype(float).ravel())
            assert_close(out[s].ravel(), ref, dtype)
        np.testing.assert_array_equal(plan.solve(a, b, c, d), out)
    assert len(plan._cache.plans) == 1  # C-contiguous arrays: the plan built at construction only


def test_block_plan_views_and_errors(rng):
    m, n = 3, 9
    a, b, c, d = block_problem(rng, (n, 4), m, np.float64)
    av, bv, cv, dv = (np.swapaxes(x, 0, 1) for x in (a, b, c, d))  # strided views: another plan inside
    plan = adi.BlockTridiagonalPlan((4, n, m))
    u = plan.solve(av, bv, cv, dv)
    for s in range(4):
        assert_close(u[s].ravel(), np.linalg.solve(block_dense(av[s], bv[s], cv[s], False), dv[s].ravel()), np.float64)
    with pytest.raises(adi.InvalidArgumentError, match="differs from the plan"):
        plan.solve(a, b, c, d)
    with pytest.raises(adi.InvalidArgumentError, match="shape"):
        adi.BlockTridiagonalPlan((3,))
    b2 = bv.copy()
    b2[2, 5] = 0.0
    with pytest.raises(adi.SingularBlockError) as e:
        plan.solve(np.zeros_like(av), b2, np.zeros_like(cv), dv)
    assert (e.value.system, e.value.row) == (2, 5)


# --- variable-size batches in SortedInterleaved ----------------------------------------

def variable_problem(rng, sizes, dtype):
    total = int(sum(sizes))
    a, c = rng.uniform(-1, 1, (2, total)).astype(dtype)
    b = rng.uniform(2.5, 4, total).astype(dtype)
    d = rng.standard_normal(total).astype(dtype)
    return a, b, c, d


def variable_reference(sizes, a, b, c, d, periodic):
    out, o = [], 0
    for n in sizes:
        if n:
            s = slice(o, o + n)
            full = tridiagonal_dense(a[None, s], b[None, s], c[None, s], periodic)[0]
            out.append(np.linalg.solve(full, d[s].astype(float)))
        o += n
    return np.concatenate(out) if out else np.empty(0)


@DTYPES
@pytest.mark.parametrize("periodic", [False, True], ids=["plain", "periodic"])
def test_variable_sorted_layout(dtype, periodic, rng):
    sizes = [0, 1, 2, 3, 31, 33, 255, 257, 5] + list(rng.integers(0, 40, 40))
    a, b, c, d = variable_problem(rng, sizes, dtype)
    plan = adi.VariableTridiagonalPlan(sizes, dtype, periodic=periodic, layout="sorted")
    assert plan.total == sum(sizes) and plan.span >= plan.total and plan.layout == "sorted"
    A, B, C, D = (plan.pack(x) for x in (a, b, c, d))
    assert A.shape == (plan.span,)
    out = np.full(plan.span, np.nan, dtype)
    assert plan.solve(A, B, C, D, out=out) is out
    compact = np.full(plan.total, np.nan, dtype)
    u = plan.unpack(out, out=compact)
    assert u is compact
    assert_close(u, variable_reference(sizes, a, b, c, d, periodic), dtype)
    np.testing.assert_array_equal(plan.unpack(D), d)  # pack / unpack round trip
    # the compact plan gives the same numbers
    ref = adi.VariableTridiagonalPlan(sizes, dtype, periodic=periodic).solve(a, b, c, d)
    assert_close(u, ref.astype(float), dtype)


def test_variable_sorted_errors(rng):
    sizes = [3, 7, 1]
    plan = adi.VariableTridiagonalPlan(sizes, layout="sorted")
    a, b, c, d = variable_problem(rng, sizes, np.float64)
    if plan.span != plan.total:
        with pytest.raises(adi.InvalidArgumentError, match="span"):
            plan.solve(a, b, c, d)  # compact arrays passed to a sorted plan
    with pytest.raises(adi.InvalidArgumentError, match="sizes' sum"):
        plan.pack(np.ones(plan.total + 1))
    with pytest.raises(adi.InvalidArgumentError, match="layout"):
        adi.VariableTridiagonalPlan(sizes, layout="padded")
    compact = adi.VariableTridiagonalPlan(sizes)  # pack / unpack are copies there
    np.testing.assert_array_equal(compact.unpack(compact.pack(d)), d)


# --- batched Cholesky through a PointerBatch -------------------------------------------

def spd(rng, n, dtype):
    x = rng.standard_normal((n, n))
    return (x @ x.T + n * np.eye(n)).astype(dtype)


@DTYPES
@pytest.mark.parametrize("nrhs", [1, 3])
def test_cholesky_pointer_batch(dtype, nrhs, rng):
    sizes = [0, 1, 2, 3, 31, 33, 64, 255, 257, 5]
    mats = [spd(rng, n, dtype) for n in sizes]
    # matrices as blocks of larger Fortran-ordered arrays: leading dimension n + 3
    ld = [n + 3 for n in sizes]
    big = [np.asfortranarray(np.full((n + 3, n + 3), np.nan, dtype)) for n in sizes]
    for g, m, n in zip(big, mats, sizes):
        g[:n, :n] = m
    views = [g[:n, :n] for g, n in zip(big, sizes)]
    plan = adi.BatchedCholeskyPlan(sizes, dtype, layout="pointers", ld=ld)
    info = plan.factor(views)
    assert list(info) == [0] * len(sizes)
    for g, n in zip(big, sizes):  # only the matrices were touched
        assert np.isnan(g[n:, :]).all() and np.isnan(g[:, n:]).all()
    rhs = [rng.standard_normal((n, nrhs) if nrhs > 1 else (n,)).astype(dtype) for n in sizes]
    b = [x.copy(order="F") for x in rhs]
    assert plan.solve(views, b, nrhs, info=info) is b
    for m, r, x, n in zip(mats, rhs, b, sizes):
        if n:
            assert_close(x, np.linalg.solve(m.astype(float), r.astype(float)), dtype)


def test_cholesky_pointer_batch_default_ld_and_errors(rng):
    sizes = [4, 2]
    mats = [np.asfortranarray(spd(rng, n, np.float64)) for n in sizes]
    ref = [m.copy() for m in mats]
    plan = adi.BatchedCholeskyPlan(sizes, layout="pointers")
    assert list(plan.factor(mats)) == [0, 0]
    b = [np.ones(n) for n in sizes]
    plan.solve(mats, b)
    for m, x in zip(ref, b):
        assert_close(x, np.linalg.solve(m, np.ones(len(x))), np.float64)
    # a symmetric C-ordered matrix passed as its transpose (column-major view)
    c_order = [np.ascontiguousarray(m) for m in ref]
    assert list(plan.factor([m.T for m in c_order])) == [0, 0]
    with pytest.raises(adi.InvalidArgumentError, match="column-major"):
        plan.factor([np.ascontiguousarray(spd(rng, 4, np.float64))[:, :], np.ascontiguousarray(ref[1])[::1, ::-1]])
    with pytest.raises(adi.InvalidArgumentError, match="2 matrices"):
        plan.factor([ref[0]])
    with pytest.raises(adi.InvalidArgumentError, match="layout='pointers'"):
        plan.factor(np.ones(20))
    with pytest.raises(adi.InvalidArgumentError, match="leading dimension 6"):
        adi.BatchedCholeskyPlan(sizes, layout="pointers", ld=[6, 2]).factor([np.asfortranarray(m) for m in ref])
    with pytest.raises(adi.InvalidArgumentError, match="layout"):
        adi.BatchedCholeskyPlan(sizes, layout="strided")
    bad = [np.asfortranarray(np.eye(4)), np.array([[1.0, 2.0], [2.0, 1.0]], order="F")]
    assert list(adi.BatchedCholeskyPlan(sizes, layout="pointers").factor(bad)) == [0, 2]
    with pytest.raises(adi.SingularSystemError) as e:
        adi.BatchedCholeskyPlan(sizes, layout="pointers", check_pivots=True).factor(
            [np.asfortranarray(np.eye(4)), np.array([[1.0, 2.0], [2.0, 1.0]], order="F")])
    assert e.value.system == 1
