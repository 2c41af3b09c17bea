"""Every translated operator on one-op graphs: export, ``onnx.checker`` (full check), run
in onnxruntime, compare with ``mx.nd`` (two or more shapes and attribute sets each)."""
import numpy as np
import pytest

import mxlite as mx
from onnx_harness import export_and_run

rng = np.random.default_rng(0)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def positive(*shape):
    return (rng.random(shape) + 0.5).astype(np.float32)


def indices(high, *shape):
    return rng.integers(0, high, shape).astype(np.float32)


def op(F, name):
    """``F.<name>``, or ``F._internal.<name>`` for an internal op (``_copy``)."""
    return getattr(F, name, None) or getattr(F._internal, name)


# (id, function of (F, *inputs), inputs, rtol)
CASES = []


def case(label, fn, *inputs, rtol=1e-5):
    CASES.append(pytest.param(fn, inputs, rtol, id=label))


for name in ("relu", "sigmoid", "tanh", "exp", "abs", "negative", "erf", "floor", "ceil",
             "sign", "sin", "cos", "arctan", "sinh", "softsign", "square", "_copy",
             "BlockGrad"):
    case(name, lambda F, x, n=name: op(F, n)(x), normal(2, 3))
    case(name + "_4d", lambda F, x, n=name: op(F, n)(x), normal(2, 3, 2, 2))
for name in ("log", "sqrt", "rsqrt", "reciprocal", "log1p", "expm1"):
    case(name, lambda F, x, n=name: getattr(F, n)(x), positive(3, 4))
    case(name + "_3d", lambda F, x, n=name: getattr(F, n)(x), positive(2, 3, 2))
for name in ("elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"):
    case(name, lambda F, a, b, n=name: getattr(F, n)(a, b), normal(2, 3), positive(2, 3))
for name in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
             "broadcast_maximum", "broadcast_minimum"):
    case(name, lambda F, a, b, n=name: getattr(F, n)(a, b), normal(2, 3, 4), positive(1, 3, 1))
    case(name + "_rank", lambda F, a, b, n=name: getattr(F, n)(a, b), normal(4, 5), positive(5))
case("broadcast_power", lambda F, a, b: F.broadcast_power(a, b), positive(2, 3), normal(1, 3))
for name in ("_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
             "_rdiv_scalar", "_maximum_scalar", "_minimum_scalar"):
    case(name, lambda F, x, n=name: getattr(F._internal, n)(x, scalar=0.7), positive(3, 2))
    case(name + "_neg", lambda F, x, n=name: getattr(F._internal, n)(x, scalar=-2.0),
         positive(2, 2, 2))
for name in ("_scatter_plus_scalar", "_scatter_minus_scalar"):     # dense: the plain ops
    case(name, lambda F, x, n=name: getattr(F._internal, n)(x, scalar=0.7), normal(3, 2))
case("_scatter_elemwise_div", lambda F, a, b: F._internal._scatter_elemwise_div(a, b),
     normal(2, 3), positive(2, 3))
case("_power_scalar", lambda F, x: F._internal._power_scalar(x, scalar=2.5), positive(3, 3))
case("_rpower_scalar", lambda F, x: F._internal._rpower_scalar(x, scalar=1.5), normal(3, 3))
case("clip", lambda F, x: F.clip(x, -0.5, 0.7), normal(4, 5))
case("clip_wide", lambda F, x: F.clip(x, -3.0, 3.0), normal(2, 3, 4))
case("add_n", lambda F, a, b, c: F.add_n(a, b, c), normal(2, 3), normal(2, 3), normal(2, 3))
case("where", lambda F, c, a, b: F.where(c, a, b), indices(2, 3, 4), normal(3, 4), normal(3, 4))
case("cast_f64", lambda F, x: F.cast(x, dtype="float64"), normal(2, 3))
case("isnan", lambda F, x: F.contrib.isnan(x), np.array([1.0, np.nan, np.inf], np.float32))
case("isinf", lambda F, x: F.contrib.isinf(x), np.array([1.0, np.nan, -np.inf], np.float32))
case("isfinite", lambda F, x: F.contrib.isfinite(x),
     np.array([[1.0, np.nan], [np.inf, -2.0]], np.float32))
case("hardmax", lambda F, x: F.contrib.hardmax(x), normal(3, 5))
case("hardmax_axis0", lambda F, x: F.contrib.hardmax(x, axis=0), normal(4, 2))

# layers
case("conv2d", lambda F, x, w, b: F.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1)),
     normal(2, 3, 8, 8), normal(4, 3, 3, 3), normal(4))
case("conv2d_strided_grouped", lambda F, x, w: F.Convolution(
    x, w, kernel=(3, 3), num_filter=4, stride=(2, 2), dilate=(2, 1), num_group=2, no_bias=True),
    normal(1, 4, 11, 9), normal(4, 2, 3, 3))
case("conv1d", lambda F, x, w: F.Convolution(x, w, kernel=(3,), num_filter=2, no_bias=True),
     normal(2, 3, 7), normal(2, 3, 3))
case("deconv2d", lambda F, x, w: F.Deconvolution(
    x, w, kernel=(3, 3), num_filter=3, stride=(2, 2), pad=(1, 1), adj=(1, 1), no_bias=True),
    normal(1, 2, 5, 5), normal(2, 3, 3, 3))
case("fc", lambda F, x, w, b: F.FullyConnected(x, w, b, num_hidden=5),
     normal(3, 4), normal(5, 4), normal(5))
case("fc_flatten_4d_nobias", lambda F, x, w: F.FullyConnected(x, w, num_hidden=3, no_bias=True),
     normal(2, 2, 3, 2), normal(3, 12))
case("fc_no_flatten", lambda F, x, w, b: F.FullyConnected(x, w, b, num_hidden=5, flatten=False),
     normal(2, 3, 4), normal(5, 4), normal(5))
case("fc_column_bias", lambda F, x, w, b: F.FullyConnected(x, w, b, num_hidden=5),
     normal(3, 4), normal(5, 4), normal(5, 1))
case("fc_no_flatten_column_bias", lambda F, x, w, b: F.FullyConnected(
    x, w, b, num_hidden=5, flatten=False), normal(2, 3, 4), normal(5, 4), normal(5, 1))
case("pool_max", lambda F, x: F.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max"),
     normal(2, 3, 6, 6))
case("pool_max_full_pad", lambda F, x: F.Pooling(
    x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max", pooling_convention="full"),
    normal(1, 2, 8, 8))
case("pool_avg_pad", lambda F, x: F.Pooling(x, kernel=(3, 3), stride=(1, 1), pad=(1, 1),
                                            pool_type="avg"), normal(1, 2, 5, 5))
case("pool_avg_exclude_pad", lambda F, x: F.Pooling(
    x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False),
    normal(1, 2, 7, 7))
case("pool_sum", lambda F, x: F.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="sum"),
     normal(1, 2, 4, 4))
case("pool_global_avg", lambda F, x: F.Pooling(x, kernel=(1, 1), global_pool=True,
                                               pool_type="avg"), normal(2, 3, 5, 4))
case("pool_global_max", lambda F, x: F.Pooling(x, kernel=(1, 1), global_pool=True,
                                               pool_type="max"), normal(2, 3, 5, 4))
case("pool_global_sum", lambda F, x: F.Pooling(x, kernel=(1, 1), global_pool=True,
                                               pool_type="sum"), normal(2, 3, 3, 3))
case("pool_1d", lambda F, x: F.Pooling(x, kernel=(3,), stride=(2,), pool_type="max"),
     normal(2, 3, 9))
case("batchnorm", lambda F, x, g, b, m, v: F.BatchNorm(x, g, b, m, v, fix_gamma=False, eps=1e-3),
     normal(2, 3, 4, 4), normal(3), normal(3), normal(3), positive(3))
case("batchnorm_fix_gamma", lambda F, x, g, b, m, v: F.BatchNorm(x, g, b, m, v),
     normal(2, 4, 3), normal(4), normal(4), normal(4), positive(4))
case("layernorm", lambda F, x, g, b: F.LayerNorm(x, g, b), normal(3, 8), normal(8), normal(8))
case("layernorm_3d", lambda F, x, g, b: F.LayerNorm(x, g, b, eps=1e-3), normal(2, 3, 6),
     normal(6), normal(6), rtol=1e-4)
for act in ("relu", "sigmoid", "tanh", "softrelu", "softsign"):
    case("activation_" + act, lambda F, x, a=act: F.Activation(x, act_type=a), normal(3, 4))
for act, kw in (("leaky", {"slope": 0.1}), ("elu", {"slope": 0.7}), ("selu", {}),
                ("gelu", {}), ("rrelu", {})):
    case("leakyrelu_" + act, lambda F, x, a=act, k=kw: F.LeakyReLU(x, act_type=a, **k),
         normal(3, 5), rtol=1e-4)
case("prelu", lambda F, x, g: F.LeakyReLU(x, g, act_type="prelu"), normal(2, 3, 4, 4),
     positive(3))
case("prelu_one", lambda F, x, g: F.LeakyReLU(x, g, act_type="prelu"), normal(2, 5),
     positive(1))
case("softmax", lambda F, x: F.softmax(x), normal(3, 6))
case("softmax_axis_temperature", lambda F, x: F.softmax(x, axis=1, temperature=2.0),
     normal(2, 4, 3))
case("log_softmax", lambda F, x: F.log_softmax(x), normal(3, 6), rtol=1e-4)
case("log_softmax_axis0", lambda F, x: F.log_softmax(x, axis=0), normal(4, 3), rtol=1e-4)
case("softmaxoutput", lambda F, x, l: F.SoftmaxOutput(x, l), normal(4, 5), indices(5, 4))
case("softmaxoutput_multi", lambda F, x, l: F.SoftmaxOutput(x, l, multi_output=True),
     normal(2, 3, 4), indices(3, 2, 4))
case("dropout", lambda F, x: F.Dropout(x, p=0.5), normal(3, 4))
case("embedding", lambda F, i, w: F.Embedding(i, w, input_dim=7, output_dim=3),
     indices(7, 2, 4), normal(7, 3))
case("sparse_embedding", lambda F, i, w: F.contrib.SparseEmbedding(i, w, input_dim=7,
                                                                   output_dim=3),
     indices(7, 2, 4), normal(7, 3))
case("dot", lambda F, a, b: F.dot(a, b), normal(3, 4), normal(4, 5))
case("dot_transposed", lambda F, a, b: F.dot(a, b, transpose_a=True, transpose_b=True),
     normal(4, 3), normal(5, 4))
case("dot_nd", lambda F, a, b: F.dot(a, b), normal(2, 3, 4), normal(4, 2, 2))
case("batch_dot", lambda F, a, b: F.batch_dot(a, b), normal(2, 3, 4), normal(2, 4, 5))
case("batch_dot_transposed", lambda F, a, b: F.batch_dot(a, b, transpose_a=True,
                                                         transpose_b=True),
     normal(2, 4, 3), normal(2, 5, 4))

# shapes and indexing
case("reshape_codes", lambda F, x: F.reshape(x, shape=(0, -1)), normal(2, 3, 4))
case("reshape_split", lambda F, x: F.reshape(x, shape=(-4, 2, -1, -2)), normal(6, 5))
case("reshape_merge", lambda F, x: F.reshape(x, shape=(-3, -2)), normal(2, 3, 4))
case("flatten", lambda F, x: F.flatten(x), normal(2, 3, 4))
case("transpose", lambda F, x: F.transpose(x), normal(2, 3, 4))
case("transpose_axes", lambda F, x: F.transpose(x, axes=(0, 2, 1)), normal(2, 3, 4))
case("swapaxes", lambda F, x: F.swapaxes(x, dim1=0, dim2=2), normal(2, 3, 4))
case("expand_dims", lambda F, x: F.expand_dims(x, axis=1), normal(2, 3))
case("expand_dims_last", lambda F, x: F.expand_dims(x, axis=-1), normal(2, 3))
case("squeeze", lambda F, x: F.squeeze(x), normal(2, 1, 3, 1))
case("squeeze_axis", lambda F, x: F.squeeze(x, axis=1), normal(2, 1, 3, 1))
case("concat", lambda F, a, b: F.concat(a, b, dim=1), normal(2, 3), normal(2, 4))
case("concat_axis0", lambda F, a, b, c: F.concat(a, b, c, dim=0), normal(1, 3), normal(2, 3),
     normal(3, 3))
case("stack", lambda F, a, b: F.stack(a, b, axis=1), normal(2, 3), normal(2, 3))
case("split", lambda F, x: F.split(x, num_outputs=3, axis=1), normal(2, 6))
case("split_squeeze", lambda F, x: F.split(x, num_outputs=2, axis=0, squeeze_axis=True),
     normal(2, 3))
case("slice", lambda F, x: F.slice(x, begin=(0, 1), end=(2, None)), normal(3, 4))
case("slice_step", lambda F, x: F.slice(x, begin=(None, 3), end=(None, 0), step=(1, -2)),
     normal(2, 5))
case("slice_axis", lambda F, x: F.slice_axis(x, axis=1, begin=1, end=3), normal(2, 5))
case("slice_axis_none", lambda F, x: F.slice_axis(x, axis=0, begin=-2, end=None), normal(4, 2))
case("zeros_like", lambda F, x: F.zeros_like(x), normal(2, 3))
case("ones_like", lambda F, x: F.ones_like(x), normal(3, 1))
case("tile", lambda F, x: F.tile(x, reps=(2, 3)), normal(2, 3))
case("tile_more", lambda F, x: F.tile(x, reps=(2, 1, 2)), normal(2, 3))
case("broadcast_to", lambda F, x: F.broadcast_to(x, shape=(3, 4)), normal(1, 4))
case("broadcast_to_keep", lambda F, x: F.broadcast_to(x, shape=(2, 0, 3)), normal(1, 2, 1))
for red in ("sum", "mean", "max", "min", "prod"):
    case(red, lambda F, x, r=red: getattr(F, r)(x), positive(2, 3))
    case(red + "_axis_keep", lambda F, x, r=red: getattr(F, r)(x, axis=1, keepdims=True),
         positive(2, 3, 4))
    case(red + "_exclude", lambda F, x, r=red: getattr(F, r)(x, axis=(0,), exclude=True),
         positive(2, 3, 4))
case("argmax", lambda F, x: F.argmax(x, axis=1), normal(3, 5))
case("argmax_keep", lambda F, x: F.argmax(x, axis=0, keepdims=True), normal(3, 5))
case("argmin", lambda F, x: F.argmin(x, axis=-1), normal(2, 3, 4))
case("take", lambda F, a, i: F.take(a, i), normal(5, 3), indices(7, 4))
case("take_wrap_axis1", lambda F, a, i: F.take(a, i, axis=1, mode="wrap"), normal(2, 4),
     indices(9, 3))
case("pad_constant", lambda F, x: F.Pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1),
                                        constant_value=0.5), normal(1, 2, 3, 3))
case("pad_edge", lambda F, x: F.Pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
     normal(1, 2, 3, 3))
case("pad_reflect", lambda F, x: F.Pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 1, 2)),
     normal(1, 1, 4, 4))
case("one_hot", lambda F, i: F.one_hot(i, depth=4), indices(4, 3))
case("one_hot_values", lambda F, i: F.one_hot(i, depth=3, on_value=2.0, off_value=-1.0),
     indices(3, 2, 2))


# channels-last layouts (through Transposes) and LayerNorm on another axis
case("conv2d_nhwc", lambda F, x, w, b: F.Convolution(x, w, b, kernel=(3, 3), num_filter=4,
                                                     pad=(1, 1), layout="NHWC"),
     normal(2, 6, 5, 3), normal(4, 3, 3, 3), normal(4))
case("conv1d_nwc", lambda F, x, w: F.Convolution(x, w, kernel=(2,), num_filter=3, stride=(2,),
                                                 no_bias=True, layout="NWC"),
     normal(2, 7, 4), normal(3, 2, 4))
case("deconv2d_nhwc", lambda F, x, w: F.Deconvolution(x, w, kernel=(3, 3), num_filter=2,
                                                      stride=(2, 2), no_bias=True,
                                                      layout="NHWC"),
     normal(1, 4, 4, 3), normal(3, 3, 3, 2))
case("pool_max_nhwc", lambda F, x: F.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max",
                                             layout="NHWC"), normal(2, 6, 6, 3))
case("pool_global_avg_nhwc", lambda F, x: F.Pooling(x, kernel=(1, 1), global_pool=True,
                                                    pool_type="avg", layout="NHWC"),
     normal(2, 4, 5, 3))
case("conv_weight_grad_nhwc", lambda F, x, g: F._internal._conv_weight_grad(
    x, g, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=4, layout="NHWC"),
    normal(2, 7, 7, 3), normal(2, 4, 4, 4), rtol=1e-4)
case("layernorm_axis1_stats", lambda F, x, g, b: F.LayerNorm(x, g, b, axis=1,
                                                             output_mean_var=True),
     normal(3, 4, 2), normal(4), normal(4), rtol=1e-4)
case("layernorm_stats", lambda F, x, g, b: F.LayerNorm(x, g, b, output_mean_var=True),
     normal(2, 5), normal(5), normal(5), rtol=1e-4)
case("mixed_dtypes", lambda F, a, b: F.broadcast_mul(F.cast(a, dtype="float64"), b),
     normal(2, 3), normal(2, 3).astype(np.float64))


# the operators of gradient graphs
for geo in ((3, 1, 1, 1), (3, 2, 1, 1), (3, 2, 0, 2), (2, 3, 1, 1), (1, 2, 0, 1)):
    k, st, pd, dl = geo
    size = 9
    out = (size + 2 * pd - dl * (k - 1) - 1) // st + 1
    case(f"conv_weight_grad_k{k}s{st}p{pd}d{dl}", lambda F, x, g, k=k, st=st, pd=pd, dl=dl:
         F._internal._conv_weight_grad(x, g, kernel=(k, k), stride=(st, st), pad=(pd, pd),
                                       dilate=(dl, dl), num_filter=4),
         normal(2, 3, size, size), normal(2, 4, out, out), rtol=1e-4)
case("softmax_grad", lambda F, y, g: F._internal._softmax_grad(y, g), positive(3, 4),
     normal(3, 4))
case("softmax_grad_axis0", lambda F, y, g: F._internal._softmax_grad(y, g, axis=0),
     positive(3, 4), normal(3, 4))
case("log_softmax_grad", lambda F, y, g: F._internal._log_softmax_grad(y, g), normal(2, 5),
     normal(2, 5))
for cmp in ("equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal"):
    case(f"{cmp}_scalar", lambda F, x, c=cmp: op(F, f"_{c}_scalar")(x, scalar=0.0),
         np.array([[-1.0, 0.0, 2.0]], np.float32))
    case(f"broadcast_{cmp}", lambda F, a, b, c=cmp: op(F, f"broadcast_{c}")(a, b),
         indices(3, 2, 3), indices(3, 1, 3))
    case(f"_{cmp}", lambda F, a, b, c=cmp: op(F, f"_{c}")(a, b), indices(3, 4),
         indices(3, 4))
for name in ("logical_and", "logical_or", "logical_xor"):      # zero is false
    case(f"_{name}", lambda F, a, b, n=name: op(F, f"_{n}")(a, b),
         np.array([[0.0, 0.0, 1.5, -2.0], [0.0, 3.0, 0.0, 0.25]], np.float32),
         np.array([[0.0, 0.5, 0.0, -1.0], [2.0, 0.0, 0.0, 4.0]], np.float32))
case("sum_to", lambda F, x: F.sum_to(x, shape=(1, 3)), normal(2, 4, 3))
case("sum_to_same", lambda F, x: F.sum_to(x, shape=(2, 3)), normal(2, 3))


@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_one_op_graph_runs_in_onnxruntime_as_in_mxlite(fn, inputs, rtol, tmp_path):
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    if len(out) > 1 and not isinstance(expected, list):
        expected = list(expected)
    aux = set(out.list_auxiliary_states())          # BatchNorm's moving statistics
    params = {n: mx.nd.array(a) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs) if n not in aux}
    got = export_and_run(out, params, feeds, tmp_path)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = e.asnumpy()
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * 1e-1)


def _as(dtype, a):
    if a.dtype != np.float32:
        return a
    if np.dtype(dtype).kind == "i":             # integers: the values scaled and rounded
        return np.round(a * 3).astype(dtype)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int64"])
@pytest.mark.parametrize("fn,inputs,rtol", CASES)
def test_one_op_graph_in_other_float_dtypes(fn, inputs, rtol, dtype, tmp_path):
    """The same graphs in float64, float16, int32 and int64 (integer inputs: the values
    scaled and rounded): exported with the dtype and checked by the checker's type
    inference; run in onnxruntime where its CPU provider has a kernel for the dtype (a
    NOT_IMPLEMENTED from onnxruntime is its limit, not the export's); an op mxlite computes
    in floats only refuses integers with an MXNetError (a skip, naming it)."""
    from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtMissing
    inputs = [_as(dtype, a) for a in inputs]
    names = [f"in{i}" for i in range(len(inputs))]
    out = fn(mx.sym, *[mx.sym.var(n) for n in names])
    try:
        expected = fn(mx.nd, *[mx.nd.array(a, dtype=a.dtype) for a in inputs])
    except mx.MXNetError as e:
        pytest.skip(f"mxlite computes this op in float32/float64 only: {e}")
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    aux = set(out.list_auxiliary_states())
    params = {n: mx.nd.array(a, dtype=a.dtype) for n, a in zip(names, inputs) if n in aux}
    feeds = {n: a for n, a in zip(names, inputs) if n not in aux}
    try:
        got = export_and_run(out, params, feeds, tmp_path)
    except OrtMissing as e:     # exported and checked; onnxruntime cannot run it
        pytest.xfail(f"onnxruntime's CPU provider has no {dtype} kernel: {str(e)[:120]}")
    for g, e in zip(got, expected):
        e = e.asnumpy()
        # exact for integer results; float results in the case's tolerance (float16's own)
        tol = 0 if e.dtype.kind in "iub" else 2e-2 if e.dtype == np.float16 else rtol
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, e.shape, g.dtype, e.dtype)
        np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64), rtol=tol,
                                   atol=tol)
