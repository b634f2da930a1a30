"""The other families from Python against dense fp64 references: block-tridiagonal,
variable-size batches, batched Cholesky, Hines (SWC morphologies, passive neurons), the heat
solver and the pricers; and the error mapping of each."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

import adi
from adi import finance as fin
from conftest import assert_close, tridiagonal_dense

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWC = os.path.join(ROOT, "tests", "data", "morphologies", "EBT7R.CNG.swc")


# --- block tridiagonal ----------------------------------------------------------------

def block_dense(a, b, c, periodic):
    n, m = b.shape[0], b.shape[1]
    full = np.zeros((n * m, n * m))
    for i in range(n):
        full[i * m:(i + 1) * m, i * m:(i + 1) * m] += b[i]
        if i > 0:
            full[i * m:(i + 1) * m, (i - 1) * m:i * m] += a[i]
        if i < n - 1:
            full[i * m:(i + 1) * m, (i + 1) * m:(i + 2) * m] += c[i]
    if periodic and n > 1:
        full[0:m, (n - 1) * m:] += a[0]
        full[(n - 1) * m:, 0:m] += c[n - 1]
    if periodic and n == 1:
        full += a[0] + c[0]
    return full


@pytest.mark.parametrize("periodic", [False, True], ids=["plain", "periodic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("m,n", [(2, 1), (2, 33), (3, 2), (5, 3), (8, 31)])
def test_block_tridiagonal(m, n, dtype, periodic, rng):
    systems = (3, 2)
    a = rng.uniform(-0.3, 0.3, systems + (n, m, m)).astype(dtype)
    c = rng.uniform(-0.3, 0.3, systems + (n, m, m)).astype(dtype)
    b = (rng.uniform(-0.3, 0.3, systems + (n, m, m)) + 4 * np.eye(m)).astype(dtype)
    d = rng.standard_normal(systems + (n, m)).astype(dtype)
    out = np.full(d.shape, np.nan, dtype)
    u = adi.solve_block_tridiagonal(a, b, c, d, periodic=periodic, out=out)
    for s in np.ndindex(*systems):
        ref = np.linalg.solve(block_dense(a[s].astype(float), b[s].astype(float), c[s].astype(float), periodic),
                              d[s].astype(float).ravel())
        assert_close(u[s].ravel(), ref, dtype)


def test_block_views_and_singular(rng):
    m, n = 3, 9
    a = rng.uniform(-0.3, 0.3, (n, 4, m, m))
    c = rng.uniform(-0.3, 0.3, (n, 4, m, m))
    b = rng.uniform(-0.3, 0.3, (n, 4, m, m)) + 4 * np.eye(m)
    d = rng.standard_normal((n, 4, m))
    # systems on axis 1, block rows on axis 0: views with the block-row axis second to last
    av, bv, cv, dv = (np.swapaxes(x, 0, 1) for x in (a, b, c, d))
    u = adi.solve_block_tridiagonal(av, bv, cv, dv)
    for s in range(4):
        assert_close(u[s].ravel(), np.linalg.solve(block_dense(av[s], bv[s], cv[s], False), dv[s].ravel()), np.float64)
    # column-major blocks (transposed views) are copied
    u2 = adi.solve_block_tridiagonal(np.swapaxes(np.swapaxes(av, -1, -2).copy(), -1, -2), bv, cv, dv)
    assert_close(u2, u, np.float64)
    b2 = bv.copy()
    b2[1, 4] = 0.0
    with pytest.raises(adi.SingularBlockError) as e:
        adi.solve_block_tridiagonal(np.zeros_like(av), b2, np.zeros_like(cv), dv)
    assert isinstance(e.value, adi.SingularSystemError)
    assert (e.value.system, e.value.row) == (1, 4)
    with pytest.raises(adi.InvalidArgumentError, match="block size|M = |m = "):
        adi.solve_block_tridiagonal(*(np.ones((2, 9, 9)),) * 3, np.ones((2, 9)))


# --- variable-size batches ------------------------------------------------------------

@pytest.mark.parametrize("periodic", [False, True], ids=["plain", "periodic"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_variable_tridiagonal(dtype, periodic, rng):
    sizes = [0, 1, 2, 3, 31, 33, 255, 257, 5]
    systems = []
    for n in sizes:
        a, c = rng.uniform(-1, 1, (2, n)).astype(dtype)
        b = rng.uniform(2.5, 4, n).astype(dtype)
        systems.append((a, b, c, rng.standard_normal(n).astype(dtype)))
    a, b, c, d = ([s[k] for s in systems] for k in range(4))
    u = adi.solve_variable_tridiagonal(a, b, c, d, periodic=periodic)
    assert [len(x) for x in u] == sizes
    for (sa, sb, sc, sd), su in zip(systems, u):
        if len(sd):
            ref = np.linalg.solve(tridiagonal_dense(sa[None], sb[None], sc[None], periodic)[0], sd.astype(float))
            assert_close(su, ref, dtype)
    plan = adi.VariableTridiagonalPlan(sizes, dtype, periodic=periodic)
    packed = [np.concatenate(x) for x in (a, b, c, d)]
    out = np.full(plan.total, np.nan, dtype)
    plan.solve(*packed, out=out)
    assert_close(out, np.concatenate(u).astype(float), dtype)


def test_variable_errors():
    with pytest.raises(adi.InvalidArgumentError, match="size"):
        adi.VariableTridiagonalPlan([3, -1])
    with pytest.raises(adi.SingularSystemError) as e:
        adi.solve_variable_tridiagonal([np.zeros(2), np.zeros(3)], [np.ones(2), np.array([1.0, 0.0, 1.0])],
                                       [np.zeros(2), np.zeros(3)], [np.ones(2), np.ones(3)])
    assert e.value.system == 1


def test_variable_kernel_option():
    # The algorithm is `kernel` in every family (issue 15); `method` still works, with a warning.
    sizes = [4, 6, 0, 5]
    a, c = (np.full(sum(sizes), -1.0) for _ in range(2))
    b, d = np.full(sum(sizes), 4.0), np.ones(sum(sizes))
    plan = adi.VariableTridiagonalPlan(sizes, kernel="stop_at_size")
    assert plan.kernel.startswith("stop_at_size")
    ref = adi.VariableTridiagonalPlan(sizes, kernel="reference").solve(a, b, c, d)
    np.testing.assert_allclose(plan.solve(a, b, c, d), ref, rtol=1e-14)
    with pytest.warns(DeprecationWarning, match="kernel"):
        old = adi.VariableTridiagonalPlan(sizes, method="reference")
    assert old.kernel == "reference"
    u = adi.solve_variable_tridiagonal(a, b, c, d, sizes, kernel="reference")
    np.testing.assert_allclose(u, ref, rtol=1e-14)
    with pytest.raises(adi.InvalidArgumentError, match="kernel"):
        adi.VariableTridiagonalPlan(sizes, kernel="fastest")


# --- batched Cholesky ------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_cholesky(dtype, rng):
    sizes = [0, 1, 2, 3, 31, 33, 64, 5]
    mats, rhs = [], []
    for n in sizes:
        x = rng.standard_normal((n, n))
        mats.append((x @ x.T + n * np.eye(n)).astype(dtype))
        rhs.append(rng.standard_normal((n, 2)).astype(dtype))
    sol = adi.cholesky_solve(mats, rhs)
    for m, b, x in zip(mats, rhs, sol):
        if len(b):
            assert_close(x, np.linalg.solve(m.astype(float), b.astype(float)), dtype)


def test_cholesky_not_positive_definite():
    m = [np.eye(3), np.array([[1.0, 2.0], [2.0, 1.0]])]
    with pytest.raises(adi.SingularSystemError) as e:
        adi.cholesky_solve(m, [np.ones(3), np.ones(2)])
    assert e.value.system == 1
    plan = adi.BatchedCholeskyPlan([3, 2])
    a = np.concatenate([x.ravel(order="F") for x in m])
    info = plan.factor(a)
    assert list(info) == [0, 2]
    # check_pivots (was throw_on_failure): the factor raises, naming matrix and column.
    checked = adi.BatchedCholeskyPlan([3, 2], check_pivots=True)
    with pytest.raises(adi.SingularSystemError) as e:
        checked.factor(np.concatenate([x.ravel(order="F") for x in m]))
    assert (e.value.system, e.value.row) == (1, 1)
    with pytest.warns(DeprecationWarning, match="check_pivots"):
        adi.BatchedCholeskyPlan([3, 2], throw_on_failure=True)


# --- Hines ------------------------------------------------------------------------------

def hines_dense(parent, offdiag, diag):
    n = len(parent)
    m = np.diag(np.asarray(diag, float))
    for i in range(1, n):
        m[i, parent[i]] = m[parent[i], i] = offdiag[i]
    return m


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["fp32", "fp64"])
def test_hines_swc(dtype, rng):
    if not os.path.exists(SWC):
        pytest.skip(f"morphology {SWC} not in this checkout")
    cell = adi.Morphology.read_swc(SWC)
    assert cell.section_count > 1
    comp = adi.discretise(cell, adi.CableParameters())
    offdiag, diag = adi.implicit_euler_matrix(comp, 0.025)
    parent = comp.parent
    count = 5
    rhs = rng.standard_normal((count, comp.size)).astype(dtype)
    diag_in = np.tile(diag, (count, 1)).astype(dtype)
    u = adi.solve_hines(parent, np.tile(offdiag, (count, 1)).astype(dtype), diag_in, rhs)
    m = hines_dense(parent, offdiag, diag)
    for s in range(count):
        assert_close(u[s], np.linalg.solve(m, rhs[s].astype(float)), dtype)
    np.testing.assert_array_equal(diag_in, np.tile(diag, (count, 1)).astype(dtype))  # not modified


def test_hines_synthetic_and_singular(rng):
    morph, params = adi.synthetic_neuron("small-high", seed=3)
    comp = adi.discretise(morph, params)
    assert comp.size == 76
    offdiag, diag = adi.implicit_euler_matrix(comp, 0.1)
    rhs = rng.standard_normal(comp.size)
    assert_close(adi.solve_hines(comp.parent, offdiag, diag, rhs), np.linalg.solve(
        hines_dense(comp.parent, offdiag, diag), rhs), np.float64)
    bad = np.array(diag)
    bad[0] = 0.0
    with pytest.raises(adi.SingularSystemError):
        adi.solve_hines(comp.parent, np.zeros_like(offdiag), bad, rhs)
    with pytest.raises(adi.InvalidArgumentError):
        adi.solve_hines([-1, 1], np.ones(2), np.ones(2), np.ones(2))  # a parent after its child


def test_passive_neurons():
    morph, params = adi.synthetic_neuron("small-low")
    comp = adi.discretise(morph, params)
    cells = adi.PassiveNeurons([comp], [0, 0], dt=0.025)
    cells.set_voltage(-65.0)
    cells.set_current(1, 1, 0.1)
    cells.step(400)
    assert abs(cells.time - 10.0) < 1e-9
    v0, v1 = cells.voltage(0), cells.voltage(1)
    assert np.all(np.isfinite(v1))
    assert abs(v0.mean() - comp.e_leak) < abs(-65.0 - comp.e_leak)  # relaxes toward e_leak
    assert v1.max() > v0.max()  # the injected current depolarises
    with pytest.raises(adi.InvalidArgumentError):
        adi.PassiveNeurons([comp], [0], dt=-1.0)


def test_swc_errors(tmp_path):
    p = tmp_path / "bad.swc"
    p.write_text("1 1 0 0 0 1 -1\n2 3 0 0 x 1 1\n")
    with pytest.raises(adi.InvalidArgumentError, match="bad.swc:2"):
        adi.Morphology.read_swc(str(p))
    with pytest.raises(adi.Error):
        adi.Morphology.read_swc(str(tmp_path / "missing.swc"))


# --- heat --------------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["douglas", "craig-sneyd", "hundsdorfer-verwer"])
def test_heat_against_exact(scheme):
    n = 33
    s = adi.HeatSolver((n, n, n), scheme=scheme, diffusion=1.0, boundary="dirichlet")
    x, y, z = np.meshgrid(s.nodes(0), s.nodes(1), s.nodes(2), indexing="ij")
    s.u = np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z)
    t1 = 0.02
    s.advance(0.0, t1, 20)
    exact = math.exp(-3 * np.pi ** 2 * t1) * np.sin(np.pi * x) * np.sin(np.pi * y) * np.sin(np.pi * z)
    assert np.abs(s.u - exact).max() < 2e-3
    assert s.timings["steps"] == 20


def test_heat_1d_float32_neumann_and_errors():
    s = adi.HeatSolver((65,), boundary={"x-": ("neumann", 0.0), "x+": ("neumann", 0.0)}, dtype=np.float32)
    x = s.nodes(0)
    s.u = np.cos(np.pi * x).reshape(65, 1, 1)
    for k in range(10):
        s.step(k * 1e-3, 1e-3)
    assert np.abs(s.u[:, 0, 0] - math.exp(-np.pi ** 2 * 1e-2) * np.cos(np.pi * x)).max() < 1e-3
    with pytest.raises(adi.InvalidArgumentError, match="scheme|douglas"):
        adi.HeatSolver((9, 9), scheme="no-such-scheme")
    with pytest.raises(adi.InvalidArgumentError, match="shape"):
        s.u = np.zeros((3, 3, 3))


def test_heat_advance_that_overflows_is_an_error():
    # Finite u in, NaN out (dt A u beyond the largest double): advance reads u after its last step.
    s = adi.HeatSolver((8, 8))
    s.u = np.ones((8, 8, 1))
    with pytest.raises(adi.SingularSystemError, match=r"after the steps from t = 0 to 1e\+307.*take a smaller time step"):
        s.advance(0.0, 1e307, 1)
    s.u = np.full((8, 8, 1), np.nan)
    with pytest.raises(adi.InvalidArgumentError, match="is not finite; initialise every node"):
        s.advance(0.0, 1e-3, 1)


# --- finance -----------------------------------------------------------------------------

def test_european_and_american():
    model = fin.BlackScholesModel([fin.Asset(100.0, 0.2, 0.0)], rate=0.05)
    r = fin.price(model, fin.Contract.vanilla("call", 100.0, 1.0))
    exact = fin.black_scholes("call", 100.0, 100.0, 1.0, 0.05, 0.0, 0.2)
    assert abs(r.price - exact["price"]) < 1e-2
    assert abs(r.delta[0] - exact["delta"]) < 1e-3
    put_e = fin.price(model, fin.Contract.vanilla("put", 100.0, 1.0)).price
    put_a = fin.price(model, fin.Contract.vanilla("put", 100.0, 1.0, "american")).price
    assert put_a > put_e + 0.1
    assert r.values.shape[0] == 201
    f32 = fin.price(model, fin.Contract.vanilla("call", 100.0, 1.0), dtype=np.float32)
    assert abs(f32.price - r.price) < 1e-3


def test_two_assets_and_heston():
    model = fin.BlackScholesModel([fin.Asset(100, 0.2), fin.Asset(100, 0.3)], [1, 0.5, 0.5, 1], 0.05)
    r = fin.price(model, fin.Contract.exchange(1.0), fin.method(nodes=61, steps=30))
    assert r.price > 0
    h = fin.HestonModel()
    rh = fin.price(h, fin.Contract.vanilla("call", 100, 1.0))
    assert abs(rh.price - fin.heston(h, "call", 100, 1.0)) < 5e-2


def test_price_chain_matches_single_prices():
    m = fin.method(nodes=201, steps=100)
    chain = [fin.chain_option("put", "american", 100, k, 0.5, 0.25, 0.04, 0.01) for k in (90, 100, 110)]
    chain.append(fin.chain_option("call", "european", 100, 105, 1.0, 0.2, 0.03, 0.0))
    res = fin.price_chain(chain, m)
    assert len(res.price) == 4 and np.all(np.isfinite(res.price))
    eu = fin.black_scholes("call", 100, 105, 1.0, 0.03, 0.0, 0.2)["price"]
    assert abs(res.price[3] - eu) < 2e-2
    assert res.price[2] > res.price[1] > res.price[0]


def test_finance_errors():
    with pytest.raises(adi.InvalidArgumentError, match="volatility"):
        fin.price(fin.BlackScholesModel([fin.Asset(100, -0.2)]), fin.Contract.vanilla("call", 100, 1))
    with pytest.raises(adi.InvalidArgumentError, match="type"):
        fin.Contract.vanilla("straddle", 100, 1)
