"""Array creation and conversion: zeros, ones, full, arange, zeros_like, ones_like, cast."""
import numpy as np

from ..base import normalize_dtype, op_error
from .common import same_shape
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import check_shape

_CTX = Param("ctx", "ctx", None, "device context (default: current context)")
_DTYPE = Param("dtype", "dtype", None, "element dtype (default float32)")


def _fill_with(value_of):
    def compute(ins, outs, attrs):
        outs[0].fill(value_of(attrs))
    return compute


def _shape_of(name):
    return lambda shapes, attrs: [check_shape(name, attrs.shape)]


def _dtype_param(dtypes, attrs):
    return [attrs.dtype if attrs.dtype is not None else np.dtype("float32")]


for _name, _value, _doc in (("zeros", lambda a: 0, "An array of zeros."),
                            ("ones", lambda a: 1, "An array of ones."),
                            ("full", lambda a: a.val, "An array filled with ``val``.")):
    register(OpDef(
        _name, inputs=(), infer_shape=_shape_of(_name), infer_type=_dtype_param,
        params=(Param("shape", "shape", doc="output shape"),)
        + ((Param("val", "float", doc="fill value"),) if _name == "full" else ())
        + (_CTX, _DTYPE),
        compute={"cpu": _fill_with(_value)}, gradient=NON_DIFFERENTIABLE,
        doc=_doc + " ``shape`` may be an int or a tuple; dtype defaults to float32."))


def _arange_values(a):
    start, stop = (0.0, a.start) if a.stop is None else (a.start, a.stop)
    if a.step == 0:
        raise op_error("arange", "step must not be 0")
    n = max(int(np.ceil((stop - start) / a.step)), 0)
    return start, n


def _arange_shape(shapes, attrs):
    start, n = _arange_values(attrs)
    if attrs.repeat < 1:
        raise op_error("arange", f"repeat must be >= 1, got {attrs.repeat}")
    return [check_shape("arange", (n * attrs.repeat,))]


def _arange_compute(ins, outs, attrs):
    start, n = _arange_values(attrs)
    values = start + attrs.step * np.arange(n, dtype=np.float64)
    if attrs.repeat > 1:
        values = np.repeat(values, attrs.repeat)
    np.copyto(outs[0], values, casting="unsafe")


register(OpDef(
    "arange", inputs=(), infer_shape=_arange_shape, infer_type=_dtype_param,
    params=(Param("start", "float", doc="start of the interval (the stop when stop is None)"),
            Param("stop", "any", None, "end of the interval, exclusive"),
            Param("step", "float", 1.0, "spacing between values"),
            Param("repeat", "int", 1, "times each value is repeated"),
            Param("infer_range", "bool", False, "unused; kept for MXNet compatibility"),
            _CTX, _DTYPE),
    compute={"cpu": _arange_compute}, gradient=NON_DIFFERENTIABLE,
    doc="Evenly spaced values in [start, stop), each repeated ``repeat`` times (MXNet arange)."))

for _name, _value in (("zeros_like", 0), ("ones_like", 1)):
    register(OpDef(
        _name, inputs=("data",), infer_shape=same_shape,
        infer_type=lambda dtypes, attrs: [dtypes[0]],
        compute={"cpu": _fill_with(lambda a, v=_value: v)}, gradient=NON_DIFFERENTIABLE,
        doc=f"An array of {'zeros' if _value == 0 else 'ones'} with the shape and dtype of ``data``."))


def _cast_compute(ins, outs, attrs):
    np.copyto(outs[0], ins[0], casting="unsafe")


def _cast_grad(F, node, ograds):
    """d cast(x)/dx = 1: the head gradient cast back to the input dtype."""
    return [F.cast(ograds[0], dtype=node.input_dtypes[0])]


register(OpDef(
    "cast", inputs=("data",), aliases=("Cast",), infer_shape=same_shape,
    infer_type=lambda dtypes, attrs: [normalize_dtype(attrs.dtype, "cast")],
    params=(Param("dtype", "dtype", doc="target dtype"),),
    compute={"cpu": _cast_compute}, elementwise=True, gradient=_cast_grad, grad_needs=(),
    doc="Convert ``data`` to ``dtype`` (float to integer truncates toward zero)."))
