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
