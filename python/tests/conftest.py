"""Shared helpers of the adi Python tests: the fp64 dense reference solves."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

# JAX otherwise takes 75% of the GPU's memory when first used, starving CuPy and PyTorch.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

# Run from a source checkout without installing: CTest sets PYTHONPATH to <build>/python.
if "ADI_PYTHON_PATH" in os.environ:
    sys.path.insert(0, os.environ["ADI_PYTHON_PATH"])

SIZES = [1, 2, 3, 31, 33, 255, 257]


def tridiagonal_dense(a, b, c, periodic):
    """Dense (lines, n, n) matrices of lines of bands (lines, n), fp64."""
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    lines, n = b.shape
    m = np.zeros((lines, n, n))
    idx = np.arange(n)
    m[:, idx, idx] += b
    if n > 1:
        m[:, idx[1:], idx[:-1]] += a[:, 1:]
        m[:, idx[:-1], idx[1:]] += c[:, :-1]
    if periodic:
        m[:, 0, n - 1] += a[:, 0]
        m[:, n - 1, 0] += c[:, n - 1]
    return m


def reference_tridiagonal(a, b, c, d, axis=-1, periodic=False):
    """The solution of every line along axis, fp64, by dense solves."""
    d = np.asarray(d, dtype=np.float64)
    n = d.shape[axis]
    full = [np.broadcast_to(np.moveaxis(np.asarray(x, np.float64), axis, -1) if np.ndim(x) == d.ndim
                            else np.asarray(x, np.float64), np.moveaxis(d, axis, -1).shape) for x in (a, b, c)]
    dd = np.moveaxis(d, axis, -1)
    shape = dd.shape
    m = tridiagonal_dense(*(f.reshape(-1, n) for f in full), periodic)
    u = np.linalg.solve(m, dd.reshape(-1, n, 1))[..., 0]
    return np.moveaxis(u.reshape(shape), -1, axis)


def tolerance(dtype):
    return 2e-4 if np.dtype(dtype) == np.float32 else 1e-11


def dominant_bands(rng, shape, dtype):
    a = rng.uniform(-1, 1, shape).astype(dtype)
    c = rng.uniform(-1, 1, shape).astype(dtype)
    b = (rng.uniform(2.5, 4, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    return a, b, c


def assert_close(u, ref, dtype):
    u = np.asarray(u, dtype=np.float64)
    assert np.all(np.isfinite(u)), "non-finite values in the result"
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    err = float(np.abs(u - ref).max(initial=0.0)) / scale
    assert err <= tolerance(dtype), f"max relative error {err:.3g} > {tolerance(dtype):.1g}"


@pytest.fixture
def rng():
    return np.random.default_rng(2026)
