"""CTCLoss (ctc_loss): values and gradients against MXNet 1.9.1 (tests/fixtures/
make_ctc_fixture.py), against a brute-force sum over every alignment (NumPy), the
infeasible label (inf where MXNet gave 0), bad input, the symbol face and gluon.loss.CTCLoss.
Gradients of higher order are in tests/gradspecs/ctc.py."""
import itertools
import os
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
from make_ctc_fixture import CASES  # noqa: E402

FIX = np.load(os.path.join(FIXTURES, "ctc_mxnet.npz"))


def _run(name, kw, dlen, llen):
    x = mx.nd.array(FIX[f"{name}/data"])
    x.attach_grad()
    lengths = {k: mx.nd.array(FIX[f"{name}/{k}"]) for k, v in
               (("data_lengths", dlen), ("label_lengths", llen)) if v is not None}
    with mx.autograd.record():
        out = mx.nd.CTCLoss(x, mx.nd.array(FIX[f"{name}/label"]), **lengths, **kw)
    out.backward(mx.nd.array(FIX[f"{name}/head"]))
    return out.asnumpy(), x.grad.asnumpy()


@pytest.mark.parametrize("name", [n for n in CASES if n != "infeasible"])
def test_matches_mxnet(name):
    _, _, dlen, llen, kw = CASES[name]
    out, grad = _run(name, kw, dlen, llen)
    np.testing.assert_allclose(out, FIX[f"{name}/out"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, FIX[f"{name}/grad"], rtol=1e-4, atol=1e-5)


def test_infeasible_label_is_inf_with_zero_gradient():
    """Three equal labels need 5 frames; with 2 the probability is 0: -log 0 = inf (MXNet
    1.9.1 gave 0 and a nonzero gradient). The feasible sequence still matches MXNet."""
    _, _, dlen, llen, kw = CASES["infeasible"]
    out, grad = _run("infeasible", kw, dlen, llen)
    assert np.isinf(out[0]) and out[0] > 0 and FIX["infeasible/out"][0] == 0
    assert (grad[:, 0] == 0).all()
    np.testing.assert_allclose(out[1], FIX["infeasible/out"][1], rtol=1e-5)
    np.testing.assert_allclose(grad[:, 1], FIX["infeasible/grad"][:, 1], rtol=1e-4, atol=1e-5)


def _collapse(path, blank):
    out = [k for i, k in enumerate(path) if k != blank and (i == 0 or path[i - 1] != k)]
    return tuple(out)


def _brute_force(x, label, blank):
    """-log of the sum over every path of T classes that collapses to ``label``."""
    p = np.exp(x - x.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    total = sum(np.prod([p[t, k] for t, k in enumerate(path)])
                for path in itertools.product(range(x.shape[1]), repeat=x.shape[0])
                if _collapse(path, blank) == tuple(label))
    return -np.log(total)


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_brute_force_over_alignments(blank_label):
    rng = np.random.RandomState(3)
    x = rng.normal(size=(5, 3, 3))
    if blank_label == "first":
        labels, padded = [[1, 2], [2, 2], [1]], [[1, 2], [2, 2], [1, 0]]
    else:
        labels, padded = [[0, 1], [1, 1], [0]], [[0, 1], [1, 1], [0, -1]]
    blank = 0 if blank_label == "first" else 2
    out = mx.nd.CTCLoss(mx.nd.array(x, dtype="float64"), mx.nd.array(padded),
                        blank_label=blank_label).asnumpy()
    want = [_brute_force(x[:, n], labels[n], blank) for n in range(3)]
    np.testing.assert_allclose(out, want, rtol=1e-10)


def test_recorded_gradient_equals_the_kernel_gradient():
    """The recorded gradient (create_graph: the _ctc_loss_grad op) and the hidden output
    are the same kernel's values, bit for bit."""
    rng = np.random.RandomState(5)
    x = mx.nd.array(rng.normal(size=(6, 2, 4)), dtype="float64")
    x.attach_grad()
    label, lengths = mx.nd.array([[1, 1, 3], [2, 0, 0]]), mx.nd.array([4, 6])
    grads = []
    for create in (False, True):
        with mx.autograd.record():
            y = mx.nd.CTCLoss(x, label, lengths, use_data_lengths=True)
        grads.append(mx.autograd.grad(y, [x], head_grads=mx.nd.array(
            [0.5, 2.0], dtype="float64"), create_graph=create)[0].asnumpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_names_outputs_and_arguments():
    for name in ("CTCLoss", "ctc_loss"):
        assert getattr(mx.nd, name).op is mx.nd.CTCLoss.op
    for name in ("CTCLoss", "ctc_loss"):
        assert getattr(mx.nd.contrib, name).op is mx.nd.CTCLoss.op
    d, lab = mx.sym.var("d"), mx.sym.var("l")
    s = mx.sym.CTCLoss(d, lab, use_label_lengths=True, name="c")
    assert s.list_arguments() == ["d", "l", "c_label_lengths"]
    assert s.list_outputs() == ["c_output"]
    _, outs, _ = s.infer_shape(d=(5, 2, 4), l=(2, 3), c_label_lengths=(2,))
    assert outs == [(2,)]


@pytest.mark.parametrize("label, kw, words", [
    ([[1, 4]], {}, ["label values", "[1, 3]", "4"]),
    ([[3, -1]], dict(blank_label="last"), []),
    ([[0, 3]], dict(blank_label="last"), ["[0, 2]", "3"]),
    ([[1.5, 0]], {}, ["integers"]),
])
def test_bad_labels(label, kw, words):
    x = mx.nd.zeros((3, 1, 4))
    if not words:        # 3 is the blank with 'last' (alphabet 4): not a label
        with pytest.raises(MXNetError, match="CTCLoss"):
            mx.nd.CTCLoss(x, mx.nd.array(label), **kw).asnumpy()
        return
    with pytest.raises(MXNetError, match="CTCLoss") as err:
        mx.nd.CTCLoss(x, mx.nd.array(label), **kw).asnumpy()
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("args, kw, words", [
    (((3, 2, 4), (3, 2)), {}, ["label", "batch_size 2"]),
    (((3, 2), (2, 2)), {}, ["3-D"]),
    (((3, 2, 1), (2, 2)), {}, ["two classes"]),
])
def test_bad_shapes(args, kw, words):
    with pytest.raises(MXNetError, match="CTCLoss") as err:
        mx.nd.CTCLoss(mx.nd.zeros(args[0]), mx.nd.zeros(args[1]), **kw)
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("key, lengths, words", [
    ("data_lengths", [0, 3], ["data_lengths", "[1, 3]"]),
    ("data_lengths", [4, 3], ["data_lengths"]),
    ("label_lengths", [3, 1], ["label_lengths", "[0, 2]"]),
    ("label_lengths", [-1, 1], ["label_lengths"]),
])
def test_bad_lengths(key, lengths, words):
    kw = {key: mx.nd.array(lengths), "use_" + key: True}
    with pytest.raises(MXNetError, match="CTCLoss") as err:
        mx.nd.CTCLoss(mx.nd.zeros((3, 2, 4)), mx.nd.array([[1, 2], [1, 0]]), **kw).asnumpy()
    for w in words:
        assert w in str(err.value)


def test_lengths_of_the_wrong_shape():
    with pytest.raises(MXNetError, match="CTCLoss: data_lengths must be a vector"):
        mx.nd.CTCLoss(mx.nd.zeros((3, 2, 4)), mx.nd.array([[1, 2], [1, 0]]),
                      data_lengths=mx.nd.array([3]), use_data_lengths=True)


@pytest.mark.parametrize("hybridize", [False, True])
def test_gluon_ctc_loss_matches_mxnet(hybridize):
    loss = mx.gluon.loss.CTCLoss()
    if hybridize:
        loss.hybridize()
    x = mx.nd.array(FIX["gluon/data"])
    x.attach_grad()
    with mx.autograd.record():
        out = loss(x, *(mx.nd.array(FIX[f"gluon/{k}"]) for k in
                        ("label", "data_lengths", "label_lengths", "weight")))
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), FIX["gluon/out"], rtol=1e-5)
    np.testing.assert_allclose(x.grad.asnumpy(), FIX["gluon/grad"], rtol=1e-4, atol=1e-5)


def test_gluon_ctc_loss_layouts():
    """'TNC' data and 'TN' labels give the loss of the transposed 'NTC'/'NT' call."""
    rng = np.random.RandomState(7)
    x = rng.normal(size=(2, 5, 4))
    label = np.array([[0, 1, 2], [2, -1, -1]])
    want = mx.gluon.loss.CTCLoss()(mx.nd.array(x), mx.nd.array(label)).asnumpy()
    got = mx.gluon.loss.CTCLoss(layout="TNC", label_layout="TN")(
        mx.nd.array(x.transpose(1, 0, 2)), mx.nd.array(label.T)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(MXNetError, match="layout"):
        mx.gluon.loss.CTCLoss(layout="NCT")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_emissions_too_small_to_scale_fall_back_to_log_space(dtype):
    """The label's class 1000 nats below the blank and class 2 at every step: the rescaled
    recursions underflow (exp(-1000) is 0 in float64), the log-space fallback gives
    -log p = 1000 + 6 log 2 - log 6 (one frame of the label, six places, Z = 2 per step;
    the other terms are e**-1000 smaller); the other sequence is unaffected."""
    x = np.zeros((6, 2, 3))
    x[:, 0, 1] = -1000
    data = mx.nd.array(x, dtype=dtype)
    data.attach_grad()
    with mx.autograd.record():
        out = mx.nd.CTCLoss(data, mx.nd.array([[1], [2]]))
    out.backward()
    want = 1000 + 6 * np.log(2) - np.log(6)
    np.testing.assert_allclose(out.asnumpy()[0], want, rtol=1e-6)
    np.testing.assert_allclose(out.asnumpy()[1], _brute_force(x[:, 1], [2], 0), rtol=1e-6)
    grad = data.grad.asnumpy()
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(grad.sum(axis=2), 0, atol=1e-6)   # softmax - posteriors


def test_positional_length_arrays_take_the_inputs_the_flags_list():
    """MXNet's order: with use_label_lengths only, the third array is label_lengths."""
    x = mx.nd.array(np.random.default_rng(0).standard_normal((5, 2, 4)))
    label, lengths = mx.nd.array([[1, 2], [1, 0]]), mx.nd.array([2, 1])
    by_position = mx.nd.CTCLoss(x, label, lengths, use_label_lengths=True)
    by_name = mx.nd.CTCLoss(x, label, label_lengths=lengths, use_label_lengths=True)
    np.testing.assert_array_equal(by_position.asnumpy(), by_name.asnumpy())
    sym = mx.sym.CTCLoss(mx.sym.var("x"), mx.sym.var("l"), mx.sym.var("n"),
                         use_label_lengths=True)
    assert sym.list_arguments() == ["x", "l", "n"]


# ---- the compiled kernel (mxlite/_core/ctc.pyx) ---------------------------------------------
def _kernel_run(data, label, ln, tn, blank, threads, inplace=False):
    from mxlite._core import ctc as kernel
    t, n, a = data.shape
    loss = np.empty(n, data.dtype)
    grad = data if inplace else np.empty_like(data)
    scratch = np.empty((threads, kernel.scratch_size(t, a, label.shape[1])))
    kernel.ctc_loss(data, label, ln, tn, blank, loss, grad, scratch)
    return loss, grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_threads_and_in_place_give_the_same_values(dtype):
    """One thread, several threads (dynamic schedule) and grad written over data agree
    bit for bit; the batch is large enough for the parallel loop."""
    rng = np.random.default_rng(11)
    t, n, a, L = 40, 64, 30, 8
    data = rng.standard_normal((t, n, a)).astype(dtype)
    label = rng.integers(1, a, size=(n, L)).astype(np.int64)
    ln = rng.integers(0, L + 1, size=n).astype(np.int64)
    tn = rng.integers(L * 2 + 1, t + 1, size=n).astype(np.int64)
    one = _kernel_run(data, label, ln, tn, 0, 1)
    many = _kernel_run(data, label, ln, tn, 0, 4)
    inplace = _kernel_run(data.copy(), label, ln, tn, 0, 4, inplace=True)
    for got in (many, inplace):
        np.testing.assert_array_equal(got[0], one[0])
        np.testing.assert_array_equal(got[1], one[1])


def test_kernel_refuses_bad_arguments():
    from mxlite._core import ctc as kernel
    data = np.zeros((3, 2, 4))
    label = np.ones((2, 2), np.int64)
    ok = dict(ln=np.array([1, 1]), tn=np.array([3, 3]))
    cases = [(np.array([[1, 4], [1, 1]]), ok["ln"], ok["tn"], 0, "label value"),
             (label, np.array([3, 1]), ok["tn"], 0, "length"),
             (label, ok["ln"], np.array([0, 3]), 0, "length"),
             (label, ok["ln"], ok["tn"], 4, "blank 4")]
    for lab, ln, tn, blank, words in cases:
        with pytest.raises(ValueError, match=words):
            kernel.ctc_loss(data, lab.astype(np.int64), ln.astype(np.int64),
                            tn.astype(np.int64), blank, np.empty(2), np.empty_like(data),
                            np.empty((1, kernel.scratch_size(3, 4, 2))))
    with pytest.raises(ValueError, match="scratch"):
        kernel.ctc_loss(data, label, ok["ln"], ok["tn"], 0, np.empty(2), np.empty_like(data),
                        np.empty((1, 3)))


def test_out_may_be_the_data():
    """out=[loss, data]: the gradient written over the activations, as the large row does;
    the third sequence's label class sits 1000 nats below the rest, so its recursions run
    in log space, from the log emissions kept before the data is overwritten."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((7, 3, 5))
    x[:, 2, 3] -= 1000
    label = mx.nd.array([[1, 2, 2], [4, 0, 0], [3, 1, 0]])
    want = mx.nd.CTCLoss(mx.nd.array(x), label)
    data = mx.nd.array(x)
    loss = mx.nd.empty((3,))
    mx.nd.CTCLoss(data, label, out=[loss, data])
    data_ref = mx.nd.array(x)
    data_ref.attach_grad()
    with mx.autograd.record():
        y = mx.nd.CTCLoss(data_ref, label)
    y.backward()
    np.testing.assert_array_equal(loss.asnumpy(), want.asnumpy())
    np.testing.assert_array_equal(data.asnumpy(), data_ref.grad.asnumpy())


def test_long_sequences_match_a_log_space_reference():
    """T = 400 steps (the product of the emissions is ~1e-600: far below float64's range,
    so only the rescaled or log-space recursions get it): the loss equals a plain NumPy
    log-space forward recursion."""
    rng = np.random.default_rng(8)
    t, a = 400, 6
    x = rng.standard_normal((t, 1, a)) * 3
    label = [1, 3, 3, 5, 2]
    lp = x[:, 0] - np.log(np.exp(x[:, 0]).sum(axis=1, keepdims=True))
    ext = [0]
    for k in label:
        ext += [k, 0]
    s = len(ext)
    alpha = np.full(s, -np.inf)
    alpha[:2] = lp[0, ext[:2]]
    for i in range(1, t):
        new = np.full(s, -np.inf)
        for j in range(s):
            ways = [alpha[j]] + ([alpha[j - 1]] if j >= 1 else [])
            if j >= 2 and ext[j] != 0 and ext[j] != ext[j - 2]:
                ways.append(alpha[j - 2])
            new[j] = np.logaddexp.reduce(ways) + lp[i, ext[j]]
        alpha = new
    want = -np.logaddexp(alpha[-1], alpha[-2])
    got = mx.nd.CTCLoss(mx.nd.array(x, dtype="float64"), mx.nd.array([label])).asnumpy()
    np.testing.assert_allclose(got[0], want, rtol=1e-12)


# ---- the recursions of the gradient graph: _ctc_alpha and _ctc_wrec ---------------------
def _alpha_reference(e, skip, first, lengths):
    n, t, s = e.shape
    out = np.full(e.shape, -1e30)
    for b in range(n):
        for i in range(int(lengths[b])):
            for j in range(s):
                if i == 0:
                    out[b, 0, j] = e[b, 0, j] if first[b, j] else -1e30
                    continue
                ways = [out[b, i - 1, j], out[b, i - 1, j - 1] if j >= 1 else -1e30,
                        out[b, i - 1, j - 2] if j >= 2 and skip[b, j] else -1e30]
                m = max(ways)
                out[b, i, j] = m + np.log(sum(np.exp(w - m) for w in ways)) + e[b, i, j]
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_alpha_matches_a_numpy_recursion(dtype):
    rng = np.random.default_rng(2)
    e = rng.standard_normal((3, 6, 7))
    skip = (rng.random((3, 7)) > 0.4).astype(float)
    first = np.zeros((3, 7))
    first[:, :2] = 1
    lengths = np.array([6, 2, 0])
    got = mx.nd._internal._ctc_alpha(*(mx.nd.array(v, dtype=dtype)
                                       for v in (e, skip, first, lengths))).asnumpy()
    want = _alpha_reference(e, skip, first, lengths)
    reach = want > -1e29
    np.testing.assert_allclose(got[reach], want[reach], rtol=1e-5 if dtype == "float32"
                               else 1e-12)
    assert (got[~reach] < -1e29).all()


def _wrec_reference(w0, w1, w2, g, reverse):
    n, t, s = g.shape
    out = np.zeros(g.shape)
    for i in (range(t - 1, -1, -1) if reverse else range(t)):
        for j in range(s):
            v = g[:, i, j].copy()
            if not reverse and i >= 1:
                v += w0[:, i, j] * out[:, i - 1, j]
                v += w1[:, i, j] * out[:, i - 1, j - 1] if j >= 1 else 0
                v += w2[:, i, j] * out[:, i - 1, j - 2] if j >= 2 else 0
            if reverse and i + 1 < t:
                v += w0[:, i + 1, j] * out[:, i + 1, j]
                v += w1[:, i + 1, j + 1] * out[:, i + 1, j + 1] if j + 1 < s else 0
                v += w2[:, i + 1, j + 2] * out[:, i + 1, j + 2] if j + 2 < s else 0
            out[:, i, j] = v
    return out


@pytest.mark.parametrize("reverse", [False, True])
def test_ctc_wrec_matches_a_numpy_recursion_and_may_write_over_its_inputs(reverse):
    rng = np.random.default_rng(3)
    w0, w1, w2, g = (rng.uniform(-1, 1, (2, 5, 6)) for _ in range(4))
    want = _wrec_reference(w0, w1, w2, g, reverse)
    args = [mx.nd.array(v, dtype="float64") for v in (w0, w1, w2, g)]
    got = mx.nd._internal._ctc_wrec(*args, reverse=reverse)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    for k in range(4):                        # out= each input in turn
        args = [mx.nd.array(v, dtype="float64") for v in (w0, w1, w2, g)]
        mx.nd._internal._ctc_wrec(*args, reverse=reverse, out=args[k])
        np.testing.assert_allclose(args[k].asnumpy(), want, rtol=1e-12)


@pytest.mark.parametrize("call, words", [
    (lambda: mx.nd._internal._ctc_alpha(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 4)),
                                        mx.nd.zeros((2, 5)), mx.nd.array([3, 3])),
     ["_ctc_alpha", "(2, 4)"]),
    (lambda: mx.nd._internal._ctc_alpha(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 5)),
                                        mx.nd.zeros((2, 5)), mx.nd.array([4, 1])),
     ["_ctc_alpha", "data_lengths", "[0, 3]"]),
    (lambda: mx.nd._internal._ctc_alpha(mx.nd.zeros((2, 3, 5), dtype="float16"),
                                        mx.nd.zeros((2, 5)), mx.nd.zeros((2, 5)),
                                        mx.nd.array([3, 1])),
     ["_ctc_alpha", "float16"]),
    (lambda: mx.nd._internal._ctc_wrec(mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 3, 5)),
                                       mx.nd.zeros((2, 3, 4)), mx.nd.zeros((2, 3, 5))),
     ["_ctc_wrec", "(2, 3, 4)"]),
    (lambda: mx.nd._internal._ctc_wrec(mx.nd.zeros((2, 3, 5), dtype="float64"),
                                       mx.nd.zeros((2, 3, 5)), mx.nd.zeros((2, 3, 5)),
                                       mx.nd.zeros((2, 3, 5))),
     ["_ctc_wrec", "one dtype", "float64", "float32"]),
])
def test_recursion_ops_refuse_bad_input(call, words):
    with pytest.raises(MXNetError) as err:
        call().asnumpy()
    for w in words:
        assert w in str(err.value)


def test_symbolic_gradient_graph_does_not_grow_with_the_sequence_length():
    """The gradient graph holds the recursions as two ops, not one set of ops per step (the
    graph unrolled over time made mx.sym's backward of T = 100 ~6x the imperative one)."""
    import json
    sizes = []
    for t in (5, 50):
        d, lab = mx.sym.var("d", shape=(t, 2, 4)), mx.sym.var("l", shape=(2, 3))
        g = mx.sym.grad(mx.sym.CTCLoss(d, lab), ["d"])[0]
        sizes.append(len(json.loads(g.tojson())["nodes"]))
    assert sizes[0] == sizes[1]
