"""Checks of optimizers and Gluon blocks against a reference (MXNet's names)."""
import copy

import numpy as np

from .. import autograd
from ..base import MXNetError
from ..random import uniform
from ._compare import assert_almost_equal, compare_ndarray_tuple
from ._context import default_context


def _dense(where, stype):
    if stype != "default":
        raise MXNetError(f"{where}: {stype!r} arrays: the multi-tensor updates take dense "
                         "weights and gradients")


def _random_weight(shape, ctx, dtype, stype):
    """A uniform weight of storage ``stype``, every element stored (what MXNet's sparse
    updates expect of a weight)."""
    w = uniform(shape=shape, ctx=ctx, dtype=dtype)
    return w if stype == "default" else w.tostype(stype)


def _random_gradient(shape, ctx, dtype, stype):
    """A uniform gradient of storage ``stype``: row_sparse keeps about half the rows."""
    g = uniform(shape=shape, ctx=ctx, dtype=dtype)
    if stype == "default":
        return g
    from .. import nd
    keep = nd.array((np.random.rand(shape[0]) < 0.5).astype(np.float32), ctx=ctx)
    g = g * keep.reshape((-1,) + (1,) * (len(shape) - 1)).astype(g.dtype)
    return g.tostype(stype)


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Check that ``opt2`` updates like ``opt1``: one ``update_multi_precision`` step from the
    same random weight and gradient, comparing the states (before and after, if
    ``compare_states``) and the weights. ``opt2`` gets a weight of ``w_stype`` and a
    gradient of ``g_stype`` (row_sparse: about half the rows), ``opt1`` their dense copies.

    ``shape`` a list of shapes checks ``opt2``'s multi-tensor update of ``ntensors`` weights
    at once against ``opt1`` updating them one by one.
    """
    ctx = default_context()
    if not isinstance(shape, list):
        if ntensors != 1:
            raise MXNetError(f"compare_optimizer: ntensors={ntensors} needs a list of shapes")
        w2 = _random_weight(shape, ctx, dtype, w_stype)
        g2 = _random_gradient(shape, ctx, dtype, g_stype)
        # opt1 (the reference) sees dense copies, as in MXNet's check
        w1, g1 = w2.tostype("default"), g2.tostype("default")
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    _dense("compare_optimizer (several tensors)", w_stype)
    _dense("compare_optimizer (several tensors)", g_stype)
    w1 = tuple(uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    g1 = tuple(uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape)
    w2, g2 = copy.deepcopy(w1), copy.deepcopy(g1)
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


def _run_block(net_builder, data_l, params, hybridize, use_autograd):
    """Build, initialise (``params``: the first run's values) and run one block; return
    the block, its output and the inputs (carrying gradients when ``use_autograd``)."""
    net = net_builder(prefix="net_")
    net.initialize()
    if params is not None:
        for name, p in net.collect_params().items():
            p.set_data(params[name])
    if hybridize:
        net.hybridize()
    inputs = [x.copy() for x in data_l]
    if use_autograd:
        for x in inputs:
            x.attach_grad()
        with autograd.record():
            out = net(*inputs)
        out.backward(out)
    else:
        out = net(*inputs)
    return net, out, inputs


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Check that a HybridBlock gives the same output (and input gradients, if
    ``test_grad``) hybridized and not, with the same parameters; and ``numpy_func``'s
    output on the same inputs, if given. ``net_builder(prefix=...)`` builds the block;
    ``data_l`` are NDArrays or ``mx.np`` arrays. The block
    must not draw random numbers."""
    params, saved_out, saved_grads = None, None, None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net, out, inputs = _run_block(net_builder, data_l, params, hybridize,
                                          use_autograd)
            if params is None:
                params = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
            if saved_out is None:
                saved_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), saved_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if saved_grads is None:
                    saved_grads = grads
                for got, want in zip(grads, saved_grads):
                    assert_almost_equal(got, want, rtol=rtol, atol=atol)
    if numpy_func is not None:
        expected = numpy_func(*[x.asnumpy() for x in data_l])
        assert_almost_equal(saved_out, np.asarray(expected), rtol=rtol, atol=atol)
