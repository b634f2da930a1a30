"""Neurons: morphologies from SWC, NEURON's discretisation, batched Hines solves and passive
cells in time (adi/hines.hpp)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from . import _arrays, _core
from ._errors import InvalidArgumentError
from ._tridiagonal import _PlanCache, _parse_device

Morphology = _core.Morphology
CableParameters = _core.CableParameters
Compartments = _core.Compartments
SwcSections = _core.SwcSections
NsegRule = _core.NsegRule
Geometry = _core.Geometry
discretise = _core.discretise
implicit_euler_matrix = _core.implicit_euler_matrix
synthetic_neuron = _core.synthetic_neuron

_cache = _PlanCache(limit=16)


def solve_hines(parent: Sequence[int], offdiag: Any, diag: Any, rhs: Any, *, kernel: str = "automatic",
                check_pivots: bool = True) -> Any:
    """Solves the Hines (tree-structured, symmetric) systems of a batch of neurons of one tree.

    ``A[i, i] = diag[i]`` and ``A[i, parent[i]] = A[parent[i], i] = offdiag[i]``
    (``parent[0] = -1``, ``parent[i] < i``). ``offdiag``, ``diag`` and ``rhs`` are ``(n,)``
    for one neuron or ``(count, n)`` for ``count`` neurons (host or device, any library);
    returns the solutions in a new array shaped like ``rhs``. ``diag`` is not modified
    (the C++ solver's scratch is a copy).
    """
    parent_ = [int(p) for p in np.asarray(parent).ravel()]
    n = len(parent_)
    lib = _arrays.library_of(rhs)
    views = [lib.view(lib.asarray(x)) for x in (offdiag, diag, rhs)]
    shape = tuple(views[2].shape)
    if len(shape) not in (1, 2) or shape[-1] != n:
        raise InvalidArgumentError(f"rhs: shape {shape} must be (n,) or (count, n) with n = len(parent) = {n}")
    dtype = _arrays.result_dtype(*(v.dtype for v in views))
    arrays = []
    for name, v in zip(("offdiag", "diag", "rhs"), views):
        if tuple(v.shape) != shape:
            raise InvalidArgumentError(f"{name}: shape {tuple(v.shape)} differs from rhs's {shape}")
        y = lib.empty(shape, dtype)  # the solver overwrites diag and rhs: work on copies
        lib.copy_into(y, v.obj)
        arrays.append((y, lib.view(y)))
    count = 1 if len(shape) == 1 else shape[0]
    stream = lib.stream()
    key = ("hines", tuple(parent_), count, dtype.name, lib.device, stream, kernel, check_pivots)
    plan = _cache.get(key, lambda: _core.HinesPlan(parent_, count, dtype.name, lib.device, stream, kernel,
                                                   check_pivots))
    plan.solve(arrays[0][1].address, arrays[1][1].address, arrays[2][1].address)
    return lib.finish(arrays[2][0])


class PassiveNeurons:
    """Passive neurons advanced by implicit Euler (NEURON's fixed step): ``cells`` are
    :class:`Compartments` (from :func:`discretise`), neuron s is ``cells[cell_of[s]]``
    (default: one neuron per cell). Units: ms, mV, nA."""

    def __init__(self, cells: Sequence[Compartments], cell_of: Optional[Sequence[int]] = None, dt: float = 0.025,
                 dtype: Any = np.float64, device: str = "cpu", kernel: str = "automatic") -> None:
        cells = list(cells)
        cell_of = list(range(len(cells))) if cell_of is None else [int(c) for c in cell_of]
        self._n = _core.PassiveNeurons(cells, cell_of, float(dt), np.dtype(dtype).name, _parse_device(device), 0,
                                       kernel)

    def set_voltage(self, v: float) -> None:
        """Every node of every neuron at v (mV)."""
        self._n.set_voltage(v)

    def set_current(self, neuron: int, compartment: int, nA: float) -> None:
        """Injects nA into one node from now on (until changed or cleared)."""
        self._n.set_current(neuron, compartment, nA)

    def clear_currents(self) -> None:
        self._n.clear_currents()

    def step(self, steps: int = 1) -> None:
        self._n.step(steps)

    def voltage(self, neuron: int) -> np.ndarray:
        """Voltages of one neuron, node order of its Compartments (a host copy)."""
        return np.asarray(self._n.voltage(neuron))

    @property
    def time(self) -> float:
        return float(self._n.time)

    @property
    def dt(self) -> float:
        return float(self._n.dt)

    @property
    def count(self) -> int:
        return int(self._n.count)

    @property
    def kernel(self) -> str:
        return str(self._n.kernel())
