"""The heat equation (and constant-coefficient convection-diffusion-reaction) by ADI on a
uniform grid: adi::AdiSolver with the solution field it steps (adi/scheme.hpp)."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._errors import InvalidArgumentError
from ._tridiagonal import _parse_device

FACES = ("x-", "x+", "y-", "y+", "z-", "z+")
BoundarySpec = Union[str, Tuple[str, float], Mapping[str, Union[str, Tuple[str, float]]], Sequence[Any]]


def _triple(x: Union[float, Sequence[float]], fill: float, name: str) -> Tuple[float, float, float]:
    if np.isscalar(x):
        return (float(x),) * 3  # type: ignore[arg-type]
    values = [float(v) for v in x]  # type: ignore[union-attr]
    if not 1 <= len(values) <= 3:
        raise InvalidArgumentError(f"{name}: {len(values)} values given; pass 1 to 3")
    return tuple(values + [fill] * (3 - len(values)))  # type: ignore[return-value]


def _face(spec: Any) -> Tuple[str, float]:
    if isinstance(spec, str):
        return spec, 0.0
    kind, value = spec
    return str(kind), float(value)


class HeatSolver:
    """``u_t = sum_i D_i u_ii + V_i u_i + R u`` on a uniform grid, stepped by an ADI scheme.

    Args:
        shape: nodes per axis, 1 to 3 values (1-D and 2-D problems have trailing extents 1).
        lo, hi: the domain's corners (per axis).
        diffusion, convection: D_i and V_i (a number for every axis or one per axis).
        reaction: R.
        boundary: one condition for every face, or a dict {"x-": ..., "z+": ...}, or six
            in the order x-, x+, y-, y+, z-, z+; each "dirichlet" / "neumann" / "periodic" /
            "linear" or (kind, value) (Dirichlet value, Neumann outward derivative).
        scheme: "douglas", "craig-sneyd", "modified-craig-sneyd", "hundsdorfer-verwer" or
            "peaceman-rachford"; theta (None: the scheme's own) and Rannacher damping steps.
        dtype: float32 or float64; device: "cpu", "cuda" or "cuda:N".

    ``u`` is the solution as an (nx, ny, nz) array (get and set copy: the C++ field has
    padded rows); ``step(t, dt)`` and ``advance(t0, t1, steps)`` advance it in place.
    """

    def __init__(self, shape: Sequence[int], lo: Sequence[float] = (0.0, 0.0, 0.0),
                 hi: Sequence[float] = (1.0, 1.0, 1.0), *, diffusion: Union[float, Sequence[float]] = 1.0,
                 convection: Union[float, Sequence[float]] = 0.0, reaction: float = 0.0,
                 boundary: BoundarySpec = "dirichlet", scheme: str = "douglas", theta: Any = None, damping: int = 0,
                 dtype: Any = np.float64, device: str = "cpu") -> None:
        shape_ = [int(e) for e in shape] + [1] * (3 - len(shape))
        if isinstance(boundary, str) or (isinstance(boundary, tuple) and len(boundary) == 2
                                         and isinstance(boundary[0], str) and not isinstance(boundary[1], str)):
            faces = [_face(boundary)] * 6
        elif isinstance(boundary, Mapping):
            unknown = set(boundary) - set(FACES)
            if unknown:
                raise InvalidArgumentError(f"boundary: unknown faces {sorted(unknown)}; use {FACES}")
            faces = [_face(boundary.get(f, "dirichlet")) for f in FACES]
        else:
            faces = [_face(f) for f in boundary]
        self._s = _core.HeatSolver(shape_, _triple(lo, 0.0, "lo"), _triple(hi, 1.0, "hi"),
                                   _triple(diffusion, 0.0, "diffusion"), _triple(convection, 0.0, "convection"),
                                   float(reaction), faces, scheme, 0.0 if theta is None else float(theta),
                                   int(damping), np.dtype(dtype).name, _parse_device(device), 0)
        self.shape = tuple(shape_)

    @property
    def u(self) -> np.ndarray:
        """The solution, an (nx, ny, nz) float64 array (a copy)."""
        return np.asarray(self._s.get_u())

    @u.setter
    def u(self, value: Any) -> None:
        v = np.asarray(value, dtype=np.float64)
        self._s.set_u(v.reshape(self.shape) if v.size == int(np.prod(self.shape)) else v)

    def step(self, t: float, dt: float) -> None:
        """One step from t to t + dt."""
        self._s.step(float(t), float(dt))

    def advance(self, t0: float, t1: float, steps: int) -> None:
        """``steps`` equal steps from t0 to t1. Checks u for non-finite values before the first
        step (InvalidArgumentError) and after the last (SingularSystemError: the steps overflowed,
        e.g. a time step so long that dt A u is beyond the largest value); ``step`` checks neither."""
        self._s.advance(float(t0), float(t1), int(steps))

    def restart(self) -> None:
        """Forget the steps taken (damping applies again)."""
        self._s.restart()

    def nodes(self, axis: int) -> np.ndarray:
        """The grid's coordinates along axis 0, 1 or 2."""
        return np.asarray(self._s.nodes(int(axis)))

    @property
    def scheme(self) -> str:
        return str(self._s.scheme())

    @property
    def timings(self) -> Dict[str, Any]:
        """Seconds spent per part of the step since construction."""
        return dict(self._s.timings())
