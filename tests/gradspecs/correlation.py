"""Gradient specs: Correlation and its adjoint and tangent ops (mxlite/ops/correlation.py).

Correlation is bilinear for the product and piecewise linear for |a - b|, its adjoint and
tangent linear in their first input: the calls square an input so every order has a term.
The |a - b| calls draw their values on two offset lattices (step 0.1, offsets 0.03 and 0.07)
so no two compared pixels (nor a pixel and the zero padding) are closer than 0.03: the
kinks of |a - b| lie where they are equal, and away from them the orders past the first are
zero, which the check confirms."""
from . import Spec

_SHAPE = (1, 2, 5, 6)
_MULT = dict(kernel_size=3, max_displacement=2, stride1=2, stride2=2, pad_size=2)
_ABS = dict(kernel_size=1, max_displacement=1, pad_size=1, is_multiply=False)
_OUT = {"mult": (1, 9, 2, 2), "abs": (1, 9, 5, 6)}


def _lattice(rng, offset):
    return (rng.integers(-9, 10, _SHAPE) + offset) / 10.0


def _sample(first):
    """[first input (a head gradient or direction), data1, data2]: uniform first input and
    lattice data (away from |a - b|'s kinks)."""
    def sample(rng):
        return [rng.uniform(-1, 1, first), _lattice(rng, 0.3), _lattice(rng, 0.7)]
    return sample


def _correlation(nd, a, b):
    return [nd.Correlation(a * a, b, **_MULT), nd.Correlation(a, b, **_ABS) * a.sum()]


def _adjoint(nd, g, d1, d2):
    outs = []
    for side in (1, 2):
        outs.append(nd._internal._correlation_adjoint(
            nd.slice_axis(g, axis=2, begin=0, end=2).slice_axis(axis=3, begin=0, end=2) ** 2,
            d1 * d1, d2 * d2, side=side, **_MULT))
        outs.append(nd._internal._correlation_adjoint(g * g, d1, d2, side=side, **_ABS))
    return outs


def _tangent(nd, t, d1, d2):
    outs = []
    for side in (1, 2):
        outs.append(nd._internal._correlation_tangent(t * t, d1 * d1, d2 * d2, side=side,
                                                      **_MULT))
        outs.append(nd._internal._correlation_tangent(t * t, d1, d2, side=side, **_ABS))
    return outs


SPECS = {
    "Correlation": Spec([_SHAPE, _SHAPE], _correlation,
                        sample=lambda rng: [_lattice(rng, 0.3), _lattice(rng, 0.7)]),
    "_correlation_adjoint": Spec([_OUT["abs"], _SHAPE, _SHAPE], _adjoint,
                                 sample=_sample(_OUT["abs"])),
    "_correlation_tangent": Spec([_SHAPE, _SHAPE, _SHAPE], _tangent, sample=_sample(_SHAPE)),
}
