"""Gradient specs: BatchNorm, LayerNorm, InstanceNorm, L2Normalization, Dropout, Embedding,
SparseEmbedding."""
import numpy as np

import mxlite as mx

from . import Spec

X = (4, 3, 2)
C = (3,)


def _moving(nd, mean, var):
    """Fresh moving statistics (constants): each call starts from the same state."""
    return (nd.array(np.full(3, mean), dtype="float64"),
            nd.array(np.full(3, var), dtype="float64"))


def _batchnorm(nd, x, gamma, beta):
    """Training mode (through the batch statistics, with the mean and inverse-std outputs
    and fix_gamma), inference mode on moving statistics, and use_global_stats in training.
    Train/predict mode is set inside the call so finite differences (run outside record())
    see the same mode as the recorded pass."""
    with mx.autograd.train_mode():
        y, m, r = nd.BatchNorm(x * x, gamma, beta, *_moving(nd, 0.0, 1.0), fix_gamma=False,
                               output_mean_var=True, eps=1e-2)
        fixed = nd.BatchNorm(nd.transpose(x, axes=(0, 2, 1)), gamma, beta,
                             *_moving(nd, 0.0, 1.0), axis=-1)
        glob = nd.BatchNorm(x, gamma, beta, *_moving(nd, 0.1, 0.7), use_global_stats=True,
                            fix_gamma=False)
    with mx.autograd.predict_mode():
        inf = nd.BatchNorm(x * x, gamma, beta, *_moving(nd, 0.2, 1.5), fix_gamma=False)
    return [y * x, m * m, r, nd.transpose(fixed, axes=(0, 2, 1)) * x, glob * x, inf * x]


def _batchnorm_relu(nd, x, gamma, beta):
    """BatchNorm's row through BatchNormWithReLU: training on the batch statistics (so about
    half the outputs are cut) and inference on shifted moving statistics."""
    with mx.autograd.train_mode():
        y, m, r = nd.contrib.BatchNormWithReLU(x * x, gamma, beta, *_moving(nd, 0.0, 1.0),
                                               fix_gamma=False, output_mean_var=True,
                                               eps=1e-2)
    with mx.autograd.predict_mode():
        inf = nd.contrib.BatchNormWithReLU(x, gamma, beta, *_moving(nd, 0.2, 1.5),
                                           fix_gamma=False)
    return [y * x, m * m, r, inf * x]


def _sync_batchnorm(nd, x, gamma, beta):
    """BatchNorm's row through SyncBatchNorm (one process: the job is this batch), training
    with the mean and inverse-std outputs, and inference."""
    with mx.autograd.train_mode():
        y, m, r = nd.contrib.SyncBatchNorm(x * x, gamma, beta, *_moving(nd, 0.0, 1.0),
                                           fix_gamma=False, output_mean_var=True, eps=1e-2,
                                           key="bn")
    with mx.autograd.predict_mode():
        inf = nd.contrib.SyncBatchNorm(x, gamma, beta, *_moving(nd, 0.2, 1.5), key="bn")
    return [y * x, m * m, r, inf * x]


def _dropout(nd, x):
    """A fixed seed inside the call: every evaluation (recorded and finite-difference) draws
    the same mask."""
    mx.random.seed(20260)
    a = nd.Dropout(x, p=0.3, mode="always")
    b = nd.Dropout(x, p=0.5, mode="always", axes=(1,))
    return [a * x, b * x]


def _embedding(nd, w):
    idx = nd.array([[0, 2], [2, 3]], dtype="float64")     # a repeated index accumulates
    return nd.Embedding(idx, w * w, input_dim=4, output_dim=3, dtype="float64")


def _sparse_embedding(nd, w):
    idx = nd.array([[3, 1], [1, 1]], dtype="float64")     # its weight gradient is row_sparse
    return nd.contrib.SparseEmbedding(idx, w * w, input_dim=4, output_dim=3, dtype="float64")


def _project(nd, g, xhat, r, t, a, b, r0, a0, b0):
    """Both kernel layouts: kept channels (BatchNorm's) and a reduced block (LayerNorm's)."""
    by_channel = nd._internal._norm_project(g * g, xhat, r, t, a, b, axis=1, exclude=True)
    by_block = nd._internal._norm_project(g * xhat, xhat * xhat, r0, t, a0, b0, axis=(1,))
    return [by_channel * g, by_block * xhat]


def _layer_norm_grad(nd, gy, x, gamma, mean, std, gm, gs):
    """Statistics over a middle axis (the array path) and over the last one (the CPU's row
    kernel, through a transpose)."""
    mid = nd._internal._layer_norm_grad(gy * x, x, gamma, mean, std, gm, gs, axis=1)
    t = [nd.transpose(v, axes=(0, 2, 1)) for v in (gy, x, mean, std, gm, gs)]
    last = nd._internal._layer_norm_grad(t[0] * t[1], t[1], gamma, *t[2:], axis=-1)
    return [o * o for o in mid] + [o * o for o in last]


SPECS = {
    "_layer_norm_grad": Spec([X, X, C, (4, 1, 2), (4, 1, 2), (4, 1, 2), (4, 1, 2)],
                             _layer_norm_grad,
                             [(-1.0, 1.0), (-1.0, 1.0), (0.5, 1.5), (-1.0, 1.0), (0.5, 1.5),
                              (-1.0, 1.0)]),
    "_norm_project": Spec([X, X, (1, 3, 1), (1,), (1, 3, 1), (1, 3, 1), (4, 1, 2), (4, 1, 2),
                           (4, 1, 2)], _project,
                          [(-1.0, 1.0), (-1.0, 1.0), (0.5, 1.5), (0.2, 1.0), (-1.0, 1.0)]),
    "BatchNorm": Spec([X, C, C], _batchnorm, [(-1.0, 1.0), (0.5, 1.5), (-1.0, 1.0)]),
    "_contrib_BatchNormWithReLU": Spec([X, C, C], _batchnorm_relu,
                                       [(-1.0, 1.0), (0.5, 1.5), (-1.0, 1.0)]),
    "_contrib_SyncBatchNorm": Spec([X, C, C], _sync_batchnorm,
                                   [(-1.0, 1.0), (0.5, 1.5), (-1.0, 1.0)]),
    "_sync_sum": Spec([X], lambda nd, x: nd._internal._sync_sum(x * x) * x),
    "LayerNorm": Spec([(3, 4, 2), (4,), (4,)], lambda nd, x, g, b: [
        o * x for o in nd.LayerNorm(x, g, b, axis=1, output_mean_var=True)]),
    "InstanceNorm": Spec([(2, 3, 4), C, C],
                         lambda nd, x, g, b: nd.InstanceNorm(x, g, b) * x),
    "L2Normalization": Spec([(2, 3, 4)], lambda nd, x: [
        nd.L2Normalization(x, mode=m) * x for m in ("instance", "channel", "spatial")]),
    "Dropout": Spec([(3, 4)], _dropout),
    "Embedding": Spec([(4, 3)], _embedding),
    "_contrib_SparseEmbedding": Spec([(4, 3)], _sparse_embedding),
}
