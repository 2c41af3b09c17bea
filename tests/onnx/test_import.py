"""ONNX import: every one-op graph the exporter writes imports back to the same values
(mx -> ONNX -> mx), whole models round-trip, ONNX graphs of the classic model-zoo operators
(built with onnx.helper) import and compute what onnxruntime computes, and bad files are
clear errors."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import imported_values, onnx, run_onnx
from test_export_ops import CASES
from test_export_models import MODELS, hybridized

helper, TensorProto = onnx.helper, onnx.TensorProto


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_every_exported_graph_imports_back_to_the_same_values(fn, inputs, rtol, tmp_path):
    from mxlite.onnx.export import _unread_variables
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    aux = set(out.list_auxiliary_states())
    unread = _unread_variables(out)
    params = {n: mx.nd.array(a) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs) if n not in aux and n not in unread}
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(out, params, in_shapes=[a.shape for a in feeds.values()],
                         in_types=[a.dtype for a in feeds.values()], onnx_file_path=path)
    got = imported_values(path, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape, (g.shape, e.shape)
        # the same ops come back (a composition, as _conv_weight_grad's Conv, within the
        # export test's tolerance)
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol,
                                   atol=rtol * 1e-1)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_whole_models_round_trip_through_gluon(name, tmp_path):
    net, x = hybridized(name, 3)
    shape = x.shape
    expected = net(x).asnumpy()
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(net, None, in_shapes=[shape], onnx_file_path=path)
    back = mx.contrib.onnx.import_to_gluon(path, mx.cpu())
    np.testing.assert_allclose(back(x).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    meta = mx.contrib.onnx.get_model_metadata(path)
    assert meta["input_tensor_data"] == [("data", shape)]


# ---- ONNX graphs written with onnx.helper ------------------------------------------------
rng = np.random.default_rng(5)


def _model(nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_empty_tensor_value_info(n) for n in outputs],
        [onnx.numpy_helper.from_array(v, n) for n, v in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    model.graph.ClearField("output")
    model.graph.output.extend(inferred.graph.output)
    return model


def _i64(*v):
    return np.asarray(v[0] if len(v) == 1 and isinstance(v[0], list) else v, np.int64)


def _f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


N = helper.make_node
ZOO = {
    "Conv": ([N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
             [("x", (1, 3, 7, 7))], [("w", _f(4, 3, 3, 3)), ("b", _f(4))]),
    "Gemm": ([N("Gemm", ["x", "w", "b"], ["y"], transB=1)], [("x", (2, 5))],
             [("w", _f(3, 5)), ("b", _f(3))]),
    "Gemm_scaled": ([N("Gemm", ["x", "w", "b"], ["y"], alpha=0.5, beta=2.0)], [("x", (2, 5))],
                    [("w", _f(5, 3)), ("b", _f(3))]),
    "MatMul": ([N("MatMul", ["x", "w"], ["y"])], [("x", (2, 3, 4))], [("w", _f(4, 5))]),
    "MatMul_batched": ([N("MatMul", ["x", "z"], ["y"])], [("x", (2, 2, 3, 4)), ("z", (2, 2, 4, 5))],
                       []),
    "BatchNormalization": ([N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                              epsilon=1e-3)], [("x", (2, 3, 4, 4))],
                           [("s", _f(3)), ("b", _f(3)), ("m", _f(3)),
                            ("v", np.abs(_f(3)) + 0.5)]),
    "Relu": ([N("Relu", ["x"], ["y"])], [("x", (2, 3))], []),
    "MaxPool": ([N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                   pads=[1, 1, 1, 1])], [("x", (1, 2, 8, 8))], []),
    "AveragePool": ([N("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                    [("x", (1, 2, 6, 6))], []),
    "GlobalAveragePool": ([N("GlobalAveragePool", ["x"], ["y"])], [("x", (2, 3, 4, 5))], []),
    "Flatten": ([N("Flatten", ["x"], ["y"], axis=1)], [("x", (2, 3, 4))], []),
    "Reshape": ([N("Reshape", ["x", "s"], ["y"])], [("x", (2, 3, 4))], [("s", _i64(0, -1))]),
    "Concat": ([N("Concat", ["x", "z"], ["y"], axis=1)], [("x", (2, 3)), ("z", (2, 2))], []),
    "Add_Mul_Sub_Div": ([N("Add", ["x", "z"], ["a"]), N("Mul", ["a", "x"], ["m"]),
                         N("Sub", ["m", "z"], ["s"]), N("Div", ["s", "c"], ["y"])],
                        [("x", (2, 3)), ("z", (1, 3))], [("c", np.float32([2.0]))]),
    "Softmax": ([N("Softmax", ["x"], ["y"], axis=1)], [("x", (2, 5))], []),
    "Dropout": ([N("Dropout", ["x"], ["y"])], [("x", (2, 5))], []),
    "Transpose": ([N("Transpose", ["x"], ["y"], perm=[2, 0, 1])], [("x", (2, 3, 4))], []),
    "Pad": ([N("Pad", ["x", "p", "v"], ["y"], mode="constant")], [("x", (1, 2, 3, 3))],
            [("p", _i64(0, 0, 1, 2, 0, 0, 2, 1)), ("v", np.float32(0.5))]),
    "Clip": ([N("Clip", ["x", "lo", "hi"], ["y"])], [("x", (3, 4))],
             [("lo", np.float32(-0.5)), ("hi", np.float32(0.5))]),
    "Sigmoid_Tanh": ([N("Sigmoid", ["x"], ["s"]), N("Tanh", ["s"], ["y"])], [("x", (3, 4))], []),
    "LRN": ([N("LRN", ["x"], ["y"], size=3, alpha=0.2, beta=0.75, bias=1.5)],
            [("x", (1, 5, 3, 3))], []),
    "Gather": ([N("Gather", ["w", "i"], ["y"], axis=0)], [("w", (5, 3))],
               [("i", _i64(4, 0, 2, -1))]),
    "Unsqueeze_Squeeze": ([N("Unsqueeze", ["x", "a"], ["u"]), N("Squeeze", ["u", "a"], ["y"])],
                          [("x", (2, 3))], [("a", _i64(1))]),
    "Shape_Reshape": ([N("Shape", ["x"], ["s"]), N("Reshape", ["z", "s"], ["y"])],
                      [("x", (2, 6)), ("z", (3, 4))], []),
    "Constant": ([N("Constant", [], ["c"], value=onnx.numpy_helper.from_array(_f(2, 3))),
                  N("Add", ["x", "c"], ["y"])], [("x", (2, 3))], []),
    "Erf_Pow_Sqrt": ([N("Erf", ["x"], ["e"]), N("Pow", ["e", "two"], ["p"]),
                      N("Sqrt", ["p"], ["y"])], [("x", (3, 4))], [("two", np.float32(2.0))]),
    "ReduceMean": ([N("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0)], [("x", (2, 3, 4))],
                   []),
    "LayerNormalization": ([N("LayerNormalization", ["x", "g", "b"], ["y"], epsilon=1e-5)],
                           [("x", (2, 3, 8))], [("g", _f(8)), ("b", _f(8))]),
    "Split": ([N("Split", ["x", "s"], ["a", "b"], axis=1)], [("x", (2, 5))],
              [("s", _i64(2, 3))]),
    "Slice": ([N("Slice", ["x", "st", "en", "ax", "sp"], ["y"])], [("x", (4, 6))],
              [("st", _i64(1, 5)), ("en", _i64(3, 0)), ("ax", _i64(0, 1)), ("sp", _i64(1, -2))]),
    "Cast_Where": ([N("Greater", ["x", "z"], ["g"]), N("Where", ["g", "x", "z"], ["y"])],
                   [("x", (2, 3)), ("z", (2, 3))], []),
    "Expand": ([N("Expand", ["x", "s"], ["y"])], [("x", (3, 1))], [("s", _i64(2, 3, 4))]),
    "TopK": ([N("TopK", ["x", "k"], ["y", "i"], axis=1)], [("x", (3, 6))], [("k", _i64(2))]),
    "TopK_smallest": ([N("TopK", ["x", "k"], ["y", "i"], axis=0, largest=0)], [("x", (5, 2))],
                      [("k", _i64(3))]),
    "CumSum": ([N("CumSum", ["x", "a"], ["y"])], [("x", (3, 4))], [("a", _i64(1))]),
    "CumSum_reverse": ([N("CumSum", ["x", "a"], ["y"], reverse=1)], [("x", (3, 4))],
                       [("a", np.int64(0))]),
    "Round": ([N("Round", ["x"], ["y"])], [("x", (3, 4))], []),
    "HardSigmoid": ([N("HardSigmoid", ["x"], ["y"], alpha=0.3, beta=0.4)], [("x", (3, 4))], []),
    "ReduceL1_L2": ([N("ReduceL1", ["x"], ["l1"], axes=[2], keepdims=0),
                     N("ReduceL2", ["l1"], ["y"], axes=[1], keepdims=1)], [("x", (2, 3, 4))],
                    []),
    "GatherND": ([N("GatherND", ["x", "i"], ["y"])], [("x", (3, 4, 2))],
                 [("i", _i64([[0, 1], [2, 3], [1, 0]]))]),
    "DepthToSpace": ([N("DepthToSpace", ["x"], ["y"], blocksize=2)], [("x", (1, 8, 2, 3))], []),
    "SpaceToDepth": ([N("SpaceToDepth", ["x"], ["y"], blocksize=2)], [("x", (1, 2, 4, 6))], []),
    "InstanceNormalization": ([N("InstanceNormalization", ["x", "g", "b"], ["y"],
                                 epsilon=1e-3)], [("x", (2, 3, 4, 5))],
                              [("g", _f(3)), ("b", _f(3))]),
    "Range_Reshape": ([N("Range", ["s", "l", "d"], ["r"]), N("Reshape", ["x", "r"], ["y"])],
                      [("x", (2, 3, 4))], [("s", np.int64(2)), ("l", np.int64(5)),
                                           ("d", np.int64(1))]),
    "Det": ([N("Det", ["x"], ["y"])], [("x", (2, 3, 3))], []),
    "ReduceSumSquare": ([N("ReduceSumSquare", ["x"], ["y"], axes=[1], keepdims=0)],
                        [("x", (2, 3, 4))], []),
    "Size_EyeLike_Trilu": ([N("Size", ["x"], ["s"]), N("EyeLike", ["z"], ["e"], k=1),
                            N("Cast", ["s"], ["sf"], to=TensorProto.FLOAT),
                            N("Mul", ["e", "sf"], ["m"]), N("Trilu", ["x", "kk"], ["t"]),
                            N("Add", ["t", "m"], ["y"])],
                           [("x", (3, 3)), ("z", (3, 3))], [("kk", _i64(0))]),
    "Trilu_lower": ([N("Trilu", ["x"], ["y"], upper=0)], [("x", (2, 3, 4))], []),
    "GridSample": ([N("GridSample", ["x", "g"], ["y"], align_corners=1)],
                   [("x", (1, 2, 4, 5)), ("g", (1, 3, 3, 2))], []),
    "RoiAlign": ([N("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=3,
                    sampling_ratio=2, spatial_scale=0.5)], [("x", (2, 3, 8, 8))],
                 [("r", np.array([[0, 0, 7, 7], [2, 2, 12, 10]], np.float32)),
                  ("b", _i64(1, 0))]),
    "RoiAlign_output_half_pixel": (
        [N("RoiAlign", ["x", "r", "b"], ["y"], output_height=2, output_width=2,
           sampling_ratio=1, coordinate_transformation_mode="output_half_pixel")],
        [("x", (1, 2, 6, 6))], [("r", np.array([[1, 1, 4, 5]], np.float32)), ("b", _i64(0))]),
    "ReverseSequence": ([N("ReverseSequence", ["x", "l"], ["y"])], [("x", (4, 3, 2))],
                        [("l", _i64(4, 1, 3))]),
    "Resize_nearest": ([N("Resize", ["x", "", "s"], ["y"], mode="nearest",
                          coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
                       [("x", (1, 2, 3, 4))], [("s", np.float32([1, 1, 2, 2]))]),
    "MaxRoiPool": ([N("MaxRoiPool", ["x", "r"], ["y"], pooled_shape=[2, 2],
                      spatial_scale=0.5)], [("x", (2, 3, 8, 8))],
                   [("r", np.array([[0, 0, 0, 7, 7], [1, 2, 2, 12, 10]], np.float32))]),
}


@pytest.mark.parametrize("name", sorted(ZOO))
def test_classic_onnx_operators_import_as_onnxruntime_runs_them(name, tmp_path):
    nodes, inputs, inits = ZOO[name]
    outputs = [o for n in nodes[-1:] for o in n.output]
    model = _model(nodes, inputs, outputs, inits)
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    feeds = {n: _f(*s) for n, s in inputs}
    expected = run_onnx(path, feeds)
    got = imported_values(path, feeds)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op,attrs,like", [
    ("RandomNormal", dict(mean=1.5, scale=0.5, shape=[400, 50]), False),
    ("RandomUniform", dict(low=-2.0, high=1.0, shape=[400, 50]), False),
    ("RandomNormalLike", dict(mean=-1.0, scale=2.0), True),
    ("RandomUniformLike", dict(low=0.5, high=0.75), True),
    ("RandomNormalLike", dict(mean=-1.0, scale=2.0, dtype=TensorProto.DOUBLE), True),
    ("RandomUniformLike", dict(low=0.5, high=0.75, dtype=TensorProto.DOUBLE), True)])
def test_random_draws_import_with_their_distribution(op, attrs, like, tmp_path):
    """mxlite draws from its own stream: the shape, dtype (a Like op's ``dtype``, else its
    input's) and moments match ONNX's definition, not onnxruntime's values."""
    inputs = [("x", (400, 50))] if like else []
    nodes = [N(op, ["x"] if like else [], ["y"], **attrs)]
    model = _model(nodes, inputs, ["y"])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    feeds = {"x": _f(400, 50)} if like else {}
    got, = imported_values(path, feeds)
    want = np.float64 if attrs.get("dtype") == TensorProto.DOUBLE else np.float32
    assert got.shape == (400, 50) and got.dtype == want
    assert run_onnx(path, feeds)[0].dtype == want
    if "mean" in attrs:
        assert abs(got.mean() - attrs["mean"]) < 0.05 and abs(got.std() - attrs["scale"]) < 0.05
    else:
        assert got.min() >= attrs["low"] and got.max() < attrs["high"]
        assert abs(got.mean() - (attrs["low"] + attrs["high"]) / 2) < 0.05


def test_round_takes_halves_to_even_as_onnx_does(tmp_path):
    model = _model([N("Round", ["x"], ["y"])], [("x", (10,))], ["y"])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49, 2.51, -3.0, 7.5], np.float32)
    got, = imported_values(path, {"x": x})
    want, = run_onnx(path, {"x": x})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.rint(x))


def test_multinomial_draws_from_the_softmax_of_each_row(tmp_path):
    model = _model([N("Multinomial", ["x"], ["y"], sample_size=20000, dtype=TensorProto.INT64)],
                   [("x", (2, 3))], ["y"])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    logits = np.log(np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]], np.float32))
    got, = imported_values(path, {"x": logits})
    assert got.shape == (2, 20000) and got.dtype == np.int64
    for row, p in zip(got, np.exp(logits)):
        freq = np.bincount(row, minlength=3) / row.size
        np.testing.assert_allclose(freq, p, atol=0.015)


def test_an_onnx_operator_mxlite_cannot_import_is_named(tmp_path):
    model = _model([N("Einsum", ["x", "z"], ["y"], equation="ij,jk->ik", name="ein0")],
                   [("x", (2, 3)), ("z", (3, 4))], ["y"])
    path = str(tmp_path / "m.onnx")
    onnx.save(model, path)
    with pytest.raises(mx.MXNetError, match=r"'ein0'.*Einsum \(opset 17\)"):
        mx.contrib.onnx.import_model(path)


def test_truncated_corrupt_and_missing_files_are_clear_errors(tmp_path):
    model = _model([N("Relu", ["x"], ["y"])], [("x", (2, 3))], ["y"],
                   [("w", _f(64, 64))])
    good = tmp_path / "good.onnx"
    onnx.save(model, str(good))
    data = good.read_bytes()
    for i, bad in enumerate((data[:len(data) // 2], b"\xff" * 100, b"")):
        path = tmp_path / f"bad{i}.onnx"
        path.write_bytes(bad)
        with pytest.raises(mx.MXNetError, match="import_model"):
            mx.contrib.onnx.import_model(str(path))
    with pytest.raises(mx.MXNetError, match="no such file"):
        mx.contrib.onnx.import_model(str(tmp_path / "missing.onnx"))
