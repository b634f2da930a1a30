"""Option pricing by ADI (adi/finance): Black-Scholes for 1-3 assets (European or American),
Heston (European or American), option chains as one batched solve, and the closed forms.
``method(device="cuda")`` prices on the GPU (all but one-asset American, which runs on the host;
a chain of one-asset contracts runs on the GPU through ``price_chain``).

    from adi import finance as fin
    m = fin.BlackScholesModel([fin.Asset(100, 0.2)], rate=0.05)
    r = fin.price(m, fin.Contract.vanilla("put", 100, 1.0, "american"))
    r.price, r.delta[0], r.gamma[0]
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Union

import numpy as np

from . import _core
from ._errors import InvalidArgumentError
from ._tridiagonal import _parse_device

_f = _core.finance
OptionType = _f.OptionType
Exercise = _f.Exercise
Space = _f.Space
FarField = _f.FarField
Extrapolation = _f.Extrapolation
Asset = _f.Asset
BlackScholesModel = _f.BlackScholesModel
HestonModel = _f.HestonModel
Method = _f.Method
PriceResult = _f.PriceResult
ChainOption = _f.ChainOption
ChainResult = _f.ChainResult
Scheme = _core.Scheme


def _enum(value: Any, enum: Any, name: str) -> Any:
    if isinstance(value, str):
        try:
            return getattr(enum, value)
        except AttributeError:
            raise InvalidArgumentError(
                f"{name} = '{value}' is not one of {', '.join(enum.__members__)}") from None
    return value


class Contract:
    """Factories of :class:`adi._core.finance.Contract` taking strings for the enums
    ("call"/"put", "european"/"american")."""

    @staticmethod
    def vanilla(type: Union[str, Any], strike: float, maturity: float, exercise: Union[str, Any] = "european") -> Any:
        return _f.Contract.vanilla(_enum(type, OptionType, "type"), strike, maturity,
                                   _enum(exercise, Exercise, "exercise"))

    @staticmethod
    def basket(type: Union[str, Any], strike: float, maturity: float, weights: Sequence[float] = ()) -> Any:
        return _f.Contract.basket(_enum(type, OptionType, "type"), strike, maturity, list(weights))

    @staticmethod
    def geometric_basket(type: Union[str, Any], strike: float, maturity: float, weights: Sequence[float] = ()) -> Any:
        return _f.Contract.geometric_basket(_enum(type, OptionType, "type"), strike, maturity, list(weights))

    @staticmethod
    def spread(type: Union[str, Any], strike: float, maturity: float) -> Any:
        return _f.Contract.spread(_enum(type, OptionType, "type"), strike, maturity)

    @staticmethod
    def exchange(maturity: float) -> Any:
        return _f.Contract.exchange(maturity)

    @staticmethod
    def best_of(type: Union[str, Any], strike: float, maturity: float) -> Any:
        return _f.Contract.best_of(_enum(type, OptionType, "type"), strike, maturity)

    @staticmethod
    def worst_of(type: Union[str, Any], strike: float, maturity: float) -> Any:
        return _f.Contract.worst_of(_enum(type, OptionType, "type"), strike, maturity)


def method(*, nodes: int = 0, steps: int = 0, scheme: Optional[str] = None, damping: Optional[int] = None,
           device: str = "cpu", **fields: Any) -> Any:
    """A :class:`Method` (0 or None: the pricer's default), e.g. ``method(nodes=401, steps=200)``;
    other fields (``space``, ``far_field``, ``width``, ``variance_nodes``, ...) by name."""
    m = Method()
    m.nodes, m.steps = int(nodes), int(steps)
    if scheme is not None or damping is not None:
        s = Scheme.from_name(scheme) if scheme is not None else m.scheme
        if damping is not None:
            s.damping_steps = int(damping)
        m.scheme = s
    for k, v in fields.items():
        if not hasattr(m, k):
            raise InvalidArgumentError(f"method: no field '{k}'")
        if k == "space":
            v = _enum(v, Space, k)
        elif k == "far_field":
            v = _enum(v, FarField, k)
        setattr(m, k, v)
    m.set_executor(_parse_device(device), 0)
    return m


def price(model: Any, contract: Any, method_: Optional[Any] = None, *, dtype: Any = np.float64) -> Any:
    """Prices a contract by ADI: Black-Scholes (1-3 assets; American exercise: Brennan-Schwartz
    for one asset on the host, the Ikonen-Toivanen splitting for 2-3 assets) or Heston (European
    or American, Ikonen-Toivanen), on the host or, with ``method(device="cuda")``, the GPU. Returns a :class:`PriceResult` (price, delta,
    gamma per asset axis, values on the grid, timings)."""
    m = Method() if method_ is None else method_
    suffix = "f32" if np.dtype(dtype) == np.float32 else "f64"
    if isinstance(model, HestonModel):
        return getattr(_f, "price_heston_" + suffix)(model, contract, m)
    return getattr(_f, "price_black_scholes_" + suffix)(model, contract, m)


def price_chain(options: Sequence[Any], method_: Optional[Any] = None, *, richardson: bool = False) -> Any:
    """Prices an option chain (one-asset vanillas, each its own strike, maturity, volatility,
    rates, European or American) as one batched solve; returns a :class:`ChainResult`
    (``price``, ``delta``, ``gamma``, ``theta`` arrays in the chain's order)."""
    m = Method() if method_ is None else method_
    return _f.price_chain(list(options), m, Extrapolation.richardson if richardson else Extrapolation.none)


def chain_option(type: Union[str, Any] = "put", exercise: Union[str, Any] = "american", spot: float = 100.0,
                 strike: float = 100.0, maturity: float = 1.0, volatility: float = 0.2, rate: float = 0.0,
                 dividend: float = 0.0) -> Any:
    """One contract of a chain (strings accepted for type and exercise)."""
    return ChainOption(_enum(type, OptionType, "type"), _enum(exercise, Exercise, "exercise"), spot, strike, maturity,
                       volatility, rate, dividend)


def black_scholes(type: Union[str, Any], spot: float, strike: float, maturity: float, rate: float = 0.0,
                  dividend: float = 0.0, volatility: float = 0.2) -> Dict[str, float]:
    """The European Black-Scholes closed form and its greeks (dict)."""
    return dict(_f.black_scholes_closed_form(_enum(type, OptionType, "type"), spot, strike, maturity, rate, dividend,
                                             volatility))


def heston(model: Any, type: Union[str, Any], strike: float, maturity: float) -> float:
    """The Heston European price by its characteristic-function integral."""
    return float(_f.heston_closed_form(model, _enum(type, OptionType, "type"), strike, maturity))


__all__ = ["OptionType", "Exercise", "Space", "FarField", "Asset", "BlackScholesModel", "HestonModel", "Contract",
           "Method", "PriceResult", "ChainOption", "ChainResult", "method", "price", "price_chain", "chain_option",
           "black_scholes", "heston"]
