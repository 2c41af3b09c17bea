"""contrib.hawkesll and _hawkesll_scan: values and gradients against MXNet 1.9.1
(tests/fixtures/make_hawkes_fixture.py), values against a NumPy reference written from the
model's sums and integrals (not the recursion the op runs), the gradients MXNet lacked
(state, lags, max_time, the returned state's head gradient) against finite differences of
that reference, blocks of samples, bad input, and the symbol face. Gradients of higher
order are in tests/gradspecs/hawkes.py."""
import math
import os
import sys
import types

import numpy as np
import pytest

import mxlite as mx
import mxlite.ops.hawkes as hawkes
from mxlite.base import MXNetError

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "fixtures")
sys.path.insert(0, FIXTURES)
from make_hawkes_fixture import CASES, INPUTS  # noqa: E402

FIX = np.load(os.path.join(FIXTURES, "hawkes_mxnet.npz"))


# ---- the NumPy reference ------------------------------------------------------------------------
def _reference(lda, alpha, beta, state, lags, marks, length, max_time):
    """(log-likelihood (N,), state at max_time (N, K)) from the model's definition: the
    intensity at each point sums the kernels of every earlier point of its mark, the
    compensator integrates each kernel from its point (or 0, for the initial state) to
    max_time in closed form. O(T^2) per row, float64."""
    n, k = lda.shape
    ll, out = np.zeros(n), np.zeros((n, k))
    for i in range(n):
        count = math.ceil(length[i])
        times = np.cumsum(lags[i, :count])
        c = marks[i, :count]
        end = max_time[i]
        for j in range(count):
            m = c[j]
            earlier = times[:j][c[:j] == m]
            s = state[i, m] * np.exp(-beta[m] * times[j]) + np.exp(
                -beta[m] * (times[j] - earlier)).sum()
            ll[i] += np.log(lda[i, m] + alpha[m] * beta[m] * s)
        for m in range(k):
            own = times[c == m]
            integral = state[i, m] * (1 - np.exp(-beta[m] * end)) + (
                1 - np.exp(-beta[m] * (end - own))).sum()
            ll[i] -= lda[i, m] * end + alpha[m] * integral
            out[i, m] = state[i, m] * np.exp(-beta[m] * end) + np.exp(
                -beta[m] * (end - own)).sum()
    return ll, out


def _random_case(rng, n, k, t, lengths):
    lengths = np.asarray(lengths, dtype="float64")
    marks = rng.integers(0, k, (n, t)).astype("int32")
    marks[np.arange(t)[None, :] >= lengths[:, None]] = -7      # never read
    return [rng.uniform(0.2, 1.5, (n, k)), rng.uniform(0.1, 0.8, k), rng.uniform(0.5, 3.0, k),
            rng.uniform(0.0, 2.0, (n, k)), rng.exponential(0.7, (n, t)), marks, lengths,
            rng.uniform(0.5, 6.0, n)]


def _nd(args, dtype="float64"):
    return [mx.nd.array(a, dtype="int32" if i == 5 else dtype) for i, a in enumerate(args)]


def _hawkes(args, dtype="float64"):
    ll, out = mx.nd.contrib.hawkesll(*_nd(args, dtype))
    return ll.asnumpy(), out.asnumpy()


# ---- values --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_mxnet(name):
    """Log-likelihood, returned state and the lda/alpha/beta gradients for a head gradient of
    the log-likelihood (MXNet computes expf/logf: float precision even in float64)."""
    dtype = CASES[name][-1]
    args = [mx.nd.array(FIX[f"{name}/{i}"], dtype=FIX[f"{name}/{i}"].dtype) for i in INPUTS]
    for a in args[:3]:
        a.attach_grad()
    with mx.autograd.record():
        ll, out = mx.nd.contrib.hawkesll(*args)
    ll.backward(mx.nd.array(FIX[f"{name}/head"], dtype=dtype))
    tol = dict(rtol=2e-6, atol=2e-6) if dtype == "float64" else dict(rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ll.asnumpy(), FIX[f"{name}/loglik"], **tol)
    np.testing.assert_allclose(out.asnumpy(), FIX[f"{name}/out_state"], **tol)
    for name_in, a in zip(INPUTS[:3], args):
        np.testing.assert_allclose(a.grad.asnumpy(), FIX[f"{name}/grad_{name_in}"], **tol)


@pytest.mark.parametrize("shape,lengths", [((3, 2, 6), [6, 3, 0]), ((2, 4, 9), [9, 9]),
                                           ((4, 1, 5), [1, 2, 4.5, 0.25])])
def test_matches_the_model(shape, lengths):
    """Against the sums and integrals of the definition, in float64; a fractional
    valid_length counts its partial point (MXNet's j < valid_length)."""
    n, k, t = shape
    args = _random_case(np.random.default_rng(sum(shape)), n, k, t, lengths)
    want = _reference(*args)
    got = _hawkes(args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)


def test_window_ending_before_the_last_point_and_equal_times():
    """max_time before the last point (the compensator's closed form still holds) and lags of
    0 (two points at one time: the later one sees the earlier one's full kernel)."""
    args = _random_case(np.random.default_rng(3), 2, 2, 5, [5, 4])
    args[4][0, 2] = 0.0
    args[5][0, 1:3] = 1
    args[7] = np.array([0.3, 1.0])
    want = _reference(*args)
    got = _hawkes(args)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_float32_and_float16_compute_in_float64():
    args = _random_case(np.random.default_rng(5), 3, 2, 6, [6, 2, 5])
    for dtype, tol in (("float32", 1e-5), ("float16", 3e-3)):
        rounded = [a.astype(dtype) if i not in (5, 6) else a for i, a in enumerate(args)]
        want = _reference(*[a.astype("float64") if i != 5 else a
                            for i, a in enumerate(rounded)])
        ll, out = mx.nd.contrib.hawkesll(*_nd(rounded, dtype))
        assert ll.dtype == np.dtype(dtype) and out.dtype == np.dtype(dtype)
        np.testing.assert_allclose(ll.asnumpy(), want[0], rtol=tol)
        np.testing.assert_allclose(out.asnumpy(), want[1], rtol=tol)


def test_any_integer_marks_and_lengths():
    """marks of any integer dtype (MXNet: int32 only) and integer valid_length."""
    args = _random_case(np.random.default_rng(8), 2, 3, 4, [4, 2])
    want = _hawkes(args)
    base = _nd(args)
    for mdt, ldt in (("int8", "int64"), ("uint8", "int32"), ("int64", "float64")):
        marks = mx.nd.array(np.maximum(args[5], 0), dtype=mdt)
        got = mx.nd.contrib.hawkesll(*base[:5], marks, mx.nd.array(args[6], dtype=ldt),
                                     base[7])
        np.testing.assert_array_equal(got[0].asnumpy(), want[0])


def test_blocks_of_samples_equal_one_block(monkeypatch):
    args = _random_case(np.random.default_rng(11), 7, 3, 5, [5, 0, 3, 5, 1, 4, 2])
    want = _hawkes(args)
    monkeypatch.setattr(hawkes, "_BLOCK", 2 * (6 * 5 + 2 * 3 + 16))    # two samples a block
    got = _hawkes(args)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    scan = [mx.nd.array(v, dtype="float64") for v in (args[4], args[4] * 0.5, args[3])]
    index = [mx.nd.array(args[5], dtype="int32"), mx.nd.array(args[6])]
    monkeypatch.setattr(hawkes, "_BLOCK", 1 << 22)
    whole = mx.nd._internal._hawkesll_scan(*scan, *index, reverse=True)
    monkeypatch.setattr(hawkes, "_BLOCK", 2 * (6 * 5 + 2 * 3 + 16))
    parts = mx.nd._internal._hawkesll_scan(*scan, *index, reverse=True)
    for one, other in zip(whole, parts):
        np.testing.assert_array_equal(one.asnumpy(), other.asnumpy())


def test_empty_batch_and_no_points():
    args = _random_case(np.random.default_rng(2), 2, 2, 3, [0, 0])
    np.testing.assert_allclose(_hawkes(args)[0], _reference(*args)[0], rtol=1e-12)
    empty = _random_case(np.random.default_rng(2), 0, 2, 3, [])
    ll, out = _hawkes(empty)
    assert ll.shape == (0,) and out.shape == (0, 2)


# ---- gradients -----------------------------------------------------------------------------------
def _finite_difference(args, index, ghead, gstate, eps=1e-6):
    """d <ghead, ll> + <gstate, out> / d args[index] by central differences of the NumPy
    reference."""
    grad = np.zeros_like(args[index])
    for pos in np.ndindex(grad.shape):
        vals = []
        for sign in (1, -1):
            moved = [a.copy() for a in args]
            moved[index][pos] += sign * eps
            ll, out = _reference(*moved)
            vals.append((ghead * ll).sum() + (gstate * out).sum())
        grad[pos] = (vals[0] - vals[1]) / (2 * eps)
    return grad


def test_gradients_of_every_float_input_through_both_outputs():
    """lda, alpha, beta (MXNet's three) and state, lags, max_time (MXNet had none), with a
    head gradient on the returned state too (MXNet ignored it)."""
    rng = np.random.default_rng(21)
    args = _random_case(rng, 3, 2, 5, [5, 3, 0])
    ghead, gstate = rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, (3, 2))
    arrays = _nd(args)
    for i in (0, 1, 2, 3, 4, 7):
        arrays[i].attach_grad()
    with mx.autograd.record():
        ll, out = mx.nd.contrib.hawkesll(*arrays)
    mx.autograd.backward([ll, out], [mx.nd.array(ghead, dtype="float64"),
                                     mx.nd.array(gstate, dtype="float64")])
    for i in (0, 1, 2, 3, 4, 7):
        want = _finite_difference(args, i, ghead, gstate)
        np.testing.assert_allclose(arrays[i].grad.asnumpy(), want, rtol=1e-6, atol=1e-7,
                                   err_msg=INPUTS[i])


@pytest.mark.parametrize("n,t", [(2, 0), (0, 3)])
def test_no_points_or_no_samples_differentiate(n, t):
    """T = 0 (only the compensators: d lda = -max_time) and an empty batch."""
    args = _random_case(np.random.default_rng(7), n, 2, t, [0] * n)
    arrays = _nd(args)
    for a in arrays[:3]:
        a.attach_grad()
    with mx.autograd.record():
        ll, out = mx.nd.contrib.hawkesll(*arrays)
    mx.autograd.backward([ll, out])
    np.testing.assert_allclose(ll.asnumpy(), _reference(*args)[0], rtol=1e-12)
    np.testing.assert_allclose(arrays[0].grad.asnumpy(),
                               np.zeros((n, 2)) - args[7][:, None], rtol=1e-12)
    assert arrays[1].grad.shape == (2,) and arrays[2].grad.shape == (2,)


def test_symbol_matches_nd():
    args = _random_case(np.random.default_rng(4), 2, 2, 4, [4, 1])
    names = list(INPUTS)
    out = mx.sym.contrib.hawkesll(*[mx.sym.var(v) for v in names])
    first, second = out.list_outputs()
    assert first.endswith("_output") and second.endswith("_out_state")
    got = out.eval(**dict(zip(names, _nd(args))))
    want = _hawkes(args)
    np.testing.assert_array_equal(got[0].asnumpy(), want[0])
    np.testing.assert_array_equal(got[1].asnumpy(), want[1])


def test_the_gradient_graph_recomputes_the_forward():
    """The registered-op graph the gradient differentiates (hawkes._Graph) gives the
    compute's log-likelihood and returned state."""
    args = _random_case(np.random.default_rng(6), 3, 2, 5, [5, 2, 0])
    arrays = _nd(args)
    node = types.SimpleNamespace(inputs=arrays, input_shapes=[a.shape for a in arrays],
                                 input_dtypes=[a.dtype for a in arrays],
                                 context=arrays[0].context)
    graph = hawkes._Graph(mx.nd, node)
    ll = graph.loglik(arrays[0], arrays[1], arrays[3], arrays[7])
    want = _hawkes(args)
    np.testing.assert_allclose(ll.asnumpy(), want[0], rtol=1e-12)
    np.testing.assert_allclose(graph.out.asnumpy(), want[1], rtol=1e-12)


# ---- the scan ------------------------------------------------------------------------------------
def _scan_reference(a, b, init, marks, length, reverse):
    pre, final = np.zeros_like(a), init.astype("float64").copy()
    for i in range(a.shape[0]):
        order = range(math.ceil(length[i]))
        for j in (reversed(order) if reverse else order):
            c = marks[i, j]
            pre[i, j] = final[i, c]
            final[i, c] = a[i, j] * final[i, c] + b[i, j]
    return pre, final


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_its_loop(reverse):
    rng = np.random.default_rng(9)
    a, b, init = rng.normal(size=(3, 6)), rng.normal(size=(3, 6)), rng.normal(size=(3, 2))
    marks = rng.integers(0, 2, (3, 6)).astype("int32")
    length = np.array([6.0, 2.0, 0.0])
    pre, final = mx.nd._internal._hawkesll_scan(
        *[mx.nd.array(v, dtype="float64") for v in (a, b, init)],
        mx.nd.array(marks, dtype="int32"), mx.nd.array(length), reverse=reverse)
    want = _scan_reference(a, b, init, marks, length, reverse)
    np.testing.assert_allclose(pre.asnumpy(), want[0], rtol=1e-14)
    np.testing.assert_allclose(final.asnumpy(), want[1], rtol=1e-14)


def test_scan_writes_over_its_input():
    """out= may be ``a`` itself (column j of a is read before column j of pre is written)."""
    rng = np.random.default_rng(10)
    a, b, init = rng.normal(size=(2, 5)), rng.normal(size=(2, 5)), rng.normal(size=(2, 3))
    marks = rng.integers(0, 3, (2, 5)).astype("int32")
    args = [mx.nd.array(v, dtype="float64") for v in (a, b, init)] + [
        mx.nd.array(marks, dtype="int32"), mx.nd.array([5, 3])]
    want = [o.asnumpy() for o in mx.nd._internal._hawkesll_scan(*args)]
    final = mx.nd.empty((2, 3), dtype="float64")
    mx.nd._internal._hawkesll_scan(*args, out=[args[0], final])
    np.testing.assert_array_equal(args[0].asnumpy(), want[0])
    np.testing.assert_array_equal(final.asnumpy(), want[1])


# ---- bad input -----------------------------------------------------------------------------------
def _bad(args, match):
    with pytest.raises(MXNetError, match=match):
        mx.nd.contrib.hawkesll(*args)[0].wait_to_read()


@pytest.mark.parametrize("where,value,match", [
    ((5, 0, 1), 3, r"hawkesll: marks must lie in \[0, 3\).*marks\[0, 1\] is 3"),
    ((5, 1, 0), -1, r"hawkesll: marks must lie in \[0, 3\).*marks\[1, 0\] is -1"),
    ((6, 1), 5.0, r"hawkesll: valid_length must lie in \[0, 4\].*\[5\.0\]"),
    ((6, 0), -1.0, r"hawkesll: valid_length must lie in \[0, 4\].*\[-1\.0\]"),
    ((6, 1), float("nan"), r"hawkesll: valid_length must lie in \[0, 4\].*nan")])
def test_bad_marks_and_lengths_are_errors(where, value, match):
    """A mark outside [0, K) within the counted points, a valid_length outside [0, T] or NaN
    (MXNet read out of bounds) are errors naming the input and the values."""
    args = _random_case(np.random.default_rng(1), 2, 3, 4, [4, 2])
    args[where[0]][where[1:]] = value
    _bad(_nd(args), match)


def test_padding_past_the_valid_length_is_never_read():
    """Marks out of range and NaN lags past valid_length change neither the values nor the
    gradients (MXNet never reads them either)."""
    args = _random_case(np.random.default_rng(1), 2, 3, 4, [4, 2])
    padded = [a.copy() for a in args]
    padded[5][1, 2:] = 99
    padded[4][1, 2:] = np.nan
    grads = []
    for case in (args, padded):
        arrays = _nd(case)
        for i in (0, 1, 2, 3, 4, 7):
            arrays[i].attach_grad()
        with mx.autograd.record():
            ll, out = mx.nd.contrib.hawkesll(*arrays)
        mx.autograd.backward([ll, out])
        np.testing.assert_allclose(ll.asnumpy(), _reference(*args)[0], rtol=1e-12)
        grads.append([arrays[i].grad.asnumpy() for i in (0, 1, 2, 3, 4, 7)])
    for clean, dirty in zip(*grads):
        np.testing.assert_array_equal(clean, dirty)


def test_bad_shapes_and_dtypes_are_errors():
    args = _nd(_random_case(np.random.default_rng(1), 2, 3, 4, [4, 2]))
    cases = [(0, mx.nd.ones((2, 2), dtype="float64"), r"hawkesll.*alpha must have shape \(2,\)"
              r"|hawkesll.*shape"),
             (4, mx.nd.ones((2, 5), dtype="float64"), r"hawkesll: marks must have shape \(2, 5\)"),
             (1, mx.nd.ones((3, 1), dtype="float64"), r"hawkesll: alpha must be 1-D"),
             (5, mx.nd.ones((2, 4), dtype="float64"), r"hawkesll: marks must have an integer"),
             (2, mx.nd.ones((3,), dtype="float32"), r"hawkesll: .* must share a dtype"),
             (0, mx.nd.ones((2, 0), dtype="float64"), r"hawkesll: lda .* at least one mark")]
    for i, value, match in cases:
        bad = list(args)
        bad[i] = value
        _bad(bad, match)
