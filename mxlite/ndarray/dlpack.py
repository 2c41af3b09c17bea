"""DLPack: NDArrays shared with torch, CuPy, NumPy and JAX without a copy.

Out: ``NDArray.__dlpack__`` / ``__dlpack_device__`` (the array API's protocol, so
``torch.from_dlpack(x)`` works) and MXNet's ``to_dlpack_for_read`` / ``to_dlpack_for_write``
(a capsule). In: ``from_dlpack`` takes a capsule or any object with ``__dlpack__``; host
memory becomes a CPU NDArray through NumPy's importer, CUDA memory a ``gpu(i)`` NDArray
through CuPy's. Either way the NDArray shares the producer's buffer, except that a strided
(non C-contiguous) tensor is copied, since NDArrays are C-contiguous.
"""
import ctypes

import numpy as np

from ..base import MXNetError
from ..context import Context
from ..device import namespace_for
from .ndarray import NDArray

__all__ = ["from_dlpack", "from_numpy", "to_dlpack_for_read", "to_dlpack_for_write"]

# DLPack's device types (dlpack.h, DLDeviceType)
_CPU, _CUDA, _CUDA_HOST, _CUDA_MANAGED = 1, 2, 3, 13
_DTYPES = {np.dtype(t) for t in ("float16", "float32", "float64", "int8", "uint8", "int32",
                                 "int64", "bool")}

_capsule_api = ctypes.pythonapi
_capsule_api.PyCapsule_IsValid.restype = ctypes.c_int
_capsule_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capsule_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# byte offset of DLTensor.device in each capsule's struct: DLManagedTensor starts with its
# DLTensor (``void* data`` first); DLManagedTensorVersioned puts version, manager_ctx,
# deleter and flags (8 bytes each) before it
_DEVICE_OFFSET = {b"dltensor": 8, b"dltensor_versioned": 40}


class _Capsule:
    """A DLPack capsule dressed as a producer object, for importers that want one."""

    def __init__(self, capsule, device):
        self._capsule, self._device = capsule, device

    def __dlpack__(self, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def _capsule_device(capsule):
    for name, offset in _DEVICE_OFFSET.items():
        if _capsule_api.PyCapsule_IsValid(capsule, name):
            ptr = _capsule_api.PyCapsule_GetPointer(capsule, name)
            dev = (ctypes.c_int32 * 2).from_address(ptr + offset)
            return int(dev[0]), int(dev[1])
    raise MXNetError("from_dlpack: the capsule is not an unused DLPack tensor (a capsule "
                     "can be imported once)")


def from_dlpack(dlpack):
    """An NDArray sharing the memory of ``dlpack``: a DLPack capsule (``to_dlpack_for_read``'s,
    as in MXNet) or an object with ``__dlpack__`` (a torch tensor, CuPy, NumPy or JAX array).

    Host memory gives a CPU NDArray, CUDA memory of device i a ``gpu(i)`` one (needs the GPU
    backend). Writes through either side show in the other; a tensor that is not
    C-contiguous is copied. Dtypes: float16/32/64, int8, uint8, int32, int64, bool; others
    raise MXNetError.

    >>> import numpy as np, mxlite as mx
    >>> a = np.arange(3, dtype=np.float32)
    >>> x = mx.nd.from_dlpack(a)
    >>> a[0] = 7
    >>> x.asnumpy()
    array([7., 1., 2.], dtype=float32)
    """
    if hasattr(dlpack, "__dlpack__"):
        source, device = dlpack, tuple(dlpack.__dlpack_device__())
    elif type(dlpack).__name__ == "PyCapsule":
        device = _capsule_device(dlpack)
        source = _Capsule(dlpack, device)
    else:
        raise MXNetError(f"from_dlpack: expected a DLPack capsule or an object with "
                         f"__dlpack__, got {type(dlpack).__name__}")
    kind, device_id = device
    if kind in (_CPU, _CUDA_HOST):
        ctx = Context("cpu", 0)
        data = np.from_dlpack(source)
    elif kind in (_CUDA, _CUDA_MANAGED):
        ctx = Context("gpu", device_id)
        lib = namespace_for(ctx).lib
        if lib is np:
            raise MXNetError("from_dlpack: CUDA memory cannot be imported by the GPU emulator "
                             "(its arrays live in host memory)")
        with lib.cuda.Device(device_id):
            data = lib.from_dlpack(source)
    else:
        raise MXNetError(f"from_dlpack: DLPack device type {kind} is neither host memory nor "
                         "a CUDA device")
    if data.dtype not in _DTYPES:
        raise MXNetError(f"from_dlpack: dtype {data.dtype} (shape {data.shape}) is not an "
                         f"NDArray dtype; expected one of {sorted(d.name for d in _DTYPES)}")
    if not data.flags.c_contiguous:
        data = namespace_for(ctx).ascontiguousarray(data)
    return NDArray._wrap(data, ctx)


def from_numpy(ndarray, zero_copy=True):
    """A CPU NDArray of the NumPy array ``ndarray``. With ``zero_copy`` (MXNet's default) it
    shares the buffer and the NumPy array becomes read-only, as in MXNet, so that the
    NDArray's writes are the only ones; that needs a C-contiguous array (else ValueError).
    ``zero_copy=False`` copies. Dtypes: those of ``from_dlpack``."""
    if not isinstance(ndarray, np.ndarray):
        raise MXNetError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    if ndarray.dtype not in _DTYPES:
        raise MXNetError(f"from_numpy: dtype {ndarray.dtype} (shape {ndarray.shape}) is not an "
                         f"NDArray dtype; expected one of {sorted(d.name for d in _DTYPES)}")
    if not zero_copy:
        return NDArray._wrap(np.array(ndarray, order="C"), Context("cpu", 0))
    if not ndarray.flags.c_contiguous:
        raise MXNetError(f"from_numpy: zero_copy needs a C-contiguous array, got strides "
                         f"{ndarray.strides} for shape {ndarray.shape}; pass zero_copy=False")
    shared = ndarray.view()             # stays writeable: the NDArray's own handle
    ndarray.flags.writeable = False     # the consumed NumPy array may no longer write
    return NDArray._wrap(shared, Context("cpu", 0))


def to_dlpack_for_read(data):
    """``data.to_dlpack_for_read()``: a DLPack capsule of ``data`` for reading (MXNet's API)."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    """``data.to_dlpack_for_write()``: a DLPack capsule of ``data`` whose consumer may write
    (MXNet's API)."""
    return data.to_dlpack_for_write()
