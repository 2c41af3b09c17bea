"""ONNX Scan, Loop and If import as mxlite's _foreach, _while_loop and _cond: every graph
the exporter writes for them (bodies, gradients, nesting, CTCLoss's Scans in both
directions) imports back to the same values (mx -> ONNX -> mx), hand-built ONNX graphs
compute what onnxruntime computes, and what the import does not take is an MXNetError
naming the node."""
import numpy as np
import pytest

import mxlite as mx
from control_graphs import loops_in_branches
from onnx_harness import onnx, run_onnx

S = mx.sym
helper, TensorProto = onnx.helper, onnx.TensorProto
rng = np.random.default_rng(17)
TOL = {"float32": 2e-5, "float64": 1e-10}


def _ops(sym):
    """The operators of ``sym``, those inside loop bodies and branches too."""
    from mxlite.symbol.graph import topo_order
    found = set()
    for n in topo_order(sym._outputs):
        if n.op is None:
            continue
        found.add(n.op.name)
        inner = n.attrs.get("subgraph") if n.op.name in ("_foreach", "_while_loop",
                                                         "_cond") else None
        for g in (inner if isinstance(inner, tuple) else [] if inner is None else [inner]):
            found |= _ops(g)
    return found


def _imported(path, feeds):
    sym, args, aux = mx.contrib.onnx.import_model(path)
    arrays = {k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}
    arrays.update(args)
    names = set(sym.list_arguments())
    return sym, [o.asnumpy() for o in sym.eval(**{k: v for k, v in arrays.items()
                                                  if k in names})]


def roundtrip(build, values, tmp_path, dtype, want, rtol=None):
    """``build(vars)`` exported, imported back: the imported graph uses the operators
    ``want`` and gives mxlite's values of the original."""
    values = {k: np.asarray(v, dtype=dtype if np.asarray(v).dtype.kind == "f" else None)
              for k, v in values.items()}
    var = {k: S.var(k, shape=v.shape, dtype=v.dtype) for k, v in values.items()}
    sym = S.Group(list(build(var)))
    names = sym.list_arguments()
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(sym, {}, in_shapes=[values[n].shape for n in names],
                         in_types=[values[n].dtype for n in names], onnx_file_path=path)
    expected = sym.eval(**{k: mx.nd.array(v, dtype=v.dtype) for k, v in values.items()})
    imported, got = _imported(path, {n: values[n] for n in names})
    assert set(want) <= _ops(imported), _ops(imported)
    assert len(got) == len(expected)
    tol = rtol or TOL[dtype]
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


def normal(*shape):
    return rng.standard_normal(shape)


def rnn_cell(v, scale):
    def body(x, states):
        h = S.tanh(S.broadcast_add(S.dot(x, v["w"]) + S.dot(states[0], v["u"]), v["b"]))
        return [h * scale], [h]
    return body


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("steps,batch,scale", [(5, 2, 2.0), (1, 3, -0.5)])
def test_foreach_rnn_cell(tmp_path, dtype, steps, batch, scale):
    values = {"x": normal(steps, batch, 3), "h0": normal(batch, 4), "w": normal(3, 4),
              "u": normal(4, 4) * 0.5, "b": normal(4)}

    def build(v):
        outs, states = S.contrib.foreach(rnn_cell(v, scale), v["x"], [v["h0"]])
        return outs + states
    roundtrip(build, values, tmp_path, dtype, ["_foreach"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_foreach_gradient(tmp_path, dtype):
    values = {"x": normal(4, 2, 3), "h0": normal(2, 4), "w": normal(3, 4),
              "u": normal(4, 4) * 0.5, "b": normal(4)}

    def build(v):
        outs, states = S.contrib.foreach(rnn_cell(v, 1.5), v["x"], [v["h0"]])
        loss = S.sum(S.square(outs[0])) + S.sum(states[0] * v["h0"])
        return S.grad(loss, [v["w"], v["h0"], v["x"]])
    roundtrip(build, values, tmp_path, dtype, ["_foreach"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("limit,max_iterations", [(10.0, 8), (1e9, 5), (-1.0, 4), (6.0, 0)])
def test_while_loop(tmp_path, dtype, limit, max_iterations):
    values = {"i": [1.0], "s": [0.5, 1.0], "limit": [limit]}

    def build(v):
        outs, final = S.contrib.while_loop(
            lambda i, s: S.broadcast_lesser(S.sum(s, keepdims=True), v["limit"]),
            lambda i, s: ([s * 2, i], [i + 1, S.broadcast_add(s, i)]),
            [v["i"], v["s"]], max_iterations=max_iterations)
        return outs + final
    roundtrip(build, values, tmp_path, dtype, ["_while_loop"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_while_loop_gradient(tmp_path, dtype):
    values = {"i": [0.0], "s": [0.3, -0.7], "limit": [3.0], "w": [1.5, 0.5]}

    def build(v):
        outs, final = S.contrib.while_loop(
            lambda i, s: S.broadcast_lesser(i, v["limit"]),
            lambda i, s: ([S.sin(s) * v["w"]], [i + 1, s * S.cos(s) + v["w"]]),
            [v["i"], v["s"]], max_iterations=6)
        return S.grad(S.sum(outs[0]) + S.sum(S.square(final[1])), [v["s"], v["w"]])
    roundtrip(build, values, tmp_path, dtype, ["_while_loop", "_foreach"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sign,shape", [(1, (2, 3)), (-1, (2, 3)), (1, (4,)), (-1, (1, 5))])
def test_cond(tmp_path, dtype, sign, shape):
    values = {"a": sign * (np.abs(normal(*shape)) + 0.1), "b": normal(*shape)}

    def build(v):
        a, b = v["a"], v["b"]
        out = S.contrib.cond(S.sum(a) > 0, lambda: [a * b, S.exp(a)],
                             lambda: [a - b, S.square(b)])
        return out + S.grad(S.sum(out[0] * out[1]), [a, b])
    roundtrip(build, values, tmp_path, dtype, ["_cond"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("flag", [1.0, 0.0])
def test_nested(tmp_path, dtype, flag):
    values = {"x": normal(4, 2), "h": normal(2), "flag": [flag], "k": [0.0]}

    def build(v):
        x, h = v["x"], v["h"]
        branch = loops_in_branches(v)

        def inner(a, k):
            outs, states = S.contrib.foreach(
                lambda d, s: ([S.contrib.cond(S.sum(d) > 0, lambda: d + s[0],
                                              lambda: d * s[0])], [s[0] * 0.5 + d]), x, [a])
            return [S.sum(outs[0], axis=0)], [states[0], k + 1]
        rows, final = S.contrib.while_loop(lambda a, k: k < 3, inner, [h, v["k"]],
                                           max_iterations=4)
        return branch + rows + final
    roundtrip(build, values, tmp_path, dtype, ["_cond", "_while_loop", "_foreach"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("blank", ["first", "last"])
def test_ctc_scans_forward_and_reverse(tmp_path, dtype, blank):
    """CTCLoss's loss and gradient: Scans over the steps in both directions."""
    label = {"first": [[1, 2, 2], [3, 0, 0], [4, 1, 0]],
             "last": [[0, 1, 1], [2, -1, -1], [3, 0, -1]]}[blank]
    values = {"data": normal(7, 3, 5), "label": np.asarray(label, np.float32),
              "dl": np.asarray([7, 4, 6], np.float32)}

    def build(v):
        loss = S.CTCLoss(v["data"], v["label"], v["dl"], use_data_lengths=True,
                         blank_label=blank)
        return [loss] + S.grad(S.sum(loss), [v["data"]])
    roundtrip(build, values, tmp_path, dtype, ["_foreach", "flip"],
              rtol=1e-4 if dtype == "float32" else 1e-9)


# ---- hand-built ONNX graphs, against onnxruntime ------------------------------------------
def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _f(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _scan_model(directions):
    """A cumulative sum and a running product of two sequences, one state each."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]),
         helper.make_node("Mul", ["p", "y"], ["p2"]),
         helper.make_node("Sub", ["s2", "p2"], ["d"])],
        "body", [_f("s", [3]), _f("p", [3]), _f("x", [3]), _f("y", [3])],
        [_f("s2", [3]), _f("p2", [3]), _f("d", [3])])
    node = helper.make_node("Scan", ["s0", "p0", "xs", "ys"], ["sf", "pf", "ds"], body=body,
                            num_scan_inputs=2, scan_input_directions=directions[:2],
                            scan_output_directions=directions[2:])
    return _model([node], [_f("s0", [3]), _f("p0", [3]), _f("xs", [4, 3]), _f("ys", [4, 3])],
                  [_f("sf", [3]), _f("pf", [3]), _f("ds", [4, 3])])


@pytest.mark.parametrize("directions", [[0, 0, 0], [1, 0, 0], [0, 1, 1], [1, 1, 0]])
def test_hand_built_scan(tmp_path, directions):
    path = str(tmp_path / "scan.onnx")
    onnx.save(_scan_model(directions), path)
    feeds = {"s0": normal(3), "p0": normal(3), "xs": normal(4, 3), "ys": normal(4, 3) + 1}
    feeds = {k: v.astype(np.float32) for k, v in feeds.items()}
    expected = run_onnx(path, feeds)
    _, got = _imported(path, feeds)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def _scalar_scan_model():
    """ONNX's running sum over a vector: a scalar state, scalar slices, scalar outputs."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]),
         helper.make_node("Mul", ["s2", "x"], ["sx"])],
        "body", [_f("s", []), _f("x", [])], [_f("s2", []), _f("sx", [])])
    node = helper.make_node("Scan", ["s0", "xs"], ["sf", "sxs"], body=body,
                            num_scan_inputs=1)
    return _model([node], [_f("s0", []), _f("xs", [5])], [_f("sf", []), _f("sxs", [5])])


def test_scan_over_a_vector_with_scalar_state_and_outputs(tmp_path):
    path = str(tmp_path / "scan.onnx")
    onnx.save(_scalar_scan_model(), path)
    feeds = {"s0": np.array(0.5, np.float32), "xs": normal(5).astype(np.float32)}
    expected = run_onnx(path, feeds)
    _, got = _imported(path, feeds)
    for g, e in zip(got, expected):
        assert g.shape == e.shape, (g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def _if_model():
    branch = [helper.make_graph([helper.make_node(op, ["a", "b"], [f"o_{op}"])], op, [],
                                [_f(f"o_{op}", [2, 2])]) for op in ("Mul", "Sub")]
    node = helper.make_node("If", ["c"], ["out"], then_branch=branch[0], else_branch=branch[1])
    return _model([node], [helper.make_tensor_value_info("c", TensorProto.BOOL, [1]),
                           _f("a", [2, 2]), _f("b", [2, 2])], [_f("out", [2, 2])])


@pytest.mark.parametrize("c", [True, False])
def test_hand_built_if(tmp_path, c):
    path = str(tmp_path / "if.onnx")
    onnx.save(_if_model(), path)
    feeds = {"c": np.array([c]), "a": normal(2, 2).astype(np.float32),
             "b": normal(2, 2).astype(np.float32)}
    expected = run_onnx(path, feeds)
    _, got = _imported(path, feeds)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)


def _loop_model(trip_count=True, scanned=True):
    """x doubles while its sum stays under 100, at most 6 times (with ``trip_count``); each
    step's x - 1 is scanned (with ``scanned``)."""
    nodes = [helper.make_node("Mul", ["x_in", "two"], ["x_out"]),
             helper.make_node("ReduceSum", ["x_out"], ["total"], keepdims=0),
             helper.make_node("Less", ["total", "limit"], ["go"]),
             helper.make_node("Sub", ["x_in", "one"], ["row"])]
    body = helper.make_graph(
        nodes, "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                        helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                        _f("x_in", [2])],
        [helper.make_tensor_value_info("go", TensorProto.BOOL, []), _f("x_out", [2])]
        + ([_f("row", [2])] if scanned else []))
    inits = [onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             onnx.numpy_helper.from_array(np.array(100.0, np.float32), "limit"),
             onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             onnx.numpy_helper.from_array(np.array(6, np.int64), "m"),
             onnx.numpy_helper.from_array(np.array(True), "start")]
    node = helper.make_node("Loop", ["m" if trip_count else "", "start", "x0"],
                            ["xf"] + (["rows"] if scanned else []), body=body)
    return _model([node], [_f("x0", [2])],
                  [_f("xf", [2])] + ([_f("rows", [None, 2])] if scanned else []), inits)


@pytest.mark.parametrize("x0", [[1.0, 2.0], [0.01, 0.02], [60.0, 50.0]])
def test_hand_built_loop(tmp_path, x0):
    path = str(tmp_path / "loop.onnx")
    onnx.save(_loop_model(), path)
    feeds = {"x0": np.asarray(x0, np.float32)}
    expected = run_onnx(path, feeds)
    imported, got = _imported(path, feeds)
    assert "_while_loop" in _ops(imported)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)
    # the scanned rows: onnxruntime's, then mxlite's zero rows up to the trip count
    ran = expected[1].shape[0]
    assert got[1].shape == (6, 2) and 0 < ran <= 6
    np.testing.assert_allclose(got[1][:ran], expected[1], rtol=1e-6)
    assert not got[1][ran:].any()


@pytest.mark.parametrize("x0", [[1.0, 2.0], [0.01, 0.02], [60.0, 50.0]])
def test_hand_built_loop_without_a_trip_count_runs_until_its_condition(tmp_path, x0):
    path = str(tmp_path / "loop.onnx")
    onnx.save(_loop_model(trip_count=False, scanned=False), path)
    feeds = {"x0": np.asarray(x0, np.float32)}
    expected = run_onnx(path, feeds)
    _, got = _imported(path, feeds)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)


def test_a_loop_bounded_only_by_its_condition_is_not_differentiated(tmp_path):
    """Its gradient would replay 2^31 - 1 steps: an MXNetError naming the op, not a hang."""
    path = str(tmp_path / "loop.onnx")
    onnx.save(_loop_model(trip_count=False, scanned=False), path)
    sym, _, _ = mx.contrib.onnx.import_model(path)
    with pytest.raises(mx.MXNetError, match="_while_loop.*not differentiable"):
        S.grad(S.sum(sym), ["x0"], shapes={"x0": (2,)})


def _counting_model(trips):
    """A Loop whose body reads its iteration number i each rank-sensitive way: as Gather's
    scalar index (the axis dropped), through Unsqueeze and Concat, in arithmetic with a
    vector and cast; ``trips``: 'const' (4), 'input' (the int64 scalar input n) or 'data'
    (the largest of the int64 vector input k: known only at run time)."""
    i64 = TensorProto.INT64
    nodes = [helper.make_node("Gather", ["table", "i"], ["row"], axis=0),          # (3,)
             helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["row", "i_f"], ["scaled"]),
             helper.make_node("Add", ["acc_in", "scaled"], ["acc_out"]),
             helper.make_node("Unsqueeze", ["i", "zero_axis"], ["i_1"]),
             helper.make_node("Concat", ["i_1", "i_1"], ["pair"], axis=0),
             helper.make_node("Add", ["pair", "steps_in"], ["steps_out"]),
             helper.make_node("Equal", ["positions", "i"], ["here"]),
             helper.make_node("Cast", ["here"], ["mask"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["hits_in", "mask"], ["hits_out"]),
             helper.make_node("Identity", ["c"], ["c_out"])]
    body = helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", i64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []), _f("acc_in", [3]),
         helper.make_tensor_value_info("steps_in", i64, [2]), _f("hits_in", [8])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), _f("acc_out", [3]),
         helper.make_tensor_value_info("steps_out", i64, [2]), _f("hits_out", [8])])
    inits = [onnx.numpy_helper.from_array(np.arange(24, dtype=np.float32).reshape(8, 3) / 7,
                                          "table"),
             onnx.numpy_helper.from_array(np.array([0], np.int64), "zero_axis"),
             onnx.numpy_helper.from_array(np.arange(8, dtype=np.int64), "positions"),
             onnx.numpy_helper.from_array(np.array(True), "start"),
             onnx.numpy_helper.from_array(np.zeros(3, np.float32), "acc0"),
             onnx.numpy_helper.from_array(np.zeros(2, np.int64), "steps0"),
             onnx.numpy_helper.from_array(np.zeros(8, np.float32), "hits0")]
    inputs, nodes = [], []
    if trips == "const":
        inits.append(onnx.numpy_helper.from_array(np.array(4, np.int64), "m"))
    elif trips == "input":
        inputs.append(helper.make_tensor_value_info("m", i64, []))
    else:
        inputs.append(helper.make_tensor_value_info("k", i64, [3]))
        nodes.append(helper.make_node("ReduceMax", ["k"], ["m"], keepdims=0))
    nodes.append(helper.make_node("Loop", ["m", "start", "acc0", "steps0", "hits0"],
                                  ["acc", "steps", "hits"], body=body))
    return _model(nodes, inputs, [_f("acc", [3]), helper.make_tensor_value_info(
        "steps", i64, [2]), _f("hits", [8])], inits)


@pytest.mark.parametrize("trips,feeds", [
    ("const", {}),
    ("input", {"m": np.array(5, np.int64)}), ("input", {"m": np.array(0, np.int64)}),
    ("data", {"k": np.array([2, 7, 3], np.int64)}), ("data", {"k": np.array([1, 0, 1],
                                                                              np.int64)}),
])
def test_loop_body_reading_its_iteration_number(tmp_path, trips, feeds):
    path = str(tmp_path / "count.onnx")
    onnx.save(_counting_model(trips), path)
    expected = run_onnx(path, feeds)
    imported, got = _imported(path, feeds)
    assert "_while_loop" in _ops(imported)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-6)
    assert expected[2].sum() > 0 or trips != "const"       # the loop ran (not vacuous)


@pytest.mark.parametrize("index", [np.array(2, np.int64), np.array(-1, np.int64)])
def test_a_scalar_graph_input_as_gather_index_and_unsqueezed(tmp_path, index):
    """A scalar computed at run time outside any loop: the same ranks as onnxruntime."""
    nodes = [helper.make_node("Gather", ["table", "idx"], ["row"], axis=1),
             helper.make_node("Unsqueeze", ["idx", "axes"], ["idx2"]),
             helper.make_node("Cast", ["idx2"], ["idx2_f"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["row", "idx2_f"], ["out"])]
    model = _model(nodes, [helper.make_tensor_value_info("idx", TensorProto.INT64, [])],
                   [_f("out", [1, 4])],
                   [onnx.numpy_helper.from_array(normal(4, 5).astype(np.float32), "table"),
                    onnx.numpy_helper.from_array(np.array([0, 1], np.int64), "axes")])
    path = str(tmp_path / "scalar.onnx")
    onnx.save(model, path)
    expected = run_onnx(path, {"idx": index})
    _, got = _imported(path, {"idx": index})
    assert got[0].shape == expected[0].shape == (1, 4)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)


def test_what_the_import_does_not_take_is_an_error_naming_the_node(tmp_path):
    """Per-iteration outputs of a Loop without a constant trip count (mxlite gives
    max_iterations rows of them)."""
    path = str(tmp_path / "bad.onnx")
    m = _loop_model(trip_count=False)
    m.graph.node[0].name = "the_loop"
    onnx.save(m, path)
    with pytest.raises(mx.MXNetError, match="the_loop.*trip count known only at run time"):
        mx.contrib.onnx.import_model(path)


def test_scan_along_another_axis_is_refused(tmp_path):
    m = _scan_model([0, 0, 0])
    m.graph.node[0].name = "the_scan"
    m.graph.node[0].attribute.append(helper.make_attribute("scan_input_axes", [1, 0]))
    path = str(tmp_path / "bad.onnx")
    onnx.save(m, path)
    with pytest.raises(mx.MXNetError, match="the_scan.*scan_input_axes"):
        mx.contrib.onnx.import_model(path)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
def test_ctc_recursions(tmp_path, dtype, reverse):
    """_ctc_alpha and _ctc_wrec (their Scans carry one state, and three backwards)."""
    n, t, s = 2, 5, 7
    values = {k: rng.uniform(0, 1, (n, t, s)) for k in ("w0", "w1", "w2", "g")}
    values.update(e=-rng.uniform(0, 2, (n, t, s)),
                  skip=(rng.random((n, s)) < 0.5).astype(np.float32),
                  first=np.asarray([[1, 1] + [0] * (s - 2)] * n, np.float32),
                  tn=np.asarray([t, 3], np.float32))

    def build(v):
        return [S._internal._ctc_wrec(v["w0"], v["w1"], v["w2"], v["g"], reverse=reverse),
                S._internal._ctc_alpha(v["e"], v["skip"], v["first"], v["tn"])]
    roundtrip(build, values, tmp_path, dtype, ["_foreach"])
