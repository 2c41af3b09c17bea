"""MXNet's NumPy-interface operator names in symbol JSON (``_np_*``, ``_npi_*``,
``_npx_*``), read as ``mx.np`` calls.

A model MXNet 1.9.1 exported under ``npx.set_np()`` names operators such as ``_npi_add``,
``_np_sum`` or ``_npx_reshape`` with MXNet's attributes. ``translation(name)`` gives the
function that rebuilds such a node from its input Symbols and its attributes (strings as
in the file) by calling the ``mx.np``/``mx.npx`` function of the same meaning, so a loaded
graph computes with mxlite's registered operators and NumPy's semantics. The translations
are checked by tests/numpy/test_np_json.py on models exported by MXNet 1.9.1.
"""
import ast

import numpy as _onp

from ...base import MXNetError

__all__ = ["translation", "TRANSLATED"]


# ---- attribute values (MXNet writes Python-literal strings) --------------------------------
def _value(text):
    if text is None:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if text in ("true", "false"):
            return text == "true"
        return text


def _axis(text):
    v = _value(text)
    return tuple(v) if isinstance(v, list) else v


def _dtype(text):
    v = _value(text)
    return None if v in (None, "None") else _onp.dtype(v)


def _np():
    # mx.sym.np: a call on inputs of unknown shape or dtype is deferred until they are known
    from ... import symbol
    return symbol.np


def _npx():
    from ... import symbol
    return symbol.npx


def _one(fn):
    def build(inputs, attrs):
        (x,) = inputs
        return fn(x)
    return build


def _two(fn):
    def build(inputs, attrs):
        return fn(*inputs)
    return build


def _scalar(fn, reflected=False):
    def build(inputs, attrs):
        (x,) = inputs
        s = _value(attrs.get("scalar"))
        if _value(attrs.get("is_int", "False")) and float(s).is_integer():
            s = int(s)
        return fn(s, x) if reflected else fn(x, s)
    return build


_UNARY = ("sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh exp expm1 "
          "log log2 log10 log1p sqrt cbrt square reciprocal absolute negative sign floor ceil "
          "trunc rint fix degrees radians logical_not isnan isinf isfinite").split()
_BINARY = ("add subtract multiply true_divide mod power maximum minimum hypot equal not_equal "
           "greater greater_equal less less_equal logical_and logical_or logical_xor "
           "arctan2 copysign lcm").split()
_REFLECTED = {"rsubtract": "subtract", "rtrue_divide": "true_divide", "rmod": "mod",
              "rpower": "power", "rarctan2": "arctan2", "rcopysign": "copysign"}


def _reduce(name):
    def build(inputs, attrs):
        (x,) = inputs
        kw = {"axis": _axis(attrs.get("axis")),
              "keepdims": bool(_value(attrs.get("keepdims", "False")))}
        if name in ("sum", "prod", "mean") and _dtype(attrs.get("dtype")) is not None:
            kw["dtype"] = _dtype(attrs.get("dtype"))
        if name in ("std", "var"):
            kw["ddof"] = int(_value(attrs.get("ddof", "0")))
        initial = _value(attrs.get("initial"))
        if initial is not None:
            kw["initial"] = initial
        return getattr(_np(), name)(x, **kw)
    return build


def _arg(name):
    def build(inputs, attrs):
        (x,) = inputs
        return getattr(_np(), name)(x, axis=_axis(attrs.get("axis")),
                                    keepdims=bool(_value(attrs.get("keepdims", "False"))))
    return build


def _joined(name):
    def build(inputs, attrs):
        fn = getattr(_np(), name)
        if name in ("vstack", "hstack"):
            return fn(list(inputs))
        return fn(list(inputs), axis=_axis(attrs.get("axis", "0")))
    return build


def _creation(name):
    def build(inputs, attrs):
        np = _np()
        dtype = _dtype(attrs.get("dtype")) or None
        if name in ("zeros", "ones"):
            return getattr(np, name)(_value(attrs["shape"]), dtype=dtype)
        if name == "full_like":
            (x,) = inputs
            return np.full_like(x, _value(attrs["fill_value"]), dtype=dtype)
        if name == "arange":
            return np.arange(_value(attrs["start"]), _value(attrs.get("stop")),
                             _value(attrs.get("step", "1")), dtype=dtype)
        if name == "eye":
            return np.eye(_value(attrs["N"]), _value(attrs.get("M")) or None,
                          _value(attrs.get("k", "0")), dtype=dtype)
        raise MXNetError(f"no translation of {name}")
    return build


def _tensordot(inputs, attrs):
    a, b = inputs
    return _np().tensordot(a, b, axes=(list(_axis(attrs["a_axes_summed"])),
                                       list(_axis(attrs["b_axes_summed"]))))


def _np_reshape(inputs, attrs):
    (x,) = inputs
    return _np().reshape(x, _axis(attrs["newshape"]))


def _npx_reshape(inputs, attrs):
    (x,) = inputs
    return _npx().reshape(x, _axis(attrs["newshape"]),
                          reverse=bool(_value(attrs.get("reverse", "False"))))


TRANSLATED = {}
for _n in _UNARY:
    TRANSLATED[f"_npi_{_n}"] = _one(lambda x, _n=_n: getattr(_np(), _n)(x))
for _n in _BINARY:
    TRANSLATED[f"_npi_{_n}"] = _two(lambda a, b, _n=_n: getattr(_np(), _n)(a, b))
    TRANSLATED[f"_npi_{_n}_scalar"] = _scalar(lambda a, b, _n=_n: getattr(_np(), _n)(a, b))
for _r, _n in _REFLECTED.items():
    TRANSLATED[f"_npi_{_r}_scalar"] = _scalar(lambda a, b, _n=_n: getattr(_np(), _n)(a, b),
                                             reflected=True)
for _n in ("sum", "prod", "max", "min"):
    TRANSLATED[f"_np_{_n}"] = _reduce(_n)
for _n in ("mean", "std", "var"):
    TRANSLATED[f"_npi_{_n}"] = _reduce(_n)
for _n in ("argmax", "argmin"):
    TRANSLATED[f"_npi_{_n}"] = _arg(_n)
for _n in ("concatenate", "stack", "vstack", "hstack"):
    TRANSLATED[f"_npi_{_n}"] = _joined(_n)
for _n in ("zeros", "ones", "full_like", "arange", "eye"):
    TRANSLATED[f"_npi_{_n}"] = _creation(_n)
TRANSLATED.update({
    "_np_reshape": _np_reshape,
    "_npx_reshape": _npx_reshape,
    "_np_transpose": lambda i, a: _np().transpose(i[0], _axis(a.get("axes"))),
    "_np_squeeze": lambda i, a: _np().squeeze(i[0], _axis(a.get("axis"))),
    "_np_moveaxis": lambda i, a: _np().moveaxis(i[0], _axis(a["source"]),
                                                 _axis(a["destination"])),
    "_npi_flip": lambda i, a: _np().flip(i[0], _axis(a["axis"])),
    "_npi_broadcast_to": lambda i, a: _np().broadcast_to(i[0], _axis(a["shape"])),
    "_np_cumsum": lambda i, a: _np().cumsum(i[0], axis=_axis(a.get("axis")),
                                            dtype=_dtype(a.get("dtype"))),
    "_np_copy": lambda i, a: _np().copy(i[0]),
    "_np_dot": lambda i, a: _np().dot(*i),
    "_npi_matmul": lambda i, a: _np().matmul(*i),
    "_npi_tensordot": _tensordot,
    "_npi_tensordot_int_axes": lambda i, a: _np().tensordot(*i, axes=int(_value(a["axes"]))),
    "_npi_einsum": lambda i, a: _np().einsum(_value(a["subscripts"]), *i),
    "_npi_where": lambda i, a: _np().where(*i),
    "_npx_relu": lambda i, a: _npx().relu(i[0]),
    "_npx_sigmoid": lambda i, a: _npx().sigmoid(i[0]),
})
del _n, _r


def translation(name):
    """The function ``(input Symbols, attribute strings) -> Symbol`` for MXNet operator
    ``name`` of the NumPy interface, or None when ``name`` is not one."""
    return TRANSLATED.get(name)
