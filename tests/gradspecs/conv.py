"""Gradient specs: Convolution, Deconvolution, the conv weight gradient, Pooling, UpSampling.

Max pooling samples are spread apart (a random permutation of a grid) so no window has a
tie, and finite differences never cross an argmax change.
"""
import numpy as np

from . import Spec


def _conv(nd, x, w, b):
    # 2-D, groups, stride, pad, dilation; the input size leaves one row the last window
    # misses (the input gradient's Deconvolution needs adj=1)
    y = nd.Convolution(x, w, b, kernel=(3, 2), stride=(2, 1), pad=(1, 0), dilate=(1, 2),
                       num_filter=4, num_group=2)
    return y * y


def _deconv(nd, y, w, b):
    # 1-D with adj and bias
    x = nd.Deconvolution(y, w, b, kernel=(3,), stride=(2,), pad=(1,), adj=(1,), num_filter=3,
                         no_bias=False)
    return x * x


def _weight_grad(nd, x, g):
    # ograd one row short of the full output: the Deconvolution gradient's case
    return nd._internal._conv_weight_grad(x, g, kernel=(2, 2), stride=(2, 1), num_filter=3)


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
    return [a * a, b * b, c * c, d * d, e * e, f * f]


_MAXP = dict(kernel=(2, 2), stride=(1, 2), pad=(1, 0), pool_type="max")


def _scatter(nd, x, g):
    return nd._internal._pool_max_scatter(x, g * g, **_MAXP)


def _gather(nd, x, h):
    return nd._internal._pool_max_gather(x, h * h, **_MAXP)


def _pool_backward(nd, g):
    return nd._internal._pool_backward(g * g, kernel=(3, 2), stride=(2, 2), pad=(1, 1),
                                       pool_type="avg", pooling_convention="full",
                                       in_shape=(5, 4))


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
