"""The exceptions adi raises: the C++ errors of adi/base/error.hpp, same messages.

    adi.Error                   adi::Error (base of all)
    adi.InvalidArgumentError    adi::InvalidArgument (also a ValueError)
    adi.SingularSystemError     adi::SingularSystem (also an ArithmeticError); .system, .row
    adi.SingularBlockError      adi::SingularBlock, a block pivot (a SingularSystemError)
    adi.UnsupportedError        adi::Unsupported (also a NotImplementedError): no CUDA, ...
    adi.DeviceError             adi::DeviceError: a CUDA call failed
"""
from __future__ import annotations


class Error(RuntimeError):
    """Base of every error adi raises (adi::Error)."""


class InvalidArgumentError(Error, ValueError):
    """A wrong size, stride, pointer, name or option (adi::InvalidArgument)."""


class SingularSystemError(Error, ArithmeticError):
    """A zero or non-finite pivot (adi::SingularSystem).

    ``system`` is the failing line / matrix / neuron and ``row`` the row (block row for
    block systems), or -1 where the solver does not know them.
    """

    def __init__(self, message: str, system: int = -1, row: int = -1) -> None:
        super().__init__(message)
        self.system = int(system)
        self.row = int(row)


class SingularBlockError(SingularSystemError):
    """A singular pivot block of a block-tridiagonal solve (adi::SingularBlock)."""


class UnsupportedError(Error, NotImplementedError):
    """The requested backend is not compiled in or not present (adi::Unsupported)."""


class DeviceError(Error):
    """A CUDA runtime call failed (adi::DeviceError)."""
