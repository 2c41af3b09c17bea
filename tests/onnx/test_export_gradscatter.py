"""The scatters of gradient graphs (_take_grad, _pick_grad, ...), NDArray indexing and
_rnn_param_concat on one-op graphs: exported, checked (full check), run in onnxruntime and
compared with ``mx.nd``; float32, float64 and, where the op takes them, integer and float16
inputs."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run
from onnx_harness import check

rng = np.random.default_rng(29)
CASES = []
I = lambda F: F._internal  # noqa: E731


def case(label, fn, *inputs, rtol=None):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


def normal(*shape, dtype=np.float32):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-9, 10, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def ints(values, dtype=np.float32):
    return np.asarray(values, dtype)


def tolerance(inputs):
    """rtol for the inputs' widest float dtype (atol a tenth of it); sums in float16 get
    SUMS16: mxlite rounds each float16 addition, the translation sums in float32."""
    dt = np.result_type(*[a.dtype for a in inputs])
    return {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5}.get(dt, 1e-12)


SUMS16 = 1e-2
for dt in (np.float32, np.float64, np.float16, np.int32, np.int64):
    tag = np.dtype(dt).name
    acc = SUMS16 if dt == np.float16 else None      # the accumulating scatters' tolerance
    # repeated and negative indices accumulate
    case(f"backward_gather_nd_{tag}", lambda F, d, i: I(F)._backward_gather_nd(
        d, i, shape=(3, 4)), normal(5, dtype=dt),
        ints([[0, 2, 0, -1, 0], [1, 3, 1, 0, -3]]), rtol=acc)
    case(f"backward_gather_nd_rows_{tag}", lambda F, d, i: I(F)._backward_gather_nd(
        d, i, shape=(4, 2, 3)), normal(2, 3, 2, 3, dtype=dt),
        ints([[[3, 1, 3], [0, 3, 2]]], np.int32), rtol=acc)
    case(f"take_grad_clip_{tag}", lambda F, g, i, x: I(F)._take_grad(g, i, x, axis=0),
         normal(5, 2, dtype=dt), ints([0, 2, 2, 9, -4]), normal(3, 2), rtol=acc)
    case(f"take_grad_wrap_axis1_{tag}", lambda F, g, i, x: I(F)._take_grad(
        g, i, x, axis=1, mode="wrap"), normal(2, 2, 3, 4, dtype=dt),
        ints([[1, -1, 7], [4, 0, -5]], np.int64), normal(2, 5, 4), rtol=acc)
    case(f"take_grad_raise_neg_axis_{tag}", lambda F, g, i, x: I(F)._take_grad(
        g, i, x, axis=-1, mode="raise"), normal(3, 4, dtype=dt), ints([2, 0, 2, 1.9]),
        normal(3, 3), rtol=acc)
    case(f"pick_grad_{tag}", lambda F, g, i, x: I(F)._pick_grad(g, i, x), normal(3, dtype=dt),
         ints([1, 7, -2]), normal(3, 4))
    case(f"pick_grad_axis0_wrap_keepdims_{tag}", lambda F, g, i, x: I(F)._pick_grad(
        g, i, x, axis=0, keepdims=True, mode="wrap"), normal(1, 2, 3, dtype=dt),
        ints([[[1, -1, 5], [2, 0, 3]]], np.int32), normal(4, 2, 3))
    case(f"pick_grad_axis_none_{tag}", lambda F, g, i, x: I(F)._pick_grad(
        g, i, x, axis=None), normal(1, dtype=dt), ints([4]), normal(2, 3))
    case(f"take_along_axis_grad_{tag}", lambda F, g, i, x: I(F)._take_along_axis_grad(
        g, i, x, axis=1), normal(2, 4, dtype=dt), ints([[2, 2, 0, 1], [0, 0, 0, 2.5]]),
        normal(2, 3), rtol=acc)
    case(f"take_along_axis_grad_axis0_{tag}", lambda F, g, i, x: I(F)._take_along_axis_grad(
        g, i, x, axis=0), normal(2, 3, 2, dtype=dt),
        ints([[[0, 1], [1, 1], [2, 0]], [[2, 2], [1, 0], [0, 0]]], np.int64), normal(3, 3, 2),
        rtol=acc)
    case(f"take_along_axis_grad_none_{tag}", lambda F, g, i, x: I(F)._take_along_axis_grad(
        g, i, x, axis=None), normal(5, dtype=dt), ints([5, 0, 5, 3, 1]), normal(2, 3), rtol=acc)
    for axis in (0, 1) if tag[0] == "f" else ():          # float gradients only
        shape = (4, 3, 2) if axis == 0 else (3, 4, 2)
        case(f"sequence_last_grad_lengths_axis{axis}_{tag}",
             lambda F, g, x, n, a=axis: I(F)._sequence_last_grad(
                 g, x, n, use_sequence_length=True, axis=a), normal(3, 2, dtype=dt),
             normal(*shape), ints([1, 4, 2.6]))
        case(f"sequence_last_grad_axis{axis}_{tag}",
             lambda F, g, x, a=axis: I(F)._sequence_last_grad(g, x, axis=a),
             normal(3, dtype=dt), normal(*shape[:2]))
    case(f"slice_scatter_{tag}", lambda F, d: I(F)._slice_scatter(
        d, shape=(4, 5), begin=(1, None), end=(None, 4), step=(2, None)),
        normal(2, 4, dtype=dt))
    case(f"slice_scatter_negative_step_{tag}", lambda F, d: I(F)._slice_scatter(
        d, shape=(3, 6, 2), begin=(None, 5), end=(2, 0), step=(1, -2)),
        normal(2, 3, 2, dtype=dt))
    case(f"diag_scatter_{tag}", lambda F, d: I(F)._diag_scatter(d, shape=(3, 4), k=1),
         normal(3, dtype=dt))
    case(f"diag_scatter_axes_{tag}", lambda F, d: I(F)._diag_scatter(
        d, shape=(4, 2, 3), k=-1, axis1=2, axis2=0), normal(2, 2, dtype=dt))
    case(f"getitem_basic_{tag}", lambda F, x: I(F)._getitem(
        x, key=(slice(1, None, 2), None, Ellipsis, 2)), normal(5, 3, 4, dtype=dt))
    case(f"getitem_advanced_{tag}", lambda F, x: I(F)._getitem(
        x, key=(np.array([2, 0, 2, -1]), slice(None), np.array([1, 0, 3, 3]))),
        normal(3, 2, 4, dtype=dt))
    case(f"getitem_bool_{tag}", lambda F, x: I(F)._getitem(
        x, key=(np.array([True, False, True]),)), normal(3, 2, dtype=dt))
    case(f"getitem_scatter_basic_{tag}", lambda F, d: I(F)._getitem_scatter(
        d, key=(slice(None, None, -1), 1), shape=(3, 4)), normal(3, dtype=dt))
    case(f"getitem_scatter_repeats_{tag}", lambda F, d: I(F)._getitem_scatter(
        d, key=(np.array([[1, 1], [0, 1]]), slice(1, 3)), shape=(2, 4)),
        normal(2, 2, 2, dtype=dt), rtol=acc)
    case(f"setitem_broadcast_{tag}", lambda F, x, v: I(F)._setitem(
        x, v, key=(slice(0, 2), Ellipsis, slice(1, 3))), normal(3, 2, 4, dtype=dt),
        normal(2, dtype=dt))
    case(f"setitem_advanced_{tag}", lambda F, x, v: I(F)._setitem(
        x, v, key=(np.array([2, 0]), np.array([[1], [3]]))), normal(3, 4, dtype=dt),
        normal(2, 2, dtype=dt))
    case(f"rnn_param_concat_{tag}", lambda F, a, b: I(F)._rnn_param_concat(a, b, dim=0),
         normal(6, dtype=dt), normal(4, dtype=dt))
    case(f"rnn_param_concat_dim1_{tag}", lambda F, a, b, c: I(F)._rnn_param_concat(
        a, b, c, dim=1, num_args=3), normal(2, 3, dtype=dt), normal(2, 1, dtype=dt),
        normal(2, 2, dtype=dt))

# the pad adjoint takes floats only; edge and reflect add the borders back
for dt in (np.float32, np.float64):
    tag = np.dtype(dt).name
    for mode in ("constant", "edge", "reflect"):
        case(f"pad_backward_{mode}_{tag}", lambda F, g, m=mode: I(F)._pad_backward(
            g, mode=m, pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), normal(2, 3, 6, 7, dtype=dt))
        case(f"pad_backward_{mode}_5d_{tag}", lambda F, g, m=mode: I(F)._pad_backward(
            g, mode=m, pad_width=(0, 0, 0, 0, 2, 0, 0, 1, 1, 1)),
            normal(1, 2, 5, 4, 5, dtype=dt))

# float16: the sums run in float32, rounded once (as mxlite)
F16 = np.float16
case("take_grad_float16", lambda F, g, i, x: I(F)._take_grad(g, i, x, axis=0),
     normal(6, 3, dtype=F16), ints([0, 1, 1, 1, 2, 1]), normal(3, 3), rtol=SUMS16)
case("take_along_axis_grad_float16", lambda F, g, i, x: I(F)._take_along_axis_grad(
    g, i, x, axis=1), normal(2, 4, dtype=F16), ints([[2, 2, 2, 1], [0, 0, 0, 0]]),
    normal(2, 3), rtol=SUMS16)
case("getitem_scatter_float16", lambda F, d: I(F)._getitem_scatter(
    d, key=(np.array([1, 1, 1, 0]),), shape=(2, 3)), normal(4, 3, dtype=F16), rtol=SUMS16)
case("pad_backward_edge_float16", lambda F, g: I(F)._pad_backward(
    g, mode="edge", pad_width=(0, 0, 0, 0, 3, 1, 1, 2)), normal(1, 2, 6, 5, dtype=F16),
    rtol=SUMS16)


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_gradient_scatter_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    check(fn, inputs, rtol or tolerance(inputs), tmp_path)


def test_take_grad_accumulates_repeated_indices_exactly(tmp_path):
    """Three copies of a row added onto one (index 9 clipped to the last row): an integer
    count, exact in float32."""
    g = np.ones((4, 2), np.float32)
    idx = np.array([0, 2, 2, 9], np.float32)
    out = I(mx.sym)._take_grad(*[mx.sym.var(n) for n in ("g", "i", "x")])
    got = export_and_run(out, {}, {"g": g, "i": idx, "x": np.zeros((3, 2), np.float32)},
                         tmp_path)[0]
    np.testing.assert_array_equal(got, [[1, 1], [0, 0], [3, 3]])


def test_indexing_refuses_a_dynamic_batch(tmp_path):
    x = mx.sym.var("x")
    y = mx.sym._internal._getitem(x, key=(slice(0, 2),))
    with pytest.raises(mx.MXNetError, match="dynamic=True"):
        mx.onnx.export_model(y, {}, in_shapes=[(3, 4)], in_types=[np.float32],
                             onnx_file_path=str(tmp_path / "m.onnx"), dynamic=True)


def test_pad_backward_keeps_a_dynamic_batch(tmp_path):
    """The edge adjoint's shapes come from the value: a batch of another size runs."""
    from onnx_harness import run_onnx
    g = mx.sym.var("g")
    y = mx.sym._internal._pad_backward(g, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 0))
    path = str(tmp_path / "m.onnx")
    mx.onnx.export_model(y, {}, in_shapes=[(2, 3, 5, 6)], in_types=[np.float32],
                         onnx_file_path=path, dynamic=True)
    x = normal(4, 3, 5, 6)
    got = run_onnx(path, {"g": x})[0]
    want = mx.nd._internal._pad_backward(mx.nd.array(x), mode="edge",
                                         pad_width=(0, 0, 0, 0, 1, 1, 2, 0)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def check_dynamic(fn, make, tmp_path, rtol=1e-5, fixed=()):
    """``fn`` exported with a symbolic batch axis from the inputs ``make(2)``, run on
    ``make(5)``, against ``fn`` with mx.nd on those; the inputs at the positions ``fixed``
    are parameters (constants of the graph: the same in both)."""
    from onnx_harness import run_onnx
    inputs = make(2)
    names = [f"in{i}" for i in range(len(inputs))]
    params = {names[i]: mx.nd.array(inputs[i], dtype=inputs[i].dtype) for i in fixed}
    data = [i for i in range(len(inputs)) if i not in fixed]
    path = str(tmp_path / "dynamic.onnx")
    mx.onnx.export_model(fn(mx.sym, *[mx.sym.var(n) for n in names]), params,
                         in_shapes=[inputs[i].shape for i in data],
                         in_types=[inputs[i].dtype for i in data], onnx_file_path=path,
                         dynamic=True)
    inputs = make(5)[:len(inputs)]
    for i in fixed:
        inputs[i] = params[names[i]].asnumpy()
    got = run_onnx(path, {names[i]: inputs[i] for i in data})[0]
    want = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs]).asnumpy()
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 0.1)


DYNAMIC = [
    ("take_grad_axis0", lambda F, g, i, x: I(F)._take_grad(g, i, x, axis=0),
     lambda b: [normal(b, 2), ints(rng.integers(-2, b + 2, b)), normal(b, 2)]),
    ("take_grad_axis1_wrap", lambda F, g, i, x: I(F)._take_grad(g, i, x, axis=1, mode="wrap"),
     lambda b: [normal(b, 2, 3, 4), ints([[0, 5, -1], [2, 2, 7]]), normal(b, 3, 4)], (1,)),
    ("pick_grad_axis0", lambda F, g, i, x: I(F)._pick_grad(g, i, x, axis=0, keepdims=True),
     lambda b: [normal(1, 3), ints([[0, 1, 9]]), normal(b, 3)], (1,)),
    ("pick_grad_none", lambda F, g, i, x: I(F)._pick_grad(g, i, x, axis=None, mode="wrap"),
     lambda b: [normal(1), ints([7]), normal(b, 3)]),
    ("take_along_axis_grad", lambda F, g, i, x: I(F)._take_along_axis_grad(g, i, x, axis=1),
     lambda b: [normal(b, 4), ints(rng.integers(0, 3, (b, 4))), normal(b, 3)]),
    ("sequence_last_grad_time_first", lambda F, g, x: I(F)._sequence_last_grad(g, x),
     lambda b: [normal(3, 2), normal(b, 3, 2)]),
    ("sequence_last_grad_lengths", lambda F, g, x, n: I(F)._sequence_last_grad(
        g, x, n, use_sequence_length=True, axis=1),
     lambda b: [normal(b, 2), normal(b, 4, 2), ints(rng.integers(1, 5, b))]),
]


@pytest.mark.parametrize("fn,make,fixed", [pytest.param(c[1], c[2], c[3] if len(c) > 3 else (),
                                                          id=c[0]) for c in DYNAMIC])
def test_gradient_scatter_keeps_a_dynamic_batch(fn, make, fixed, tmp_path):
    check_dynamic(fn, make, tmp_path, fixed=fixed)


# ---- whole gradient graphs (mx.sym.grad) whose adjoints are these scatters -------------------
def _grad_graph_case(label, op, fn, shape, **extra):
    return pytest.param(op, fn, shape, extra, id=label)


GRAD_GRAPHS = [
    _grad_graph_case("take", "_take_grad", lambda F, x, c: F.take(
        x, c["idx"], axis=1, mode="wrap") * c["w"], (3, 4), idx=ints([[0, 5], [-1, 0]]),
        w=normal(3, 2, 2)),
    _grad_graph_case("pick", "_pick_grad", lambda F, x, c: F.pick(x, c["idx"], axis=0) * c["w"],
                     (4, 3), idx=ints([1, 3, 1]), w=normal(3)),
    _grad_graph_case("gather_nd", "_backward_gather_nd", lambda F, x, c: F.gather_nd(
        x, c["idx"]) * c["w"], (3, 4), idx=ints([[0, 2, 0], [1, 3, 1]]), w=normal(3)),
    _grad_graph_case("SequenceLast", "_sequence_last_grad", lambda F, x, c: F.SequenceLast(
        x, c["n"], use_sequence_length=True, axis=1) * c["w"], (3, 4, 2),
        n=ints([4, 1, 2]), w=normal(3, 2)),
    _grad_graph_case("slice", "_slice_scatter", lambda F, x, c: F.slice(
        x, begin=(1, None), end=(None, None), step=(1, -2)) * c["w"], (3, 5), w=normal(2, 3)),
    _grad_graph_case("diag", "_diag_scatter", lambda F, x, c: F.diag(x, k=1) * c["w"], (3, 4),
                     w=normal(3)),
    _grad_graph_case("Pad_reflect", "_pad_backward", lambda F, x, c: F.Pad(
        x, mode="reflect", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)) * c["w"], (1, 2, 4, 3),
        w=normal(1, 2, 7, 6)),
]


@pytest.mark.parametrize("op,fn,shape,extra", GRAD_GRAPHS)
def test_gradient_graph_through_the_scatter_runs_as_autograd(op, fn, shape, extra, tmp_path):
    from mxlite.symbol.graph import topo_order
    x = normal(*shape)
    consts = {k: mx.nd.array(v) for k, v in extra.items()}
    xs = mx.sym.var("x", shape=shape)
    graph = mx.sym.Group(mx.sym.grad(mx.sym.sum(fn(mx.sym, xs, {
        k: mx.sym.var(k, shape=v.shape) for k, v in extra.items()})), [xs]))
    assert op in {n.op.name for n in topo_order(graph._outputs) if n.op is not None}
    feeds = {"x": x, **extra}
    got = export_and_run(graph, {}, {k: feeds[k] for k in graph.list_arguments()}, tmp_path)[0]
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.sum(fn(mx.nd, xa, consts))
    loss.backward()
    np.testing.assert_allclose(got, xa.grad.asnumpy(), rtol=1e-5, atol=1e-6)
