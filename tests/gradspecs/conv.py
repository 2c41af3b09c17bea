"""Gradient specs: Convolution, Deconvolution, the conv weight gradient, Pooling, UpSampling.

Max pooling samples are spread apart (a random permutation of a grid) so no window has a
tie, and finite differences never cross an argmax change.

Each row also runs the channels-last layouts (NWC, NHWC, NDHWC): its inputs reshaped and
moved channels last (``_last``) inside the call, so the gradients of every order flow through
the layout-aware gradient ops and back through the transposes.
"""
import numpy as np

from . import Spec

_LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _last(nd, a, shape=4):
    """``a`` (reshaped to channels-first ``shape`` first; an int: the rank of ``a`` as it is)
    with its channels moved last: a data, output gradient or weight (O, I, *k) -> (O, *k, I)
    in a channels-last layout. (Symbols have no shape to read, so the rank is given.)"""
    if not isinstance(shape, int):
        a, shape = nd.reshape(a, shape=shape), len(shape)
    return nd.transpose(a, axes=(0,) + tuple(range(2, shape)) + (1,))


def _conv(nd, x, w, b):
    # 2-D, groups, stride, pad, dilation; the input size leaves one row the last window
    # misses (the input gradient's Deconvolution needs adj=1)
    kw = dict(kernel=(3, 2), stride=(2, 1), pad=(1, 0), dilate=(1, 2), num_filter=4,
              num_group=2)
    y = nd.Convolution(x, w, b, **kw)
    # the same in NHWC; NWC and NDHWC on x and w reshaped to 1 and 3 spatial axes
    hwc = nd.Convolution(_last(nd, x), _last(nd, w), b, layout="NHWC", **kw)
    wc = nd.Convolution(_last(nd, x, (2, 4, 30)), _last(nd, w, (4, 2, 6)), b, kernel=(6,),
                        stride=(4,), pad=(1,), num_filter=4, num_group=2, layout="NWC")
    dhwc = nd.Convolution(_last(nd, x, (2, 4, 3, 2, 5)), _last(nd, w, (4, 2, 3, 1, 2)), b,
                          kernel=(3, 1, 2), stride=(1, 1, 2), pad=(1, 0, 1), dilate=(1, 1, 2),
                          num_filter=4, num_group=2, layout="NDHWC")
    return [y * y, hwc * hwc, wc * wc, dhwc * dhwc]


def _deconv(nd, y, w, b):
    # 1-D with adj and bias
    kw = dict(stride=(2,), pad=(1,), adj=(1,), num_filter=3, no_bias=False)
    x = nd.Deconvolution(y, w, b, kernel=(3,), **kw)
    wc = nd.Deconvolution(_last(nd, y, 3), _last(nd, w, 3), b, kernel=(3,), layout="NWC", **kw)
    # NHWC and NDHWC (2 groups) on y and w reshaped
    hwc = nd.Deconvolution(_last(nd, y, (2, 2, 2, 2)), _last(nd, w, (2, 3, 3, 1)), b,
                           kernel=(3, 1), stride=(2, 1), num_filter=3, no_bias=False,
                           layout="NHWC")
    dhwc = nd.Deconvolution(_last(nd, y, (2, 2, 2, 1, 2)), _last(nd, w, (2, 3, 1, 3, 1)), b,
                            kernel=(1, 3, 1), stride=(1, 2, 1), pad=(0, 1, 0), adj=(0, 1, 0),
                            num_filter=3, no_bias=False, layout="NDHWC")
    return [x * x, wc * wc, hwc * hwc, dhwc * dhwc]


def _weight_grad(nd, x, g):
    # ograd one row short of the full output: the Deconvolution gradient's case
    kw = dict(kernel=(2, 2), stride=(2, 1), num_filter=3)
    first = nd._internal._conv_weight_grad(x, g, **kw)
    last = nd._internal._conv_weight_grad(_last(nd, x), _last(nd, g), layout="NHWC", **kw)
    wc = nd._internal._conv_weight_grad(_last(nd, x, (2, 2, 24)), _last(nd, g, (2, 3, 6)),
                                        kernel=(4,), stride=(4,), num_filter=3, layout="NWC")
    dhwc = nd._internal._conv_weight_grad(
        _last(nd, x, (2, 2, 6, 2, 2)), _last(nd, g, (2, 3, 3, 1, 2)), kernel=(2, 2, 1),
        stride=(2, 1, 1), num_filter=3, layout="NDHWC")
    return [first, last, wc, dhwc]


SPECS = {
    "Convolution": Spec([(2, 4, 6, 5), (4, 2, 3, 2), (4,)], _conv),
    "Deconvolution": Spec([(2, 2, 4), (2, 3, 3), (3,)], _deconv),
    "_conv_weight_grad": Spec([(2, 2, 6, 4), (2, 3, 2, 3)], _weight_grad),
}


def _spread(shape, rng):
    """Distinct values 0.05 apart in random order: no max-pooling window has a tie."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.05 - n * 0.025).reshape(shape)


def _pooling(nd, x):
    # max (2-D, pad, stride), avg ('full', count_include_pad=False), sum (1-D), global avg, lp
    a = nd.Pooling(x, kernel=(2, 3), stride=(2, 1), pad=(1, 1), pool_type="max")
    b = nd.Pooling(x, kernel=(3, 2), stride=(2, 2), pad=(1, 0), pool_type="avg",
                   pooling_convention="full", count_include_pad=False)
    c = nd.Pooling(nd.reshape(x, shape=(2, 2, 20)), kernel=(3,), stride=(2,), pool_type="sum")
    d = nd.Pooling(x, global_pool=True, pool_type="avg")
    # lp on positive data (the roots' kinks at 0 stay away)
    e = nd.Pooling(x * x + 0.5, kernel=(2, 2), stride=(1, 2), pool_type="lp", p_value=2)
    f = nd.Pooling(x * x + 0.5, kernel=(3, 2), pad=(1, 1), pool_type="lp", p_value=3)
    return [a * a, b * b, c * c, d * d, e * e, f * f] + _pooling_last(nd, x)


def _pooling_last(nd, x):
    # channels last: max NHWC, avg NWC ('full', padding not counted), sum and lp NDHWC,
    # global max NHWC
    hwc, wc = _last(nd, x), _last(nd, x, (2, 2, 20))
    dhwc = _last(nd, x, (2, 2, 5, 2, 2))
    a = nd.Pooling(hwc, kernel=(2, 3), stride=(2, 1), pad=(1, 1), pool_type="max",
                   layout="NHWC")
    b = nd.Pooling(wc, kernel=(3,), stride=(2,), pad=(1,), pool_type="avg",
                   pooling_convention="full", count_include_pad=False, layout="NWC")
    c = nd.Pooling(dhwc, kernel=(2, 1, 2), stride=(2, 1, 1), pool_type="sum", layout="NDHWC")
    d = nd.Pooling(hwc, global_pool=True, pool_type="max", layout="NHWC")
    e = nd.Pooling(dhwc * dhwc + 0.5, kernel=(3, 2, 1), pad=(1, 0, 0), pool_type="lp",
                   p_value=2, layout="NDHWC")
    return [a * a, b * b, c * c, d * d, e * e]


_MAXP = dict(kernel=(2, 2), stride=(1, 2), pad=(1, 0), pool_type="max")


def _scatter(nd, x, g):
    return [nd._internal._pool_max_scatter(x, g * g, **_MAXP),
            nd._internal._pool_max_scatter(_last(nd, x), _last(nd, g * g), layout="NHWC",
                                           **_MAXP)]


def _gather(nd, x, h):
    return [nd._internal._pool_max_gather(x, h * h, **_MAXP),
            nd._internal._pool_max_gather(_last(nd, x), _last(nd, h * h), layout="NHWC",
                                          **_MAXP)]


def _pool_backward(nd, g):
    kw = dict(kernel=(3, 2), stride=(2, 2), pad=(1, 1), pool_type="avg",
              pooling_convention="full", in_shape=(5, 4))
    return [nd._internal._pool_backward(g * g, **kw),
            nd._internal._pool_backward(_last(nd, g * g), layout="NHWC", **kw)]


def _upsampling(nd, a, b, w):
    # nearest with two inputs (concat), and bilinear (a depthwise Deconvolution of a and w)
    near = nd.UpSampling(a, b, scale=2, sample_type="nearest")
    bil = nd.UpSampling(a, w, scale=2, sample_type="bilinear", num_filter=2)
    return [near * near, bil * bil]


SPECS.update({
    "Pooling": Spec([(2, 2, 5, 4)], _pooling,
                    sample=lambda rng: [_spread((2, 2, 5, 4), rng)]),
    "_pool_max_scatter": Spec([(1, 2, 3, 4), (1, 2, 4, 2)], _scatter,
                              sample=lambda rng: [_spread((1, 2, 3, 4), rng),
                                                  rng.uniform(-1, 1, (1, 2, 4, 2))]),
    "_pool_max_gather": Spec([(1, 2, 3, 4), (1, 2, 3, 4)], _gather,
                             sample=lambda rng: [_spread((1, 2, 3, 4), rng),
                                                 rng.uniform(-1, 1, (1, 2, 3, 4))]),
    "_pool_backward": Spec([(2, 1, 3, 3)], _pool_backward),
    "UpSampling": Spec([(1, 2, 2, 3), (1, 1, 4, 6), (2, 1, 4, 4)], _upsampling),
})
