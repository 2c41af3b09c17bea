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


# ---- DeformablePSROIPooling, its differentiated samplers and their scatter -------------------
# Linear in data (and the scatter in its head gradient); in trans piecewise bilinear, with
# kinks where a sample crosses a pixel border, the map's edge or the skip line half a pixel
# outside it: random offsets meet one with probability zero.
_ROIS = [[0, 0.6, 1.2, 4.3, 3.8], [1, -1.0, 0.4, 2.6, 4.5], [0, 2.2, -0.7, 5.5, 1.9]]
_DPS = dict(spatial_scale=0.9, output_dim=2, group_size=2, pooled_size=2, part_size=3,
            sample_per_part=2, trans_std=0.3)
_DATA, _TRANS, _BINS = (2, 8, 5, 6), (3, 2, 3, 3), (3, 2, 2, 2)


def _rois(nd):
    return nd.array(_ROIS, dtype="float64")


def _dps(nd, x, t):
    return [nd.contrib.DeformablePSROIPooling(x * x, _rois(nd), t, **_DPS) * t.sum(),
            nd.contrib.DeformablePSROIPooling(x * x, _rois(nd), no_trans=True,
                                              **dict(_DPS, trans_std=0.0))]


def _dps_sample(nd, x, t):
    return [nd._internal._dpsroi_sample(x * x, _rois(nd), t * t, dx=dx, dy=dy, **_DPS)
            * x.sum() for dx, dy in ((1, 0), (0, 1), (1, 1))]


def _dps_scatter(nd, g, t):
    return [nd._internal._dpsroi_scatter(g * g, _rois(nd), t * t, dx=dx, dy=dy,
                                         data_shape=_DATA, **_DPS) * g.sum()
            for dx, dy in ((0, 0), (1, 0), (1, 1))]


SPECS.update({
    "_contrib_DeformablePSROIPooling": Spec([_DATA, _TRANS], _dps),
    "_dpsroi_sample": Spec([_DATA, _TRANS], _dps_sample),
    "_dpsroi_scatter": Spec([_BINS, _TRANS], _dps_scatter),
})
