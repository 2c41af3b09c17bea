"""Large-tensor rows: element-wise unary ops (math, rounding, finiteness tests, cast, copies).

Every row is ``elementwise``: the result at the head, around 2**31 and 2**32 and at the tail
equals the same op on those elements alone, with marker values (inside the op's domain) at
positions past 2**31 and 2**32.

* Ops with an integer kernel (abs, sign, rounding, relu, clip, ...) and the copies run on
  int8 (logical_not on bool, cast int8 -> uint8) past 2**32, into a fresh output (8 GiB).
* The finiteness tests (``_contrib_is*``) read float16 bits, never converting them: float16
  past 2**32, in place (8 GiB), with inf, -inf and NaN among the markers.
* Float-valued math (sin, log, gamma, ..., smooth_l1, _polygamma) gives float32 for integer
  input, and float16 is computed through a float32 copy of the whole array plus a float32
  scratch result: at 2**32 either is 16 GiB or more, over the 16 GiB peak. These run float32
  past 2**31, in place (8 GiB). Where the op's libm routine is slow on ordinary numbers
  (erfinv, gamma, tan, ...), the bulk of the array holds a value on its fast path (inf, or 1
  for erfinv): the bulk's value does not matter to an index check; the markers, in the
  op's domain, carry it.
"""
import functools

import mxlite as mx

from . import Row, elementwise

F32_REASON = ("float-valued op: integer input gives a float32 result and float16 is computed "
              "through whole-array float32 copies, so 2**32 elements need >= 16 GiB, over the "
              "16 GiB peak; float32 past 2**31 in place is 8 GiB")

INT8 = (-3, 5, -7, -128)               # negatives and the int8 minimum
ANY = (-3.25, 5.5, -7.75, 9.0)         # any real input
POS = (3.25, 5.5, 7.75, 9.0)           # log, sqrt, gamma, arccosh, ...: positive input
UNIT = (0.25, -0.5, 0.75, -0.125)      # arcsin, arccos, arctanh, erfinv: inside (-1, 1)
SPECIAL = (float("inf"), float("-inf"), float("nan"), 2.5)


def _int8(call, dtype="int8", values=INT8):
    """An op with an integer kernel: int8 (or ``dtype``) past 2**32, into a fresh output."""
    return elementwise(call, dtype=dtype, values=values)


def _float32(call, values=ANY, fill=0):
    """A float-valued op: float32 past 2**31, in place, the bulk ``fill``-ed."""
    row = elementwise(call, dtype="float32", values=values, size="2**31", reason=F32_REASON,
                      inplace=True)
    return _filled(row, fill) if fill else row


def _filled(row, fill):
    """``row`` with the bulk of the arrays it builds (``t.big``) holding ``fill``, not 0."""
    def run(t):
        t.big = functools.partial(t.big, fill=fill)
        row.run(t)
    return Row(run, row.dtype, row.size, row.reason)


def _finite_test(call):
    """A finiteness test on float16 bits: past 2**32, in place."""
    return elementwise(call, dtype="float16", values=SPECIAL, inplace=True)


INF = float("inf")
# a bulk value on the fast path of an op slow on ordinary numbers (CPU ns per element, both
# threads, 0 -> fill: erfinv 16 -> 0.7, gamma 5.4 -> 3.6, gammaln 5.4 -> 2.5, tan 2.0 -> 1.5,
# arccosh 3.1 -> 1.5, log10 4.3 -> 1.5; sin is 1.5)
_BULK = {"erfinv": 1.0, "gamma": INF, "gammaln": INF, "tan": INF, "arccosh": INF, "log10": INF}

_INT_OPS = ("abs", "sign", "negative", "square", "relu", "floor", "ceil", "round", "rint",
            "fix", "trunc")
_FLOAT_OPS = {
    ANY: ("exp", "expm1", "sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "arcsinh",
          "degrees", "radians", "sigmoid", "softsign", "erf"),
    POS: ("reciprocal", "sqrt", "rsqrt", "cbrt", "rcbrt", "log", "log2", "log10", "log1p",
          "arccosh", "gamma", "gammaln"),
    UNIT: ("arcsin", "arccos", "arctanh", "erfinv"),
}

ROWS = {name: _int8(getattr(mx.nd, name)) for name in _INT_OPS}
ROWS.update({name: _float32(getattr(mx.nd, name), values, _BULK.get(name, 0))
             for values, names in _FLOAT_OPS.items() for name in names})
ROWS.update({f"_contrib_{test}": _finite_test(getattr(mx.nd.contrib, test))
             for test in ("isfinite", "isinf", "isnan", "isposinf", "isneginf")})
ROWS.update({
    "logical_not": _int8(mx.nd.logical_not, dtype="bool", values=(True,)),
    "clip": _int8(lambda x: mx.nd.clip(x, -4, 6)),
    "cast": _int8(lambda x: mx.nd.cast(x, dtype="uint8")),
    "_copy": _int8(mx.nd._internal._copy),
    # in one process the sum over ranks is this rank's value
    "_sync_sum": _int8(mx.nd._internal._sync_sum),
    "BlockGrad": _int8(mx.nd.BlockGrad),
    "MakeLoss": _int8(mx.nd.MakeLoss),
    "_identity_with_attr_like_rhs": _int8(
        lambda x: mx.nd._internal._identity_with_attr_like_rhs(x, x)),
    "smooth_l1": _float32(lambda x, out=None: mx.nd.smooth_l1(x, scalar=0.5, out=out)),
    "_polygamma": _float32(lambda x, out=None: mx.nd._internal._polygamma(x, n=1, out=out),
                           POS),
})
