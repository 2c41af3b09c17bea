"""Symbolic gradients (mx.sym.grad / Symbol.gradient) to any order, and Symbol.eval.

References: NumPy closed forms and mx.autograd (the same FGradients run imperatively).
"""
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _nd(a):
    return mx.nd.array(np.asarray(a, dtype="float64"), dtype="float64")


def test_third_derivative_of_sin():
    x = mx.sym.var("x", shape=(7,), dtype="float64")
    g1 = mx.sym.grad(mx.sym.sin(x), "x")[0]
    g2 = mx.sym.grad(g1, "x")[0]
    g3 = g2.gradient(["x"])[0]
    v = np.linspace(-3, 3, 7)
    for g, ref in ((g1, np.cos(v)), (g2, -np.sin(v)), (g3, -np.cos(v))):
        np.testing.assert_allclose(g.eval(x=_nd(v))[0].asnumpy(), ref, rtol=1e-13, atol=1e-15)
    # the third derivative survives a JSON round trip
    again = mx.sym.load_json(g3.tojson())
    np.testing.assert_allclose(again.eval(x=_nd(v))[0].asnumpy(), -np.cos(v), rtol=1e-13)


def test_polynomial_gradients_with_shapes_argument():
    x = mx.sym.var("x")
    y = x * x * x + 2 * x                  # 3x^2 + 2, 6x, 6
    v = np.array([[-1.5, 0.0], [0.5, 2.0]])
    shapes, dtypes = {"x": (2, 2)}, {"x": "float64"}
    g1 = mx.sym.grad(y, [x], shapes=shapes, dtypes=dtypes)[0]
    g2 = mx.sym.grad(g1, x, shapes=shapes, dtypes=dtypes)[0]
    g3 = mx.sym.grad(g2, x, shapes=shapes, dtypes=dtypes)[0]
    g4 = mx.sym.grad(g3, x, shapes=shapes, dtypes=dtypes)[0]
    np.testing.assert_allclose(g1.eval(x=_nd(v))[0].asnumpy(), 3 * v ** 2 + 2)
    np.testing.assert_allclose(g2.eval(x=_nd(v))[0].asnumpy(), 6 * v)
    np.testing.assert_allclose(g3.eval(x=_nd(v))[0].asnumpy(), np.full_like(v, 6.0))
    np.testing.assert_allclose(g4.eval(x=_nd(v))[0].asnumpy(), np.zeros_like(v))


def test_second_order_through_fully_connected_tanh_matches_autograd():
    rng = np.random.default_rng(0)
    xv, wv, bv = rng.normal(size=(4, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5,))
    dv = rng.normal(size=(4, 3))
    x = mx.sym.var("x", shape=(4, 3), dtype="float64")
    w = mx.sym.var("w", shape=(5, 3), dtype="float64")
    b = mx.sym.var("b", shape=(5,), dtype="float64")
    d = mx.sym.var("d", shape=(4, 3), dtype="float64")
    y = mx.sym.sum(mx.sym.square(mx.sym.tanh(mx.sym.FullyConnected(x, w, b, num_hidden=5))))
    gx = mx.sym.grad(y, x)[0]
    z = mx.sym.sum(gx * d)                 # a directional derivative of the gradient
    hw, hb, hx = mx.sym.grad(z, [w, b, "x"])
    vals = dict(x=_nd(xv), w=_nd(wv), b=_nd(bv), d=_nd(dv))
    got = mx.sym.Group([gx, hw, hb, hx]).eval(**vals)

    X, W, B = _nd(xv), _nd(wv), _nd(bv)
    for a in (X, W, B):
        a.attach_grad()
    with mx.autograd.record():
        Y = mx.nd.sum(mx.nd.square(mx.nd.tanh(mx.nd.FullyConnected(X, W, B, num_hidden=5))))
        GX = mx.autograd.grad(Y, [X], create_graph=True)[0]
        Z = mx.nd.sum(GX * _nd(dv))
    Z.backward()
    for sym_val, ref in zip(got, [GX, W.grad, B.grad, X.grad]):
        np.testing.assert_allclose(sym_val.asnumpy(), ref.asnumpy(), rtol=1e-12, atol=1e-14)
    # and against the closed form of the first derivative
    h = xv @ wv.T + bv
    ref_gx = (2 * np.tanh(h) * (1 - np.tanh(h) ** 2)) @ wv
    np.testing.assert_allclose(got[0].asnumpy(), ref_gx, rtol=1e-12)


def test_head_grads_and_several_heads():
    x = mx.sym.var("x", shape=(3,), dtype="float64")
    hg = mx.sym.var("hg", shape=(3,), dtype="float64")
    a, c = mx.sym.exp(x), mx.sym.sin(x)
    g = mx.sym.grad([a, c], "x", head_grads=[hg, None])[0]
    v, h = np.array([0.1, -0.4, 1.2]), np.array([2.0, -1.0, 0.5])
    np.testing.assert_allclose(g.eval(x=_nd(v), hg=_nd(h))[0].asnumpy(),
                               h * np.exp(v) + np.cos(v), rtol=1e-14)
    # a variable the heads do not depend on through differentiable ops gets zeros
    u = mx.sym.var("u", shape=(3,), dtype="float64")
    gz = mx.sym.grad(mx.sym.Group([a, mx.sym.BlockGrad(u)]), ["u"])[0]
    assert gz.eval(x=_nd(v), u=_nd(v))[0].asnumpy().tolist() == [0.0, 0.0, 0.0]


def test_broadcasting_gradient_and_reductions():
    x = mx.sym.var("x", shape=(2, 3), dtype="float64")
    r = mx.sym.var("r", shape=(1, 3), dtype="float64")
    y = mx.sym.sum(mx.sym.broadcast_mul(x, r) ** 2, axis=0)
    gx, gr = mx.sym.grad(y, ["x", "r"])
    xv, rv = np.arange(6.0).reshape(2, 3), np.array([[1.0, -2.0, 0.5]])
    vals = dict(x=_nd(xv), r=_nd(rv))
    np.testing.assert_allclose(gx.eval(**vals)[0].asnumpy(), 2 * xv * rv ** 2)
    np.testing.assert_allclose(gr.eval(**vals)[0].asnumpy(),
                               (2 * xv ** 2 * rv).sum(axis=0, keepdims=True))


def test_gradient_graph_pickles():
    x = mx.sym.var("x", shape=(3,), dtype="float64")
    g = mx.sym.grad(mx.sym.tanh(x), "x")[0]
    g2 = pickle.loads(pickle.dumps(g))
    v = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(g2.eval(x=_nd(v))[0].asnumpy(), 1 - np.tanh(v) ** 2,
                               rtol=1e-14)


def test_grad_errors():
    x = mx.sym.var("x")
    y = mx.sym.sin(x)
    with pytest.raises(MXNetError, match="cannot be inferred"):
        mx.sym.grad(y, "x")
    with pytest.raises(MXNetError, match="not a variable of the heads"):
        mx.sym.grad(y, "nope", shapes={"x": (2,)})
    with pytest.raises(MXNetError, match="not a variable"):
        mx.sym.grad(y, y, shapes={"x": (2,)})
    with pytest.raises(MXNetError, match="head_grads"):
        mx.sym.grad(y, "x", head_grads=[y, y], shapes={"x": (2,)})
    with pytest.raises(MXNetError, match="heads must be Symbols"):
        mx.sym.grad(mx.nd.ones((2,)), "x")


def test_eval_matches_nd_and_checks_inputs():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.Group([a + b, mx.sym.split(a * b, num_outputs=2, axis=0)[1],
                      mx.sym.FullyConnected(a, num_hidden=2, name="fc")])
    av, bv = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    wv, biasv = np.arange(6.0).reshape(2, 3) / 10, np.array([1.0, -1.0])
    out = s.eval(ctx=mx.cpu(), a=_nd(av), b=_nd(bv), fc_weight=_nd(wv), fc_bias=_nd(biasv))
    assert len(out) == 3
    np.testing.assert_array_equal(out[0].asnumpy(), av + bv)
    np.testing.assert_array_equal(out[1].asnumpy(), (av * bv)[1:])
    np.testing.assert_allclose(out[2].asnumpy(), av @ wv.T + biasv)
    with pytest.raises(MXNetError, match="no value given for variable 'b'"):
        (a + b).eval(a=_nd(av))


def test_hidden_outputs_in_a_gradient_graph():
    """Dropout's gradient multiplies by its mask, a hidden output: eval keeps it."""
    x = mx.sym.var("x", shape=(4, 5), dtype="float64")
    y = mx.sym.Dropout(x, p=0.5)
    g = mx.sym.grad(mx.sym.sum(y * y), "x")[0]
    v = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(g.eval(x=_nd(v))[0].asnumpy(), 2 * v)   # predict mode


# ---- registry-wide: every gradient spec row, symbolically, against mx.autograd -----------------
import sys  # noqa: E402
import types  # noqa: E402
import zlib  # noqa: E402

sys.path.insert(0, __import__("os").path.dirname(__file__))
from gradspecs import all_specs  # noqa: E402
from mxlite.symbol.symbol import Symbol, broadcasting  # noqa: E402

SPECS = all_specs()


class _SymbolicNamespace(types.SimpleNamespace):
    """``mx.sym`` as a gradient spec's ``nd``: ``array`` makes a constant (a variable whose
    value eval is given), and a multi-output result is a list, as ``mx.nd`` returns."""

    def __init__(self):
        super().__init__(constants={})

    def array(self, data, dtype=None, ctx=None):
        value = mx.nd.array(data, dtype=dtype or "float32")
        name = f"const{len(self.constants)}"
        self.constants[name] = value
        return mx.sym.var(name, shape=value.shape, dtype=value.dtype)

    def __getattr__(self, name):
        fn = getattr(mx.sym, name)
        if not callable(fn) or isinstance(fn, type):
            return fn

        def call(*args, **kwargs):
            out = fn(*args, **kwargs)
            return list(out) if isinstance(out, Symbol) and len(out) > 1 else out
        return call


def _spec_inputs(name, spec):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    if spec.sample is not None:
        return [np.asarray(a, dtype="float64") for a in spec.sample(rng)]
    return [rng.uniform(*spec.domain(i), size=s) for i, s in enumerate(spec.shapes)]


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


# rows whose symbolic gradient stops at a lower order than the row's, and why
SYMBOLIC_ORDER = {
    "Custom": (1, "a custom backward is Python code: in a graph it is a _backward_Custom node, "
                  "which has no gradient (as in MXNet); mx.autograd gives every order"),
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_symbolic_gradients_match_autograd(name):
    """Orders 1 to 3 (to the row's order; a directional derivative of the gradient,
    differentiated again, twice) of every spec row, built with mx.sym.grad and run with
    eval, equal mx.autograd's; the graph's inferred output shapes and dtypes are mx.nd's."""
    if name in ("BatchNorm", "_contrib_BatchNormWithReLU", "_contrib_SyncBatchNorm"):
        pytest.skip("its spec switches train/predict mode inside one call; a symbol runs in "
                    "one mode (eval's / the Executor's is_train): test_batchnorm_* below")
    spec = SPECS[name]
    xs = _spec_inputs(name, spec)
    rng = np.random.default_rng(7)
    X = [mx.nd.array(x, dtype="float64") for x in xs]
    for a in X:
        a.attach_grad()
    with mx.autograd.record(train_mode=False):
        outs = _as_list(spec.call(mx.nd, *X))
        hg = [mx.nd.array(rng.normal(size=o.shape), dtype=o.dtype) for o in outs]
        G = mx.autograd.grad(outs, X, head_grads=hg, create_graph=True)
        dirs = [mx.nd.array(rng.normal(size=x.shape), dtype="float64") for x in xs]
        Z = sum(mx.nd.sum(g * d) for g, d in zip(G, dirs))
        order = min(spec.order, SYMBOLIC_ORDER.get(name, (spec.order,))[0])
        second, third = order >= 2, order >= 3
        if second:
            H = mx.autograd.grad(Z, X, create_graph=third)
        if third:
            dirs3 = [mx.nd.array(rng.normal(size=x.shape), dtype="float64") for x in xs]
            W = sum(mx.nd.sum(h * d) for h, d in zip(H, dirs3))
    if third:
        K = mx.autograd.grad(W, X)

    ns = _SymbolicNamespace()
    names = [f"in{i}" for i in range(len(xs))]
    variables = [mx.sym.var(n, shape=x.shape, dtype="float64") for n, x in zip(names, xs)]
    with broadcasting():
        heads = _as_list(spec.call(ns, *variables))
    # shape and type inference over the graph agree with the arrays mx.nd made
    _, out_shapes, _ = mx.sym.Group(heads).infer_shape()
    _, out_types, _ = mx.sym.Group(heads).infer_type()
    assert out_shapes == [o.shape for o in outs]
    assert [np.dtype(t) for t in out_types] == [o.dtype for o in outs]
    hgv = [mx.sym.var(f"hg{i}", shape=h.shape, dtype=h.dtype) for i, h in enumerate(hg)]
    sg = mx.sym.grad(heads, names, head_grads=hgv)
    wanted = list(sg)
    if second:
        dv = [mx.sym.var(f"d{i}", shape=x.shape, dtype="float64") for i, x in enumerate(xs)]
        with broadcasting():
            z = mx.sym.sum(sg[0] * dv[0])
            for g, d in zip(sg[1:], dv[1:]):
                z = z + mx.sym.sum(g * d)
        sh = mx.sym.grad(z, variables)     # zeros for an input z does not depend on
        wanted += sh
    if third:
        ev = [mx.sym.var(f"e{i}", shape=x.shape, dtype="float64") for i, x in enumerate(xs)]
        with broadcasting():
            w = mx.sym.sum(sh[0] * ev[0])
            for h, e in zip(sh[1:], ev[1:]):
                w = w + mx.sym.sum(h * e)
        wanted += mx.sym.grad(w, variables)
    values = dict(zip(names, (mx.nd.array(x, dtype="float64") for x in xs)))
    values.update({f"hg{i}": h for i, h in enumerate(hg)})
    values.update({f"d{i}": d for i, d in enumerate(dirs)})
    values.update(ns.constants)
    if third:
        values.update({f"e{i}": e for i, e in enumerate(dirs3)})
    if name == "Dropout":
        mx.random.seed(20260)           # the spec's seed: eval draws the recorded masks
    got = mx.sym.Group(wanted).eval(**{k: v for k, v in values.items()
                                       if k in mx.sym.Group(wanted).list_inputs()})
    refs = list(G) + (list(H) if second else []) + (list(K) if third else [])
    assert len(got) == len(refs) == len(xs) * (1 + second + third)
    for i, (a, b) in enumerate(zip(got, refs)):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-9, atol=1e-11,
                                   err_msg=f"{name}: gradient {i}")


def _op(ns, dotted):
    for part in dotted.split("."):
        ns = getattr(ns, part)
    return ns


@pytest.mark.parametrize("op", ["BatchNorm", "contrib.BatchNormWithReLU",
                                "contrib.SyncBatchNorm"])
@pytest.mark.parametrize("train", [False, True])
def test_batchnorm_gradients_match_autograd(train, op):
    """BatchNorm's gradient reads its hidden outputs; eval keeps them. Train mode (batch
    statistics) is the thread's mode while eval runs, as for mx.nd."""
    rng = np.random.default_rng(3)
    xv, gv, bv = rng.normal(size=(4, 3, 2)), rng.uniform(0.5, 1.5, 3), rng.normal(size=3)
    mm, mv = rng.normal(size=3) * 0.1, rng.uniform(0.5, 1.5, 3)
    hv = rng.normal(size=(4, 3, 2))
    x = mx.sym.var("x", shape=(4, 3, 2), dtype="float64")
    g = mx.sym.var("g", shape=(3,), dtype="float64")
    b = mx.sym.var("b", shape=(3,), dtype="float64")
    m = mx.sym.var("m", shape=(3,), dtype="float64")
    v = mx.sym.var("v", shape=(3,), dtype="float64")
    y = _op(mx.sym, op)(x, g, b, m, v, fix_gamma=False, eps=1e-3)
    hs = mx.sym.var("h", shape=(4, 3, 2), dtype="float64")
    grads = mx.sym.grad(y * y, ["x", "g", "b"], head_grads=[hs])
    vals = dict(x=_nd(xv), g=_nd(gv), b=_nd(bv), m=_nd(mm), v=_nd(mv), h=_nd(hv))
    with mx.autograd.train_mode() if train else mx.autograd.predict_mode():
        got = mx.sym.Group(grads).eval(**vals)
    X, G, B = _nd(xv), _nd(gv), _nd(bv)
    for a in (X, G, B):
        a.attach_grad()
    with mx.autograd.record(train_mode=train):
        Y = _op(mx.nd, op)(X, G, B, _nd(mm), _nd(mv), fix_gamma=False, eps=1e-3)
        (Y * Y).backward(_nd(hv))
    for a, ref in zip(got, (X.grad, G.grad, B.grad)):
        np.testing.assert_allclose(a.asnumpy(), ref.asnumpy(), rtol=1e-11, atol=1e-13)
