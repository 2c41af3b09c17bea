"""Debug operators: finiteness tests, the all-finite check of dynamic loss scaling, hardmax.

* ``contrib.isfinite``, ``isinf``, ``isnan``, ``isposinf``, ``isneginf``: 1 where the test
  holds, else 0, with the input's shape and dtype (MXNet's contract). Floats are tested on
  their bits (``_core/finite.pyx``), float16 included, never converted; integer and bool
  arrays are always finite. MXNet built these from ``==``/``abs`` compositions, about 50x
  slower than NumPy, and its ``abs(x) == inf`` test reported 0 as infinite for uint8
  (``inf`` cast to uint8 is 0).
* ``contrib.all_finite(*arrays)`` (also ``all_finite``/``multi_all_finite``): one pass over
  many gradient arrays, stopping at the first non-finite block; a (1,) float32 flag.
* ``contrib.hardmax(data, axis=-1)``: the one-hot of the argmax along ``axis``, in one pass.
* ``_npx_constraint_check(input, msg)`` (``mx.npx.constraint_check``): raises MXNetError (a
  ValueError) with ``msg`` unless every element of the boolean input is true; else a 0-d
  True.

None of these is differentiable: the outputs are piecewise constant (declared explicitly).
"""
import numpy as np

from .._core import finite as _k
from ..base import DTYPES, is_bfloat16, op_error
from .common import F32, kernels, same_shape, write_back
from .registry import NON_DIFFERENTIABLE, OpDef, Param, register
from .shape_utils import normalize_axis, size_of

_SUPPORTED = frozenset(DTYPES.values())


def _readable(x):
    """``x`` in a dtype the kernels read: bfloat16 as float32 (an exact widening that keeps
    every infinity, NaN and order; the kernels know float16's bits, not bfloat16's)."""
    return x.astype(F32) if is_bfloat16(x.dtype) else x

# test name: what it marks (1 in the output)
TESTS = {
    "isfinite": "finite values (neither infinite nor NaN)",
    "isinf": "positive or negative infinity",
    "isnan": "NaN (any sign and payload)",
    "isposinf": "positive infinity",
    "isneginf": "negative infinity",
}
# the doc example's result for [1, inf, -inf, -2]
_EXAMPLE = {
    "isfinite": "[1.0, 0.0, 0.0, 1.0]", "isinf": "[0.0, 1.0, 1.0, 0.0]",
    "isnan": "[0.0, 0.0, 0.0, 0.0]", "isposinf": "[0.0, 1.0, 0.0, 0.0]",
    "isneginf": "[0.0, 0.0, 1.0, 0.0]",
}


def _checked_type(op):
    def infer_type(dtypes, attrs):
        if dtypes[0] not in _SUPPORTED:
            raise op_error(op, f"unsupported dtype {dtypes[0]} for data")
        return [dtypes[0]]
    return infer_type


# ---- isfinite / isinf / isnan / isposinf / isneginf -----------------------------------------
def _classify_compute(test):
    test_id = _k.TEST_IDS[test]

    def compute(rctx, ins, outs, attrs):
        x, out = _readable(ins[0]), outs[0]
        target = out if x.dtype == out.dtype else rctx.xp.empty(out.shape, x.dtype)
        kernels(rctx, _k).classify(test_id, x, target)
        write_back(rctx.xp, target, out)
    return compute


def _register_tests():
    for test, what in TESTS.items():
        name = f"_contrib_{test}"
        register(OpDef(
            name, inputs=("data",), infer_shape=same_shape, infer_type=_checked_type(name),
            backward_shape="same",
            compute={"cpu": _classify_compute(test)}, gradient=NON_DIFFERENTIABLE,
            grad_needs=(), elementwise=True,
            doc=f"""1 where ``data`` holds {what}, else 0; same shape and dtype as ``data``.

Floats (float16 too) are tested on their raw bits; integer and bool arrays hold only finite
values. MXNet's version was a composition of ``==`` and ``abs`` that was ~50x slower than
NumPy and called 0 infinite in uint8 arrays; this one is a single vectorized pass.

>>> x = mx.nd.array([1.0, float('inf'), float('-inf'), -2.0])
>>> mx.nd.contrib.{test}(x).asnumpy().tolist()
{_EXAMPLE[test]}
"""))


# ---- all_finite ------------------------------------------------------------------------------
def _all_finite_shape(shapes, attrs):
    n = attrs.num_arrays
    if n is not None and n != len(shapes):
        raise op_error("_contrib_all_finite", f"num_arrays={n} but {len(shapes)} array(s) were "
                       f"given (shapes {shapes})")
    return [(1,)]


def _all_finite_type(dtypes, attrs):
    for i, dt in enumerate(dtypes):
        if dt not in _SUPPORTED:
            raise op_error("_contrib_all_finite", f"unsupported dtype {dt} for array {i}")
    return [F32]


def _all_finite_compute(rctx, ins, outs, attrs):
    bad = _k.any_of(_k.SCAN_IDS["nonfinite"], [_readable(x) for x in ins])
    if attrs.init_output:
        outs[0][0] = 0.0 if bad else 1.0
    elif bad:
        outs[0][0] = 0.0


def _register_all_finite():
    register(OpDef(
        "_contrib_all_finite", inputs=("data",), variadic=True, key_var_num_args="num_arrays",
        aliases=("all_finite", "multi_all_finite"),
        params=(Param("num_arrays", "int", None,
                      "number of arrays (MXNet's multi_all_finite); None: all those given"),
                Param("init_output", "bool", True,
                      "start from 1; False keeps the value already in out= unless a "
                      "non-finite value is found, so several calls AND into one flag")),
        infer_shape=_all_finite_shape, infer_type=_all_finite_type,
        compute={"cpu": _all_finite_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc="""1.0 when every element of every array is finite, else 0.0: shape (1,), float32.

One pass over all the arrays (integer and bool arrays are skipped: always finite), stopping
at the first block holding an infinity or a NaN: the overflow check of dynamic loss scaling
(``mxlite.contrib.amp.DynamicLossScaler``). MXNet had ``all_finite`` for one array and
``multi_all_finite`` for several; both names lead here. With ``init_output=False`` the flag
is only cleared, never set: pass ``out=`` (without it the starting value is undefined).

>>> g1, g2 = mx.nd.array([1.0, 2.0]), mx.nd.array([[3.0, float('nan')]])
>>> mx.nd.contrib.all_finite(g1).asnumpy().tolist()
[1.0]
>>> mx.nd.contrib.all_finite(g1, g2).asnumpy().tolist()
[0.0]
"""))


# ---- _has_nan / _has_inf (NDArray.has_nan(), .has_inf()) -------------------------------------
def _has_compute(scan):
    scan_id = _k.SCAN_IDS[scan]

    def compute(rctx, ins, outs, attrs):
        outs[0][0] = 1.0 if _k.any_of(scan_id, [_readable(x) for x in ins]) else 0.0
    return compute


def _register_has():
    for scan, what in (("nan", "a NaN"), ("inf", "an infinity (either sign)")):
        name = f"_has_{scan}"
        register(OpDef(
            name, inputs=("data",), infer_shape=lambda shapes, attrs: [(1,)],
            infer_type=lambda dtypes, attrs: [F32], compute={"cpu": _has_compute(scan)},
            gradient=NON_DIFFERENTIABLE, grad_needs=(),
            doc=f"1.0 when ``data`` holds {what}, else 0.0 (shape (1,), float32); one early-"
                f"exit pass. Behind ``NDArray.has_{scan}()``."))


# ---- hardmax ---------------------------------------------------------------------------------
def _hardmax_shape(shapes, attrs):
    shape = shapes[0]
    if len(shape) == 0:
        raise op_error("_contrib_hardmax", "data must have at least one dimension, got shape ()")
    if not -len(shape) <= attrs.axis < len(shape):
        raise op_error("_contrib_hardmax", f"axis={attrs.axis} is out of range for data of "
                       f"shape {shape} ({len(shape)} dimension(s))")
    return [shape]


def _hardmax_compute(rctx, ins, outs, attrs):
    x, y = ins[0], outs[0]
    axis = normalize_axis("_contrib_hardmax", attrs.axis, x.ndim)
    outer, n, inner = size_of(x.shape[:axis]), x.shape[axis], size_of(x.shape[axis + 1:])
    if x.dtype == np.bool_:         # same bytes and order as uint8
        x, y = x.view(np.uint8), y.view(np.uint8)
    x, out = _readable(x), y
    if x.dtype != out.dtype:
        y = rctx.xp.empty(out.shape, x.dtype)
    kernels(rctx, _k).hardmax(x.reshape(-1), y.reshape(-1), outer, n, inner)
    write_back(rctx.xp, y, out)


def _register_hardmax():
    register(OpDef(
        "_contrib_hardmax", inputs=("data",),
        params=(Param("axis", "int", -1, "the axis to take the maximum along"),),
        infer_shape=_hardmax_shape, infer_type=_checked_type("_contrib_hardmax"),
        compute={"cpu": _hardmax_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc="""One-hot of the first maximum along ``axis``: same shape and dtype as ``data``.

Ties go to the first index; a NaN counts as the maximum (the first NaN wins), as NumPy's
argmax. One pass over the data, without the argmax + one_hot + reshape detour. This is ONNX
``Hardmax`` of opset 13 (``axis=-1`` default). Opsets 1-12 flattened the input to 2-D at
``axis`` and took the maximum over all trailing dimensions at once; emulate that with
``hardmax(x.reshape((m, -1)), axis=-1).reshape(x.shape)`` where ``m`` is the product of the
dimensions before ``axis``.

>>> x = mx.nd.array([[1, 3, 3], [7, 2, 5]])
>>> mx.nd.contrib.hardmax(x).asnumpy().tolist()
[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
>>> mx.nd.contrib.hardmax(x, axis=0).asnumpy().tolist()
[[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]
"""))


# ---- constraint check (npx.constraint_check) --------------------------------------------------
def _constraint_check_type(dtypes, attrs):
    if dtypes[0] != np.bool_:
        raise op_error("_npx_constraint_check", f"input must be a boolean array, got {dtypes[0]}")
    return [np.dtype(np.bool_)]


def _constraint_check_compute(rctx, ins, outs, attrs):
    # the verdict has to reach the host to raise: one flag read after the device's reduction
    if not bool(ins[0].all()):
        raise op_error("_npx_constraint_check", attrs.msg)
    outs[0].fill(True)


def _register_constraint_check():
    register(OpDef(
        "_npx_constraint_check", inputs=("input",),
        params=(Param("msg", "str", "Constraint violated.",
                      "the error message when some element is false"),),
        infer_shape=lambda shapes, attrs: [()], infer_type=_constraint_check_type,
        compute={"cpu": _constraint_check_compute}, gradient=NON_DIFFERENTIABLE, grad_needs=(),
        doc="""A 0-d True when every element of the boolean ``input`` is true (an empty input
included); otherwise MXNetError (a ValueError) with ``msg``.

Multiply a value by the result (``x * npx.constraint_check(x > 0, 'x must be positive')``)
so that the check is part of the graph that computes it: a hybridized block then runs it.

>>> ok = mx.nd._internal._npx_constraint_check(mx.nd.ones((2,), dtype='bool'), msg='bad')
>>> ok.shape, ok.asnumpy().item()
((), True)
"""))


_register_tests()
_register_all_finite()
_register_has()
_register_hardmax()
_register_constraint_check()
