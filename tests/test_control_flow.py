"""mx.nd.contrib.foreach / while_loop / cond: MXNet 1.9.1's semantics (stacking, padding,
structures) against plain Python loops over NumPy, gradients through them to the third
order against the same loops unrolled by hand, and clear errors. mx.sym.contrib.foreach
(one _foreach node): against MXNet 1.9.1 (tests/fixtures/make_foreach_fixture.py), its JSON
both ways, and its gradient differentiated again."""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

C = mx.nd.contrib


def test_foreach_stacks_outputs_and_threads_states():
    data = np.arange(12.0).reshape(4, 3)
    step = lambda x, s: ([x * s[0], x + 1], [s[0] + x])     # noqa: E731
    outs, states = C.foreach(step, mx.nd.array(data), [mx.nd.ones(3)])
    s, want0, want1 = np.ones(3), [], []
    for row in data:
        want0.append(row * s)
        want1.append(row + 1)
        s = s + row
    np.testing.assert_allclose(outs[0].asnumpy(), want0)
    np.testing.assert_allclose(outs[1].asnumpy(), want1)
    np.testing.assert_allclose(states[0].asnumpy(), s)


def test_foreach_over_a_list_of_arrays_and_a_single_output():
    a, b = mx.nd.array([[1.0], [2.0]]), mx.nd.array([[10.0], [20.0]])
    outs, state = C.foreach(lambda xs, s: (xs[0] * xs[1] + s, xs[1]), [a, b], mx.nd.zeros(1))
    assert outs.shape == (2, 1)
    np.testing.assert_allclose(outs.asnumpy().ravel(), [1 * 10 + 0, 2 * 20 + 10])
    np.testing.assert_allclose(state.asnumpy(), [20.0])


def test_while_loop_pads_to_max_iterations_with_zeros():
    cond = lambda i, s: i <= 5                          # noqa: E731
    func = lambda i, s: ([i + s], [i + 1, s + i])       # noqa: E731
    outs, (i, s) = C.while_loop(cond, func, [mx.nd.array([0], dtype="int64"),
                                             mx.nd.array([1], dtype="int64")],
                                max_iterations=10)
    got = outs[0].asnumpy().ravel()
    np.testing.assert_array_equal(got, [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert outs[0].dtype == np.int64
    assert int(i.asscalar()) == 6 and int(s.asscalar()) == 16


def test_while_loop_stops_at_max_iterations_and_returns_a_single_var():
    outs, x = C.while_loop(lambda x: x < 100, lambda x: (x * 2, x * 2), mx.nd.array([1.0]),
                           max_iterations=3)
    np.testing.assert_array_equal(outs.asnumpy().ravel(), [2.0, 4.0, 8.0])
    assert isinstance(x, mx.nd.NDArray) and x.asscalar() == 8.0


def test_while_loop_that_never_runs_returns_no_outputs():
    outs, xs = C.while_loop(lambda x: x > 5, lambda x: ([x], [x]), [mx.nd.array([1.0])],
                            max_iterations=4)
    assert outs == [] and xs[0].asscalar() == 1.0


def test_cond_picks_a_branch():
    x = mx.nd.array([3.0])
    assert C.cond(x > 2, lambda: x * 2, lambda: x - 2).asscalar() == 6.0
    assert C.cond(x > 5, lambda: x * 2, lambda: [x - 2, x])[0].asscalar() == 1.0


def _third_derivative(f, x0):
    x = mx.nd.array([x0], dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = f(x)
        (d1,) = mx.autograd.grad(y, [x], create_graph=True)
        (d2,) = mx.autograd.grad(d1, [x], create_graph=True)
    d2.backward()
    return d1.asscalar(), d2.asscalar(), x.grad.asscalar()


def test_gradients_through_loops_and_branches_to_the_third_order():
    def loop(x):
        outs, (s,) = C.foreach(lambda d, st: (d * st[0], [st[0] * x + d]),
                               mx.nd.array([[1.0], [2.0], [3.0]], dtype="float64"), [x])
        return outs.sum() + s.sum()

    def by_hand(x):          # the same three steps unrolled: s1 = x*x + 1, ...
        s, total = x, 0.0
        for d in (1.0, 2.0, 3.0):
            total = total + d * s
            s = s * x + d
        return total + s

    def while_(x):
        outs, (k, v) = C.while_loop(lambda k, v: k < 3, lambda k, v: ([v * v], [k + 1, v * x]),
                                    [mx.nd.array([0.0], dtype="float64"), x],
                                    max_iterations=5)
        return outs[0].sum()

    def while_by_hand(x):
        return x ** 2 + x ** 4 + x ** 6

    def branch(x):
        return C.cond(x > 0, lambda: x ** 3, lambda: x * 2)

    x0 = 0.7
    np.testing.assert_allclose(_third_derivative(loop, x0),
                               _third_derivative(lambda x: by_hand(x).sum(), x0), rtol=1e-12)
    np.testing.assert_allclose(_third_derivative(while_, x0),
                               _third_derivative(lambda x: while_by_hand(x).sum(), x0),
                               rtol=1e-12)
    np.testing.assert_allclose(_third_derivative(branch, x0), (3 * x0 ** 2, 6 * x0, 6.0))


@pytest.mark.parametrize("call,match", [
    (lambda: C.foreach(lambda x, s: (x, s), [mx.nd.ones((2, 1)), mx.nd.ones((3, 1))],
                       []), "same length"),
    (lambda: C.foreach(lambda x, s: (x, s), "data", []), "foreach: data"),
    (lambda: C.foreach(lambda x, s: (mx.nd.ones(int(x.asscalar()) + 1), s),
                       mx.nd.array([0.0, 1.0]), []), "step 1 gave shape"),
    (lambda: C.while_loop(lambda x: x < 3, lambda x: ([x], [x + 1]), [mx.nd.zeros(1)]),
     "max_iterations"),
    (lambda: C.while_loop(lambda x: x < 3, lambda x: ([x], [x, x]), [mx.nd.zeros(1)],
                          max_iterations=2), "2 loop variables for 1"),
    (lambda: C.cond(mx.nd.ones(2), lambda: 1, lambda: 2), "scalar"),
])
def test_bad_use_is_an_mxnet_error(call, match):
    with pytest.raises(MXNetError, match=match):
        call()


# ---- mx.sym.contrib.foreach: one _foreach node ---------------------------------------------
_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "make_foreach_fixture", os.path.join(_HERE, "fixtures", "make_foreach_fixture.py"))
FIX = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(FIX)
DATA = np.load(os.path.join(_HERE, "fixtures", "foreach_mxnet.npz"))


def _run(net, train=True):
    """Outputs and gradients (heads from the fixture) of ``net`` bound on the fixture's
    inputs, in float64."""
    values = {k: mx.nd.array(v, dtype="float64") for k, v in FIX.inputs().items()}
    grads = {k: mx.nd.zeros(v.shape, dtype="float64") for k, v in values.items()}
    ex = net.bind(mx.cpu(), args=values, args_grad=grads)
    outs = ex.forward(is_train=train)
    ex.backward([mx.nd.array(DATA[f"head{i}"], dtype="float64") for i in range(len(outs))])
    return [o.asnumpy() for o in outs], {k: g.asnumpy() for k, g in grads.items()}


def _check_against_mxnet(net):
    outs, grads = _run(net)
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o, DATA[f"out{i}"], rtol=1e-12, atol=1e-12)
    for k, g in grads.items():
        np.testing.assert_allclose(g, DATA[f"grad_{k}"], rtol=1e-12, atol=1e-12, err_msg=k)


def _values():
    return {k: mx.nd.array(v, dtype="float64") for k, v in FIX.inputs().items()}


def test_symbolic_foreach_matches_mxnet():
    net = FIX.build(mx.sym, mx.sym.contrib.foreach)
    assert sorted(net.list_arguments()) == ["b", "s0", "w", "x"]
    _check_against_mxnet(net)


def test_symbolic_cond_matches_mxnet():
    net = FIX.build(mx.sym, mx.sym.contrib.foreach, mx.sym.contrib.cond)
    np.testing.assert_allclose(net.eval(**_values())[3].asnumpy(), DATA["branch"], rtol=1e-12)


def test_an_mxnet_file_with_foreach_and_cond_loads_and_runs():
    net = mx.sym.load(os.path.join(_HERE, "fixtures", "foreach-symbol.json"))
    outs = net.eval(**_values())
    for i in range(3):
        np.testing.assert_allclose(outs[i].asnumpy(), DATA[f"out{i}"], rtol=1e-12)
    np.testing.assert_allclose(outs[3].asnumpy(), DATA["branch"], rtol=1e-12)
    # its loop's gradients: the first three outputs (MXNet 1.9.1 cannot run cond's backward)
    _check_against_mxnet(mx.sym.Group([net[0], net[1], net[2]]))


def test_json_round_trip_keeps_the_body_in_subgraphs():
    net = FIX.build(mx.sym, mx.sym.contrib.foreach)
    graph = json.loads(net.tojson())
    loop = [n for n in graph["nodes"] if n["op"] == "_foreach"][0]
    assert "subgraph" not in loop["attrs"] and len(loop["subgraphs"]) == 1
    # MXNet counts the body among num_args
    assert int(loop["attrs"]["num_args"]) == len(loop["inputs"]) + 1
    _check_against_mxnet(mx.sym.load_json(net.tojson()))


def test_symbolic_foreach_equals_the_imperative_loop():
    x, s = mx.nd.array(np.arange(6.0).reshape(3, 2)), mx.nd.ones(2)

    def step(ns):
        return lambda d, st: (d * st[0], [st[0] + d])
    out_nd, st_nd = C.foreach(step(mx.nd), x, [s])
    out_s, st_s = mx.sym.contrib.foreach(step(mx.sym), mx.sym.var("x"), [mx.sym.var("s")])
    got = mx.sym.Group([out_s, st_s[0]]).eval(x=x, s=s)
    np.testing.assert_array_equal(got[0].asnumpy(), out_nd.asnumpy())
    np.testing.assert_array_equal(got[1].asnumpy(), st_nd[0].asnumpy())


def test_gradient_of_the_loop_is_differentiable_again():
    """The gradient's own loop has a gradient: the second derivative through mx.sym.grad
    equals the unrolled loop's through autograd."""
    x, w = mx.sym.var("x", shape=(3, 2), dtype="float64"), mx.sym.var("w", shape=(2,),
                                                                     dtype="float64")
    out, _ = mx.sym.contrib.foreach(lambda d, s: (mx.sym.sin(d * w + s[0]), [d * w]),
                                    x, [mx.sym.zeros((2,), dtype="float64")])
    (gw,) = mx.sym.grad(mx.sym.sum(out * out), ["w"])
    (hw,) = mx.sym.grad(mx.sym.sum(gw * gw), ["w"])
    xv, wv = np.array([[0.3, -0.2], [0.5, 0.1], [-0.4, 0.7]]), np.array([0.9, -1.1])
    got = hw.eval(x=mx.nd.array(xv, dtype="float64"), w=mx.nd.array(wv, dtype="float64"))[0]
    X, W = mx.nd.array(xv, dtype="float64"), mx.nd.array(wv, dtype="float64")
    W.attach_grad()
    with mx.autograd.record():
        s, total = mx.nd.zeros(2, dtype="float64"), 0
        for t in range(3):
            o = mx.nd.sin(X[t] * W + s)
            s = X[t] * W
            total = total + mx.nd.sum(o * o)
        (g,) = mx.autograd.grad(total, [W], create_graph=True)
        mx.nd.sum(g * g).backward()
    np.testing.assert_allclose(got.asnumpy(), W.grad.asnumpy(), rtol=1e-12)


@pytest.mark.parametrize("change,match", [
    (lambda loop: loop.pop("subgraphs"), "subgraphs"),
    (lambda loop: loop.update(subgraphs=[{"nodes": [], "heads": []}] * 4), "1 to 3 graphs"),
    (lambda loop: loop.update(subgraphs=loop["subgraphs"] * 2), "num_args"),
    (lambda loop: loop["attrs"].update(num_args="x"), "num_args"),
    (lambda loop: loop["attrs"].update(in_data_locs="(5,)"), "place each"),
])
def test_a_bad_loop_node_is_an_mxnet_error(change, match):
    graph = json.loads(FIX.build(mx.sym, mx.sym.contrib.foreach).tojson())
    change([n for n in graph["nodes"] if n["op"] == "_foreach"][0])
    with pytest.raises(MXNetError, match=match):
        net = mx.sym.load_json(json.dumps(graph))
        net.infer_shape(**{k: v.shape for k, v in FIX.inputs().items()})


def test_subgraphs_nested_too_deep_are_refused():
    inner = {"nodes": [{"op": "null", "name": "a", "inputs": []}], "heads": [[0, 0, 0]]}
    for _ in range(20):
        inner = {"nodes": [{"op": "null", "name": "a", "inputs": []},
                           {"op": "_foreach", "name": "f", "inputs": [[0, 0, 0]],
                            "attrs": {"num_args": "2", "num_outputs": "1",
                                      "num_out_data": "1", "in_data_locs": "(0,)",
                                      "in_state_locs": "()", "remain_locs": "()"},
                            "subgraphs": [inner]}],
                 "heads": [[1, 0, 0]]}
    with pytest.raises(MXNetError, match="nest more than"):
        mx.sym.load_json(json.dumps(inner))


def test_the_body_must_use_every_sequence_and_state():
    with pytest.raises(MXNetError, match="does not read"):
        mx.sym.contrib.foreach(lambda d, s: (d * 2, [d]), mx.sym.var("x"), [mx.sym.var("s")])


def test_symbolic_cond_runs_one_branch_and_its_gradient_branches_again():
    a = mx.sym.var("a", shape=(2,), dtype="float64")
    b = mx.sym.var("b", shape=(2,), dtype="float64")
    out = mx.sym.contrib.cond(mx.sym.sum(a) > 0, lambda: a * b * b,
                              lambda: mx.sym.sin(b) * 2)
    ga, gb = mx.sym.grad(mx.sym.sum(out * out), ["a", "b"])
    (hb,) = mx.sym.grad(mx.sym.sum(gb * gb), ["b"])
    for av in ([1.0, 2.0], [-1.0, -2.0]):
        A, B = mx.nd.array(av, dtype="float64"), mx.nd.array([0.5, 0.7], dtype="float64")
        got = mx.sym.Group([out, ga, gb, hb]).eval(a=A, b=B)
        A.attach_grad()
        B.attach_grad()
        with mx.autograd.record():
            o = A * B * B if av[0] > 0 else mx.nd.sin(B) * 2
            g = mx.autograd.grad(mx.nd.sum(o * o), [A, B], create_graph=True)
            mx.nd.sum(g[1] * g[1]).backward()
        for x, y in zip(got, [o, g[0], g[1], B.grad]):
            np.testing.assert_allclose(x.asnumpy(), y.asnumpy(), rtol=1e-13)


def test_cond_json_counts_its_three_graphs():
    out = mx.sym.contrib.cond(mx.sym.var("p") > 0, lambda: mx.sym.var("x") + 1,
                              lambda: mx.sym.var("x") * 2)
    node = [n for n in json.loads(out.tojson())["nodes"] if n["op"] == "_cond"][0]
    assert len(node["subgraphs"]) == 3
    assert int(node["attrs"]["num_args"]) == len(node["inputs"]) + 3
    back = mx.sym.load_json(out.tojson())
    for p, want in ((1.0, 4.0), (-1.0, 6.0)):
        got = back.eval(p=mx.nd.array([p]), x=mx.nd.array([3.0]))[0]
        assert got.asscalar() == want


# ---- mx.sym.contrib.while_loop: one _while_loop node -----------------------------------------
def test_symbolic_while_loop_matches_the_imperative_one():
    cond = lambda i, s: i <= 5                         # noqa: E731
    step = lambda i, s: ([i + s], [i + 1, s + i])      # noqa: E731
    outs, (fi, fs) = mx.sym.contrib.while_loop(cond, step, [mx.sym.var("i"),
                                                            mx.sym.var("s")],
                                               max_iterations=10)
    got = mx.sym.Group([outs[0], fi, fs]).eval(i=mx.nd.array([0.0]), s=mx.nd.array([1.0]))
    want, (wi, ws) = C.while_loop(cond, step, [mx.nd.array([0.0]), mx.nd.array([1.0])],
                                  max_iterations=10)
    for g, w in zip(got, [want[0], wi, ws]):
        np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


def test_while_loop_gradients_to_the_second_order_against_the_unrolled_loop():
    x = mx.sym.var("x", shape=(2,), dtype="float64")
    w = mx.sym.var("w", shape=(2,), dtype="float64")
    k = mx.sym.var("k", shape=(1,), dtype="float64")
    outs, (_, fx) = mx.sym.contrib.while_loop(
        lambda k, x: k < 3,
        lambda k, x: ([mx.sym.sin(x * w)], [k + 1, mx.sym.tanh(x * w) + x]), [k, x],
        max_iterations=5)
    loss = mx.sym.sum(outs[0] * outs[0]) + mx.sym.sum(fx * fx)
    gx, gw = mx.sym.grad(loss, ["x", "w"])
    (hw,) = mx.sym.grad(mx.sym.sum(gw * gw) + mx.sym.sum(gx), ["w"])
    xv, wv = np.array([0.3, -0.4]), np.array([0.8, 1.3])
    got = mx.sym.Group([loss, gx, gw, hw]).eval(
        x=mx.nd.array(xv, dtype="float64"), w=mx.nd.array(wv, dtype="float64"),
        k=mx.nd.array([0.0], dtype="float64"))
    X, W = mx.nd.array(xv, dtype="float64"), mx.nd.array(wv, dtype="float64")
    X.attach_grad()
    W.attach_grad()
    with mx.autograd.record():
        v, total = X, 0
        for _ in range(3):                  # the three steps the counter allows
            total = total + mx.nd.sum(mx.nd.sin(v * W) ** 2)
            v = mx.nd.tanh(v * W) + v
        total = total + mx.nd.sum(v * v)
        g = mx.autograd.grad(total, [X, W], create_graph=True)
        (mx.nd.sum(g[1] * g[1]) + mx.nd.sum(g[0])).backward()
    for a, b in zip(got, [total, g[0], g[1], W.grad]):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-12, atol=1e-13)


def test_loop_variables_that_start_from_one_symbol_stay_two_variables():
    """(a, b) from the same z = 0.5: a counts up past 3, b triples; d(a + b)/dz = 1 + 3^3."""
    z = mx.sym.var("z", shape=(1,), dtype="float64")
    _, (fa, fb) = mx.sym.contrib.while_loop(
        lambda a, b: mx.sym.sum(a) < 3, lambda a, b: ([], [a + 1, b * 3]), [z, z],
        max_iterations=5)
    (gz,) = mx.sym.grad(mx.sym.sum(fa) + mx.sym.sum(fb), ["z"])
    got = mx.sym.Group([fa, fb, gz]).eval(z=mx.nd.array([0.5], dtype="float64"))
    assert [g.asscalar() for g in got] == [3.5, 0.5 * 27, 28.0]


def test_a_loop_node_whose_variables_share_an_input_is_refused():
    z = mx.sym.var("z")
    _, final = mx.sym.contrib.while_loop(
        lambda a, b: mx.sym.sum(a) < 3, lambda a, b: ([], [a + 1, b * 3]), [z, z],
        max_iterations=5)
    loop = final[0]._outputs[0][0]
    locs = list(loop.attrs["func_input_locs"])
    var_locs = loop.attrs["func_var_locs"]
    locs[var_locs[1]] = locs[var_locs[0]]          # both variables read one node input
    loop.attrs["func_input_locs"] = tuple(locs)
    with pytest.raises(MXNetError, match="_while_loop: loop variables share node inputs"):
        mx.sym.Group(final).eval(z=mx.nd.ones((1,)))


def test_a_loop_bounded_only_by_its_condition_runs_but_is_not_differentiated():
    from mxlite.ops.while_loop import UNBOUNDED
    x = mx.sym.var("x", shape=(1,))
    _, (fk, fx) = mx.sym.contrib.while_loop(
        lambda k, x: k < 4, lambda k, x: ([], [k + 1, x * 2]), [mx.sym.var("k"), x],
        max_iterations=UNBOUNDED)
    got = mx.sym.Group([fk, fx]).eval(k=mx.nd.array([0.0]), x=mx.nd.array([1.5]))
    assert got[0].asscalar() == 4 and got[1].asscalar() == 1.5 * 2 ** 4
    with pytest.raises(MXNetError, match="_while_loop: max_iterations=2147483647.*not "
                                         "differentiable"):
        mx.sym.grad(mx.sym.sum(fx), ["x"], shapes={"k": (1,)})


def test_while_loop_json_both_ways_with_mxnet():
    net = mx.sym.load(os.path.join(_HERE, "fixtures", "while_loop-symbol.json"))
    got = net.eval(i=mx.nd.array([0.0]), s=mx.nd.array([1.0]), w=mx.nd.array([2.0]))
    np.testing.assert_array_equal(got[0].asnumpy()[:6], DATA["while_out0"])
    assert not got[0].asnumpy()[6:].any()           # mxlite's rows after the last step
    back = mx.sym.load_json(net.tojson())
    node = [n for n in json.loads(net.tojson())["nodes"] if n["op"] == "_while_loop"][0]
    assert int(node["attrs"]["num_args"]) == len(node["inputs"]) + 2
    assert "keep_history" not in node["attrs"]
    again = back.eval(i=mx.nd.array([0.0]), s=mx.nd.array([1.0]), w=mx.nd.array([2.0]))
    for a, b in zip(got, again):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
