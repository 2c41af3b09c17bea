"""Layers: convolution, fully connected, pooling, normalisation, activations, softmax,
dropout, embedding and the matrix products."""
import math

import numpy as np

from ..table import translates

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _channels_last(node):
    """True for a channels-last ``layout`` (NWC, NHWC, NDHWC)."""
    layout = getattr(node.attrs, "layout", None)
    return layout is not None and layout[-1] == "C"


def _to_first(ctx, x, ndim):
    """A channels-last value (N, *spatial, C) as channels first (N, C, *spatial)."""
    return ctx.node("Transpose", [x], perm=[0, ndim - 1] + list(range(1, ndim - 1)))


def _to_last(ctx, x, ndim, outs=None):
    """A channels-first value as channels last."""
    return ctx.node("Transpose", [x], outs, perm=[0] + list(range(2, ndim)) + [1])


def _in_layout(ctx, node, ins, outs, n_layout_inputs, write):
    """Run ``write(ins, outs)`` (a channels-first translation) on channels-first views of
    the first ``n_layout_inputs`` inputs, converting a channels-last node's inputs and
    output with Transposes (MXNet's channels-last weight (O, *k, I) is laid out as data)."""
    if not _channels_last(node):
        write(ins, outs)
        return
    ndim = len(ctx.shape(node.inputs[0]))
    moved = [_to_first(ctx, x, ndim) if i < n_layout_inputs and x is not None else x
             for i, x in enumerate(ins)]
    inner = [ctx.fresh("channels_first")]
    write(moved, inner)
    _to_last(ctx, inner[0], ndim, outs[:1])


def _spatial(values, nd, fill):
    values = tuple(values or ())
    return list(values) if values else [fill] * nd


@translates("Convolution", onnx_ops=["Conv", "Transpose"],
            notes="channels-last layouts through Transposes")
def _convolution(ctx, node, ins, outs):
    a = node.attrs
    nd = len(a.kernel)
    pad = _spatial(a.pad, nd, 0)

    def write(ins, outs):
        ctx.node("Conv", [i for i in ins if i is not None], outs, kernel_shape=list(a.kernel),
                 strides=_spatial(a.stride, nd, 1), dilations=_spatial(a.dilate, nd, 1),
                 pads=pad + pad, group=a.num_group)
    _in_layout(ctx, node, ins, outs, 2, write)


@translates("Deconvolution", onnx_ops=["ConvTranspose", "Transpose"],
            notes="channels-last layouts through Transposes; not target_shape")
def _deconvolution(ctx, node, ins, outs):
    a = node.attrs
    nd = len(a.kernel)
    if a.target_shape:
        raise ctx.unsupported(node, "target_shape")
    pad = _spatial(a.pad, nd, 0)

    def write(ins, outs):
        ctx.node("ConvTranspose", [i for i in ins if i is not None], outs,
                 kernel_shape=list(a.kernel), strides=_spatial(a.stride, nd, 1),
                 dilations=_spatial(a.dilate, nd, 1), pads=pad + pad,
                 output_padding=_spatial(a.adj, nd, 0), group=a.num_group)
    _in_layout(ctx, node, ins, outs, 2, write)


@translates("FullyConnected", onnx_ops=["Flatten", "Gemm", "MatMul", "Transpose", "Add"],
            notes="flatten=False: MatMul with the transposed weight, then Add")
def _fully_connected(ctx, node, ins, outs):
    a = node.attrs
    x, w = ins[0], ins[1]
    b = None if a.no_bias else ins[2]
    if b and len(ctx.shape(node.inputs[2])) == 2:      # a (num_hidden, 1) bias: a row
        b = ctx.node("Flatten", [b], axis=0)
    if a.flatten:
        if len(ctx.shape(node.inputs[0])) != 2:
            x = ctx.node("Flatten", [x], axis=1)
        ctx.node("Gemm", [x, w] + ([b] if b else []), outs, transB=1)
        return
    y = ctx.node("MatMul", [x, ctx.node("Transpose", [w], perm=[1, 0])],
                 None if b else outs)
    if b:
        ctx.node("Add", [y, b], outs)


@translates("Pooling", onnx_ops=["MaxPool", "AveragePool", "LpPool", "GlobalMaxPool",
                                 "GlobalAveragePool", "GlobalLpPool", "Mul"],
            notes="'full' is ceil_mode; sum pooling is AveragePool times the window size")
def _pooling(ctx, node, ins, outs):
    _in_layout(ctx, node, ins, outs, 1, lambda i, o: _pool_first(ctx, node, i, o))


def _pool_first(ctx, node, ins, outs):
    a = node.attrs
    kind = a.pool_type
    if a.global_pool:
        op = {"max": "GlobalMaxPool", "avg": "GlobalAveragePool", "sum": "GlobalAveragePool",
              "lp": "GlobalLpPool"}[kind]
        extra = {"p": int(a.p_value or 2)} if kind == "lp" else {}
        if kind == "sum":
            size = int(np.prod(ctx.shape(node.inputs[0])[2:]))
            y = ctx.node(op, ins)
            scale = ctx.const(np.asarray(size, ctx.dtype(node.inputs[0])), base="size")
            ctx.node("Mul", [y, scale], outs)
        else:
            ctx.node(op, ins, outs, **extra)
        return
    nd = len(a.kernel)
    pad = _spatial(a.pad, nd, 0)
    common = dict(kernel_shape=list(a.kernel), strides=_spatial(a.stride, nd, 1),
                  pads=pad + pad)
    if a.pooling_convention == "full":
        common["ceil_mode"] = 1
    elif a.pooling_convention != "valid":
        raise ctx.unsupported(node, f"pooling_convention={a.pooling_convention!r}")
    if kind == "max":
        ctx.node("MaxPool", ins, outs, **common)
    elif kind == "lp":
        ctx.node("LpPool", ins, outs, p=int(a.p_value or 2), **{
            k: v for k, v in common.items() if k != "ceil_mode"})
    else:
        include = 1 if (a.count_include_pad is None or a.count_include_pad or kind == "sum") \
            else 0
        if kind == "avg":
            ctx.node("AveragePool", ins, outs, count_include_pad=include, **common)
        else:
            y = ctx.node("AveragePool", ins, count_include_pad=1, **common)
            size = ctx.const(np.asarray(math.prod(a.kernel), ctx.dtype(node.inputs[0])),
                             base="size")
            ctx.node("Mul", [y, size], outs)


@translates("BatchNorm", onnx_ops=["BatchNormalization"],
            notes="inference: the moving statistics; fix_gamma=True uses a scale of ones")
def _batch_norm(ctx, node, ins, outs):
    a = node.attrs
    if a.axis not in (1, -len(ctx.shape(node.inputs[0])) + 1):
        raise ctx.unsupported(node, f"axis={a.axis}")
    gamma = ins[1]
    if a.fix_gamma:
        c = ctx.shape(node.inputs[1])
        gamma = ctx.const(np.ones(c, ctx.dtype(node.inputs[1])), base="ones")
    ctx.node("BatchNormalization", [ins[0], gamma, ins[2], ins[3], ins[4]], outs[:1],
             epsilon=float(a.eps))


@translates("LayerNorm", onnx_ops=["LayerNormalization", "Transpose", "Reciprocal"],
            notes="another axis than the last through Transposes; output_mean_var gives "
                  "the standard deviation (1 / ONNX's InvStdDev); ONNX keeps the statistics "
                  "in float32, also for float64 data")
def _layer_norm(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    axis = a.axis % ndim
    perm = list(range(ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    x = ins[0] if axis == ndim - 1 else ctx.node("Transpose", [ins[0]], perm=perm)
    # the statistics also without output_mean_var: they are hidden outputs, which a
    # gradient graph reads (_layer_norm_grad)
    want_stats = len(outs) > 1
    results = [ctx.fresh("ln")] + ([ctx.fresh("mean"), ctx.fresh("inv_std")]
                                   if want_stats else [])
    stash = ctx.onnx.TensorProto.FLOAT          # ONNX keeps the statistics in float32
    ctx.node("LayerNormalization", [x, ins[1], ins[2]], results, axis=-1,
             epsilon=float(a.eps), stash_type=stash)
    back = (lambda v, o: ctx.node("Transpose", [v], o, perm=perm)) if axis != ndim - 1 else \
        (lambda v, o: ctx.node("Identity", [v], o))
    back(results[0], outs[:1])
    if want_stats:
        def stat(v, i):            # the statistics in the output's dtype (ONNX stashes them)
            out = ctx.dtype((node, i))
            if stash != ctx.onnx.helper.np_dtype_to_tensor_dtype(out):
                v = ctx.node("Cast", [v], to=ctx.onnx.helper.np_dtype_to_tensor_dtype(out))
            return v
        back(stat(results[1], 1), outs[1:2])
        back(stat(ctx.node("Reciprocal", [results[2]]), 2), outs[2:3])


@translates("Activation", onnx_ops=["Relu", "Sigmoid", "Tanh", "Softplus", "Softsign"])
def _activation(ctx, node, ins, outs):
    op = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh", "softrelu": "Softplus",
          "softsign": "Softsign"}.get(node.attrs.act_type)
    if op is None:
        raise ctx.unsupported(node, f"act_type={node.attrs.act_type!r}")
    ctx.node(op, ins, outs)


@translates("LeakyReLU", onnx_ops=["LeakyRelu", "Elu", "Selu", "Gelu", "PRelu", "Reshape"],
            notes="gelu: Gelu from opset 20 (erf form); rrelu exports its inference form")
def _leaky_relu(ctx, node, ins, outs):
    a = node.attrs
    kind = a.act_type
    if kind == "leaky":
        ctx.node("LeakyRelu", ins[:1], outs, alpha=float(a.slope))
    elif kind == "rrelu":
        ctx.node("LeakyRelu", ins[:1], outs, alpha=(a.lower_bound + a.upper_bound) / 2)
    elif kind == "elu":
        ctx.node("Elu", ins[:1], outs, alpha=float(a.slope))
    elif kind == "selu":
        ctx.node("Selu", ins[:1], outs, alpha=_SELU_ALPHA, gamma=_SELU_LAMBDA)
    elif kind == "gelu":
        _gelu(ctx, node, ins[0], outs)
    else:                                               # prelu: one slope per channel
        shape = ctx.shape(node.inputs[0])
        g = ctx.shape(node.inputs[1])
        slope = ins[1]
        if g[0] != 1 and len(shape) > 2:
            slope = ctx.node("Reshape", [slope, ctx.int64s([g[0]] + [1] * (len(shape) - 2))])
        ctx.node("PRelu", [ins[0], slope], outs)


def _gelu(ctx, node, x, outs):
    if ctx.opset >= 20:
        ctx.node("Gelu", [x], outs)
        return
    dt = ctx.dtype(node.inputs[0])
    c = lambda v, base: ctx.const(np.asarray(v, dt), base=base)  # noqa: E731
    phi = ctx.node("Add", [ctx.node("Erf", [ctx.node("Mul", [x, c(0.5 ** 0.5, "rsqrt2")])]),
                           c(1.0, "one")])
    ctx.node("Mul", [ctx.node("Mul", [x, phi]), c(0.5, "half")], outs)


def _softmax_common(ctx, node, ins, outs, op):
    a = node.attrs
    if a.use_length:
        raise ctx.unsupported(node, "use_length=True")
    x = ins[0]
    if a.temperature is not None and a.temperature != 1.0:
        t = ctx.const(np.asarray(a.temperature, ctx.dtype(node.inputs[0])), base="temperature")
        x = ctx.node("Div", [x, t])
    y_dtype = ctx.dtype((node, 0))
    if y_dtype != ctx.dtype(node.inputs[0]):
        x = ctx.node("Cast", [x], to=ctx.onnx.helper.np_dtype_to_tensor_dtype(y_dtype))
    ctx.node(op, [x], outs, axis=int(a.axis))


@translates("softmax", onnx_ops=["Softmax", "Div"], notes="temperature divides first")
def _softmax(ctx, node, ins, outs):
    _softmax_common(ctx, node, ins, outs, "Softmax")


@translates("log_softmax", onnx_ops=["LogSoftmax", "Div"])
def _log_softmax(ctx, node, ins, outs):
    _softmax_common(ctx, node, ins, outs, "LogSoftmax")


@translates("SoftmaxOutput", onnx_ops=["Softmax"], unread=(1,),
            notes="inference: the softmax of the data; the label is not an input")
def _softmax_output(ctx, node, ins, outs):
    a = node.attrs
    ndim = len(ctx.shape(node.inputs[0]))
    if a.multi_output and ndim > 2:
        axis = 1
    elif a.preserve_shape or ndim <= 2:
        axis = -1
    else:                               # softmax over the flattened non-batch axes
        shape = ctx.shape(node.inputs[0])
        flat = ctx.node("Flatten", ins[:1], axis=1)
        y = ctx.node("Softmax", [flat], axis=-1)
        ctx.node("Reshape", [y, ctx.int64s(shape)], outs)
        return
    ctx.node("Softmax", ins[:1], outs, axis=axis)


@translates("LinearRegressionOutput", "MAERegressionOutput", onnx_ops=["Identity"],
            unread=(1,), notes="inference: the data; the label is not an input")
def _regression_output(ctx, node, ins, outs):
    ctx.node("Identity", ins[:1], outs)


@translates("LogisticRegressionOutput", onnx_ops=["Sigmoid"], unread=(1,),
            notes="inference: the sigmoid of the data; the label is not an input")
def _logistic_output(ctx, node, ins, outs):
    ctx.node("Sigmoid", ins[:1], outs)


@translates("_contrib_hardmax", onnx_ops=["Hardmax", "Cast"])
def _hardmax(ctx, node, ins, outs):
    ctx.in_dtype_it_takes("Hardmax", node, ins, outs, axis=int(node.attrs.axis))


@translates("Dropout", onnx_ops=["Identity"], notes="inference: the identity; not "
            "mode='always' (a random mask in inference)")
def _dropout(ctx, node, ins, outs):
    if node.attrs.mode == "always":
        raise ctx.unsupported(node, "mode='always' (a random mask in inference, which ONNX "
                                    "would draw from another stream)")
    ctx.node("Identity", ins[:1], outs[:1])


@translates("Embedding", "_contrib_SparseEmbedding", onnx_ops=["Cast", "Gather"],
            notes="indices cast to int64; an index out of range is an error in ONNX")
def _embedding(ctx, node, ins, outs):
    idx = ctx.node("Cast", [ins[0]], to=ctx.onnx.TensorProto.INT64)
    ctx.node("Gather", [ins[1], idx], outs, axis=0)


def _last_two_swapped(ctx, value, ndim):
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return ctx.node("Transpose", [value], perm=perm)


@translates("batch_dot", onnx_ops=["MatMul", "Transpose"])
def _batch_dot(ctx, node, ins, outs):
    a, b = ins
    if node.attrs.transpose_a:
        a = _last_two_swapped(ctx, a, len(ctx.shape(node.inputs[0])))
    if node.attrs.transpose_b:
        b = _last_two_swapped(ctx, b, len(ctx.shape(node.inputs[1])))
    ctx.node("MatMul", [a, b], outs)


@translates("dot", onnx_ops=["MatMul", "Transpose", "Reshape"],
            notes="N-D operands are read as matrices (MXNet's dot), through Reshape")
def _dot(ctx, node, ins, outs):
    sa, sb = ctx.shape(node.inputs[0]), ctx.shape(node.inputs[1])
    ta, tb = node.attrs.transpose_a, node.attrs.transpose_b
    a, b = ins
    if len(sa) == 2 and len(sb) == 2:
        if ta:
            a = ctx.node("Transpose", [a], perm=[1, 0])
        if tb:
            b = ctx.node("Transpose", [b], perm=[1, 0])
        ctx.node("MatMul", [a, b], outs)
        return
    # as 2-D: lhs (rest, k) or transposed (k, rest); rhs (k, rest) or transposed (rest, k)
    ka = sa[0] if ta else sa[-1]
    ra = (ka, int(np.prod(sa[1:]))) if ta else (int(np.prod(sa[:-1])), ka)
    rb = (int(np.prod(sb[:-1])), sb[-1]) if tb else (sb[0], int(np.prod(sb[1:])))
    a2 = ctx.node("Reshape", [a, ctx.int64s(ra)])
    b2 = ctx.node("Reshape", [b, ctx.int64s(rb)])
    if ta:
        a2 = ctx.node("Transpose", [a2], perm=[1, 0])
    if tb:
        b2 = ctx.node("Transpose", [b2], perm=[1, 0])
    y = ctx.node("MatMul", [a2, b2])
    ctx.node("Reshape", [y, ctx.int64s(ctx.shape((node, 0)))], outs)
