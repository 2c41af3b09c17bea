"""Gradient specs: gather_nd, scatter_nd, _backward_gather_nd (each linear, the others'
adjoint) and slice_like (its adjoint _slice_scatter, whose gradient is slice)."""
import numpy as np

from . import Spec

# (M=2, 3, 2): rows index axes 0 and 1 of a (3, 4, ...) array; a repeat and negative indices
ND = np.array([[[0, 2], [-1, 1], [0, 0]], [[3, 1], [0, -4], [3, 3]]], dtype=np.float64)
# no repeated position: scatter_nd keeps one value per position
ND_UNIQUE = np.array([[[0, 2], [-1, 1]], [[3, 1], [0, -3]]], dtype=np.float64)


def _idx(nd, values):
    return nd.array(values, dtype="float64")


SPECS = {
    "gather_nd": Spec([(3, 4, 2)], lambda nd, x: nd.gather_nd(x * x, _idx(nd, ND))),
    "scatter_nd": Spec([(2, 2, 2)], lambda nd, x: nd.scatter_nd(
        x * x, _idx(nd, ND_UNIQUE), shape=(3, 4, 2))),
    "_backward_gather_nd": Spec([(3, 2, 2)], lambda nd, x: nd._internal._backward_gather_nd(
        x * x, _idx(nd, ND), shape=(3, 4, 2))),
    "slice_like": Spec([(3, 4, 2), (2, 3, 2)], lambda nd, x, y: [
        nd.slice_like(x * x, y, axes=(0, -2)) * y,
        nd.slice_like(x, nd.zeros((2, 3, 1), dtype="float64"))]),
    "moments": Spec([(3, 4, 2)], lambda nd, x: [
        *nd.moments(x * x, axes=(0, 2)), *nd.moments(x, axes=(-1,), keepdims=True)]),
    "_split_v2": Spec([(3, 7, 2)], lambda nd, x: [
        *nd.split_v2(x * x, (2, 2, 5), axis=1),
        *nd.split_v2(x, 3, axis=0, squeeze_axis=True),
        nd._internal._split_v2(x, indices=(), sections=2, axis=-1)[1]]),
    "fill_element_0index": Spec([(3, 4), (3,)], lambda nd, x, v: nd.fill_element_0index(
        x * x, v * v, nd.array([2, 0, 3], dtype="float64")) * x),
    "cast_storage": Spec([(3, 4)], lambda nd, x: nd.cast_storage(x * x, stype="default") * x),
    # float64 passes amp's casts unchanged; float32 rounding would hide in finite differences
    "amp_cast": Spec([(3, 4)], lambda nd, x: nd.amp_cast(x * x, dtype="float64") * x),
    "amp_multicast": Spec([(3, 4), (3, 4)], lambda nd, x, y: [
        a * b for a, b in zip(nd.amp_multicast(x * y, y, num_outputs=2), [x, x])]),
}
