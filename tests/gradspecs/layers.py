"""Gradient specs: the layers of mxlite/ops/layers.py (LRN, GroupNorm, Pad and its adjoint,
SoftmaxActivation, SVMOutput, IdentityAttachKLSparseReg, hard_sigmoid, depth_to_space,
space_to_depth, im2col, col2im)."""
import numpy as np

from . import Spec

_PW4 = (0, 0, 0, 0, 2, 1, 1, 2)
_PW5 = (0, 0, 0, 0, 1, 0, 0, 1, 1, 1)


def _pad(nd, x, z):
    """Every mode, 4-D and 5-D, times the input (so the higher orders are not zero)."""
    total = None
    for mode in ("constant", "edge", "reflect"):
        y = nd.Pad(x * x, mode=mode, pad_width=_PW4, constant_value=0.5)
        w = nd.pad(z, mode=mode, pad_width=_PW5)
        term = nd.sum(y * nd.Pad(x, mode=mode, pad_width=_PW4)) + nd.sum(w * nd.pad(
            z * z, mode=mode, pad_width=_PW5))
        total = term if total is None else total + term
    return total


def _pad_backward(nd, g):
    outs = [nd._internal._pad_backward(g * g, mode=m, pad_width=_PW4) * nd._internal._pad_backward(
        g, mode=m, pad_width=_PW4) for m in ("constant", "edge", "reflect")]
    return outs


def _hard_sigmoid_sample(rng):
    """alpha x + beta away from 0 and 1 (the kinks): inside, and beyond on both sides."""
    x = rng.uniform(-2.2, 2.2, size=(3, 4))
    x[0] = rng.uniform(2.8, 3.5, size=4) * np.array([1, -1, 1, -1])
    return [x]


def _kl(nd, x):
    """A fresh moving average (a constant) per call, in training."""
    avg = nd.array(np.full(3, 0.4), dtype="float64")
    return nd.IdentityAttachKLSparseReg(x, avg, penalty=0.1, sparseness_target=0.2) * 2


_IM2COL = dict(kernel=(2, 3), stride=(1, 2), dilate=(2, 1), pad=(1, 1))

_LOSS_REASON = ("a loss layer's gradient is the loss gradient (MXNet's semantics), not the "
                "derivative of its forward output; tests/ops/test_layers.py checks it against "
                "MXNet 1.9.1")

SPECS = {
    "LRN": Spec([(2, 5, 2, 2)], lambda nd, x: [
        nd.LRN(x, nsize=3, alpha=0.5) * x,
        nd.LRN(x * x, nsize=4, alpha=0.3, beta=0.6, knorm=1.2) * x]),
    "GroupNorm": Spec([(2, 4, 3), (2,), (2,)], lambda nd, x, g, b: [
        o * x if i == 0 else o * o for i, o in enumerate(
            nd.GroupNorm(x, g, b, num_groups=2, output_mean_var=True))],
        [(-1.0, 1.0), (0.5, 1.5), (-1.0, 1.0)]),
    "Pad": Spec([(1, 2, 3, 3), (1, 1, 2, 2, 2)], _pad),
    "_pad_backward": Spec([(1, 2, 6, 6)], _pad_backward),
    "SoftmaxActivation": Spec([(2, 3, 2)], lambda nd, x: [
        nd.SoftmaxActivation(x) * x, nd.SoftmaxActivation(x, mode="channel") * x]),
    "SVMOutput": Spec([(3, 4)], lambda nd, x: [
        nd.SVMOutput(x, nd.array([0, 3, 1], dtype="float64")),
        nd.SVMOutput(x, nd.array([2, 0, 1], dtype="float64"), use_linear=True, margin=0.5)],
        order=0, reason=_LOSS_REASON),
    "IdentityAttachKLSparseReg": Spec(
        [(2, 3)], _kl, order=0,
        reason="its gradient adds a sparseness penalty to the head gradient by definition "
               "(MXNet's semantics), not the derivative of its identity forward; "
               "tests/ops/test_layers.py checks it against MXNet 1.9.1"),
    "hard_sigmoid": Spec([(3, 4)], lambda nd, x: nd.hard_sigmoid(x) * x + nd.hard_sigmoid(
        x * x, alpha=0.3, beta=0.1) * x, sample=_hard_sigmoid_sample),
    "depth_to_space": Spec([(1, 8, 1, 2)], lambda nd, x: nd.depth_to_space(x * x, block_size=2)
                           * nd.depth_to_space(x, block_size=2)),
    "space_to_depth": Spec([(1, 2, 2, 4)], lambda nd, x: nd.space_to_depth(x * x, block_size=2)
                           * nd.space_to_depth(x, block_size=2)),
    "im2col": Spec([(1, 2, 4, 5)], lambda nd, x: nd.im2col(x * x, **_IM2COL)
                   * nd.im2col(x, **_IM2COL)),
    "col2im": Spec([(1, 12, 12)], lambda nd, c: nd.col2im(c * c, output_size=(4, 5), **_IM2COL)
                   * nd.col2im(c, output_size=(4, 5), **_IM2COL)),
}
