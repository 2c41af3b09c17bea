"""compare_optimizer and check_gluon_hybridize_consistency."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.test_utils import check_gluon_hybridize_consistency, compare_optimizer


class _HalfStepSGD(mx.optimizer.SGD):
    """SGD whose update moves half as far: compare_optimizer must notice."""

    def update_multi_precision(self, index, weight, grad, state):
        before = weight.copy()
        super().update_multi_precision(index, weight, grad, state)
        weight[:] = (before + weight) / 2


def test_compare_optimizer_same_and_different():
    compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                      mx.optimizer.SGD(learning_rate=0.1, momentum=0.9), (3, 4), np.float32)
    with pytest.raises(AssertionError):
        compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), _HalfStepSGD(learning_rate=0.1),
                          (3, 4), np.float32)
    with pytest.raises(MXNetError, match="dense weights"):
        compare_optimizer(mx.optimizer.SGD(), mx.optimizer.SGD(), [(2,), (3,)], np.float32,
                          w_stype="row_sparse", ntensors=2)
    # opt1 sees dense copies (MXNet's check): a standard update matches on any storage ...
    for w_stype in ("default", "row_sparse", "csr"):
        g_stype = "csr" if w_stype == "csr" else "row_sparse"
        compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1,
                                           lazy_update=False),
                          mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.1,
                                           lazy_update=False), (6, 2), np.float32,
                          w_stype=w_stype, g_stype=g_stype)
    # ... and a lazy one differs where the gradient stores nothing (weight decay skips it)
    with pytest.raises(AssertionError):
        compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, wd=0.5),
                          mx.optimizer.SGD(learning_rate=0.1, wd=0.5), (40, 2), np.float32,
                          w_stype="row_sparse", g_stype="row_sparse")


class _Affine(mx.gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = mx.gluon.nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        return F.tanh(self.dense(x))


def test_hybridize_consistency_and_numpy_reference():
    x = mx.nd.array(np.random.default_rng(0).normal(size=(2, 4)))
    check_gluon_hybridize_consistency(_Affine, [x])
    with pytest.raises(AssertionError):
        check_gluon_hybridize_consistency(_Affine, [x], numpy_func=lambda a: np.zeros((2, 3)))
