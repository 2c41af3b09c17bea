"""contrib operators of mxlite/ops/contrib_math.py against MXNet 1.9.1
(tests/fixtures/contrib_math_mxnet.npz, made by make_contrib_math_fixture.py) and NumPy:
values, gradients, the interleaved layout of the attention products, the GPU path, symbols
and errors."""
import importlib.util
import math
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_contrib_math_fixture",
    os.path.join(HERE, "..", "fixtures", "make_contrib_math_fixture.py"))
FIX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIX)
DATA = np.load(os.path.join(HERE, "..", "fixtures", "contrib_math_mxnet.npz"))


def _fn(path, ns=mx.nd):
    fn = ns
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


# allclose is (1,) in mxlite where MXNet 1.9.1 gave a 0-d array (docstring)
_SHAPE_DIFFERS = {"allclose"}


@pytest.mark.parametrize("case", sorted(FIX.CASES))
def test_matches_mxnet(case, device):
    path, inputs, kwargs, diff = FIX.CASES[case]
    ctx = device
    xs = [mx.nd.array(FIX.make_input(s), dtype=s[2], ctx=ctx) for s in inputs]
    for i in diff:
        xs[i].attach_grad()
    with mx.autograd.record():
        ys = _fn(path)(*xs, **kwargs)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    for j, y in enumerate(ys):
        want = DATA[f"{case}/out{j}"]
        if path.split(".")[-1] in _SHAPE_DIFFERS:
            want = want.reshape(1)
        assert y.dtype == want.dtype and y.shape == want.shape, (case, j, y.dtype, y.shape)
        np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-6, atol=1e-6,
                                   err_msg=f"{case} out{j}")
    if diff:
        heads = [mx.nd.array(FIX.make_input((100 + j, y.shape, y.dtype)), dtype=y.dtype,
                             ctx=ctx) for j, y in enumerate(ys)]
        mx.autograd.backward(ys, heads)
        for i in diff:
            np.testing.assert_allclose(xs[i].grad.asnumpy(), DATA[f"{case}/grad{i}"],
                                       rtol=1e-5, atol=1e-6, err_msg=f"{case} grad{i}")


# ---- the interleaved layout, against NumPy ------------------------------------------------
def _np_part(x, parts, heads, i):
    T, B, E = x.shape
    D = E // (heads * parts)
    return x.reshape(T, B, heads, parts, D)[:, :, :, i].transpose(1, 2, 0, 3).reshape(
        B * heads, T, D)


def _np_merge(y, B, heads):
    BH, T, D = y.shape
    return y.reshape(B, heads, T, D).transpose(2, 0, 1, 3).reshape(T, B, heads * D)


def test_attention_products_in_float64_match_numpy():
    rng = np.random.RandomState(0)
    H, B, T, Tk, D = 3, 2, 4, 5, 2
    qkv, q = rng.randn(T, B, 3 * H * D), rng.randn(T, B, H * D)
    kv = rng.randn(Tk, B, 2 * H * D)
    att_s, att_e = rng.randn(B * H, T, T), rng.randn(B * H, T, Tk)
    c = mx.nd.contrib
    A = lambda a: mx.nd.array(a, dtype="float64")      # noqa: E731
    got = c.interleaved_matmul_selfatt_qk(A(qkv), heads=H).asnumpy()
    want = _np_part(qkv, 3, H, 0) @ _np_part(qkv, 3, H, 1).transpose(0, 2, 1) / math.sqrt(D)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = c.interleaved_matmul_selfatt_valatt(A(qkv), A(att_s), heads=H).asnumpy()
    np.testing.assert_allclose(got, _np_merge(att_s @ _np_part(qkv, 3, H, 2), B, H), rtol=1e-12)
    got = c.interleaved_matmul_encdec_qk(A(q), A(kv), heads=H).asnumpy()
    want = _np_part(q, 1, H, 0) @ _np_part(kv, 2, H, 0).transpose(0, 2, 1) / math.sqrt(D)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    got = c.interleaved_matmul_encdec_valatt(A(kv), A(att_e), heads=H).asnumpy()
    np.testing.assert_allclose(got, _np_merge(att_e @ _np_part(kv, 2, H, 1), B, H), rtol=1e-12)


def test_attention_products_on_symbols_infer_shapes():
    qkv = mx.sym.var("qkv")
    s = mx.sym.contrib.interleaved_matmul_selfatt_qk(qkv, heads=2)
    o = mx.sym.contrib.interleaved_matmul_selfatt_valatt(qkv, mx.sym.softmax(s), heads=2)
    _, outs, _ = o.infer_shape(qkv=(5, 3, 24))
    assert outs == [(5, 3, 8)]


@pytest.mark.parametrize("call, words", [
    (lambda c: c.interleaved_matmul_selfatt_qk(mx.nd.ones((2, 2, 10)), heads=2),
     ["queries_keys_values", "heads=2", "(2, 2, 10)"]),
    (lambda c: c.interleaved_matmul_selfatt_qk(mx.nd.ones((2, 2, 6)), heads=0),
     ["heads", "0"]),
    (lambda c: c.interleaved_matmul_selfatt_valatt(mx.nd.ones((2, 1, 6)), mx.nd.ones((1, 2, 3)),
                                                   heads=1), ["attention", "(1, 2, 2)"]),
    (lambda c: c.interleaved_matmul_encdec_qk(mx.nd.ones((2, 1, 4)), mx.nd.ones((3, 2, 8)),
                                              heads=2), ["keys_values", "batch"]),
    (lambda c: c.interleaved_matmul_encdec_valatt(mx.nd.ones((3, 1, 4)), mx.nd.ones((1, 2, 2)),
                                                  heads=1), ["attention", "(1, query_len, 3)"]),
    (lambda c: c.interleaved_matmul_selfatt_qk(mx.nd.ones((2, 1, 3), dtype="int32"), heads=1),
     ["float dtype", "int32"]),
    (lambda c: c.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([0, 3]), mx.nd.ones((2, 2))),
     ["index_copy", "outside [0, 3)"]),
    (lambda c: c.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([-1]), mx.nd.ones((1, 2))),
     ["index_copy", "outside"]),
    (lambda c: c.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([1, 1]), mx.nd.ones((2, 2))),
     ["index_copy", "repeats"]),
    (lambda c: c.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([0.5]), mx.nd.ones((1, 2))),
     ["index_copy", "whole numbers"]),
    (lambda c: c.index_copy(mx.nd.zeros((3, 2)), mx.nd.array([0]), mx.nd.ones((1, 3))),
     ["index_copy", "(1, 2)", "(1, 3)"]),
    (lambda c: c.allclose(mx.nd.ones((2, 3)), mx.nd.ones((3,))), ["allclose", "(2, 3)", "(3,)"]),
    (lambda c: c.allclose(mx.nd.ones((2,)), mx.nd.ones((2,), dtype="float64")),
     ["allclose", "float32", "float64"]),
    (lambda c: c.arange_like(mx.nd.ones((2,)), repeat=0), ["arange_like", "repeat"]),
    (lambda c: c.arange_like(mx.nd.ones((2,)), axis=1), ["arange_like", "axis"]),
    (lambda c: c.index_array(mx.nd.ones((2,)), axes=(1,)), ["index_array", "axis"]),
    (lambda c: c.div_sqrt_dim(mx.nd.ones((2,), dtype="int32")), ["div_sqrt_dim", "int32"]),
])
def test_bad_input_is_a_clear_error(call, words):
    with pytest.raises(MXNetError) as e:
        call(mx.nd.contrib)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ---- the element-wise ops against NumPy ---------------------------------------------------
def test_allclose_rules_on_infinities_and_integers():
    A = mx.nd.array
    close = lambda a, b, **kw: int(mx.nd.contrib.allclose(a, b, **kw).asnumpy()[0])  # noqa
    assert close(A([5.0]), A([np.inf])) == 0          # MXNet's formula said close
    assert close(A([np.inf]), A([-np.inf])) == 0
    assert close(A([np.nan]), A([1.0])) == 0
    assert close(A([3, 4], dtype="int32"), A([3, 4], dtype="int32")) == 1
    assert close(A([3, 4], dtype="int64"), A([3, 5], dtype="int64"), rtol=0.2) == 1
    assert close(A([3, 4], dtype="int64"), A([3, 5], dtype="int64")) == 0
    assert close(A([], dtype="float32"), A([], dtype="float32")) == 1


def test_arange_like_values_match_numpy():
    got = mx.nd.contrib.arange_like(mx.nd.zeros((3, 4), dtype="float64"), start=-1.0,
                                    step=0.25, repeat=5)
    np.testing.assert_array_equal(got.asnumpy(), (-1.0 + (np.arange(12) // 5) * 0.25)
                                  .reshape(3, 4))


def test_index_array_matches_numpy_indices():
    got = mx.nd.contrib.index_array(mx.nd.zeros((2, 3, 4)), axes=(2, 0)).asnumpy()
    ii = np.indices((2, 3, 4))
    np.testing.assert_array_equal(got, np.stack([ii[2], ii[0]], axis=-1))
    assert got.dtype == np.int64


def test_straight_through_ops_pass_the_gradient_unchanged():
    x = mx.nd.array([-1.5, -0.2, 0.0, 0.7, 2.5], dtype="float64")
    g = mx.nd.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype="float64")
    for name, want in (("round_ste", [-2.0, -0.0, 0.0, 1.0, 3.0]),
                       ("sign_ste", [-1.0, -1.0, 0.0, 1.0, 1.0])):
        x.attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd.contrib, name)(x)
        y.backward(g)
        np.testing.assert_array_equal(y.asnumpy(), want)
        np.testing.assert_array_equal(x.grad.asnumpy(), g.asnumpy())


def test_ops_are_in_the_contrib_namespaces():
    for name in ("interleaved_matmul_selfatt_qk", "interleaved_matmul_selfatt_valatt",
                 "interleaved_matmul_encdec_qk", "interleaved_matmul_encdec_valatt",
                 "index_copy", "arange_like", "allclose", "div_sqrt_dim", "gradientmultiplier",
                 "round_ste", "sign_ste", "quadratic", "index_array"):
        assert hasattr(mx.nd.contrib, name) and hasattr(mx.sym.contrib, name), name


@pytest.mark.parametrize("name", ["round_ste", "sign_ste"])
def test_straight_through_second_order_is_zero(name):
    """d/dx of the straight-through gradient (the identity of the head gradient) is zero;
    through y * x the first order is sign/round(x) + x and the second order 1 + 1."""
    x = mx.nd.array([-1.5, 0.3, 2.5], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, name)(x) * x
        (g,) = mx.autograd.grad(y, [x], create_graph=True)
    g.backward()
    step = {"round_ste": [-2.0, 0.0, 3.0], "sign_ste": [-1.0, 1.0, 1.0]}[name]
    np.testing.assert_array_equal(g.asnumpy(), np.array(step) + x.asnumpy())
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0, 2.0])


# ---- boolean_mask (a front end over take: its output shape depends on the mask) -------------
def test_boolean_mask_any_axis_and_empty_selection():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = mx.nd.contrib.boolean_mask(mx.nd.array(x), mx.nd.array([1, 0, 0, 3]), axis=-1)
    np.testing.assert_array_equal(got.asnumpy(), x[:, :, [0, 3]])
    empty = mx.nd.contrib.boolean_mask(mx.nd.array(x), mx.nd.zeros((2,)))
    assert empty.shape == (0, 3, 4)


def test_boolean_mask_gradient_to_second_order():
    x = mx.nd.array([1.0, -2.0, 3.0, 0.5], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.boolean_mask(x * x * x, mx.nd.array([1, 0, 1, 0]))
        (g,) = mx.autograd.grad(y, [x], head_grads=[mx.nd.ones((2,), dtype="float64")],
                                create_graph=True)
    g.backward()
    xs = x.asnumpy()
    np.testing.assert_allclose(g.asnumpy(), 3 * xs ** 2 * [1, 0, 1, 0])
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * xs * [1, 0, 1, 0])


@pytest.mark.parametrize("call, words", [
    (lambda: mx.nd.contrib.boolean_mask(mx.nd.ones((3, 2)), mx.nd.ones((2,))),
     ["boolean_mask", "index", "(2,)", "(3, 2)"]),
    (lambda: mx.nd.contrib.boolean_mask(mx.nd.ones((3, 2)), mx.nd.ones((3,)), axis=2),
     ["boolean_mask", "axis=2"]),
    (lambda: mx.nd.contrib.boolean_mask(mx.nd.ones((3, 2)), [1, 0, 1]),
     ["boolean_mask", "NDArrays"]),
])
def test_boolean_mask_bad_input(call, words):
    with pytest.raises(MXNetError) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ---- count_sketch (GPU only in MXNet 1.9.1: NumPy reference) --------------------------------
def _np_count_sketch(x, h, s, out_dim):
    out = np.zeros(x.shape[:-1] + (out_dim,), x.dtype)
    for i in range(x.shape[-1]):
        out[..., int(h[i])] += s[i] * x[..., i]
    return out


def test_count_sketch_matches_numpy_and_mxnet_example():
    x = np.array([[1.2, 2.5, 3.4], [3.2, 5.7, 6.6]], np.float32)
    got = mx.nd.contrib.count_sketch(mx.nd.array(x), mx.nd.array([[0, 3, 4]]),
                                     mx.nd.array([[1, -1, 1]]), out_dim=5)
    np.testing.assert_array_equal(got.asnumpy(), np.array(
        [[1.2, 0, 0, -2.5, 3.4], [3.2, 0, 0, -5.7, 6.6]], np.float32))
    rng = np.random.RandomState(3)
    x = rng.randn(2, 3, 7)
    h, s = rng.randint(0, 4, 7), rng.choice([-1.0, 1.0], 7)
    got = mx.nd.contrib.count_sketch(mx.nd.array(x, dtype="float64"), mx.nd.array([h]),
                                     mx.nd.array([s], dtype="float64"), out_dim=4)
    np.testing.assert_allclose(got.asnumpy(), _np_count_sketch(x, h, s, 4), rtol=1e-12)


def test_count_sketch_gradient_matches_closed_form():
    x = mx.nd.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype="float64")
    s = mx.nd.array([[1.0, -1.0, 2.0]], dtype="float64")
    h = mx.nd.array([[1, 0, 1]])
    g = np.array([[10.0, 20.0], [30.0, 40.0]])
    x.attach_grad()
    s.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.count_sketch(x, h, s, out_dim=2)
    y.backward(mx.nd.array(g, dtype="float64"))
    picked = g[:, [1, 0, 1]]
    np.testing.assert_array_equal(x.grad.asnumpy(), picked * [1.0, -1.0, 2.0])
    np.testing.assert_array_equal(s.grad.asnumpy(), (x.asnumpy() * picked).sum(0, keepdims=True))


@pytest.mark.parametrize("h, words", [([[0, 5, 1]], ["count_sketch", "outside [0, 5)"]),
                                      ([[0, -1, 1]], ["count_sketch", "outside"]),
                                      ([[0, 1.5, 1]], ["count_sketch", "whole numbers"]),
                                      ([[0, 1]], ["count_sketch", "h must have shape (1, 3)"])])
def test_count_sketch_bad_buckets(h, words):
    with pytest.raises(MXNetError) as e:
        mx.nd.contrib.count_sketch(mx.nd.ones((2, 3)), mx.nd.array(h), mx.nd.ones((1, 3)),
                                   out_dim=5)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


# ---- fft / ifft (GPU only in MXNet 1.9.1: NumPy reference; ifft is unnormalised) ----------
@pytest.mark.parametrize("shape", [(3, 5), (2, 1, 2, 8), (1,)])
def test_fft_matches_numpy_in_the_interleaved_layout(shape):
    x = np.random.RandomState(1).randn(*shape)
    got = mx.nd.contrib.fft(mx.nd.array(x, dtype="float64")).asnumpy()
    want = np.fft.fft(x, axis=-1)
    assert got.shape == shape[:-1] + (2 * shape[-1],)
    np.testing.assert_allclose(got[..., 0::2], want.real, atol=1e-12)
    np.testing.assert_allclose(got[..., 1::2], want.imag, atol=1e-12)


def test_ifft_is_d_times_numpy_real_part():
    c = np.random.RandomState(2).randn(4, 6) + 1j * np.random.RandomState(3).randn(4, 6)
    pairs = np.stack([c.real, c.imag], axis=-1).reshape(4, 12)
    got = mx.nd.contrib.ifft(mx.nd.array(pairs, dtype="float64")).asnumpy()
    np.testing.assert_allclose(got, 6 * np.fft.ifft(c, axis=-1).real, atol=1e-12)


def test_fft_float32_and_quarter_turns_exact():
    got = mx.nd.contrib.fft(mx.nd.array([[1.0, 2.0, 3.0, 4.0]]))
    assert got.dtype == np.float32
    assert got.asnumpy().tolist() == [[10.0, 0.0, -2.0, 2.0, -2.0, 0.0, -2.0, -2.0]]


def test_ifft_needs_pairs():
    with pytest.raises(MXNetError, match="ifft.*even.*\\(2, 3\\)"):
        mx.nd.contrib.ifft(mx.nd.ones((2, 3)))


@pytest.mark.parametrize("shape", [(2, 1, 0), (0, 2, 6), (3, 0, 6)])
def test_attention_products_of_empty_projections_have_zero_gradients(shape):
    x = mx.nd.ones(shape)
    att = mx.nd.ones((shape[1], shape[0], shape[0]))
    x.attach_grad()
    att.attach_grad()
    with mx.autograd.record():
        s = mx.nd.contrib.interleaved_matmul_selfatt_qk(x, heads=1)
        o = mx.nd.contrib.interleaved_matmul_selfatt_valatt(x, att, heads=1)
    mx.autograd.backward([s, o])
    assert s.shape == (shape[1], shape[0], shape[0])
    assert o.shape == (shape[0], shape[1], shape[2] // 3)
    assert x.grad.shape == shape and not x.grad.asnumpy().any()


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (0, 0)])
def test_empty_inputs_of_count_sketch_and_fft(shape):
    x = mx.nd.ones(shape)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.count_sketch(x, mx.nd.zeros((1, shape[1])), mx.nd.ones((1, shape[1])),
                                       out_dim=2)
        z = mx.nd.contrib.ifft(mx.nd.contrib.fft(x))
    mx.autograd.backward([y, z])
    assert y.shape == (shape[0], 2) and z.shape == shape and x.grad.shape == shape
    assert mx.nd.contrib.index_array(x, axes=()).shape == shape + (0,)


def test_boolean_mask_symbol_is_a_clear_error():
    with pytest.raises(MXNetError, match="boolean_mask.*values of index"):
        mx.sym.contrib.boolean_mask(mx.sym.var("data"), mx.sym.var("index"))
