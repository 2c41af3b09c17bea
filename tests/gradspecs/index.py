"""Gradient specs: take, pick, where, clip and their scatter adjoints."""
import numpy as np

from . import Spec


def _indices(*values):
    return np.array(values, dtype=np.float64)


IDX = _indices(0, 2, 2, 1)            # a duplicate index: gradients accumulate
PICK = _indices(0, 2, 1)


def _take(nd, a):
    return nd.take(a, nd.array(IDX, dtype="float64"), axis=1)


def _pick(nd, a):
    return nd.pick(a, nd.array(PICK, dtype="float64"), axis=1)


SPECS = {
    "take": Spec([(2, 3, 2)], _take),
    "pick": Spec([(3, 4)], _pick),
    "where": Spec([(3, 4), (3, 4)], lambda nd, x, y: nd.where(
        nd.array([[1, 0, 1, 0]] * 3, dtype="float64"), x * x, y * x)),
    # the bounds sit away from the sampled values' edges only by chance; the kink has
    # probability ~eps of being straddled
    "clip": Spec([(3, 4)], lambda nd, x: nd.clip(x * x, 0.1, 0.6)),
    "_take_grad": Spec([(2, 4, 2)], lambda nd, g: nd._internal._take_grad(
        g * g, nd.array(IDX, dtype="float64"), nd.zeros((2, 3, 2), dtype="float64"), axis=1)),
    "_pick_grad": Spec([(3,)], lambda nd, g: nd._internal._pick_grad(
        g * g, nd.array(PICK, dtype="float64"), nd.zeros((3, 4), dtype="float64"), axis=1)),
}
