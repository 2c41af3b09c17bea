"""Gradient graphs export: ``mx.sym.grad`` builds gradients from registered operators, so a
loss's gradient with respect to the weights, and a gradient of a gradient (the WGAN-GP
penalty through a convolution), run in onnxruntime and match ``mx.autograd``."""
import numpy as np

import mxlite as mx
from onnx_harness import export_and_run

rng = np.random.default_rng(7)


def _autograd(fn, values, wrt):
    arrays = {k: mx.nd.array(v) for k, v in values.items()}
    for k in wrt:
        arrays[k].attach_grad()
    with mx.autograd.record():
        loss = fn(mx.nd, arrays)
    loss.backward()
    return [arrays[k].grad.asnumpy() for k in wrt]


def _symbolic(fn, values, wrt):
    vars_ = {k: mx.sym.var(k, shape=v.shape) for k, v in values.items()}
    return mx.sym.Group(mx.sym.grad(fn(mx.sym, vars_), [vars_[k] for k in wrt]))


def _classifier_loss(F, v):
    y = F.FullyConnected(F.relu(F.FullyConnected(v["x"], v["w1"], v["b1"], num_hidden=6)),
                         v["w2"], v["b2"], num_hidden=3)
    return F.mean(F.square(F.softmax(y) - F.one_hot(v["label"], depth=3)))


def test_the_gradient_of_a_loss_with_respect_to_the_weights(tmp_path):
    values = {"x": rng.standard_normal((4, 5)).astype(np.float32),
              "w1": rng.standard_normal((6, 5)).astype(np.float32),
              "b1": rng.standard_normal(6).astype(np.float32),
              "w2": rng.standard_normal((3, 6)).astype(np.float32),
              "b2": rng.standard_normal(3).astype(np.float32),
              "label": rng.integers(0, 3, 4).astype(np.float32)}
    wrt = ["w1", "b1", "w2", "b2"]
    graph = _symbolic(_classifier_loss, values, wrt)
    got = export_and_run(graph, {}, {k: values[k] for k in graph.list_arguments()}, tmp_path)
    for g, e in zip(got, _autograd(_classifier_loss, values, wrt)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-7)


def _critic(F, v):
    h = F.LeakyReLU(F.Convolution(v["x"], v["cw"], kernel=(3, 3), num_filter=4, stride=(2, 2),
                                  pad=(1, 1), no_bias=True), slope=0.2)
    return F.sum(F.FullyConnected(h, v["fw"], num_hidden=1, no_bias=True))


def _penalty(F, v):
    """(|d critic / d x| - 1)^2, averaged: a gradient inside the loss."""
    if F is mx.sym:
        gx = mx.sym.grad(_critic(F, v), [v["x"]])[0]
    else:
        with mx.autograd.record():
            score = _critic(F, v)
        gx = mx.autograd.grad(score, [v["x"]], create_graph=True)[0]
    norm = F.sqrt(F.sum(F.square(gx), axis=(1, 2, 3)))
    return F.mean(F.square(norm - 1))


def test_the_gradient_of_a_gradient_penalty_through_a_convolution(tmp_path):
    values = {"x": rng.standard_normal((2, 3, 8, 8)).astype(np.float32),
              "cw": (0.3 * rng.standard_normal((4, 3, 3, 3))).astype(np.float32),
              "fw": (0.3 * rng.standard_normal((1, 64))).astype(np.float32)}
    wrt = ["cw", "fw"]
    graph = _symbolic(_penalty, values, wrt)
    got = export_and_run(graph, {}, {k: values[k] for k in graph.list_arguments()}, tmp_path)
    arrays = {k: mx.nd.array(v) for k, v in values.items()}
    for k in ("x", "cw", "fw"):
        arrays[k].attach_grad()
    with mx.autograd.record():
        loss = _penalty(mx.nd, arrays)
    loss.backward()
    for g, k in zip(got, wrt):
        np.testing.assert_allclose(g, arrays[k].grad.asnumpy(), rtol=1e-4, atol=1e-6)
