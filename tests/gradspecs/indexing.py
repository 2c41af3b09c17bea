"""Gradient specs: the indexing operators behind ``x[key]`` and ``x[key] = v``
(mxlite/ops/indexing.py).

Each op is linear in its inputs, so each call squares its output (as the shape specs do):
the order-k checks then run the op's gradient, the gradient's gradient and ``mul``. The
keys mix basic and advanced indexing; the advanced ones repeat an index, so the scatter-add
of ``_getitem``'s adjoint is exercised.
"""
import numpy as np

from . import Spec
from .shape import _both, _sq

_REPEATS = np.array([2, 0, 2], np.int64)
_BASIC = (slice(1, None, 2), Ellipsis, slice(None, None, -1))
_MIXED = (_REPEATS, slice(None), np.array([1, 0, 1], np.int64))


def _getitem(nd, x):
    return _both(nd._internal._getitem(x, key=_BASIC), nd._internal._getitem(x, key=_MIXED),
                 nd._internal._getitem(x, key=(1, None, 2)))


SPECS = {
    "_getitem": Spec([(3, 4, 2)], _getitem),
    "_getitem_scatter": Spec([(3, 4)], lambda nd, x: _sq(nd._internal._getitem_scatter(
        x, key=(_REPEATS, slice(None), np.array([1, 0, 1], np.int64)), shape=(3, 4, 2)))),
    # a region written with a broadcast value, and a value that fills its region exactly
    "_setitem": Spec([(4, 3), (3,), (1, 2)], lambda nd, x, v, w: _both(
        nd._internal._setitem(x, v, key=(slice(1, 3),)),
        nd._internal._setitem(x, w, key=(slice(None, None, 2), np.array([0, 2], np.int64))))),
}
