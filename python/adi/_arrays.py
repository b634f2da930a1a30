"""Arrays of NumPy, CuPy, PyTorch and JAX (and any DLPack / CUDA Array Interface producer)
seen as (address, shape, strides in elements, dtype, device): what the C++ plans take.

Host arrays are read through NumPy (buffer protocol, ``__array__``; a CPU PyTorch tensor
shares its memory). Device arrays are read through ``__cuda_array_interface__`` (CuPy,
PyTorch, Numba) or ``__dlpack__`` / ``__dlpack_device__`` (JAX, any DLPack producer), never
copied. Work runs on the caller's stream: CuPy's current stream, PyTorch's
``torch.cuda.current_stream()``, or the legacy default stream for other libraries. A
producer that names another stream (``__cuda_array_interface__['stream']``) is waited for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _core
from ._errors import InvalidArgumentError, UnsupportedError

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


@dataclass
class View:
    """A resolved array: where its elements are and how they are laid out."""

    obj: Any  # the array object the address belongs to
    address: int
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]  # elements; None: not expressible in elements
    dtype: np.dtype
    writable: bool
    keep: Any = None  # a DLPack capsule to keep alive while the address is used


def _c_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    out, s = [], 1
    for e in reversed(shape):
        out.append(s)
        s *= max(int(e), 1)
    return tuple(reversed(out))


def _element_strides(byte_strides: Sequence[int], itemsize: int, address: int) -> Optional[Tuple[int, ...]]:
    if address % itemsize or any(s % itemsize for s in byte_strides):
        return None
    return tuple(int(s) // itemsize for s in byte_strides)


class Library:
    """How one array library allocates and copies (used only where a copy is unavoidable)."""

    name = "numpy"
    device = -1  # host

    def view(self, x: Any) -> View:
        raise NotImplementedError

    def stream(self) -> int:
        return 0

    def asarray(self, x: Any, dtype: Optional[np.dtype] = None) -> Any:
        raise NotImplementedError

    def empty(self, shape: Sequence[int], dtype: np.dtype) -> Any:
        raise NotImplementedError

    def empty_like(self, x: Any, dtype: np.dtype) -> Any:
        raise NotImplementedError

    def copy_into(self, dst: Any, src: Any) -> None:
        """dst[...] = src (src broadcast to dst's shape)."""
        raise NotImplementedError

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return x.reshape(tuple(shape))

    def finish(self, out: Any) -> Any:
        """What the caller gets back for the output array."""
        return out

    def dtype_of(self, x: Any) -> np.dtype:
        return np.dtype(x.dtype)


class NumpyLibrary(Library):
    name = "numpy"

    def view(self, x: Any) -> View:
        x = np.asarray(x)
        if not x.dtype.isnative:
            return View(x, 0, x.shape, None, x.dtype, False)
        address = x.__array_interface__["data"][0]
        strides = _element_strides(x.strides, x.itemsize, address) if x.itemsize else None
        return View(x, address, x.shape, strides, x.dtype, bool(x.flags.writeable))

    def asarray(self, x: Any, dtype: Optional[np.dtype] = None) -> Any:
        if hasattr(x, "__cuda_array_interface__") or _dlpack_device(x)[0] not in (None, _KDL_CPU):
            raise InvalidArgumentError(
                "a device array was passed with host arrays; pass every array on the same device")
        return np.asarray(x, dtype=dtype)

    def empty(self, shape, dtype):
        return np.empty(tuple(shape), dtype=dtype)

    def empty_like(self, x, dtype):
        return np.empty_like(x, dtype=dtype)

    def copy_into(self, dst, src):
        np.copyto(dst, src, casting="unsafe")


class TorchHostLibrary(NumpyLibrary):
    """A CPU PyTorch tensor: solved through NumPy on its memory, returned as a tensor."""

    name = "torch"

    def view(self, x):
        if not isinstance(x, np.ndarray):
            x = x.detach().numpy()
        return super().view(x)

    def asarray(self, x, dtype=None):
        if type(x).__module__.startswith("torch"):
            x = x.detach().numpy()
        return super().asarray(x, dtype)

    def finish(self, out):
        import torch

        return torch.from_numpy(out) if isinstance(out, np.ndarray) else out


class CupyLibrary(Library):
    name = "cupy"

    def __init__(self, device: int) -> None:
        import cupy

        self.cp = cupy
        self.device = device

    def view(self, x):
        return _cai_view(x, self.stream(), self.device)

    def stream(self) -> int:
        return int(self.cp.cuda.get_current_stream().ptr)

    def asarray(self, x, dtype=None):
        with self.cp.cuda.Device(self.device):
            return self.cp.asarray(x, dtype=dtype)

    def empty(self, shape, dtype):
        with self.cp.cuda.Device(self.device):
            return self.cp.empty(tuple(shape), dtype=dtype)

    def empty_like(self, x, dtype):
        with self.cp.cuda.Device(self.device):
            return self.cp.empty_like(x, dtype=dtype)

    def copy_into(self, dst, src):
        with self.cp.cuda.Device(self.device):
            self.cp.copyto(dst, self.cp.asarray(src), casting="unsafe")


_TORCH_DTYPES = {"torch.float32": "float32", "torch.float64": "float64", "torch.int32": "int32",
                 "torch.int64": "int64", "torch.float16": "float16"}


class TorchLibrary(Library):
    name = "torch"

    def __init__(self, device: int) -> None:
        import torch

        self.torch = torch
        self.device = device

    def dtype_of(self, x):
        return np.dtype(_TORCH_DTYPES.get(str(x.dtype), "complex128"))

    def _torch_dtype(self, dtype):
        return getattr(self.torch, np.dtype(dtype).name)

    def view(self, x):
        x = x.detach()
        dtype = self.dtype_of(x)
        return View(x, int(x.data_ptr()), tuple(x.shape), tuple(int(s) for s in x.stride()), dtype, True)

    def stream(self) -> int:
        return int(self.torch.cuda.current_stream(self.device).cuda_stream)

    def asarray(self, x, dtype=None):
        t = self.torch
        dev = t.device("cuda", self.device)
        if isinstance(x, t.Tensor):
            return x.detach().to(device=dev, dtype=self._torch_dtype(dtype) if dtype is not None else None)
        if hasattr(x, "__cuda_array_interface__") or _dlpack_device(x)[0] == _KDL_CUDA:
            x = t.from_dlpack(x) if hasattr(x, "__dlpack__") else t.as_tensor(x, device=dev)
            return x.to(dtype=self._torch_dtype(dtype)) if dtype is not None else x
        return t.as_tensor(np.asarray(x, dtype=dtype), device=dev)

    def empty(self, shape, dtype):
        return self.torch.empty(tuple(shape), dtype=self._torch_dtype(dtype), device=f"cuda:{self.device}")

    def empty_like(self, x, dtype):
        return self.torch.empty_like(x, dtype=self._torch_dtype(dtype))

    def copy_into(self, dst, src):
        if not isinstance(src, self.torch.Tensor):
            src = self.asarray(src)
        dst.copy_(src.expand_as(dst) if src.shape != dst.shape else src)

    def reshape(self, x, shape):
        return x.reshape(tuple(shape))


class JaxLibrary(Library):
    """JAX arrays are immutable: results are fresh JAX arrays (the solve writes into a buffer
    no one else holds), computed on the legacy default stream and synchronised before return."""

    name = "jax"

    def __init__(self, device: int) -> None:
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp
        self.device = device

    def view(self, x):
        x.block_until_ready()
        return _dlpack_view(x, 1, writable=True)

    def asarray(self, x, dtype=None):
        return self.jnp.asarray(x, dtype=dtype)

    def empty(self, shape, dtype):
        return self.jnp.zeros(tuple(shape), dtype=dtype).block_until_ready()

    def empty_like(self, x, dtype):
        return self.empty(x.shape, dtype)

    def copy_into(self, dst, src):  # pragma: no cover - JAX outputs are produced by fresh()
        raise UnsupportedError("JAX arrays are immutable: adi returns new arrays for JAX inputs (out= is refused)")

    def fresh_copy(self, x, dtype):
        """A new buffer holding x (the solve then runs in place in it)."""
        return self.jnp.array(x, dtype=dtype, copy=True).block_until_ready()

    def finish(self, out):
        _core.synchronize(self.device, 0)
        return out


class DLPackLibrary(Library):
    """Another library's CUDA array, known only through DLPack: solved in place (out= given)."""

    name = "dlpack"

    def __init__(self, device: int) -> None:
        self.device = device

    def view(self, x):
        return _dlpack_view(x, 1, writable=True)

    def asarray(self, x, dtype=None):
        return x

    def _refuse(self, *args, **kwargs):
        raise UnsupportedError(
            "adi cannot allocate or copy arrays of this library (known only through DLPack): pass out= "
            "(it may be d itself) with d's shape and strides, float32 or float64")

    empty = empty_like = copy_into = _refuse


def _dlpack_device(x: Any) -> Tuple[Optional[int], int]:
    f = getattr(x, "__dlpack_device__", None)
    if f is None:
        return None, 0
    try:
        t, dev = f()
        return int(t), int(dev)
    except Exception:  # noqa: BLE001 - a broken producer: treat as host
        return None, 0


def _dlpack_view(x: Any, stream: int, writable: bool) -> View:
    try:
        capsule = x.__dlpack__(stream=stream)
    except Exception:  # noqa: BLE001 - a producer without (that) stream argument; callers made x ready
        capsule = x.__dlpack__()
    address, shape, strides, dtype, _, _, readonly = _core.dlpack_view(capsule)
    if strides is None:
        strides = _c_strides(shape)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = np.dtype("complex128")  # anything unsupported: refused by the caller
    return View(x, int(address), tuple(shape), tuple(strides), dt, writable and not readonly, capsule)


def _cai_view(x: Any, stream: int, device: int) -> View:
    cai = x.__cuda_array_interface__
    address, readonly = cai["data"]
    dtype = np.dtype(cai["typestr"])
    shape = tuple(int(e) for e in cai["shape"])
    if cai.get("strides") is None:
        strides: Optional[Tuple[int, ...]] = _c_strides(shape)
    else:
        strides = _element_strides(cai["strides"], dtype.itemsize, int(address or 0))
    producer = cai.get("stream")
    if producer is not None:
        producer = 0 if producer in (1, 2) else int(producer)
        if producer != stream:
            _core.synchronize(device, producer)  # the producer's pending writes
    return View(x, int(address or 0), shape, strides, dtype, not readonly)


def library_of(x: Any) -> Library:
    """The library that allocates for results like x."""
    module = type(x).__module__.split(".")[0]
    if module == "numpy" or isinstance(x, (list, tuple, float, int)):
        return NumpyLibrary()
    if module == "torch":
        if x.device.type == "cuda":
            _require_cuda()
            return TorchLibrary(x.device.index if x.device.index is not None else 0)
        return TorchHostLibrary()
    if module == "cupy":
        _require_cuda()
        return CupyLibrary(int(x.device.id))
    if module in ("jax", "jaxlib"):
        kind, dev = _dlpack_device(x)
        if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            _require_cuda()
            return JaxLibrary(dev)
        return NumpyLibrary()
    if hasattr(x, "__cuda_array_interface__"):
        _require_cuda()
        return DLPackLibrary(0)
    kind, dev = _dlpack_device(x)
    if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        _require_cuda()
        return DLPackLibrary(dev)
    return NumpyLibrary()


def _require_cuda() -> None:
    if not _core.cuda_compiled():
        raise UnsupportedError(
            "a CUDA device array was passed but this adi build has no CUDA; rebuild with -DADI_WITH_CUDA=ON "
            "(pip: ADI_CMAKE_ARGS=-DADI_WITH_CUDA=ON) or pass host (NumPy) arrays")
    if not _core.cuda_available():
        raise UnsupportedError("a CUDA device array was passed but no CUDA device answers")


def result_dtype(*dtypes: np.dtype) -> np.dtype:
    """float32 when every array is float32, float64 when all are real and one is not; refuses the rest."""
    for dt in dtypes:
        if dt.kind not in "fiub" or dt.itemsize > 8:
            raise InvalidArgumentError(
                f"dtype {dt} is not supported; adi solves float32 and float64 (integers are converted to float64)")
    if all(dt == np.float32 for dt in dtypes):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def same_memory(x: View, y: View) -> bool:
    return x.address == y.address and x.shape == y.shape and x.strides == y.strides

