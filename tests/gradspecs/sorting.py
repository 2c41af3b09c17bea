"""Gradient specs: topk, sort, cumsum, smooth_l1 and the gather/scatter pair behind them
(mxlite/ops/sorting.py).

Linear or piecewise-linear ops are composed with a square so that every order's VJP depends
on the input; random samples have no ties (the kink of a sort) with probability one.
"""
import numpy as np

from . import Spec

IDX = np.array([[2, 0, 2], [1, 1, 0]], dtype=np.float64)    # duplicates accumulate


def _idx(nd):
    return nd.array(IDX, dtype="float64")


def _smooth_l1_sample(rng):
    """Values away from the kink |x| = 1 / sigma**2 = 0.25 (sigma = 2)."""
    mag = np.concatenate([rng.uniform(0.02, 0.2, 6), rng.uniform(0.3, 1.0, 6)])
    return [(mag * rng.choice([-1.0, 1.0], 12)).reshape(3, 4)]


SPECS = {
    "topk": Spec([(3, 5)], lambda nd, x: nd.topk(x * x, k=2, ret_typ="value", axis=1)),
    "sort": Spec([(3, 4)], lambda nd, x: nd.sort(x * x, axis=0, is_ascend=False)),
    "cumsum": Spec([(3, 4)], lambda nd, x: nd.cumsum(x * x, axis=1)),
    "smooth_l1": Spec([(3, 4)], lambda nd, x: nd.smooth_l1(x, scalar=2.0) * x,
                      sample=_smooth_l1_sample),
    "_take_along_axis": Spec([(2, 4)], lambda nd, x: nd._internal._take_along_axis(
        x * x, _idx(nd), axis=1)),
    "_take_along_axis_grad": Spec([(2, 3)], lambda nd, g: nd._internal._take_along_axis_grad(
        g * g, _idx(nd), nd.zeros((2, 4), dtype="float64"), axis=1)),
}
