"""ONNX import round trips: every ONNX operator a translation emits has an importer; the
scatter/gather, DeformConv, Pad, MatMul and Mod importers compute what onnxruntime computes
on graphs written with onnx.helper and on graphs mxlite exports; every operator the
gradient table's specs export, and every case of the one-op export tests (in float32,
float64, int32 and int64 where mxlite computes them), comes back from mx -> ONNX -> mx
with mxlite's own values; random samplers come back with the same distribution."""
import importlib

import numpy as np
import pytest

import mxlite as mx
from onnx_harness import imported_values, onnx, run_onnx
import test_export_gradspecs as gradspecs
from mxlite.onnx import translations  # noqa: F401  (fills TRANSLATIONS)
from mxlite.onnx import importer  # noqa: F401  (fills IMPORTS)
from mxlite.onnx.export import _unread_variables
from mxlite.onnx.import_table import IMPORTS
from mxlite.onnx.table import TRANSLATIONS

helper, TensorProto = onnx.helper, onnx.TensorProto
rng = np.random.default_rng(41)

#: ONNX operators some translation emits whose importer is not written yet (empty: every
#: one imports). A name added here leaves it when its importer lands
#: (test_pending_importers_are_still_missing fails until it does).
PENDING = set()


def _emitted():
    return {op for t in TRANSLATIONS.values() for op in t.onnx_ops}


def test_every_onnx_operator_a_translation_emits_has_an_importer():
    missing = sorted(_emitted() - set(IMPORTS) - PENDING)
    assert not missing, f"ONNX operators exported but not imported: {missing}"


def test_pending_importers_are_still_missing():
    assert PENDING <= _emitted()
    landed = sorted(PENDING & set(IMPORTS))
    assert not landed, f"{landed} import now: remove them from PENDING"


# ---- helpers --------------------------------------------------------------------------------
def _tensor_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _model(nodes, feeds, inits=(), opset=18, shapes=None):
    """A model of ``nodes`` over the graph inputs ``feeds`` ({name: array}) and the
    initializers ``inits`` ({name: array}); the last node's outputs are the graph's, their
    shapes inferred by ONNX (or given in ``shapes`` where ONNX infers none)."""
    inputs = [helper.make_tensor_value_info(n, _tensor_type(a.dtype), a.shape)
              for n, a in feeds.items()]
    outputs = [helper.make_empty_tensor_value_info(o) for o in nodes[-1].output]
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              [onnx.numpy_helper.from_array(np.asarray(v), n)
                               for n, v in dict(inits).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    model.graph.ClearField("output")
    for out in inferred.graph.output:
        t = out.type.tensor_type
        if not t.HasField("shape") and shapes and out.name in shapes:
            out = helper.make_tensor_value_info(out.name, t.elem_type, shapes[out.name])
        model.graph.output.append(out)
    return model


def _tol(dtype):
    return {"float16": 2e-3, "float32": 2e-5}.get(np.dtype(dtype).name, 1e-11)


def roundtrip(nodes, feeds, tmp_path, inits=(), opset=18, shapes=None):
    """Run the model in onnxruntime and its import in mxlite: the same shapes, dtypes and
    values (within the dtype's tolerance; integers exactly)."""
    path = str(tmp_path / "m.onnx")
    onnx.save(_model(nodes, feeds, inits, opset, shapes), path)
    expected = run_onnx(path, feeds)
    got = imported_values(path, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape, (g.shape, e.shape)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=_tol(e.dtype), atol=_tol(e.dtype))
    return got


def _data(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


def _refused(nodes, feeds, tmp_path, match, inits=(), opset=18):
    path = str(tmp_path / "m.onnx")
    onnx.save(_model(nodes, feeds, inits, opset), path)
    with pytest.raises(mx.MXNetError, match=match):
        mx.contrib.onnx.import_model(path)


N = helper.make_node
DTYPES = ["float32", "float64", "int32", "int64"]


# ---- GatherElements -------------------------------------------------------------------------
GATHER_ELEMENTS = [  # data shape, axis, indices shape
    ((3, 4), 0, (2, 4)),
    ((3, 4), 1, (3, 6)),
    ((2, 3, 4), -1, (2, 3, 2)),
    ((2, 3, 4), 1, (1, 2, 4)),          # smaller than data on the other axes too
    ((5,), 0, (7,)),
]


def _element_indices(data_shape, axis, shape, dtype=np.int64):
    n = data_shape[axis]
    return rng.integers(-n, n, shape).astype(dtype)       # negative ones count from the end


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,ishape", GATHER_ELEMENTS)
def test_gather_elements(shape, axis, ishape, dtype, tmp_path):
    feeds = {"x": _data(shape, dtype), "i": _element_indices(shape, axis, ishape)}
    roundtrip([N("GatherElements", ["x", "i"], ["y"], axis=axis)], feeds, tmp_path)


@pytest.mark.parametrize("shape,axis,ishape", GATHER_ELEMENTS[:3])
def test_gather_elements_of_constant_indices(shape, axis, ishape, tmp_path):
    idx = _element_indices(shape, axis, ishape, np.int32)
    roundtrip([N("GatherElements", ["x", "i"], ["y"], axis=axis)],
              {"x": _data(shape, "float32")}, tmp_path, inits={"i": idx})


def test_gather_elements_of_constants_folds(tmp_path):
    x, idx = _data((3, 4), "float64"), _element_indices((3, 4), 1, (3, 2))
    nodes = [N("GatherElements", ["x", "i"], ["g"], axis=1), N("Add", ["g", "z"], ["y"])]
    roundtrip(nodes, {"z": _data((3, 2), "float64")}, tmp_path, inits={"x": x, "i": idx})


# ---- ScatterElements ------------------------------------------------------------------------
def _unique_element_indices(data_shape, axis, shape):
    """Indices along ``axis`` without repeats in any line (reduction 'none' leaves the
    order of repeated writes unspecified), some negative."""
    n, k = data_shape[axis], shape[axis]
    lines = np.moveaxis(np.zeros(shape, np.int64), axis, -1)
    for pos in np.ndindex(lines.shape[:-1]):
        picked = rng.permutation(n)[:k]
        lines[pos] = np.where(rng.random(k) < 0.5, picked - n, picked)
    return np.ascontiguousarray(np.moveaxis(lines, -1, axis))


SCATTER_ELEMENTS = [  # data shape, axis, indices shape
    ((4, 5), 0, (3, 5)),
    ((4, 5), 1, (2, 3)),
    ((2, 3, 4), -1, (2, 3, 4)),
    ((2, 6, 3), 1, (2, 2, 1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,ishape", SCATTER_ELEMENTS)
@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_elements(shape, axis, ishape, reduction, dtype, tmp_path):
    if reduction == "none":
        idx = _unique_element_indices(shape, axis, ishape)
    else:                               # repeats accumulate
        idx = _element_indices(shape, axis, ishape)
    feeds = {"x": _data(shape, dtype), "i": idx, "u": _data(ishape, dtype)}
    roundtrip([N("ScatterElements", ["x", "i", "u"], ["y"], axis=axis, reduction=reduction)],
              feeds, tmp_path)


@pytest.mark.parametrize("op,opset", [("ScatterElements", 13), ("ScatterElements", 18),
                                       ("Scatter", 10)])
def test_scatter_elements_without_reduction_attribute(op, opset, tmp_path):
    shape = (3, 4)
    feeds = {"x": _data(shape, "float32"), "u": _data((3, 2), "float32")}
    roundtrip([N(op, ["x", "i", "u"], ["y"], axis=1)], feeds, tmp_path,
              inits={"i": _unique_element_indices(shape, 1, (3, 2))}, opset=opset)


@pytest.mark.parametrize("reduction", ["mul", "max", "min"])
def test_scatter_elements_reductions_of_computed_values_are_refused(reduction, tmp_path):
    feeds = {"x": _data((3, 4), "float32"), "u": _data((3, 2), "float32")}
    _refused([N("ScatterElements", ["x", "i", "u"], ["y"], axis=1, reduction=reduction,
                name="sc")], feeds, tmp_path,
             rf"'sc' \(ScatterElements, opset 18\): reduction='{reduction}'",
             inits={"i": _element_indices((3, 4), 1, (3, 2))})


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_elements_of_constants_folds(reduction, tmp_path):
    x, u = _data((3, 4), "float64"), _data((3, 5), "float64")
    idx = _unique_element_indices((3, 4), 1, (3, 4))
    if reduction != "none":
        idx = np.concatenate([idx, idx[:, :1]], axis=1)      # a repeat combines
    else:
        u = u[:, :4]
    nodes = [N("ScatterElements", ["x", "i", "u"], ["s"], axis=1, reduction=reduction),
             N("Add", ["s", "z"], ["y"])]
    roundtrip(nodes, {"z": _data((3, 4), "float64")}, tmp_path,
              inits={"x": x, "i": idx, "u": u})


# ---- ScatterND and GatherND -----------------------------------------------------------------
def _tuples(data_shape, count, m, unique):
    """``count`` index tuples (count, m) into the first ``m`` axes, some negative."""
    dims = data_shape[:m]
    flat = rng.permutation(int(np.prod(dims)))[:count] if unique else \
        rng.integers(0, int(np.prod(dims)), count)
    t = np.stack(np.unravel_index(flat, dims), axis=-1).astype(np.int64)
    return np.where(rng.random(t.shape) < 0.4, t - np.asarray(dims), t)


SCATTER_ND = [  # data shape, index shape (Y..., M)
    ((4, 5, 6), (2, 3, 2)),
    ((4, 5, 6), (3, 3)),
    ((4, 5), (4, 1)),
    ((4, 5, 6), (2,)),                  # one tuple: a slice
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,ishape", SCATTER_ND)
@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd(shape, ishape, reduction, dtype, tmp_path):
    m, ys = ishape[-1], ishape[:-1]
    count = int(np.prod(ys))
    idx = _tuples(shape, count, m, reduction == "none").reshape(ishape)
    feeds = {"x": _data(shape, dtype), "i": idx, "u": _data(ys + shape[m:], dtype)}
    roundtrip([N("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)], feeds, tmp_path)


def test_scatter_nd_of_constant_indices(tmp_path):
    shape = (4, 5, 6)
    feeds = {"x": _data(shape, "float64"), "u": _data((3, 6), "float64")}
    roundtrip([N("ScatterND", ["x", "i", "u"], ["y"])], feeds, tmp_path, opset=13,
              inits={"i": _tuples(shape, 3, 2, True)})


def test_scatter_nd_mul_of_computed_values_is_refused(tmp_path):
    feeds = {"x": _data((4, 5), "float32"), "u": _data((2, 5), "float32")}
    _refused([N("ScatterND", ["x", "i", "u"], ["y"], reduction="mul", name="snd")], feeds,
             tmp_path, r"'snd' \(ScatterND, opset 18\): reduction='mul'",
             inits={"i": _tuples((4, 5), 2, 1, True)})


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("shape,ishape,batch_dims", [
    ((4, 5, 6), (2, 3, 2), 0),
    ((4, 5, 6), (3,), 0),               # one tuple: a slice
    ((4, 5), (2,), 0),                  # one full tuple: a scalar
    ((3, 5, 6), (3, 2, 1), 1),
    ((2, 3, 5, 4), (2, 3, 4, 2), 2),
])
def test_gather_nd(shape, ishape, batch_dims, dtype, tmp_path):
    m = ishape[-1]
    count = int(np.prod(ishape[:-1]))
    idx = _tuples(shape[batch_dims:], count, m, False).reshape(ishape)
    feeds = {"x": _data(shape, dtype), "i": idx}
    out_shape = ishape[:-1] + shape[batch_dims + m:]
    roundtrip([N("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)], feeds, tmp_path,
              shapes={"y": out_shape})


# ---- DeformConv -----------------------------------------------------------------------------
DEFORM = [  # data shape, filters, kernel, attributes, mask, bias
    ((1, 2, 5, 5), 3, (3, 3), {}, False, True),
    ((2, 4, 6, 5), 4, (2, 3), dict(strides=[2, 1], pads=[1, 1, 1, 1], group=2,
                                   offset_group=2), True, True),
    ((1, 2, 7, 7), 2, (3, 3), dict(dilations=[2, 2], pads=[1, 1, 1, 1]), True, False),
    ((1, 3, 4, 6), 2, (1, 2), dict(offset_group=3), False, False),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,filters,kernel,attrs,mask,bias", DEFORM)
def test_deform_conv(shape, filters, kernel, attrs, mask, bias, dtype, tmp_path):
    n, c, h, w = shape
    s = attrs.get("strides", [1, 1])
    d = attrs.get("dilations", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    og, g = attrs.get("offset_group", 1), attrs.get("group", 1)
    ho = (h + p[0] + p[2] - d[0] * (kernel[0] - 1) - 1) // s[0] + 1
    wo = (w + p[1] + p[3] - d[1] * (kernel[1] - 1) - 1) // s[1] + 1
    taps = kernel[0] * kernel[1]
    feeds = {"x": _data(shape, dtype),
             "o": (rng.standard_normal((n, og * 2 * taps, ho, wo)) * 1.5).astype(dtype)}
    inits = {"w": _data((filters, c // g) + kernel, dtype)}
    names = ["x", "w", "o", "b" if bias else ""]
    if bias:
        inits["b"] = _data((filters,), dtype)
    if mask:
        feeds["m"] = rng.uniform(0, 1, (n, og * taps, ho, wo)).astype(dtype)
        names.append("m")
    while not names[-1]:
        names.pop()
    roundtrip([N("DeformConv", names, ["y"], kernel_shape=list(kernel), **attrs)], feeds,
              tmp_path, inits=inits, opset=19)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pads,mask", [([0, 0, 1, 1], False), ([2, 1, 0, 1], True)])
def test_deform_conv_asymmetric_pads(pads, mask, dtype, tmp_path):
    ho, wo = 4 + pads[0] + pads[2] - 1, 4 + pads[1] + pads[3] - 1
    feeds = {"x": _data((1, 2, 4, 4), dtype),
             "o": (rng.standard_normal((1, 8, ho, wo)) * 1.5).astype(dtype)}
    names = ["x", "w", "o"]
    if mask:
        feeds["m"] = rng.uniform(0, 1, (1, 4, ho, wo)).astype(dtype)
        names += ["", "m"]
    roundtrip([N("DeformConv", names, ["y"], kernel_shape=[2, 2], pads=pads)], feeds,
              tmp_path, inits={"w": _data((3, 2, 2, 2), dtype)}, opset=19)


@pytest.mark.parametrize("dtype", ["float32"])     # onnxruntime's CPU Conv: float32 only
@pytest.mark.parametrize("shape,kernel,pads,strides", [
    ((1, 2, 5, 6), (3, 3), [0, 1, 1, 2], [1, 1]),          # TensorFlow's SAME padding
    ((2, 3, 7, 7), (2, 3), [1, 0, 0, 1], [2, 2]),
    ((2, 2, 9), (3,), [2, 0], [1]),
])
def test_conv_asymmetric_pads(shape, kernel, pads, strides, dtype, tmp_path):
    w = _data((4, shape[1]) + kernel, dtype)
    roundtrip([N("Conv", ["x", "w", "b"], ["y"], pads=pads, strides=strides)],
              {"x": _data(shape, dtype)}, tmp_path, inits={"w": w, "b": _data((4,), dtype)})


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("shape,kernel,strides,dilations", [
    ((1, 2, 5, 6), (3, 3), [1, 1], [1, 1]),
    ((2, 3, 7, 8), (2, 3), [2, 3], [1, 1]),
    ((1, 2, 9, 10), (4, 2), [3, 2], [1, 1]),   # (onnxruntime: no dilation with SAME)
])
def test_conv_auto_pad(shape, kernel, strides, dilations, auto_pad, tmp_path):
    w = _data((3, shape[1]) + kernel, "float32")
    roundtrip([N("Conv", ["x", "w"], ["y"], auto_pad=auto_pad, strides=strides,
                 dilations=dilations)], {"x": _data(shape, "float32")}, tmp_path,
              inits={"w": w})


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "VALID"])
def test_pool_auto_pad_where_it_pads_both_sides_alike(op, auto_pad, tmp_path):
    roundtrip([N(op, ["x"], ["y"], kernel_shape=[3, 3], auto_pad=auto_pad)],
              {"x": _data((1, 2, 5, 6), "float32")}, tmp_path)


# ---- Pad, MatMul, Mod: the general cases the exporter writes --------------------------------
PADS = [  # shape, pads, mode, dtype
    ((3, 4), [1, 2, 0, 3], "constant", "float32"),
    ((3, 4), [1, 2, 0, 3], "edge", "float64"),
    ((3, 4), [2, 1, 1, 3], "reflect", "float32"),
    ((2, 3, 4), [0, 1, 2, 1, 0, 1], "constant", "int64"),
    ((2, 3, 4), [-1, 1, 0, 0, 2, -2], "constant", "float64"),
    ((5,), [2, 3], "reflect", "int32"),
    ((2, 3, 4, 5), [0, 0, 1, 2, 0, 0, 2, 1], "reflect", "float32"),    # MXNet's Pad
    ((2, 3, 4, 5), [0, 1, 0, 0, 0, 2, 1, 0], "edge", "float32"),       # pads axis 1
    ((2, 3, 4, 5), [0, 0, 1, 0, 0, 0, 1, 0], "constant", "int32"),
]


@pytest.mark.parametrize("shape,pads,mode,dtype", PADS)
def test_pad(shape, pads, mode, dtype, tmp_path):
    inits = {"p": np.asarray(pads, np.int64), "v": np.asarray(1.5 if dtype[0] == "f" else 7,
                                                              dtype)}
    roundtrip([N("Pad", ["x", "p", "v"], ["y"], mode=mode)], {"x": _data(shape, dtype)},
              tmp_path, inits=inits)


@pytest.mark.parametrize("mode", ["constant", "wrap"])
def test_pad_of_named_axes(mode, tmp_path):
    inits = {"p": np.asarray([1, 2, 2, 0], np.int64), "a": np.asarray([2, 0], np.int64)}
    roundtrip([N("Pad", ["x", "p", "", "a"], ["y"], mode=mode)],
              {"x": _data((3, 2, 4), "float32")}, tmp_path, inits=inits, opset=19)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("a,b", [((3, 5), (2, 5, 6)), ((5,), (2, 5, 6)), ((2, 1, 3, 4), (5, 4, 2)),
                                 ((2, 3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (2, 4, 5)),
                                 ((2, 3, 4), (4, 6))])
def test_matmul_broadcasting(a, b, dtype, tmp_path):
    roundtrip([N("MatMul", ["a", "b"], ["y"])], {"a": _data(a, dtype), "b": _data(b, dtype)},
              tmp_path)


@pytest.mark.parametrize("fmod,dtype", [(1, d) for d in DTYPES] +     # ONNX: floats fmod=1
                         [(0, "int32"), (0, "int64")])
@pytest.mark.parametrize("bshape", [(3, 4), (4,), "scalar"])
def test_mod(bshape, fmod, dtype, tmp_path):
    a = (rng.uniform(-20, 20, (3, 4)) * (1 if dtype[0] == "f" else 3)).astype(dtype)
    if bshape == "scalar":
        feeds, inits = {"a": a}, {"b": np.asarray(-2.5 if dtype[0] == "f" else -7, dtype)}
    else:
        b = rng.uniform(1, 6, bshape) * np.where(rng.random(bshape) < 0.5, -1, 1)
        feeds, inits = {"a": a, "b": b.astype(dtype)}, {}
        if dtype[0] != "f":
            feeds["b"][feeds["b"] == 0] = 3
    roundtrip([N("Mod", ["a", "b"], ["y"], fmod=fmod)], feeds, tmp_path, inits=inits)


def test_max_and_min_of_one_input_are_it(tmp_path):
    nodes = [N("Max", ["x"], ["m"]), N("Min", ["m"], ["y"])]
    roundtrip(nodes, {"x": _data((2, 3), "float32")}, tmp_path)


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence_on_either_layout(time_axis, tmp_path):
    x = _data((4, 3, 2) if time_axis == 0 else (3, 4, 2), "float32")
    roundtrip([N("ReverseSequence", ["x", "l"], ["y"], time_axis=time_axis,
                 batch_axis=1 - time_axis)], {"x": x}, tmp_path,
              inits={"l": np.asarray([4, 1, 3], np.int64)})


def test_boolean_results_are_bool(tmp_path):
    feeds = {"x": np.array([[1.0, np.nan, -np.inf], [2.0, 0.0, 3.0]], np.float32),
             "z": _data((2, 3), "float32")}
    nodes = [N("Greater", ["x", "z"], ["g"]), N("IsNaN", ["x"], ["n"]),
             N("IsInf", ["x"], ["i"], detect_positive=0), N("Or", ["g", "n"], ["o"]),
             N("Xor", ["o", "i"], ["e"]), N("Cast", ["z"], ["c"], to=TensorProto.BOOL),
             N("And", ["e", "c"], ["a"]), N("Not", ["a"], ["y"])]
    (got,) = roundtrip(nodes, feeds, tmp_path)
    assert got.dtype == np.bool_


def test_shapes_onnx_does_not_infer_come_from_mxlite(tmp_path):
    """A Range over a Shape (folded at import) leaves ONNX without the shapes after it."""
    nodes = [N("Shape", ["z"], ["s"]), N("Squeeze", ["s"], ["n"]),
             N("Range", ["zero", "n", "one"], ["r"]), N("Cast", ["r"], ["rf"], to=1),
             N("Greater", ["x", "rf"], ["g"]), N("Where", ["g", "x", "rf"], ["w"]),
             N("Identity", ["w"], ["y"])]
    feeds = {"x": np.array([2.5], np.float32), "z": _data((5,), "float32")}
    path = str(tmp_path / "m.onnx")
    onnx.save(_model(nodes, feeds, {"zero": np.int64(0), "one": np.int64(1)}), path)
    assert importer._inferred(onnx, onnx.load(path))["w"][0] is None
    roundtrip(nodes, feeds, tmp_path, shapes={"y": (5,)},
              inits={"zero": np.int64(0), "one": np.int64(1)})


def test_reshape_with_allowzero_to_an_empty_shape(tmp_path):
    nodes = [N("Reshape", ["x", "s"], ["r"], allowzero=1), N("Identity", ["r"], ["y"])]
    roundtrip(nodes, {"x": np.zeros((2, 0), np.float32)}, tmp_path,
              inits={"s": np.array([0, 5], np.int64)}, opset=14)


# ---- graphs mxlite exports that use the new importers ---------------------------------------
def _mx_roundtrip(fn, inputs, tmp_path, rtol=1e-5):
    """export -> import -> evaluate in mxlite: the values of ``fn`` on ``mx.nd``."""
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    if isinstance(out, (list, tuple)):
        out = mx.sym.Group(list(out))
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    aux = set(out.list_auxiliary_states())
    unread = _unread_variables(out)
    params = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs)
             if n not in aux and n not in unread and n in out.list_arguments()}
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(out, params, in_shapes=[a.shape for a in feeds.values()],
                         in_types=[a.dtype for a in feeds.values()], onnx_file_path=path)
    for g, e in _imported_beside(path, feeds, expected):
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=rtol,
                                   atol=rtol * 1e-1)
    return path


def _imported_beside(path, feeds, expected):
    """[(imported value, expected NumPy value)] of the model at ``path`` run by mxlite on
    ``feeds``, shapes checked (an xfail where an operator's import is pending)."""
    pending = _pending_ops(path)
    if pending:
        pytest.xfail(f"the import of {pending} is not written yet")
    got = imported_values(path, feeds)
    assert len(got) == len(expected)
    pairs = [(g, e.asnumpy()) for g, e in zip(got, expected)]
    for g, e in pairs:
        assert g.shape == e.shape, (g.shape, e.shape)
    return pairs


def _pending_ops(path):
    ops = {n.op_type for n in onnx.load(path).graph.node}
    return sorted(ops & (PENDING - set(IMPORTS)))


def _f(*shape):
    return rng.standard_normal(shape)


EXPORTED = [  # label, fn, inputs (float inputs cast to each dtype), ONNX op it must use
    ("pick", lambda F, x, i: F.pick(x, i, axis=1), [_f(3, 4), np.array([0, 3, -1.0])],
     "GatherElements"),
    ("pick_keepdims", lambda F, x, i: F.pick(x, i, axis=0, keepdims=True),
     [_f(3, 2, 2), np.array([[0, 2], [1, 1]], np.float64)], "GatherElements"),
    ("take_along_axis", lambda F, x, i: F._internal._take_along_axis(x, i, axis=1),
     [_f(3, 4), np.array([[0, 3], [1, 2], [3, 0]], np.float64)], "GatherElements"),
    ("softmax_cross_entropy", lambda F, x, y: F.softmax_cross_entropy(x, y),
     [_f(4, 5), np.array([0, 4, 2, 1], np.float64)], "GatherElements"),
    ("topk_mask", lambda F, x: F.topk(x, k=2, axis=1, ret_typ="mask"), [_f(3, 5)],
     "ScatterElements"),
    ("topk_mask_axis0", lambda F, x: F.topk(x, k=3, axis=0, ret_typ="mask"), [_f(4, 2, 3)],
     "ScatterElements"),
    ("fill_element_0index", lambda F, a, b, c: F.fill_element_0index(a, b, c),
     [_f(3, 4), _f(3), np.array([0, 3, 1], np.float64)], "ScatterElements"),
    ("count_sketch", lambda F, x, h, s: F.contrib.count_sketch(x, h, s, out_dim=4),
     [_f(2, 6), np.array([0, 3, 1, 3, 0, 2], np.float64),
      np.array([1, -1, 1, 1, -1, -1], np.float64)], "ScatterElements"),
    ("scatter_nd", lambda F, d, i: F.scatter_nd(d, i, shape=(3, 4)),
     [_f(3), np.array([[0, 2, 1], [1, 3, 0]], np.float64)], "ScatterND"),
    ("scatter_nd_slices", lambda F, d, i: F.scatter_nd(d, i, shape=(4, 2)),
     [_f(2, 2), np.array([[3, 1]], np.float64)], "ScatterND"),
    ("scatter_set_nd", lambda F, x, v, i: F._internal._scatter_set_nd(x, v, i, shape=(3, 4)),
     [_f(3, 4), _f(2), np.array([[0, 2], [1, -1]], np.float64)], "ScatterND"),
    ("index_copy", lambda F, x, i, t: F.contrib.index_copy(x, i, t),
     [_f(5, 3), np.array([4, 0], np.float64), _f(2, 3)], "ScatterND"),
    ("slice_assign", lambda F, x, v: F._internal._slice_assign(x, v, begin=(1, 0),
                                                              end=(3, 4), step=(1, 2)),
     [_f(4, 4), _f(2, 2)], "ScatterND"),
    ("slice_assign_scalar", lambda F, x: F._internal._slice_assign_scalar(
        x, scalar=2.5, begin=(0,), end=(2,)), [_f(3, 2)], "ScatterND"),
    ("deformable_convolution", lambda F, x, o, w, b: F.contrib.DeformableConvolution(
        x, o, w, b, kernel=(2, 2), num_filter=3, pad=(1, 1)),
     [_f(1, 2, 4, 4), _f(1, 8, 5, 5), _f(3, 2, 2, 2), _f(3)], "DeformConv"),
    ("modulated_deformable_convolution",
     lambda F, x, o, m, w: F.contrib.ModulatedDeformableConvolution(
         x, o, m, w, kernel=(3, 3), num_filter=2, num_deformable_group=2, no_bias=True,
         stride=(2, 2)),
     [_f(1, 2, 7, 7), _f(1, 36, 3, 3), np.abs(_f(1, 18, 3, 3)), _f(2, 2, 3, 3)],
     "DeformConv"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn,inputs,onnx_op", [pytest.param(f, i, o, id=n)
                                               for n, f, i, o in EXPORTED])
def test_exported_graph_round_trips(fn, inputs, onnx_op, dtype, tmp_path):
    inputs = [a.astype(dtype) for a in inputs]
    path = _mx_roundtrip(fn, inputs, tmp_path, rtol=_tol(dtype))
    assert onnx_op in {n.op_type for n in onnx.load(path).graph.node}


# ---- generated sweeps: mx -> ONNX -> mx -----------------------------------------------------
#: gradient-spec rows whose import cannot give mxlite's values, and why (none so far: the
#: rows are deterministic; random draws would differ by stream)
INEXACT = {}


@pytest.mark.parametrize("name", gradspecs.ROWS)
def test_gradient_spec_call_round_trips(name, tmp_path):
    spec = gradspecs.SPECS[name]
    inputs = gradspecs._inputs(spec, np.random.default_rng(11))
    names = [f"in{i}" for i in range(len(inputs))]
    sym = gradspecs._symbolic_call(spec, names)
    expected = spec.call(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    aux = set(sym.list_auxiliary_states())
    unread = _unread_variables(sym)
    params = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs)
             if n not in aux and n not in unread and n in sym.list_arguments()}
    path = str(tmp_path / "m.onnx")
    export = lambda: mx.onnx.export_model(  # noqa: E731
        sym, params, in_shapes=[a.shape for a in feeds.values()],
        in_types=[a.dtype for a in feeds.values()], onnx_file_path=path)
    if name in gradspecs.REFUSED:
        with pytest.raises(mx.MXNetError, match=gradspecs.REFUSED[name]):
            export()
        return
    export()
    for g, e in _imported_beside(path, feeds, expected):
        if name not in INEXACT:
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-8)


#: the one-op export test modules whose ``CASES`` are pytest.param(fn, inputs, rtol)
CASE_MODULES = ["test_export_detection", "test_export_image", "test_export_indexing",
                "test_export_linalg", "test_export_mathops", "test_export_normalize",
                "test_export_reductions", "test_export_sorting", "test_export_spatial",
                "test_export_spatial_grad", "test_export_gradscatter", "test_export_fused"]


def _export_cases():
    cases = []
    for module in CASE_MODULES:
        for p in importlib.import_module(module).CASES:
            fn, inputs, rtol = p.values[:3]
            cases.append(pytest.param(fn, inputs, rtol, id=f"{module[12:]}-{p.id}"))
    roi = importlib.import_module("test_export_roi")      # (fn, data shapes, rois) cases
    for p in roi.CASES:
        fn, shapes, rois = p.values
        for dtype, rtol in (("float32", 1e-5), ("float64", 1e-9)):
            inputs = [roi.normal(shapes[0], dtype), rois.astype(dtype)] + \
                [roi.normal(s, dtype) for s in shapes[1:]]
            cases.append(pytest.param(fn, inputs, rtol, id=f"roi-{p.id}-{dtype}"))
    return cases


@pytest.mark.parametrize("fn,inputs,rtol", _export_cases())
def test_one_op_export_case_round_trips(fn, inputs, rtol, tmp_path):
    floats = [np.dtype(a.dtype) for a in inputs if np.dtype(a.dtype).kind == "f"]
    rtol = max([rtol or 0.0, 1e-5] + [_tol(d) for d in floats if d == np.float16])
    _mx_roundtrip(fn, list(inputs), tmp_path, rtol=rtol)


# ---- random draws: the same distribution, not the same values -------------------------------
# A random operator's round trip cannot give the original's values: the imported graph
# draws from mxlite's generator through ONNX's RandomUniform/RandomNormal/Multinomial (their
# ``seed`` does not carry over), another sequence of draws. So these check the shape, the
# dtype and the distribution.
DRAWS = 40000      # five standard errors are about 2.5% of a standard deviation


def _draws(sym, feeds, tmp_path, seed=3):
    """``sym`` exported, imported and evaluated by mxlite (after seeding mxlite's generator
    with ``seed``, unless None): its outputs; mxlite's direct ones have their shapes and
    dtypes."""
    path = str(tmp_path / "m.onnx")
    names = list(feeds)
    mx.onnx.export_model(sym, {}, in_shapes=[feeds[n].shape for n in names],
                         in_types=[feeds[n].dtype for n in names], onnx_file_path=path,
                         opset_version=21)
    if seed is not None:
        mx.random.seed(seed)
    got = imported_values(path, feeds)
    direct = sym.eval(**{n: mx.nd.array(v, dtype=v.dtype) for n, v in feeds.items()})
    assert len(got) == len(direct)
    for g, e in zip(got, direct):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
    return got


def _moments(x, mean, sd):
    x = np.asarray(x, np.float64).ravel()
    assert abs(x.mean() - mean) < 5 * sd / np.sqrt(x.size), (x.mean(), mean)
    assert abs(x.std() - sd) < 0.05 * sd, (x.std(), sd)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw,mean,sd,support", [
    ("uniform", dict(low=-2.0, high=3.0), 0.5, 5 / np.sqrt(12), (-2, 3)),
    ("normal", dict(loc=1.5, scale=0.5), 1.5, 0.5, None),
    ("exponential", dict(lam=4.0), 0.25, 0.25, (0, np.inf)),
])
def test_random_draws_round_trip_in_distribution(name, kw, mean, sd, support, dtype,
                                                 tmp_path):
    sym = getattr(mx.sym.random, name)(shape=(DRAWS // 100, 100), dtype=dtype, **kw)
    (x,) = _draws(sym, {}, tmp_path)
    assert x.dtype == np.dtype(dtype)
    if support:
        assert x.min() >= support[0] and x.max() <= support[1]
    _moments(x, mean, sd)


@pytest.mark.parametrize("name,kw,mean,sd", [
    ("uniform", dict(low=1.0, high=2.0), 1.5, 1 / np.sqrt(12)),
    ("normal", dict(loc=-1.0, scale=2.0), -1.0, 2.0),
    ("exponential", dict(lam=0.5), 2.0, 2.0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_like_draws_round_trip(name, kw, mean, sd, dtype, tmp_path):
    sym = getattr(mx.sym._internal, f"_random_{name}_like")(mx.sym.var("d"), **kw)
    (x,) = _draws(sym, {"d": np.zeros((DRAWS // 100, 100), dtype)}, tmp_path)
    _moments(x, mean, sd)


@pytest.mark.parametrize("low,high,dtype", [(-3, 4, "int32"), (10, 12, "int64")])
def test_randint_round_trip_covers_its_range_evenly(low, high, dtype, tmp_path):
    (x,) = _draws(mx.sym.random.randint(low, high, shape=(DRAWS,), dtype=dtype), {}, tmp_path)
    values, counts = np.unique(x, return_counts=True)
    assert values.tolist() == list(range(low, high))
    p = 1 / (high - low)
    assert np.abs(counts / DRAWS - p).max() < 5 * np.sqrt(p * (1 - p) / DRAWS)


def test_sample_uniform_and_normal_per_distribution_round_trip(tmp_path):
    lo, hi = np.array([0.0, 10.0], np.float32), np.array([1.0, 14.0], np.float32)
    (x,) = _draws(mx.sym.sample_uniform(mx.sym.var("lo"), mx.sym.var("hi"), shape=(DRAWS,)),
                  {"lo": lo, "hi": hi}, tmp_path)
    for row, a, b in zip(x, lo, hi):
        assert row.min() >= a and row.max() <= b
        _moments(row, (a + b) / 2, (b - a) / np.sqrt(12))
    mu, sigma = np.array([0.0, 5.0]), np.array([1.0, 0.1])
    (x,) = _draws(mx.sym.sample_normal(mx.sym.var("mu"), mx.sym.var("sigma"), shape=(DRAWS,),
                                       dtype="float64"), {"mu": mu, "sigma": sigma}, tmp_path)
    for row, m, s in zip(x, mu, sigma):
        _moments(row, m, s)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_multinomial_round_trip_frequencies(dtype, tmp_path):
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]], dtype)
    (x,) = _draws(mx.sym.sample_multinomial(mx.sym.var("p"), shape=(DRAWS,)), {"p": probs},
                  tmp_path)
    for row, p in zip(x, probs):
        freq = np.bincount(row.astype(np.int64), minlength=3) / DRAWS
        assert np.abs(freq - p).max() < 5 * np.sqrt(0.25 / DRAWS), (freq, p)


def test_shuffle_round_trip_is_a_permutation(tmp_path):
    data = np.arange(50, dtype=np.float32).reshape(25, 2)
    (x,) = _draws(mx.sym.random.shuffle(mx.sym.var("d")), {"d": data}, tmp_path)
    assert sorted(map(tuple, x.tolist())) == sorted(map(tuple, data.tolist()))
    assert not np.array_equal(x, data)          # 25! orders: the identity is one of them


@pytest.mark.parametrize("name,flip", [("random_flip_left_right", 1),
                                       ("random_flip_top_bottom", 0)])
def test_image_random_flip_round_trip_gives_the_image_or_its_flip(name, flip, tmp_path):
    img = rng.uniform(0, 255, (4, 5, 3)).astype(np.float32)
    seen = set()
    mx.random.seed(5)
    for _ in range(12):
        (x,) = _draws(getattr(mx.sym.image, name)(mx.sym.var("x")), {"x": img}, tmp_path,
                      seed=None)
        flipped = np.array_equal(x, np.flip(img, axis=flip))
        assert flipped or np.array_equal(x, img)
        seen.add(flipped)
    assert seen == {False, True}        # both outcomes in 12 fair draws: 1 - 2**-11


def _as(dtype, a):
    """A float input in ``dtype`` (integers: the values scaled by 3 and rounded)."""
    if a.dtype.kind != "f":
        return a
    if np.dtype(dtype).kind == "i":
        scaled = np.nan_to_num(a * 3, nan=0, posinf=7, neginf=-7)
        return np.round(np.clip(scaled, -2 ** 15, 2 ** 15)).astype(dtype)
    return a.astype(dtype)


def _computes(fn, inputs):
    try:
        fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    except mx.MXNetError:
        return False
    return True


#: cases (id prefix, dtype kind) the exporter refuses, and the words of its refusal
EXPORT_REFUSED = {("reductions-moments", "i"): "moments.*data of dtype int"}


def _dtype_cases():
    """The one-op export cases (and test_export_ops') in float64, int32 and int64, where
    mxlite computes the op in that dtype (many take floats only)."""
    cases = []
    for module in ["test_export_ops"] + CASE_MODULES:
        for p in importlib.import_module(module).CASES:
            fn, inputs, rtol = p.values[:3]
            for dtype in ("float64", "int32", "int64"):
                cast = [_as(dtype, a) for a in inputs]
                label = f"{module[12:]}-{p.id}"
                refused = next((words for (prefix, kind), words in EXPORT_REFUSED.items()
                                if label.startswith(prefix) and np.dtype(dtype).kind == kind),
                               None)
                if _computes(fn, cast):
                    cases.append(pytest.param(fn, cast, rtol, refused, id=f"{label}-{dtype}"))
    return cases


@pytest.mark.parametrize("fn,inputs,rtol,refused", _dtype_cases())
def test_one_op_export_case_round_trips_in_other_dtypes(fn, inputs, rtol, refused, tmp_path):
    if refused:
        with pytest.raises(mx.MXNetError, match=refused):
            _mx_roundtrip(fn, list(inputs), tmp_path)
        return
    _mx_roundtrip(fn, list(inputs), tmp_path, rtol=max(rtol or 0.0, 1e-5))
