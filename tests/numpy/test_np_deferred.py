"""np calls on Symbols that do not know their inputs (bare variables, symbol files): the
deferred node (mxlite.symbol._deferred) makes the call once shapes and dtypes are known, so
a graph computes what the same call computes on arrays -- values, dtype and shape -- or
says why it cannot."""
import json

import numpy as onp
import pytest

import mxlite as mx
from mxlite.base import MXNetError

DATA = {"i": onp.array([[1, 2, 7], [3, 6, 4]], dtype="int32"),
        "f": onp.array([[1.5, -2, 7], [3, 0.25, 4]], dtype="float32"),
        "b": onp.array([[True, False, True], [False, True, True]]),
        "v": onp.array([2.0, -1.0, 0.5], dtype="float32")}

# (call, operand kinds): functions whose NumPy result depends on the operands' rank or dtype
CASES = [(name, kinds) for name in ("sqrt", "negative", "absolute", "reciprocal", "square",
                                    "floor", "sign", "exp", "mean", "sum", "prod", "std",
                                    "var", "max", "argmax", "cumsum", "trace", "ravel",
                                    "transpose", "diff", "nancumsum", "nansum", "around")
         for kinds in ("i", "f", "b")] + \
        [(name, kinds) for name in ("add", "subtract", "multiply", "true_divide",
                                     "floor_divide", "mod", "power", "maximum", "fmax",
                                     "hypot", "arctan2", "copysign", "outer", "divmod")
         for kinds in ("ii", "fi", "if", "ff")] + \
        [(name, kinds) for name in ("dot", "inner", "vdot", "matmul", "kron")
         for kinds in ("fv", "vf", "vv", "iv")] + \
        [(lambda np, a: np.moveaxis(a, 0, -1), "f"), (lambda np, a: np.roll(a, 2), "i"),
         (lambda np, a: np.roll(a, -1, axis=1), "f"), (lambda np, a, b: np.tensordot(a, b, 1),
                                                      "fv"),
         (lambda np, a, b: np.tensordot(a, b, axes=([0], [0])), "ff"),
         (lambda np, a: np.mean(a, axis=1), "i"), (lambda np, a: a / 2, "i"),
         (lambda np, a: a + 0.5, "i"), (lambda np, a: np.linalg.norm(a), "f"),
         (lambda np, a, b: np.concatenate([a, b]), "if"), (lambda np, a: np.stack([a, a]), "b")]


def _call(np, fn, *args):
    f = getattr(np, fn) if isinstance(fn, str) else (lambda *a: fn(np, *a))
    out = f(*args)
    return out[0] if isinstance(out, (tuple, list)) else out


@pytest.mark.parametrize("fn, kinds", CASES,
                         ids=[f"{f if isinstance(f, str) else i}-{k}"
                              for i, (f, k) in enumerate(CASES)])
def test_a_bare_symbol_graph_computes_what_arrays_compute(fn, kinds):
    arrays = [DATA[k] for k in kinds]
    syms = [mx.sym.var(f"x{i}").as_np_ndarray() for i in range(len(arrays))]
    bound = {f"x{i}": mx.nd.array(a, dtype=a.dtype) for i, a in enumerate(arrays)}
    run = lambda: _call(mx.sym.np, fn, *syms).as_nd_ndarray().bind(
        mx.cpu(), bound).forward()[0].asnumpy()
    try:
        ref = _call(mx.np, fn, *[mx.np.array(a, dtype=a.dtype) for a in arrays]).asnumpy()
    except MXNetError as e:     # refused on arrays: refused on the graph too
        with pytest.raises(MXNetError, match=str(e).split(":")[0]):
            run()
        return
    got = run()
    assert (got.dtype, got.shape) == (ref.dtype, ref.shape)
    onp.testing.assert_allclose(got.astype("float64"), ref.astype("float64"), rtol=1e-6)


def _dot_graph():
    a, b = mx.sym.var("a").as_np_ndarray(), mx.sym.var("b").as_np_ndarray()
    return mx.sym.np.dot(a, b) * 2


def test_a_call_is_one_node_until_its_inputs_are_known():
    graph = _dot_graph()
    ops = [n["op"] for n in json.loads(graph.tojson())["nodes"]]
    assert ops == ["null", "null", "_np_deferred", "_np_deferred"]      # dot, then * 2
    assert graph.infer_shape(a=(2, 3), b=(3,))[1] == [(2,)]
    assert graph.infer_shape(a=(4, 2, 3), b=(5, 3, 6))[1] == [(4, 2, 5, 6)]
    assert graph.infer_shape_partial()[1] == [()]


def test_a_deferred_graph_round_trips_through_json_and_binds_per_shape():
    graph = mx.sym.load_json(_dot_graph().tojson())
    for sa, sb in (((2, 3), (3,)), ((3,), (3,)), ((2, 3), (3, 4))):
        a = onp.arange(onp.prod(sa), dtype="float32").reshape(sa)
        b = onp.linspace(-1, 1, onp.prod(sb), dtype="float32").reshape(sb)
        out = graph.as_nd_ndarray().eval(mx.cpu(), a=mx.nd.array(a), b=mx.nd.array(b))[0]
        onp.testing.assert_allclose(out.asnumpy(), 2 * onp.dot(a, b), rtol=1e-6)
        assert out.shape == onp.dot(a, b).shape


def test_gradients_through_a_deferred_call_match_finite_differences():
    rng = onp.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    graph = mx.sym.np.sum(mx.sym.np.tanh(_dot_graph())).as_nd_ndarray()
    ga = mx.nd.zeros((3, 4), dtype="float64")
    ex = graph.bind(mx.cpu(), {"a": mx.nd.array(a, dtype="float64"),
                               "b": mx.nd.array(b, dtype="float64")}, args_grad={"a": ga})
    ex.forward(is_train=True)
    ex.backward([mx.nd.ones(())])
    f = lambda x: onp.tanh(2 * onp.dot(x, b)).sum()
    eps, fd = 1e-6, onp.zeros_like(a)
    for idx in onp.ndindex(a.shape):
        d = onp.zeros_like(a)
        d[idx] = eps
        fd[idx] = (f(a + d) - f(a - d)) / (2 * eps)
    onp.testing.assert_allclose(ga.asnumpy(), fd, rtol=1e-6, atol=1e-8)
    # and symbolically (mx.sym.grad), again differentiable
    (g,) = mx.sym.grad(graph, ["a"], shapes={"a": (3, 4), "b": (4,)},
                       dtypes={"a": "float64", "b": "float64"})
    got = g.eval(mx.cpu(), a=mx.nd.array(a, dtype="float64"),
                 b=mx.nd.array(b, dtype="float64"))[0]
    onp.testing.assert_allclose(got.asnumpy(), fd, rtol=1e-6, atol=1e-8)


def test_an_np_block_over_a_deferred_graph_retraces_per_signature():
    block = mx.gluon.SymbolBlock(_dot_graph().as_nd_ndarray(), [mx.sym.var("a"),
                                                               mx.sym.var("b")])
    for a, b in ((onp.ones((2, 3)), onp.ones(3)), (onp.ones(3, dtype="int32"),
                                                   onp.ones(3, dtype="int32"))):
        out = block(mx.nd.array(a, dtype=a.dtype), mx.nd.array(b, dtype=b.dtype))
        ref = 2 * onp.dot(a, b)
        assert out.shape == ref.shape and out.dtype == ref.dtype
        onp.testing.assert_allclose(out.asnumpy(), ref)


def test_an_error_that_does_not_depend_on_the_inputs_is_raised_at_once():
    x = mx.sym.var("x").as_np_ndarray()
    with pytest.raises(MXNetError, match="reshape"):
        mx.sym.np.reshape(x, (2, -1, -1))
    with pytest.raises(MXNetError, match="sequence"):
        mx.sym.np.concatenate(x)
    with pytest.raises(MXNetError, match="out="):
        mx.sym.np.negative(x, out=x).as_nd_ndarray().eval(x=mx.nd.ones(2))


def _hostile(function="numpy.dot", arguments=None, num_outputs="1"):
    args = arguments if arguments is not None else json.dumps(
        {"args": [{"$sym": [0], "np": True}, {"$sym": [0], "np": True}], "kwargs": {}})
    return json.dumps({"nodes": [{"op": "null", "name": "x", "inputs": []},
                                 {"op": "_np_deferred", "name": "d", "inputs": [[0, 0, 0]],
                                  "attrs": {"function": function, "arguments": args,
                                            "num_outputs": num_outputs, "num_args": "1"}}],
                       "arg_nodes": [0], "heads": [[1, 0, 0]]})


@pytest.mark.parametrize("function", ["os.system", "numpy.__class__", "numpy._front.call",
                                      "numpy.random.__builtins__", "ndarray.__init_subclass__",
                                      "numpy", "builtins.eval"])
def test_a_file_names_only_public_np_functions(function):
    with pytest.raises(MXNetError, match="not a function of mx.np"):
        mx.sym.load_json(_hostile(function))


@pytest.mark.parametrize("arguments", ["not json", '{"args": [{"$sym": [7], "np": true}], '
                                       '"kwargs": {}}', '{"args": 3, "kwargs": {}}',
                                       '{"args": [{"$array": [1, 2], "dtype": "float32", '
                                       '"shape": [5]}], "kwargs": {}}'])
def test_unreadable_arguments_are_a_clear_error_when_bound(arguments):
    sym = mx.sym.load_json(_hostile(arguments=arguments))
    with pytest.raises(MXNetError, match="_np_deferred"):
        sym.eval(x=mx.nd.ones(3))


def test_an_absurd_output_count_is_refused():
    with pytest.raises(MXNetError, match="num_outputs"):
        mx.sym.load_json(_hostile(num_outputs="1000000000"))


def test_onnx_export_makes_the_deferred_calls_with_the_given_shapes(tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    graph = (mx.sym.np.tanh(_dot_graph()) / 3).as_nd_ndarray()
    path = str(tmp_path / "deferred.onnx")
    mx.onnx.export_model(graph, {}, [(2, 3), (3,)], [onp.float32, onp.float32], path)
    session = onnxruntime.InferenceSession(path)
    a = onp.arange(6, dtype="float32").reshape(2, 3) / 5
    b = onp.array([1, -1, 0.5], dtype="float32")
    (got,) = session.run(None, {session.get_inputs()[0].name: a,
                                session.get_inputs()[1].name: b})
    onp.testing.assert_allclose(got, onp.tanh(2 * a @ b) / 3, rtol=1e-5)


def test_declared_variables_build_operators_at_once():
    x = mx.sym.var("x", shape=(2, 3), dtype="int32").as_np_ndarray()
    y = mx.sym.np.mean(x, axis=1) / 2
    ops = {n["op"] for n in json.loads(y.tojson())["nodes"]}
    assert "_np_deferred" not in ops
    got = y.as_nd_ndarray().eval(x=mx.nd.array([[1, 2, 4], [3, 3, 4]], dtype="int32"))[0]
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), [7 / 6, 5 / 3], rtol=1e-6)


def test_an_argument_that_cannot_be_kept_is_a_clear_error():
    x = mx.sym.var("x").as_np_ndarray()
    with pytest.raises(MXNetError, match="argument of type NDArray cannot be kept"):
        mx.sym.np.add(x, mx.nd.ones(3))


def test_an_in_place_operator_on_a_symbol_rebinds_it():
    x = mx.sym.var("x").as_np_ndarray()
    y = x
    y += 2
    assert y is not x and x.list_arguments() == ["x"]
    got = y.as_nd_ndarray().eval(x=mx.nd.array([1, 2], dtype="int32"))[0]
    assert got.dtype == onp.int32 and got.asnumpy().tolist() == [3, 4]
