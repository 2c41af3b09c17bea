"""Helpers of the neural-network GPU kernels (``nn``, ``activation``, ``conv``, ``pooling``,
``norm``): per-dtype kernel families from one CUDA template, the argument types, and the
namespace that launches on an array's device.

A template is CUDA source with ``${name}`` (the kernel's ``extern "C"`` symbol,
``mxlite_<op>_<dtype>``), ``${T}`` (the element type) and any extra fields; every helper a
template defines is ``static __device__`` and named after ``${name}``, so the kernels of a
family compile as one translation unit.
"""
from string import Template

import numpy as np

from .. import kernels as _kernels
from ..runtime import namespace_of

__all__ = ["FLOATS", "CTYPES", "per_dtype", "i64", "f64", "i32", "work_float", "namespace_of"]

FLOATS = (np.dtype("float32"), np.dtype("float64"))
CTYPES = {np.dtype("float32"): "float", np.dtype("float64"): "double",
          np.dtype("int8"): "int8_t", np.dtype("uint8"): "uint8_t",
          np.dtype("int32"): "int32_t", np.dtype("int64"): "int64_t",
          np.dtype("float16"): "uint16_t", np.dtype("bool"): "uint8_t"}


def per_dtype(family, op, template, dtypes=FLOATS, **fields):
    """``{dtype: Kernel}``: kernel ``mxlite_<op>_<dtype>`` of ``family`` for each dtype, its
    code ``template`` (a ``string.Template``) with ``name``, ``T`` and ``fields`` filled."""
    out = {}
    for dt in dtypes:
        dt = np.dtype(dt)
        name = f"mxlite_{op}_{dt.name}"
        code = Template(template).substitute(name=name, T=CTYPES[dt], **fields)
        out[dt] = _kernels.kernel(family, name, code)
    return out


def i64(v):
    """``v`` as the kernels' ``mx_idx`` / ``long long`` argument."""
    return np.int64(v)


def i32(v):
    """``v`` as an ``int`` argument."""
    return np.int32(v)


def f64(v):
    """``v`` as a ``double`` argument."""
    return np.float64(v)


def work_float(dtype):
    """The dtype a float kernel computes ``dtype`` in: float64 stays, others float32."""
    return np.dtype("float64") if np.dtype(dtype) == np.float64 else np.dtype("float32")

