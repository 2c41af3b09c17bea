"""More ONNX importers (registered in ``import_table.IMPORTS``): sorting and scans,
rounding, logic, norms, scatter/gather by index tuples, depth/space rearrangement, instance
normalisation, random draws and determinants."""
import numpy as np

from .import_ops import _S, _all_const, _axes, _spatial_pads, _value, _zero_padded
from .import_table import imports


@imports("TopK", into=["topk"])
def _topk(ic, node, ins):
    k = int(np.asarray(ic.const(node, ins[1], "k")).reshape(-1)[0])
    axis = ic.attr(node, "axis", -1)
    ascend = not ic.attr(node, "largest", 1)
    values, idx = _S().topk(ic.sym(ins[0]), axis=axis, k=k, ret_typ="both",
                            is_ascend=ascend, dtype="int64")
    return [ic.out(values, node, 0), ic.out(idx, node, 1)]


@imports("CumSum", into=["cumsum", "flip"])
def _cumsum(ic, node, ins):
    axis = int(np.asarray(ic.const(node, ins[1], "axis")).reshape(()))
    if ic.attr(node, "exclusive", 0):
        raise ic.error(node, "exclusive=1")
    x = ic.sym(ins[0])
    reverse = ic.attr(node, "reverse", 0)
    if reverse:
        x = _S().flip(x, axis=axis)
    y = _S().cumsum(x, axis=axis)
    if reverse:
        y = _S().flip(y, axis=axis)
    return [ic.out(y, node)]


@imports("Round", into=["floor", "elemwise_sub", "_greater_scalar", "_equal_scalar",
                         "_mod_scalar", "elemwise_mul", "elemwise_add"])
def _round(ic, node, ins):
    """ONNX rounds halves to even; mxlite's round takes them away from 0 and rint down (as
    MXNet's), so: floor(x) + 1 where the rest is over a half, or exactly a half with an odd
    floor."""
    if ins[0].is_const:
        return [_value(np.rint(ins[0].const))]
    S, internal = _S(), _S()._internal
    x = ic.sym(ins[0])
    f = S.floor(x)
    rest = x - f
    odd = internal._mod_scalar(f, scalar=2.0)
    up = internal._greater_scalar(rest, scalar=0.5) + \
        internal._equal_scalar(rest, scalar=0.5) * odd
    return [ic.out(f + up, node)]


@imports("HardSigmoid", into=["hard_sigmoid"])
def _hard_sigmoid(ic, node, ins):
    return [ic.out(_S().hard_sigmoid(ic.sym(ins[0]), alpha=ic.attr(node, "alpha", 0.2),
                                     beta=ic.attr(node, "beta", 0.5)), node)]


def _logic(mx_name, np_fn):
    def handler(ic, node, ins):
        if _all_const(ins):
            return [_value(np_fn(ins[0].const, ins[1].const))]
        return [ic.out(getattr(_S(), mx_name)(ic.sym(ins[0]), ic.sym(ins[1])), node)]
    return handler


imports("And", into=["broadcast_logical_and"])(_logic("broadcast_logical_and",
                                                      np.logical_and))
imports("Xor", into=["broadcast_logical_xor"])(_logic("broadcast_logical_xor",
                                                      np.logical_xor))


def _norm(order):
    def handler(ic, node, ins):
        axes = _axes(ic, node, ins, 1)
        keep = bool(ic.attr(node, "keepdims", 1))
        kw = {} if axes is None else {"axis": tuple(axes)}
        return [ic.out(_S().norm(ic.sym(ins[0]), ord=order, keepdims=keep, **kw), node)]
    return handler


imports("ReduceL1", into=["norm"])(_norm(1))
imports("ReduceL2", into=["norm"])(_norm(2))


@imports("GatherND", into=["gather_nd", "transpose", "expand_dims", "concat", "reshape"])
def _gather_nd(ic, node, ins):
    """ONNX's index tuples are the last axis of ``indices``, MXNet's the first; a
    ``batch_dims`` prefix becomes constant leading rows of the tuples (each batch position
    indexes itself)."""
    data, indices = ins
    shape = indices.shape
    if shape is None or data.shape is None:
        raise ic.error(node, "needs the static shapes of data and indices")
    b = ic.attr(node, "batch_dims", 0)
    q = len(shape)
    S = _S()
    if q == 1:                          # one tuple: the slice it names
        idx = S.expand_dims(ic.sym(indices), axis=1)
        y = S.gather_nd(ic.sym(data), idx)
        return [ic.out(S.reshape(y, shape=tuple(data.shape[shape[0]:])), node)]
    perm = (q - 1,) + tuple(range(q - 1))
    idx = S.transpose(ic.sym(indices), axes=perm)
    if b:
        dtype = indices.dtype if indices.dtype is not None else np.dtype(np.int64)
        grid = np.indices(shape[:-1], dtype=dtype)[:b]
        idx = S.concat(ic.sym(_value(grid)), idx, dim=0)
    return [ic.out(S.gather_nd(ic.sym(data), idx), node)]


@imports("DepthToSpace", into=["depth_to_space"])
def _depth_to_space(ic, node, ins):
    mode = ic.attr(node, "mode", b"DCR")
    if mode not in (b"DCR", "DCR"):
        raise ic.error(node, f"mode={mode!r} (MXNet's depth_to_space is DCR)")
    return [ic.out(_S().depth_to_space(ic.sym(ins[0]), block_size=ic.attr(node, "blocksize")),
                   node)]


@imports("SpaceToDepth", into=["space_to_depth"])
def _space_to_depth(ic, node, ins):
    return [ic.out(_S().space_to_depth(ic.sym(ins[0]), block_size=ic.attr(node, "blocksize")),
                   node)]


@imports("InstanceNormalization", into=["InstanceNorm"])
def _instance_norm(ic, node, ins):
    return [ic.out(_S().InstanceNorm(ic.sym(ins[0]), ic.sym(ins[1]), ic.sym(ins[2]),
                                     eps=ic.attr(node, "epsilon", 1e-5)), node)]


@imports("Range", into=[])
def _range(ic, node, ins):
    start, limit, delta = (np.asarray(ic.const(node, v, "range bounds")).reshape(())
                           for v in ins)
    return [_value(np.arange(start, limit, delta, dtype=np.result_type(start, limit, delta)))]


@imports("Det", into=["_linalg_det"])
def _det(ic, node, ins):
    return [ic.out(_S().linalg.det(ic.sym(ins[0])), node)]


def _random(kind, like):
    def handler(ic, node, ins):
        """Random draws: mxlite's own stream, so values differ from another runtime's (the
        distribution is the same); ``seed`` is not used."""
        dtype_code = ic.attr(node, "dtype")
        if like:
            out = _S()._internal
            x = ic.sym(ins[0])
            if dtype_code is not None:       # draws of that dtype, else the input's
                want = np.dtype(ic.onnx.helper.tensor_dtype_to_np_dtype(dtype_code))
                if ins[0].dtype is None or want != ins[0].dtype:
                    x = _S().cast(x, dtype=want.name)
            if kind == "normal":
                y = out._random_normal_like(x, loc=ic.attr(node, "mean", 0.0),
                                            scale=ic.attr(node, "scale", 1.0))
            else:
                y = out._random_uniform_like(x, low=ic.attr(node, "low", 0.0),
                                             high=ic.attr(node, "high", 1.0))
            return [ic.out(y, node)]
        dtype = np.dtype(ic.onnx.helper.tensor_dtype_to_np_dtype(dtype_code)) \
            if dtype_code is not None else np.dtype(np.float32)
        shape = tuple(ic.attr(node, "shape"))
        internal = _S()._internal
        if kind == "normal":
            y = internal._random_normal(loc=ic.attr(node, "mean", 0.0),
                                        scale=ic.attr(node, "scale", 1.0), shape=shape,
                                        dtype=dtype.name)
        else:
            y = internal._random_uniform(low=ic.attr(node, "low", 0.0),
                                         high=ic.attr(node, "high", 1.0), shape=shape,
                                         dtype=dtype.name)
        return [ic.out(y, node)]
    return handler


imports("RandomNormal", into=["_random_normal"])(_random("normal", False))
imports("RandomUniform", into=["_random_uniform"])(_random("uniform", False))
imports("RandomNormalLike", into=["_random_normal_like", "cast"])(_random("normal", True))
imports("RandomUniformLike", into=["_random_uniform_like", "cast"])(_random("uniform", True))


@imports("ReduceSumSquare", into=["square", "sum"])
def _reduce_sum_square(ic, node, ins):
    axes = _axes(ic, node, ins, 1)
    keep = bool(ic.attr(node, "keepdims", 1))
    kw = {} if axes is None else {"axis": tuple(axes)}
    return [ic.out(_S().sum(_S().square(ic.sym(ins[0])), keepdims=keep, **kw), node)]


@imports("Size", into=[])
def _size(ic, node, ins):
    if ins[0].shape is None:
        raise ic.error(node, "the size must be static (known from the model's input shapes)")
    return [_value(np.asarray(int(np.prod(ins[0].shape)), np.int64))]


@imports("EyeLike", into=[])
def _eye_like(ic, node, ins):
    shape = ins[0].shape
    if shape is None or len(shape) != 2:
        raise ic.error(node, "needs a static 2-D input shape")
    code = ic.attr(node, "dtype")
    dtype = np.dtype(ic.onnx.helper.tensor_dtype_to_np_dtype(code)) if code is not None \
        else ins[0].dtype
    return [_value(np.eye(shape[0], shape[1], ic.attr(node, "k", 0), dtype=dtype))]


@imports("Trilu", into=["broadcast_mul"])
def _trilu(ic, node, ins):
    """The kept triangle as a product with a constant 0/1 mask of the static shape."""
    shape = ins[0].shape
    if shape is None:
        raise ic.error(node, "needs the input's static shape")
    k = int(np.asarray(ic.const(node, ins[1], "k")).reshape(())) if len(ins) > 1 and \
        ins[1] is not None else 0
    rows, cols = shape[-2:]
    keep = (np.tril if not ic.attr(node, "upper", 1) else np.triu)(np.ones((rows, cols)), k)
    if ins[0].is_const:
        return [_value(ins[0].const * keep.astype(ins[0].dtype))]
    mask = ic.sym(_value(keep.astype(ins[0].dtype)))
    return [ic.out(_S().broadcast_mul(ic.sym(ins[0]), mask), node)]


@imports("GridSample", into=["BilinearSampler", "transpose"])
def _grid_sample(ic, node, ins):
    """MXNet's BilinearSampler: bilinear, align_corners=1, zeros outside; the grid's
    (x, y) pairs on the last axis become its axis 1."""
    mode = ic.attr(node, "mode", b"linear")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    padding = ic.attr(node, "padding_mode", b"zeros")
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if mode not in ("linear", "bilinear") or padding != "zeros" or \
            not ic.attr(node, "align_corners", 0):
        raise ic.error(node, f"mode={mode!r}, padding_mode={padding!r}, align_corners="
                             f"{ic.attr(node, 'align_corners', 0)} (mxlite's BilinearSampler "
                             "is bilinear, zeros, align_corners=1)")
    grid = _S().transpose(ic.sym(ins[1]), axes=(0, 3, 1, 2))
    return [ic.out(_S().BilinearSampler(ic.sym(ins[0]), grid), node)]


@imports("MaxRoiPool", into=["ROIPooling", "concat", "expand_dims", "cast"])
def _max_roi_pool(ic, node, ins):
    """MXNet's rois are (R, 5) rows of (batch index, x1, y1, x2, y2), as ONNX's."""
    y = _S().ROIPooling(ic.sym(ins[0]), ic.sym(ins[1]),
                        pooled_size=tuple(ic.attr(node, "pooled_shape")),
                        spatial_scale=ic.attr(node, "spatial_scale", 1.0))
    return [ic.out(y, node)]


_RNN_MODES = {"LSTM": "lstm", "GRU": "gru"}
# the ONNX gate block each MXNet gate block comes from (ONNX i, o, f, c -> MXNet i, f, g, o;
# z, r, h -> r, z, n)
_FROM_ONNX = {"lstm": (0, 2, 3, 1), "gru": (1, 0, 2), "rnn_relu": (0,), "rnn_tanh": (0,)}


def _rnn(op_type):
    def handler(ic, node, ins):
        """One ONNX RNN/LSTM/GRU node as mxlite's fused RNN of one layer, the weights packed
        into its flat ``parameters`` (MXNet's layout and gate order) at import."""
        from ..ops.registry import get_op
        from ..ops.rnn import _Layout
        hidden = ic.attr(node, "hidden_size")
        direction = ic.attr(node, "direction", b"forward")
        direction = direction.decode() if isinstance(direction, bytes) else direction
        if direction not in ("forward", "bidirectional") or ic.attr(node, "layout", 0) or \
                ic.attr(node, "clip") is not None or ic.attr(node, "input_forget", 0):
            raise ic.error(node, "reverse direction, layout=1, clip or input_forget")
        acts = [a.decode() if isinstance(a, bytes) else a
                for a in (ic.attr(node, "activations") or [])]
        if op_type == "RNN":
            mode = "rnn_relu" if acts and acts[0] == "Relu" else "rnn_tanh"
            if acts and acts[0] not in ("Tanh", "Relu"):
                raise ic.error(node, f"activations={acts}")
        else:
            mode = _RNN_MODES[op_type]
            defaults = (["Sigmoid", "Tanh", "Tanh"] if mode == "lstm" else ["Sigmoid", "Tanh"])
            if acts and acts[:len(defaults)] != defaults * (len(acts) // len(defaults)):
                raise ic.error(node, f"activations={acts}")
            if mode == "gru" and not ic.attr(node, "linear_before_reset", 0):
                raise ic.error(node, "linear_before_reset=0 (MXNet's GRU resets after the "
                                     "recurrent product)")
        if len(ins) > 7 and ins[7] is not None:
            raise ic.error(node, "peephole weights P")
        x_shape = ins[0].shape
        if x_shape is None:
            raise ic.error(node, "needs the input's static shape")
        W, R = ic.const(node, ins[1], "W"), ic.const(node, ins[2], "R")
        d = 2 if direction == "bidirectional" else 1
        gh = W.shape[1]
        B = ic.const(node, ins[3], "B") if len(ins) > 3 and ins[3] is not None else \
            np.zeros((d, 2 * gh), W.dtype)
        op = get_op("RNN")
        attrs = op.parse_attrs({"state_size": hidden, "num_layers": 1, "mode": mode,
                                "bidirectional": d == 2, "state_outputs": True})
        lay = _Layout(attrs, x_shape[2])
        flat = np.zeros(lay.size, W.dtype)
        order = _FROM_ONNX[mode]

        def mx_blocks(a):        # (G*H, ...) in ONNX's gate order -> MXNet's
            return np.concatenate([a[j * hidden:(j + 1) * hidden] for j in order])
        for k in range(d):
            for name, value in (("wx", W[k]), ("wh", R[k]), ("bx", B[k, :gh]),
                                ("bh", B[k, gh:])):
                off, shape = lay.weights[k][name]
                flat[off:off + int(np.prod(shape))] = mx_blocks(value).reshape(-1)
        S = _S()
        n = x_shape[1]

        def state(i):
            if len(ins) > i and ins[i] is not None:
                return ic.sym(ins[i])
            return ic.sym(_value(np.zeros((d, n, hidden), W.dtype)))
        args = [ic.sym(ins[0]), ic.sym(_value(flat)), state(5)]
        if mode == "lstm":
            args.append(state(6))
        kw = {}
        if len(ins) > 4 and ins[4] is not None:
            args.append(S.cast(ic.sym(ins[4]), dtype=np.dtype(W.dtype).name))
            kw["use_sequence_length"] = True
        outs = S.RNN(*args, state_size=hidden, num_layers=1, mode=mode,
                     bidirectional=d == 2, state_outputs=True, **kw)
        t = x_shape[0]
        y = S.transpose(S.reshape(outs[0], shape=(t, n, d, hidden)), axes=(0, 2, 1, 3))
        results = [ic.out(y, node, 0), ic.out(outs[1], node, 1)]
        if mode == "lstm":
            results.append(ic.out(outs[2], node, 2))
        return results
    return handler


imports("LSTM", into=["RNN", "reshape", "transpose", "cast"])(_rnn("LSTM"))
imports("GRU", into=["RNN", "reshape", "transpose", "cast"])(_rnn("GRU"))
imports("RNN", into=["RNN", "reshape", "transpose", "cast"])(_rnn("RNN"))


@imports("RoiAlign", into=["_contrib_ROIAlign", "concat", "expand_dims", "cast"])
def _roi_align(ic, node, ins):
    """MXNet's rois rows are (batch index, x1, y1, x2, y2): ONNX's batch_indices joined in
    front of its boxes; half_pixel is MXNet's aligned=True, output_half_pixel aligned=False."""
    mode = ic.attr(node, "mode", b"avg")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    ctm = ic.attr(node, "coordinate_transformation_mode", b"half_pixel")
    ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
    if mode != "avg":
        raise ic.error(node, f"mode={mode!r} (mxlite's ROIAlign averages)")
    S = _S()
    dtype = ins[1].dtype.name if ins[1].dtype is not None else "float32"
    index = S.expand_dims(S.cast(ic.sym(ins[2]), dtype=dtype), axis=1)
    rois = S.concat(index, ic.sym(ins[1]), dim=1)
    ratio = ic.attr(node, "sampling_ratio", 0)
    y = S.contrib.ROIAlign(ic.sym(ins[0]), rois,
                           pooled_size=(ic.attr(node, "output_height", 1),
                                        ic.attr(node, "output_width", 1)),
                           spatial_scale=ic.attr(node, "spatial_scale", 1.0),
                           sample_ratio=ratio if ratio > 0 else -1,
                           aligned=ctm == "half_pixel")
    return [ic.out(y, node)]


@imports("ReverseSequence", into=["SequenceReverse", "cast"])
def _reverse_sequence(ic, node, ins):
    """SequenceReverse along ``time_axis`` (0 with batch_axis 1, or 1 with batch_axis 0)."""
    time, batch = ic.attr(node, "time_axis", 0), ic.attr(node, "batch_axis", 1)
    if (time, batch) not in ((0, 1), (1, 0)):
        raise ic.error(node, f"time_axis={time}, batch_axis={batch} (mxlite's "
                             "SequenceReverse: axes 0 and 1)")
    dtype = ins[0].dtype.name if ins[0].dtype is not None else "float32"
    lengths = _S().cast(ic.sym(ins[1]), dtype=dtype)
    return [ic.out(_S().SequenceReverse(ic.sym(ins[0]), lengths, use_sequence_length=True,
                                        axis=time), node)]


@imports("Resize", into=["UpSampling"])
def _resize(ic, node, ins):
    """Nearest-neighbour upsampling by one integer factor on both spatial axes, read as
    output i <- input floor(i / s) (asymmetric coordinates, floor): MXNet's UpSampling."""
    mode = ic.attr(node, "mode", b"nearest")
    ctm = ic.attr(node, "coordinate_transformation_mode", b"half_pixel")
    nearest = ic.attr(node, "nearest_mode", b"round_prefer_floor")
    text = [v.decode() if isinstance(v, bytes) else v for v in (mode, ctm, nearest)]
    shape = ins[0].shape
    scales = ic.const(node, ins[2], "scales") if len(ins) > 2 and ins[2] is not None and \
        ins[2].const is not None and ins[2].const.size else None
    if scales is None and len(ins) > 3 and ins[3] is not None and shape is not None:
        sizes = ic.const(node, ins[3], "sizes")
        scales = np.asarray(sizes, np.float64) / np.asarray(shape, np.float64)
    if text != ["nearest", "asymmetric", "floor"] or scales is None or len(scales) != 4 or \
            tuple(scales[:2]) != (1, 1) or scales[2] != scales[3] or \
            scales[2] != int(scales[2]) or scales[2] < 1:
        raise ic.error(node, f"mode={text[0]!r}, coordinate_transformation_mode={text[1]!r}, "
                             f"nearest_mode={text[2]!r}, scales {scales} (mxlite imports "
                             "nearest upsampling by one integer factor, asymmetric and floor)")
    return [ic.out(_S().UpSampling(ic.sym(ins[0]), scale=int(scales[2]),
                                   sample_type="nearest", num_args=1), node)]


@imports("Multinomial", into=["softmax", "_sample_multinomial"])
def _multinomial(ic, node, ins):
    """Draws from the softmax of each row (ONNX's input is unnormalised log-probabilities),
    mxlite's stream."""
    code = ic.attr(node, "dtype")
    dtype = np.dtype(ic.onnx.helper.tensor_dtype_to_np_dtype(code)) if code is not None \
        else np.dtype(np.int32)
    probs = _S().softmax(ic.sym(ins[0]), axis=-1)
    y = _S()._internal._sample_multinomial(probs, shape=(ic.attr(node, "sample_size", 1),),
                                          dtype=dtype.name)
    return [ic.out(y, node)]


@imports("DeformConv", into=["_contrib_DeformableConvolution",
                             "_contrib_ModulatedDeformableConvolution", "concat"])
def _deform_conv(ic, node, ins):
    """2-D DeformConv: offsets (N, offset_group * 2 * kh * kw, Ho, Wo) per tap as (y, x),
    mxlite's layout; a mask makes it the modulated convolution. Asymmetric pads: the extra
    zeros joined on first (a sample outside the image reads zeros either way)."""
    x, w, offset = ins[:3]
    bias = ins[3] if len(ins) > 3 and ins[3] is not None else None
    mask = ins[4] if len(ins) > 4 and ins[4] is not None else None
    w_shape = w.shape
    if w_shape is None or len(w_shape) != 4:
        raise ic.error(node, f"needs a static 4-d weight shape, got {w_shape} (mxlite's "
                             "deformable convolutions are 2-D)")
    begin, end = _spatial_pads(ic, node, 2, x, tuple(ic.attr(node, "kernel_shape",
                                                             w_shape[2:])))
    data, pad = _zero_padded(ic, node, x, begin, end)    # sampling outside reads zeros too
    kw = dict(kernel=tuple(ic.attr(node, "kernel_shape", w_shape[2:])),
              stride=tuple(ic.attr(node, "strides", [1, 1])),
              dilate=tuple(ic.attr(node, "dilations", [1, 1])),
              pad=pad, num_filter=w_shape[0],
              num_group=ic.attr(node, "group", 1),
              num_deformable_group=ic.attr(node, "offset_group", 1), no_bias=bias is None)
    if tuple(kw["kernel"]) != tuple(w_shape[2:]):
        raise ic.error(node, f"kernel_shape={list(kw['kernel'])} for a weight of shape "
                             f"{w_shape}")
    contrib = _S().contrib
    head = [data, ic.sym(offset)]
    tail = [ic.sym(w)] + ([] if bias is None else [ic.sym(bias)])
    if mask is None:
        y = contrib.DeformableConvolution(*head, *tail, **kw)
    else:
        y = contrib.ModulatedDeformableConvolution(*head, ic.sym(mask), *tail, **kw)
    return [ic.out(y, node)]
