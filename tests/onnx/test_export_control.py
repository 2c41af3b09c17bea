"""The operators whose bodies are graphs (``_foreach``, ``_while_loop``, ``_cond``, built by
mx.sym.contrib.foreach / while_loop / cond) and their gradient graphs: exported (bodies as
ONNX graph attributes), checked (full check), run in onnxruntime and compared with mxlite's
own evaluation of the graph, in float32 and float64."""
import numpy as np
import pytest

import mxlite as mx
from control_graphs import loops_in_branches
from onnx_harness import export_and_run

S = mx.sym
rng = np.random.default_rng(11)
DTYPES = ["float32", "float64"]
TOL = {"float32": 2e-5, "float64": 1e-11}


def check(build, values, tmp_path, dtype, **export):
    """``build(vars)`` (a list of Symbols over variables named as ``values``) exported and
    run, against mxlite's evaluation of the same graph."""
    values = {k: np.asarray(v, dtype=dtype) for k, v in values.items()}
    var = {k: S.var(k, shape=v.shape, dtype=dtype) for k, v in values.items()}
    outs = build(var)
    sym = S.Group(list(outs))
    names = sym.list_arguments()
    expected = sym.eval(ctx=mx.cpu(), **{k: mx.nd.array(v, dtype=dtype)
                                         for k, v in values.items()})
    got = export_and_run(sym, {}, {n: values[n] for n in names}, tmp_path, **export)
    assert len(got) == len(expected)
    # the graph bound (an Executor) gives the same: a gradient graph reads the loops'
    # hidden outputs (the state history), which a bound forward keeps
    bound = sym.bind(mx.cpu(), {k: mx.nd.array(values[k], dtype=dtype) for k in names})
    for b, e in zip(bound.forward(), expected):
        np.testing.assert_allclose(b.asnumpy(), e.asnumpy(), rtol=TOL[dtype], atol=TOL[dtype])
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=TOL[dtype], atol=TOL[dtype])
    return got, expected


def normal(*shape):
    return rng.standard_normal(shape)


# ---- foreach ------------------------------------------------------------------------------
def rnn_cell(v, scale):
    """An Elman cell: h' = tanh(x W + h U + b), the step output h' * scale."""
    def body(x, states):
        h = S.tanh(S.broadcast_add(S.dot(x, v["w"]) + S.dot(states[0], v["u"]), v["b"]))
        return [h * scale], [h]
    return body


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("steps,batch,nin,nh,scale", [(5, 2, 3, 4, 2.0), (1, 3, 2, 2, -0.5),
                                                      (7, 1, 4, 3, 1.0)])
def test_foreach_rnn_cell(tmp_path, dtype, steps, batch, nin, nh, scale):
    values = {"x": normal(steps, batch, nin), "h0": normal(batch, nh), "w": normal(nin, nh),
              "u": normal(nh, nh) * 0.5, "b": normal(nh)}

    def build(v):
        outs, states = S.contrib.foreach(rnn_cell(v, scale), v["x"], [v["h0"]])
        return outs + states
    check(build, values, tmp_path, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_foreach_two_sequences_two_states_and_an_outside_value(tmp_path, dtype):
    values = {"a": normal(4, 3), "b": normal(4, 3), "s0": normal(3), "s1": normal(1),
              "w": normal(3)}

    def build(v):
        shifted = v["w"] * 3 + 1            # computed before the loop: read from outside

        def body(data, states):
            x, y = data
            s0, s1 = states
            z = x * y + s0 * shifted
            return [z, S.sum(z, keepdims=True)], [S.sin(z), S.broadcast_add(s1, S.sum(y))]
        outs, states = S.contrib.foreach(body, [v["a"], v["b"]], [v["s0"], v["s1"]])
        return outs + states
    check(build, values, tmp_path, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_foreach_gradient_graph(tmp_path, dtype):
    """d/d(W, U, h0, x) of a loss over the outputs and the final state: a _foreach over the
    reversed sequences reading the forward loop's hidden state history."""
    values = {"x": normal(5, 2, 3), "h0": normal(2, 4), "w": normal(3, 4),
              "u": normal(4, 4) * 0.5, "b": normal(4)}

    def build(v):
        outs, states = S.contrib.foreach(rnn_cell(v, 1.5), v["x"], [v["h0"]])
        loss = S.sum(S.square(outs[0])) + S.sum(states[0] * v["h0"])
        return S.grad(loss, [v["w"], v["u"], v["b"], v["h0"], v["x"]])
    check(build, values, tmp_path, dtype)


# ---- while_loop ---------------------------------------------------------------------------
def counting_loop(v, max_iterations):
    """i, s -> i + 1, s + i while sum(s) < limit; step outputs s * 2 and i."""
    return S.contrib.while_loop(
        lambda i, s: S.broadcast_lesser(S.sum(s, keepdims=True), v["limit"]),
        lambda i, s: ([s * 2, i], [i + 1, S.broadcast_add(s, i)]),
        [v["i"], v["s"]], max_iterations=max_iterations)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("limit,max_iterations,width", [
    (10.0, 8, 1),       # stops on the condition, rows after the last step zero
    (1e9, 5, 3),        # stops at max_iterations
    (-1.0, 4, 2),       # no step at all: every row zero, the variables as given
    (6.0, 0, 2)])       # max_iterations 0
def test_while_loop_stops_and_pads(tmp_path, dtype, limit, max_iterations, width):
    values = {"i": [1.0], "s": np.linspace(0.5, 1.5, width), "limit": [limit]}

    def build(v):
        outs, final = counting_loop(v, max_iterations)
        return outs + final
    got, expected = check(build, values, tmp_path, dtype)
    steps = int(np.count_nonzero(expected[1].asnumpy()))      # the i rows (from 1)
    assert got[0].shape[0] == max_iterations
    assert not got[0][steps:].any() and not got[1][steps:].any()
    if 0 < limit < 1e9 and max_iterations:
        assert 0 < steps < max_iterations       # the condition, not the count, stopped it


@pytest.mark.parametrize("dtype", DTYPES)
def test_while_loop_reads_outside_values_and_no_step_output(tmp_path, dtype):
    """A body with no step outputs, a condition reading a loop variable and a value from
    outside, a body reading a weight."""
    values = {"x": normal(2, 3), "w": normal(3, 3) * 0.5, "n": [3.0], "k": [0.0]}

    def build(v):
        outs, final = S.contrib.while_loop(
            lambda x, k: S.broadcast_lesser(k, v["n"]),
            lambda x, k: (None, [S.tanh(S.dot(x, v["w"])), k + 1]),
            [v["x"], v["k"]], max_iterations=10)
        assert outs == []
        return final
    check(build, values, tmp_path, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_while_loop_gradient_graph(tmp_path, dtype):
    """The gradient reruns the loop keeping its history (Loop with the step count and the
    history scanned) and runs a _foreach over the reversed rows."""
    values = {"i": [0.0], "s": [0.3, -0.7], "limit": [3.0], "w": [1.5, 0.5]}

    def build(v):
        outs, final = S.contrib.while_loop(
            lambda i, s: S.broadcast_lesser(i, v["limit"]),
            lambda i, s: ([S.sin(s) * v["w"]], [i + 1, s * S.cos(s) + v["w"]]),
            [v["i"], v["s"]], max_iterations=6)
        loss = S.sum(outs[0]) + S.sum(S.square(final[1]))
        return S.grad(loss, [v["s"], v["w"]])
    check(build, values, tmp_path, dtype)


# ---- cond ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sign,shape", [(1, (2, 3)), (-1, (2, 3)), (1, (4,)), (-1, (1, 5))])
def test_cond_takes_either_branch(tmp_path, dtype, sign, shape):
    values = {"a": sign * (np.abs(normal(*shape)) + 0.1), "b": normal(*shape)}

    def build(v):
        a, b = v["a"], v["b"]
        return S.contrib.cond(S.sum(a) > 0, lambda: [a * b, S.exp(a)],
                              lambda: [a - b, S.square(b)])
    got, expected = check(build, values, tmp_path, dtype)
    a, b = (np.asarray(values[k], dtype) for k in "ab")     # the branch really taken
    np.testing.assert_allclose(got[0], a * b if sign > 0 else a - b, rtol=TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("x", [2.0, -2.0])
def test_cond_one_output_and_gradient(tmp_path, dtype, x):
    values = {"x": [x], "y": normal(3)}

    def build(v):
        out = S.contrib.cond(v["x"] > 0, lambda: S.broadcast_mul(v["x"], S.sin(v["y"])),
                             lambda: S.exp(v["y"]) - 1)
        return [out] + S.grad(S.sum(out * out), [v["x"], v["y"]])
    check(build, values, tmp_path, dtype)


# ---- nested -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_inside_foreach(tmp_path, dtype):
    values = {"x": normal(6, 3), "s0": normal(3)}

    def build(v):
        def body(x, states):
            s = states[0]
            y = S.contrib.cond(S.sum(x) > 0, lambda: x + s, lambda: x * s)
            return [y], [S.tanh(y)]
        outs, states = S.contrib.foreach(body, v["x"], [v["s0"]])
        return outs + states
    check(build, values, tmp_path, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("flag", [1.0, 0.0])
def test_loops_inside_cond_and_while_loop(tmp_path, dtype, flag):
    """A foreach in one branch, a while_loop in the other; and a foreach inside a
    while_loop's body."""
    values = {"x": normal(4, 2), "h": normal(2), "flag": [flag], "k": [0.0]}

    def build(v):
        x, h = v["x"], v["h"]
        branch = loops_in_branches(v)

        def inner(a, k):
            outs, states = S.contrib.foreach(lambda d, s: ([d + s[0]], [s[0] * 0.5 + d]),
                                             x, [a])
            return [S.sum(outs[0], axis=0)], [states[0], k + 1]
        rows, final = S.contrib.while_loop(lambda a, k: k < 3, inner, [h, v["k"]],
                                           max_iterations=4)
        return branch + rows + final
    check(build, values, tmp_path, dtype)


def test_cond_with_a_dynamic_batch_axis(tmp_path):
    """dynamic=True: the branches declare no static shapes; one export runs at any batch."""
    import onnxruntime as ort
    a, b = S.var("a"), S.var("b")
    sym = S.Group(S.contrib.cond(S.sum(a) > 0, lambda: [a * b, S.exp(a)],
                                 lambda: [a - b, S.square(b)]))
    path = str(tmp_path / "dyn.onnx")
    mx.onnx.export_model(sym, {}, in_shapes=[(2, 3), (2, 3)], in_types=np.float32,
                         onnx_file_path=path, dynamic=True)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for batch, sign in ((2, 1), (5, -1), (7, 1)):
        feeds = {"a": (sign * np.abs(normal(batch, 3)) + sign * 0.1).astype(np.float32),
                 "b": normal(batch, 3).astype(np.float32)}
        got = session.run(None, feeds)
        expected = sym.eval(**{k: mx.nd.array(v) for k, v in feeds.items()})
        for g, e in zip(got, expected):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e.asnumpy(), rtol=1e-6)


def test_an_operator_inside_a_body_without_a_translation_is_an_error_naming_it(tmp_path):
    def body(x, states):
        upd = S.sgd_mom_update(x, x * 2, x * 3, lr=0.1)   # no ONNX translation (a reason)
        return [upd], [states[0] + S.sum(upd)]
    outs, states = S.contrib.foreach(body, S.var("x"), [S.var("s")])
    with pytest.raises(mx.MXNetError, match="sgd_mom_update"):
        mx.onnx.export_model(S.Group(outs + states), {}, in_shapes=[(3, 2, 2), (1,)],
                             onnx_file_path=str(tmp_path / "m.onnx"))
