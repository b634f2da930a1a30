"""adi: batched tridiagonal, block-tridiagonal, variable-size, Cholesky and Hines solvers and
ADI schemes, from Python (NumPy on the host; CuPy, PyTorch and JAX arrays on a CUDA device
without a copy, on the caller's stream).

    import numpy as np, adi
    d = np.random.rand(64, 64, 64)
    u = adi.solve_tridiagonal(-1.0 * np.ones(64), 4.0 * np.ones(64), -1.0 * np.ones(64), d, axis=1)

See docs/python.md for the API, device arrays and streams, errors and the benchmark.
"""
from __future__ import annotations

from . import _core
from ._batches import (BatchedCholeskyPlan, BlockTridiagonalPlan, VariableTridiagonalPlan, cholesky_solve,
                       solve_block_tridiagonal, solve_variable_tridiagonal)
from ._errors import (DeviceError, Error, InvalidArgumentError, SingularBlockError, SingularSystemError,
                      UnsupportedError)
from ._heat import HeatSolver
from ._neuron import (CableParameters, Compartments, Geometry, Morphology, NsegRule, PassiveNeurons, SwcSections,
                      discretise, implicit_euler_matrix, solve_hines, synthetic_neuron)
from ._tridiagonal import TridiagonalPlan, clear_plan_cache, kernel_names, solve_tridiagonal
from . import finance

__version__ = "0.1.0"


def cuda_available() -> bool:
    """True when this build has CUDA and a device answers."""
    return bool(_core.cuda_available())


def cuda_compiled() -> bool:
    """True when this build of adi has the CUDA backend."""
    return bool(_core.cuda_compiled())


__all__ = [
    "solve_tridiagonal", "TridiagonalPlan", "clear_plan_cache", "kernel_names",
    "solve_block_tridiagonal", "BlockTridiagonalPlan", "solve_variable_tridiagonal", "VariableTridiagonalPlan",
    "BatchedCholeskyPlan", "cholesky_solve",
    "solve_hines", "Morphology", "CableParameters", "Compartments", "SwcSections", "NsegRule", "Geometry",
    "discretise", "implicit_euler_matrix", "synthetic_neuron", "PassiveNeurons",
    "HeatSolver", "finance",
    "Error", "InvalidArgumentError", "SingularSystemError", "SingularBlockError", "UnsupportedError", "DeviceError",
    "cuda_available", "cuda_compiled",
]
