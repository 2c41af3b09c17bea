"""Region-of-interest and deformable operators: ROIAlign, RROIAlign, PSROIPooling, DeformablePSROIPooling, DeformableConvolution, ModulatedDeformableConvolution.

Built so far: ``_contrib_ROIAlign`` (``ROIAlign``) and ``_contrib_PSROIPooling``
(``PSROIPooling``), with their adjoints ``_roi_align_adjoint`` and ``_psroi_pooling_adjoint``.

Both pool a region of a (N, C, H, W) feature map per row of ``rois`` (R, 5) =
``[batch_index, x1, y1, x2, y2]``, and both are *separable*: a bin's value is a weighted sum
of the pixels whose weight is a product of a row weight and a column weight (bilinear
interpolation averaged over a regular grid of samples for ROIAlign; the box average over
the bin's pixels for PSROIPooling). So each roi gives two small matrices, ``Wy`` (bins, H)
and ``Wx`` (bins, W), and the pooled map is ``Wy @ data[b, c] @ Wx.T``: two matrix
products per roi and channel group, no per-sample loop. The weights depend on the rois only
(which, as in MXNet, get no gradient), so each op is linear in ``data``: its gradient is the
adjoint ``Wy.T @ g @ Wx`` scattered back into the map (the ``_adjoint`` op), whose gradient
in turn is the op itself. Gradients of any order are graphs of these two ops.

Every compute function uses the device namespace (``rctx.xp``: ``matmul``, ``add_at``,
``arange``, ``zeros``) and the array methods NumPy and CuPy share, so the GPU runs them
unchanged.
"""
import math

import numpy as np

from ..base import op_error
from .registry import REQUIRED, OpDef, Param, register
from .shape_utils import check_alloc, check_shape

F64 = np.dtype("float64")
_REAL = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_F3264 = _REAL[1:]          # the deformable ops sample with BilinearSampler's dtypes

_ALIGN, _ALIGN_ADJ = "_contrib_ROIAlign", "_roi_align_adjoint"
_PSROI, _PSROI_ADJ = "_contrib_PSROIPooling", "_psroi_pooling_adjoint"


# ---- shapes and dtypes -------------------------------------------------------------------------
def _check_rois(op, rois):
    rois = tuple(rois)
    if len(rois) != 2 or rois[1] != 5:
        raise op_error(op, f"rois must be 2-D (num_rois, 5) rows of [batch_index, x1, y1, x2, "
                       f"y2], got shape {rois}")
    return rois


def _check_data(op, data):
    data = tuple(data)
    if len(data) != 4:
        raise op_error(op, f"data must be 4-D (batch, channel, height, width), got shape {data}")
    return data


def _check_scale(op, attrs):
    if not 0.0 <= attrs.spatial_scale <= 1.0:
        raise op_error(op, f"spatial_scale={attrs.spatial_scale} must be in [0, 1]")


def _align_bins(op, attrs):
    """(ph, pw) of ROIAlign's pooled_size, and the channel block a position-sensitive bin
    reads (ph * pw; 1 otherwise)."""
    if len(attrs.pooled_size) != 2 or min(attrs.pooled_size) < 1:
        raise op_error(op, f"pooled_size={attrs.pooled_size} must be (height, width), each >= 1")
    ph, pw = attrs.pooled_size
    return ph, pw, (ph * pw if attrs.position_sensitive else 1)


def _psroi_bins(op, attrs):
    """(pooled, group, output_dim) of PSROIPooling (group_size 0 means pooled_size)."""
    if attrs.pooled_size < 1 or attrs.output_dim < 1 or attrs.group_size < 0:
        raise op_error(op, f"pooled_size={attrs.pooled_size} and output_dim={attrs.output_dim} "
                       f"must be >= 1, group_size={attrs.group_size} >= 0")
    return attrs.pooled_size, attrs.group_size or attrs.pooled_size, attrs.output_dim


def _align_out_channels(op, channels, attrs):
    _, _, block = _align_bins(op, attrs)
    if channels % block:
        raise op_error(op, f"data's {channels} channels must be a multiple of pooled_size "
                       f"{attrs.pooled_size[0]} * {attrs.pooled_size[1]} = {block} when "
                       "position_sensitive is true")
    return channels // block


def _psroi_out_channels(op, channels, attrs):
    _, group, dim = _psroi_bins(op, attrs)
    if channels != dim * group * group:
        raise op_error(op, f"data's {channels} channels must equal output_dim * group_size**2 "
                       f"= {dim} * {group}**2 = {dim * group * group}")
    return dim


def _pooled(op, attrs):
    if op in (_ALIGN, _ALIGN_ADJ):
        return _align_bins(op, attrs)[:2]
    return (attrs.pooled_size,) * 2


def _out_channels(op, channels, attrs):
    if op in (_ALIGN, _ALIGN_ADJ):
        return _align_out_channels(op, channels, attrs)
    return _psroi_out_channels(op, channels, attrs)


def _forward_shape(op):
    def infer_shape(shapes, attrs):
        if len(shapes) != 2:
            raise op_error(op, f"takes 2 inputs (data, rois), got {len(shapes)}")
        data, rois = _check_data(op, shapes[0]), _check_rois(op, shapes[1])
        _check_scale(op, attrs)
        c = _out_channels(op, data[1], attrs)
        return [check_shape(op, (rois[0], c) + _pooled(op, attrs))]
    return infer_shape


def _adjoint_shape(op):
    def infer_shape(shapes, attrs):
        if len(shapes) != 2:
            raise op_error(op, f"takes 2 inputs (ograd, rois), got {len(shapes)}")
        g, rois = tuple(shapes[0]), _check_rois(op, shapes[1])
        data = _check_data(op, attrs.data_shape)
        _check_scale(op, attrs)
        want = (rois[0], _out_channels(op, data[1], attrs)) + _pooled(op, attrs)
        if g != want:
            raise op_error(op, f"ograd of shape {g} must be {want} for data_shape {data} and "
                           f"rois of shape {rois}")
        return [check_alloc(op, data, "float64", "data_shape")]
    return infer_shape


def _float_type(op, names, allowed=None):
    allowed = allowed or _REAL

    def infer_type(dtypes, attrs):
        dts = [np.dtype(d) for d in dtypes]
        if dts[0] not in allowed or len(set(dts)) != 1:
            raise op_error(op, f"{', '.join(names[:len(dts)])} must be "
                           f"{' or '.join(str(d) for d in allowed)} of one dtype, got "
                           f"{', '.join(str(d) for d in dts)}")
        return [dts[0]]
    return infer_type


# ---- the rois --------------------------------------------------------------------------------
def _roi_columns(op, xp, rois, batch):
    """The rois as float64 columns (batch index truncated toward zero, as MXNet's cast) and
    the host list of batch indices. Non-finite coordinates and a batch index >= ``batch``
    are MXNetErrors (MXNet read past the data); a negative index marks a roi to skip. Also
    the batch indices on the device."""
    r = rois.astype(F64)
    host = xp.to_host(r)
    if not bool((host == host).all() and (abs(host) < float("inf")).all()):
        raise op_error(op, "rois must be finite")
    index = host[:, 0].astype("int64")
    if len(index) and int(index.max()) >= batch:
        raise op_error(op, f"rois' batch index {int(index.max())} is out of range for data "
                       f"of batch {batch}")
    return [r[:, k] for k in range(1, 5)], [int(i) for i in index], r[:, 0].astype("int64")


def _scale(attrs):
    """spatial_scale as MXNet holds it (a float32 parameter): 0.8 scales by 0.800000011..."""
    return float(np.float32(attrs.spatial_scale))


def _ceil(x):
    return -((-x) // 1)


# ---- ROIAlign weights ------------------------------------------------------------------------
def _align_axis(op, xp, lo, hi, bins, length, attrs):
    """(R, bins, length): the row (or column) weights of ROIAlign along one axis: per bin,
    the bilinear weights of its samples divided by the samples' count (MXNet's rules: a
    sample outside [-1, length] reads zero, one in [-1, 0] reads the first pixel, one past
    length - 1 the last)."""
    offset, scale = 0.5 if attrs.aligned else 0.0, _scale(attrs)
    start = lo * scale - offset
    size = hi * scale - offset - start
    if attrs.aligned:
        if bool(xp.to_host((size <= 0).any())):
            raise op_error(op, "with aligned=True every roi needs x2 > x1 and y2 > y1")
    else:
        size = size.clip(1.0, None)            # MXNet's backward-compatible minimum
    step = size / bins
    ratio = attrs.sample_ratio
    grid = _ceil(step) if ratio <= 0 else step * 0 + ratio
    base = start[:, None] + step[:, None] * xp.arange(bins, F64)[None, :]        # (R, bins)
    spacing = (step / grid)[:, None]
    # only samples in [-1, length] read anything: index range per bin, one extra each side
    first = ((-1.0 - base) / spacing - 0.5) // 1 - 1
    last = _ceil((length - base) / spacing - 0.5) + 1
    first = first.clip(0, None)
    last = xp_minimum(last, grid[:, None] - 1)
    count = int(xp.to_host((last - first).max())) + 1 if base.size else 0
    count = max(count, 0)
    r = base.shape[0]
    check_alloc(op, (r, bins, count), F64, "ROIAlign's sample grid")
    iy = first[:, :, None] + xp.arange(count, F64)[None, None, :]                 # (R, bins, K)
    y = base[:, :, None] + (iy + 0.5) * spacing[:, :, None]
    valid = (iy <= last[:, :, None]) & (y >= -1.0) & (y <= length)
    y = y.clip(0.0, None)
    low = y.astype("int64").clip(None, length - 1)
    frac = (y - low) * (low < length - 1)
    high = (low + 1).clip(None, length - 1)
    scale = valid / grid[:, None, None]
    weights = xp.zeros((r * bins * length,), F64)
    row = (xp.arange(r * bins, "int64") * length).reshape(r, bins, 1)
    xp.add_at(weights, ((row + low).reshape(-1),), ((1 - frac) * scale).reshape(-1))
    xp.add_at(weights, ((row + high).reshape(-1),), (frac * scale).reshape(-1))
    return weights.reshape(r, bins, length)


def xp_minimum(a, b):
    """The element-wise minimum of two arrays by the methods NumPy and CuPy share."""
    less = a < b
    return a * less + b * (1 - less)


def _align_weights(op, xp, cols, shape, attrs):
    ph, pw = attrs.pooled_size
    x1, y1, x2, y2 = cols
    return (_align_axis(op, xp, y1, y2, ph, shape[2], attrs),
            _align_axis(op, xp, x1, x2, pw, shape[3], attrs))


def _align_groups(attrs):
    """[(a, i0, i1, b, j0, j1)]: the bins [i0, i1) x [j0, j1) that read channel cell (a, b)
    of the (C, GY, GX) channel layout, and (GY, GX)."""
    ph, pw = attrs.pooled_size
    if not attrs.position_sensitive:
        return [(0, 0, ph, 0, 0, pw)], (1, 1)
    return [(i, i, i + 1, j, j, j + 1) for i in range(ph) for j in range(pw)], (ph, pw)


# ---- PSROIPooling weights --------------------------------------------------------------------
def _round(x):
    """C's round: halves away from zero (NumPy's rounds them to even)."""
    sign = (x >= 0) * 2.0 - 1.0
    return sign * ((abs(x) + 0.5) // 1)


def _psroi_axis(xp, lo, hi, bins, length, scale):
    """(R, bins, length): 1 / the bin's pixel count over the pixels of each bin (MXNet's
    rounded, clipped bins; an empty bin is all zeros)."""
    start = _round(lo) * scale
    size = ((_round(hi) + 1.0) * scale - start).clip(0.1, None)
    step = (size / bins)[:, None]
    k = xp.arange(bins, F64)[None, :]
    begin = ((k * step + start[:, None]) // 1).clip(0, length)
    end = _ceil((k + 1) * step + start[:, None]).clip(0, length)
    pix = xp.arange(length, F64)[None, None, :]
    inside = (pix >= begin[:, :, None]) & (pix < end[:, :, None])
    return inside / (end - begin).clip(1, None)[:, :, None]


def _psroi_weights(op, xp, cols, shape, attrs):
    x1, y1, x2, y2 = cols
    p = attrs.pooled_size
    return (_psroi_axis(xp, y1, y2, p, shape[2], _scale(attrs)),
            _psroi_axis(xp, x1, x2, p, shape[3], _scale(attrs)))


def _psroi_groups(attrs):
    """MXNet's group of bin i: floor(i * group / pooled), clipped; contiguous bin ranges."""
    pooled, group, _ = _psroi_bins(_PSROI, attrs)
    owner = [min(max(i * group // pooled, 0), group - 1) for i in range(pooled)]
    spans = [(a, owner.index(a), len(owner) - owner[::-1].index(a))
             for a in range(group) if a in owner]
    return [(a, i0, i1, b, j0, j1) for a, i0, i1 in spans for b, j0, j1 in spans], (group, group)


# ---- the separable pooling and its adjoint ---------------------------------------------------
def _batches(index):
    """{batch: [roi positions]} over the rois with a non-negative batch index."""
    rows = {}
    for pos, b in enumerate(index):
        if b >= 0:
            rows.setdefault(b, []).append(pos)
    return rows


def _pool_forward(xp, data5, wy, wx, groups, out):
    """out[r, :, I, J] = Wy[r, I] @ data5[:, a, b] @ Wx[r, J].T per channel group
    (``data5`` one image as (C, GY, GX, H, W))."""
    c, h, w = data5.shape[0], data5.shape[3], data5.shape[4]
    for (a, i0, i1, b, j0, j1) in groups:
        ni, nj, nr = i1 - i0, j1 - j0, wy.shape[0]
        d = xp.ascontiguousarray(data5[:, a, b].transpose(1, 0, 2)).reshape(h, c * w)
        t = xp.empty((nr * ni, c * w), d.dtype)
        xp.matmul(xp.ascontiguousarray(wy[:, i0:i1]).reshape(nr * ni, h), d, t)
        o = xp.empty((nr, ni * c, nj), d.dtype)
        xp.matmul(t.reshape(nr, ni * c, w),
                  xp.ascontiguousarray(wx[:, j0:j1].transpose(0, 2, 1)), o)
        out[:, :, i0:i1, j0:j1] = o.reshape(nr, ni, c, nj).transpose(0, 2, 1, 3)


def _pool_adjoint(xp, g, wy, wx, groups, grad5):
    """grad5[:, a, b] += sum_r Wy[r, I].T @ g[r, :, I, J] @ Wx[r, J] per channel group
    (``grad5`` one image's gradient as (C, GY, GX, H, W), a view written in place)."""
    c, h, w = grad5.shape[0], grad5.shape[3], grad5.shape[4]
    for (a, i0, i1, b, j0, j1) in groups:
        ni, nj, nr = i1 - i0, j1 - j0, wy.shape[0]
        gs = xp.ascontiguousarray(g[:, :, i0:i1, j0:j1].transpose(0, 2, 1, 3))
        t = xp.empty((nr, ni * c, w), g.dtype)
        xp.matmul(gs.reshape(nr, ni * c, nj), xp.ascontiguousarray(wx[:, j0:j1]), t)
        s = xp.empty((h, c * w), g.dtype)
        xp.matmul(xp.ascontiguousarray(wy[:, i0:i1].transpose(2, 0, 1)).reshape(h, nr * ni),
                  t.reshape(nr * ni, c * w), s)
        grad5[:, a, b] += s.reshape(h, c, w).transpose(1, 0, 2)


def _layout(shape, cells):
    """data's (N, C, GY, GX, H, W) view shape for a channel layout of (GY, GX) cells."""
    n, ch, h, w = shape
    return (n, ch // (cells[0] * cells[1])) + tuple(cells) + (h, w)


def _compute(op, weights, groups, adjoint):
    """The compute function of ``op``: per image, the rois on it pooled (or scattered back)
    through their separable weights, in the data's dtype (float16 in float32, one image at
    a time: no float32 copy of a whole float16 batch)."""
    def compute(rctx, ins, outs, attrs):
        xp = rctx.xp
        src, rois, out = ins[0], ins[1], outs[0]
        shape = out.shape if adjoint else src.shape
        cols, index, on_device = _roi_columns(op, xp, rois, shape[0])
        positions = xp.arange(len(index), "int64")
        work = np.dtype("float32") if out.dtype == np.dtype("float16") else out.dtype
        wy, wx = (w.astype(work) for w in weights(op, xp, cols, shape, attrs))
        gs, cells = groups(attrs)
        image = _layout(shape, cells)[1:]
        if adjoint:
            xp.fill_zero(out)
        else:
            acc = xp.zeros(out.shape, work)
        for b, rows in _batches(index).items():
            sel = positions[on_device == b]
            if adjoint:
                grad = xp.zeros(shape[1:], work)
                _pool_adjoint(xp, src[sel].astype(work), wy[sel], wx[sel], gs,
                              grad.reshape(image))
                xp.cast_into(out[b], grad)
            else:
                part = xp.zeros((len(rows),) + out.shape[1:], work)
                _pool_forward(xp, src[b].astype(work).reshape(image), wy[sel], wx[sel], gs,
                              part)
                acc[sel] = part
        if not adjoint:
            xp.cast_into(out, acc)
    return compute


# ---- gradients -------------------------------------------------------------------------------
def _params_of(node):
    """The node's parameters without the adjoint's ``data_shape``."""
    return {k: v for k, v in node.attrs.items() if k != "data_shape"}


def _forward_grad(adjoint):
    def gradient(F, node, ograds):
        """Linear in data: the adjoint scatter of the head gradient; the rois get none."""
        _, rois = node.inputs
        fn = getattr(F._internal, adjoint)
        return [fn(ograds[0], rois, data_shape=node.input_shapes[0], **_params_of(node)), None]
    return gradient


def _adjoint_grad(forward):
    def gradient(F, node, ograds):
        """Linear in ograd with adjoint the pooling itself; the rois get none."""
        _, rois = node.inputs
        return [getattr(F.contrib, forward)(ograds[0], rois, **_params_of(node)), None]
    return gradient


# ---- ROIAlign --------------------------------------------------------------------------------
def _align_params():
    return (Param("pooled_size", "shape", REQUIRED, "the pooled map's (height, width)"),
            Param("spatial_scale", "float", REQUIRED, "the feature map's size over the image's "
                  "(the reciprocal of the total stride), in [0, 1]"),
            Param("sample_ratio", "int", -1, "samples per bin along each axis; <= 0: "
                  "ceil(roi size / pooled size), per roi"),
            Param("position_sensitive", "bool", False, "bin (i, j) of output channel c reads "
                  "input channel c * ph * pw + i * pw + j (R-FCN)"),
            Param("aligned", "bool", False, "shift the roi by half a pixel (Detectron2's "
                  "continuous coordinates); every roi then needs a positive size"))


_DATA_SHAPE = Param("data_shape", "shape", REQUIRED, "the pooled data's shape (N, C, H, W)")

register(OpDef(
    _ALIGN, inputs=("data", "rois"), params=_align_params(),
    infer_shape=_forward_shape(_ALIGN), infer_type=_float_type(_ALIGN, ("data", "rois")),
    compute={"cpu": _compute(_ALIGN, _align_weights, _align_groups, adjoint=False)},
    gradient=_forward_grad(_ALIGN_ADJ), grad_needs=("inputs",),
    doc="""Region-of-interest align (Mask R-CNN): each roi ``[batch_index, x1, y1, x2, y2]``
(image coordinates, times ``spatial_scale``) is split into ``pooled_size`` bins; a bin's
value is the mean of bilinear samples on a regular ``sample_ratio`` x ``sample_ratio`` grid
(adaptive: ceil(bin size) per axis). Output (num_rois, C, ph, pw), or (num_rois,
C / (ph * pw), ph, pw) with ``position_sensitive``. data and rois are float16, float32 or
float64 of one dtype.

A roi with a negative batch index gives zeros (MXNet 1.9.1 zeroed only the first element
of its output and left the rest unwritten); a batch index past the data, or a non-finite
coordinate, is an MXNetError (MXNet read outside the data). Without ``aligned`` a roi is at
least one pixel wide and high, as MXNet. Differentiable in data to any order (the
gradient is ``_roi_align_adjoint``, whose gradient is ROIAlign); the rois get no gradient.

>>> data = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> rois = mx.nd.array([[0, 0, 0, 2, 2]])
>>> mx.nd.contrib.ROIAlign(data, rois, pooled_size=(1, 1), spatial_scale=1.0,
...                        sample_ratio=2).asnumpy().ravel().tolist()
[5.0]
"""))

register(OpDef(
    _ALIGN_ADJ, inputs=("ograd", "rois"), params=_align_params() + (_DATA_SHAPE,),
    infer_shape=_adjoint_shape(_ALIGN_ADJ), infer_type=_float_type(_ALIGN_ADJ, ("ograd", "rois")),
    compute={"cpu": _compute(_ALIGN_ADJ, _align_weights, _align_groups, adjoint=True)},
    gradient=_adjoint_grad("ROIAlign"), grad_needs=("inputs",),
    doc="""The adjoint of ROIAlign in its data: ``ograd`` (num_rois, C', ph, pw) scattered
into zeros of ``data_shape`` with ROIAlign's weights; ROIAlign's gradient."""))


# ---- PSROIPooling ----------------------------------------------------------------------------
def _psroi_params():
    return (Param("spatial_scale", "float", REQUIRED, "the feature map's size over the "
                  "image's (the reciprocal of the total stride), in [0, 1]"),
            Param("output_dim", "int", REQUIRED, "output channels"),
            Param("pooled_size", "int", REQUIRED, "bins along each axis"),
            Param("group_size", "int", 0, "channel groups along each axis (0: pooled_size)"))


register(OpDef(
    _PSROI, inputs=("data", "rois"), params=_psroi_params(),
    infer_shape=_forward_shape(_PSROI), infer_type=_float_type(_PSROI, ("data", "rois")),
    compute={"cpu": _compute(_PSROI, _psroi_weights, _psroi_groups, adjoint=False)},
    gradient=_forward_grad(_PSROI_ADJ), grad_needs=("inputs",),
    doc="""Position-sensitive region-of-interest pooling (R-FCN): each roi ``[batch_index,
x1, y1, x2, y2]`` (rounded, the end inclusive, times ``spatial_scale``) is split into
``pooled_size`` x ``pooled_size`` bins of whole pixels; bin (i, j) of output channel c is
the mean of input channel ``(c * group + gi) * group + gj`` over the bin (gi =
floor(i * group / pooled)), zero for an empty bin. data has ``output_dim * group_size**2``
channels (MXNet read past fewer); output (num_rois, output_dim, pooled_size, pooled_size).

A roi with a negative batch index gives zeros, one past the data or with a non-finite
coordinate is an MXNetError (MXNet read outside the data). Differentiable in data to any
order (``_psroi_pooling_adjoint``); the rois get no gradient.

>>> data = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> rois = mx.nd.array([[0, 0, 0, 1, 1]])
>>> mx.nd.contrib.PSROIPooling(data, rois, spatial_scale=1.0, output_dim=1,
...                            pooled_size=1).asnumpy().ravel().tolist()
[2.5]
"""))

register(OpDef(
    _PSROI_ADJ, inputs=("ograd", "rois"), params=_psroi_params() + (_DATA_SHAPE,),
    infer_shape=_adjoint_shape(_PSROI_ADJ), infer_type=_float_type(_PSROI_ADJ, ("ograd", "rois")),
    compute={"cpu": _compute(_PSROI_ADJ, _psroi_weights, _psroi_groups, adjoint=True)},
    gradient=_adjoint_grad("PSROIPooling"), grad_needs=("inputs",),
    doc="""The adjoint of PSROIPooling in its data: ``ograd`` (num_rois, output_dim, pooled,
pooled) scattered into zeros of ``data_shape``; PSROIPooling's gradient."""))


# ---- RROIAlign -------------------------------------------------------------------------------
# Rotated rois mix x and y, so the weights are not separable: the samples are formed one grid
# position (iy, ix) at a time for every roi and bin at once, each reading its four corners
# (a gather of (rois, bins, C) per corner), and the adjoint adds them back the same way.
_RROI, _RROI_ADJ = "_contrib_RROIAlign", "_rroi_align_adjoint"
_RROI_SAMPLES = 2 ** 16          # the most samples one bin may average


def _rroi_shape(op, data, rois, attrs):
    data = _check_data(op, data)
    rois = tuple(rois)
    if len(rois) != 2 or rois[1] != 6:
        raise op_error(op, f"rois must be 2-D (num_rois, 6) rows of [batch_index, x, y, w, h, "
                       f"theta], got shape {rois}")
    _check_scale(op, attrs)
    if len(attrs.pooled_size) != 2 or min(attrs.pooled_size) < 1:
        raise op_error(op, f"pooled_size={attrs.pooled_size} must be (height, width), each >= 1")
    return (rois[0], data[1]) + tuple(attrs.pooled_size)


def _rroi_forward_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error(_RROI, f"takes 2 inputs (data, rois), got {len(shapes)}")
    return [check_shape(_RROI, _rroi_shape(_RROI, shapes[0], shapes[1], attrs))]


def _rroi_adjoint_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error(_RROI_ADJ, f"takes 2 inputs (ograd, rois), got {len(shapes)}")
    want = _rroi_shape(_RROI_ADJ, attrs.data_shape, shapes[1], attrs)
    if tuple(shapes[0]) != want:
        raise op_error(_RROI_ADJ, f"ograd of shape {tuple(shapes[0])} must be {want} for "
                       f"data_shape {tuple(attrs.data_shape)}")
    return [check_alloc(_RROI_ADJ, tuple(attrs.data_shape), "float64", "data_shape")]


def _rroi_geometry(op, xp, rois, batch, attrs):
    """Per roi: batch index (host list and device column), centre, bin sizes, sample grid,
    start corner and the rotation's cos/sin, all (R,) float64 (MXNet's rules: sizes at
    least one pixel; theta in degrees, counter-clockwise)."""
    r = rois.astype(F64)
    host = xp.to_host(r)
    if not bool((host == host).all() and (abs(host) < float("inf")).all()):
        raise op_error(op, "rois must be finite")
    index = host[:, 0].astype("int64")
    if len(index) and int(index.max()) >= batch:
        raise op_error(op, f"rois' batch index {int(index.max())} is out of range for data "
                       f"of batch {batch}")
    scale, (ph, pw) = _scale(attrs), attrs.pooled_size
    w = (r[:, 3] * scale).clip(1.0, None)
    h = (r[:, 4] * scale).clip(1.0, None)
    ratio = attrs.sampling_ratio
    gh = _ceil(h / ph) if ratio <= 0 else h * 0 + ratio
    gw = _ceil(w / pw) if ratio <= 0 else w * 0 + ratio
    most = int(xp.to_host((gh * gw).max())) if len(index) else 0
    if most > _RROI_SAMPLES:
        raise op_error(op, f"a roi's bins would average {most} samples each (more than "
                       f"{_RROI_SAMPLES}); give a smaller sampling_ratio")
    return dict(index=[int(i) for i in index], column=r[:, 0].astype("int64"),
                cx=r[:, 1] * scale, cy=r[:, 2] * scale, bh=h / ph, bw=w / pw, gh=gh, gw=gw,
                sh=-h / 2.0, sw=-w / 2.0, cos=_trig(xp, host[:, 5], math.cos),
                sin=_trig(xp, host[:, 5], math.sin))


def _trig(xp, degrees, fn):
    """``fn`` of host angles in degrees, on the device (a few values per roi: the host
    computes them with the math module, as MXNet's kernel computed them per roi)."""
    values = degrees.copy()
    values[:] = [fn(d * math.pi / 180.0) for d in degrees.tolist()]
    return xp.from_host(values)


def _rroi_samples(geo, iy, ix, ph, pw, height, width):
    """The four corners [(flat pixel (R, ph * pw), weight (R, ph * pw))] of sample (iy, ix)
    of every bin, the weights divided by the bin's sample count and zero where the roi has
    no such sample, it lies outside [-1, size] or its batch index is negative."""
    r = geo["cx"].shape[0]
    xp_i = geo["arange"]
    i = xp_i(ph)[None, :, None]
    j = xp_i(pw)[None, None, :]
    col = lambda a: a[:, None, None]
    yy = col(geo["sh"]) + i * col(geo["bh"]) + (iy + 0.5) * col(geo["bh"] / geo["gh"])
    xx = col(geo["sw"]) + j * col(geo["bw"]) + (ix + 0.5) * col(geo["bw"] / geo["gw"])
    cos, sin = col(geo["cos"]), col(geo["sin"])
    x = xx * cos + yy * sin + col(geo["cx"])
    y = yy * cos - xx * sin + col(geo["cy"])
    keep = ((y >= -1.0) & (y <= height) & (x >= -1.0) & (x <= width)
            & col((geo["gh"] > iy) & (geo["gw"] > ix) & (geo["column"] >= 0)))
    scale = keep / col(geo["gh"] * geo["gw"])
    corners = []
    ys, xs = _axis_corners(y, height), _axis_corners(x, width)
    for (py, wy) in ys:
        for (px, wx) in xs:
            corners.append(((py * width + px).reshape(r, ph * pw),
                            (wy * wx * scale).reshape(r, ph * pw)))
    return corners


def _axis_corners(v, length):
    """[(low, 1 - frac), (high, frac)] along one axis (MXNet's clamping: v <= 0 reads the
    first pixel, past length - 1 the last)."""
    v = v.clip(0.0, None)
    low = v.astype("int64").clip(None, length - 1)
    frac = (v - low) * (low < length - 1)
    return [(low, 1 - frac), ((low + 1).clip(None, length - 1), frac)]


def _rroi_compute(adjoint):
    op = _RROI_ADJ if adjoint else _RROI

    def compute(rctx, ins, outs, attrs):
        xp = rctx.xp
        src, rois, out = ins[0], ins[1], outs[0]
        shape = out.shape if adjoint else src.shape
        work = np.dtype("float32") if out.dtype == np.dtype("float16") else out.dtype
        geo = _rroi_geometry(op, xp, rois, shape[0], attrs)
        geo["arange"] = lambda k: xp.arange(k, F64)
        if adjoint:
            _rroi_scatter(xp, src, geo, attrs, work, out)
        else:
            _rroi_gather(xp, src, geo, attrs, work, out)
    return compute


def _grid_extent(xp, geo):
    if not geo["index"]:
        return 0, 0
    return int(xp.to_host(geo["gh"].max())), int(xp.to_host(geo["gw"].max()))


def _rroi_gather(xp, data, geo, attrs, work, out):
    """out[r, c, bin] = sum over the bin's samples and corners of weight * data[b_r, c, pos]."""
    n, c, h, w = data.shape
    ph, pw = attrs.pooled_size
    flat = data.reshape(n, c, h * w)
    b = geo["column"].clip(0, None)[:, None]
    acc = xp.zeros((out.shape[0], ph * pw, c), work)
    gh, gw = _grid_extent(xp, geo)
    for iy in range(gh):
        for ix in range(gw):
            for pos, wt in _rroi_samples(geo, iy, ix, ph, pw, h, w):
                acc += flat[b, :, pos].astype(work) * wt.astype(work)[:, :, None]
    xp.cast_into(out, acc.transpose(0, 2, 1).reshape(out.shape))


def _rroi_scatter(xp, g, geo, attrs, work, out):
    """The adjoint of _rroi_gather, one image at a time (a work copy of one image only)."""
    n, c, h, w = out.shape
    ph, pw = attrs.pooled_size
    xp.fill_zero(out)
    positions = xp.arange(len(geo["index"]), "int64")
    for b in _batches(geo["index"]):
        sel = positions[geo["column"] == b]
        part = {k: (v[sel] if k not in ("index", "arange") else v) for k, v in geo.items()}
        part["index"] = [b] * int(sel.shape[0])
        gs = g[sel].astype(work).reshape(sel.shape[0], c, ph * pw).transpose(0, 2, 1)
        grad = xp.zeros((h * w, c), work)
        gh, gw = _grid_extent(xp, part)
        for iy in range(gh):
            for ix in range(gw):
                for pos, wt in _rroi_samples(part, iy, ix, ph, pw, h, w):
                    xp.add_at(grad, (pos,), gs * wt.astype(work)[:, :, None])
        xp.cast_into(out[b], grad.transpose(1, 0).reshape(c, h, w))


def _rroi_params():
    return (Param("pooled_size", "shape", REQUIRED, "the pooled map's (height, width)"),
            Param("spatial_scale", "float", REQUIRED, "the feature map's size over the image's "
                  "(the reciprocal of the total stride), in [0, 1]"),
            Param("sampling_ratio", "int", -1, "samples per bin along each axis; <= 0: "
                  "ceil(roi size / pooled size), per roi"))


register(OpDef(
    _RROI, inputs=("data", "rois"), params=_rroi_params(),
    infer_shape=_rroi_forward_shape, infer_type=_float_type(_RROI, ("data", "rois")),
    compute={"cpu": _rroi_compute(adjoint=False)},
    gradient=_forward_grad(_RROI_ADJ), grad_needs=("inputs",),
    doc="""Rotated region-of-interest align: each roi ``[batch_index, x, y, w, h, theta]``
(centre, size and counter-clockwise angle in degrees, image coordinates times
``spatial_scale``) is split into ``pooled_size`` bins in its own frame; a bin's value is
the mean of bilinear samples on a regular grid (``sampling_ratio`` per axis, adaptive
ceil(bin size) by default), as ROIAlign. Output (num_rois, C, ph, pw).

A roi with a negative batch index gives zeros; one past the data, a non-finite value, or a
grid of more than 65536 samples per bin is an MXNetError (MXNet read outside the data or
allocated the grid unbounded). MXNet 1.9.1 had no gradient (its backward aborted): here
the data gets the adjoint scatter ``_rroi_align_adjoint`` (any order); the rois get none.
"""))

register(OpDef(
    _RROI_ADJ, inputs=("ograd", "rois"), params=_rroi_params() + (_DATA_SHAPE,),
    infer_shape=_rroi_adjoint_shape, infer_type=_float_type(_RROI_ADJ, ("ograd", "rois")),
    compute={"cpu": _rroi_compute(adjoint=True)},
    gradient=_adjoint_grad("RROIAlign"), grad_needs=("inputs",),
    doc="""The adjoint of RROIAlign in its data: ``ograd`` (num_rois, C, ph, pw) scattered
into zeros of ``data_shape`` with RROIAlign's sampling weights; RROIAlign's gradient."""))




# ---- DeformableConvolution, ModulatedDeformableConvolution ------------------------------------
# A deformable convolution samples data at each output position's kernel taps moved by the
# learnt offsets (bilinear, zero outside the image: exactly BilinearSampler's rule) and
# multiplies the sampled columns by the weight. So it is BilinearSampler over a grid that is
# affine in the offsets (``_deform_grid``), then a grouped matrix product: its gradients are
# graphs of the sampler's own (its data adjoint and grid derivatives), batch_dot, reshapes
# and sums, to any order.
_DCONV, _MDCONV, _DGRID = ("_contrib_DeformableConvolution",
                           "_contrib_ModulatedDeformableConvolution", "_deform_grid")


def _pair2(op, attrs, name, default):
    value = tuple(getattr(attrs, name)) or (default, default)
    if len(value) != 2 or min(value) < (0 if name == "pad" else 1):
        raise op_error(op, f"{name}={getattr(attrs, name)} must be 2 values, each >= "
                       f"{0 if name == 'pad' else 1} (2-D convolution only)")
    return value


def _geometry(op, attrs, hw):
    """(kernel, stride, dilate, pad, (Ho, Wo)) of a 2-D deformable convolution."""
    k = _pair2(op, attrs, "kernel", 1)
    s, d, p = (_pair2(op, attrs, n, v) for n, v in (("stride", 1), ("dilate", 1), ("pad", 0)))
    out = tuple((hw[a] + 2 * p[a] - d[a] * (k[a] - 1) - 1) // s[a] + 1 for a in (0, 1))
    if min(out) < 1:
        raise op_error(op, f"kernel {k} with dilate {d} does not fit data of spatial size {hw} "
                       f"padded by {p}")
    return k, s, d, p, out


def _dconv_inputs(modulated):
    def list_inputs(attrs):
        head = ("data", "offset", "mask") if modulated else ("data", "offset")
        return head + (("weight",) if attrs.no_bias else ("weight", "bias"))
    return list_inputs


def _dconv_shape(op, modulated):
    def infer_shape(shapes, attrs):
        names = _dconv_inputs(modulated)(attrs)
        if len(shapes) != len(names):
            raise op_error(op, f"takes {len(names)} inputs ({', '.join(names)}), got "
                           f"{len(shapes)}")
        got = dict(zip(names, (tuple(s) for s in shapes)))
        data = _check_data(op, got["data"])
        want = _dconv_input_shapes(op, attrs, data)
        for name in names[1:]:
            if got[name] != want[name]:
                raise op_error(op, f"{name} must have shape {want[name]} for data of shape "
                               f"{data}, got {got[name]}")
        return [want["output"]]
    return infer_shape


def _dconv_input_shapes(op, attrs, data):
    """The shapes of offset, mask, weight and bias (and the output) for ``data``'s."""
    if min(data[2:]) < 2:
        raise op_error(op, f"data's height and width must be >= 2, got shape {data}")
    (kh, kw), _, _, _, (ho, wo) = _geometry(op, attrs, data[2:])
    g, dg, f = attrs.num_group, attrs.num_deformable_group, attrs.num_filter
    if g < 1 or dg < 1 or f < 1 or data[1] % g or data[1] % dg or f % g:
        raise op_error(op, f"num_filter={f} and data's {data[1]} channels must divide by "
                       f"num_group={g}, the channels by num_deformable_group={dg} (all "
                       ">= 1)")
    return {"offset": (data[0], dg * 2 * kh * kw, ho, wo),
            "mask": (data[0], dg * kh * kw, ho, wo),
            "weight": (f, data[1] // g, kh, kw), "bias": (f,), "output": (data[0], f, ho, wo)}


def _dconv_backward_shape(op, modulated):
    """Every other input's shape from data's (what a hybridized Gluon layer needs to infer
    its deferred weights, as Convolution's rule gives)."""
    def rule(in_shapes, out_shapes, attrs):
        data = in_shapes[0]
        if data is None or len(data) != 4:
            return list(in_shapes)
        want = _dconv_input_shapes(op, attrs, tuple(data))
        return [tuple(data)] + [want[n] for n in _dconv_inputs(modulated)(attrs)[1:]]
    return rule


def _base(xp, attrs, hw, axis):
    """The undeformed source coordinate along ``axis`` (0: y, 1: x) of each kernel tap and
    output position: (K, Ho) or (K, Wo) for taps in row-major order."""
    k, s, d, p, out = _geometry(_DCONV, attrs, hw)
    tap = xp.arange(k[0] * k[1], F64)
    along = (tap // k[1]) if axis == 0 else (tap % k[1])
    pos = xp.arange(out[axis], F64)
    return along[:, None] * d[axis] + pos[None, :] * s[axis] - p[axis]


def _grid_compute(rctx, ins, outs, attrs):
    """offset (N, DG*2*K, Ho, Wo) -> grid (N*DG, 2, K*Ho, Wo) of normalised (x, y)."""
    xp, off, out = rctx.xp, ins[0], outs[0]
    h, w = attrs.data_shape[2:]
    n, _, ho, wo = off.shape
    kk = attrs.kernel[0] * attrs.kernel[1]
    o = off.reshape(-1, kk, 2, ho, wo)
    y = (o[:, :, 0] + _base(xp, attrs, (h, w), 0)[None, :, :, None]) * (2.0 / (h - 1)) - 1
    x = (o[:, :, 1] + _base(xp, attrs, (h, w), 1)[None, :, None, :]) * (2.0 / (w - 1)) - 1
    out[:, 0] = x.reshape(out.shape[0], kk * ho, wo)
    out[:, 1] = y.reshape(out.shape[0], kk * ho, wo)


def _grid_adjoint(F, dgrid, attrs, offset_shape):
    """d offset from d grid (``_deform_grid`` is affine in the offsets)."""
    n, c, ho, wo = offset_shape
    h, w = attrs.data_shape[2:]
    kk = attrs.kernel[0] * attrs.kernel[1]
    g = F.reshape(dgrid, shape=(-1, 2, kk, ho, wo))
    dx = F.slice_axis(g, axis=1, begin=0, end=1) * (2.0 / (w - 1))
    dy = F.slice_axis(g, axis=1, begin=1, end=2) * (2.0 / (h - 1))
    return F.reshape(F.transpose(F.concat(dy, dx, dim=1), axes=(0, 2, 1, 3, 4)),
                     shape=offset_shape)


def _grid_shape(shapes, attrs):
    off = tuple(shapes[0])
    data = _check_data(_DGRID, attrs.data_shape)
    k, _, _, _, (ho, wo) = _geometry(_DGRID, attrs, data[2:])
    dg = attrs.num_deformable_group
    if off != (data[0], dg * 2 * k[0] * k[1], ho, wo):
        raise op_error(_DGRID, f"offset of shape {off} does not match data_shape {data}")
    return [(data[0] * dg, 2, k[0] * k[1] * ho, wo)]


def _dconv_params(modulated):
    return (Param("kernel", "shape", REQUIRED, "kernel size (h, w)"),
            Param("stride", "shape", (), "stride (default 1)"),
            Param("dilate", "shape", (), "dilation (default 1)"),
            Param("pad", "shape", (), "zero padding on both sides (default 0)"),
            Param("num_filter", "int", REQUIRED, "output channels"),
            Param("num_group", "int", 1, "channel groups of the weight"),
            Param("num_deformable_group", "int", 1, "channel groups sharing one offset map"),
            Param("workspace", "int", 1024, "ignored (MXNet's temporary workspace in MB)"),
            Param("no_bias", "bool", False, "leave out the bias input")) + (
        (Param("im2col_step", "int", 64, "ignored (MXNet's images per im2col batch)"),)
        if modulated else ()) + (
        Param("layout", "str", None, "NCHW only", choices=("NCW", "NCHW", "NCDHW")),)


_GRID_PARAMS = (Param("kernel", "shape", REQUIRED, "kernel size (h, w)"),
                Param("stride", "shape", (), "stride"), Param("dilate", "shape", (), "dilation"),
                Param("pad", "shape", (), "padding"),
                Param("num_deformable_group", "int", 1, "offset groups"), _DATA_SHAPE)


def _grid_attrs(attrs, data_shape):
    return dict(kernel=attrs.kernel, stride=attrs.stride, dilate=attrs.dilate, pad=attrs.pad,
                num_deformable_group=attrs.num_deformable_group, data_shape=tuple(data_shape))


register(OpDef(
    _DGRID, inputs=("offset",), params=_GRID_PARAMS, infer_shape=_grid_shape,
    infer_type=_float_type(_DGRID, ("offset",), _F3264), compute={"cpu": _grid_compute},
    gradient=lambda F, node, og: [_grid_adjoint(F, og[0], node.attrs, node.input_shapes[0])],
    doc="""The sampling grid of a deformable convolution: offsets (N, DG * 2 * K, Ho, Wo)
(per tap, y then x) added to the taps' positions, as BilinearSampler's normalised (x, y)
grid (N * DG, 2, K * Ho, Wo). Affine in the offsets."""))


def _sampled(rctx, data, grid, dg):
    """BilinearSampler of data split into ``dg`` channel groups: (N*DG, C/DG, K*Ho, Wo), by
    BilinearSampler's compute on the run context ``rctx`` (its namespace, and its compiled
    gather on the CPU)."""
    from .spatial import _sample_compute
    n, c, h, w = data.shape
    d = data.reshape(n * dg, c // dg, h, w)
    out = rctx.xp.empty((n * dg, c // dg) + tuple(grid.shape[2:]), data.dtype)
    _sample_compute(0, 0)(rctx, [d, grid], [out], None)
    return out


_CHUNK = 2 ** 24          # sampled column elements per block of images


def _dconv_compute(modulated):
    def compute(rctx, ins, outs, attrs):
        """Blocks of images (a bounded grid and column temporary), each sampled by
        BilinearSampler's compute and multiplied by the weight, group by group."""
        got = dict(zip(_dconv_inputs(modulated)(attrs), ins))
        n, c = got["data"].shape[:2]
        kk = attrs.kernel[0] * attrs.kernel[1]
        per = max(1, _CHUNK // max(1, c * kk * outs[0].shape[2] * outs[0].shape[3]))
        for n0 in range(0, n, per):
            part = {k: (v[n0:n0 + per] if k in ("data", "offset", "mask") else v)
                    for k, v in got.items()}
            _dconv_block(rctx, part, outs[0][n0:n0 + per], attrs, modulated)
    return compute


def _dconv_block(rctx, got, out, attrs, modulated):
    xp, data = rctx.xp, got["data"]
    n, c, h, w = data.shape
    dg, g, f = attrs.num_deformable_group, attrs.num_group, attrs.num_filter
    kk = attrs.kernel[0] * attrs.kernel[1]
    ho, wo = out.shape[2:]
    grid = xp.empty((n * dg, 2, kk * ho, wo), data.dtype)
    _grid_compute(rctx, [got["offset"]], [grid], _GridAttrs(_grid_attrs(attrs, data.shape)))
    col = _sampled(rctx, data, grid, dg)
    if modulated:
        col = col * got["mask"].reshape(n * dg, 1, kk * ho, wo)
    p = ho * wo
    col = xp.ascontiguousarray(col.reshape(n * g, c // g * kk, p))
    wt = xp.ascontiguousarray(xp.broadcast_to(
        got["weight"].reshape(1, g, f // g, -1), (n, g, f // g, col.shape[1]))).reshape(
        n * g, f // g, col.shape[1])
    res = xp.empty((n * g, f // g, p), data.dtype)
    xp.matmul(wt, col, res)
    res = res.reshape(n, f, ho, wo)
    if not attrs.no_bias:
        res = res + got["bias"].reshape(1, f, 1, 1)
    xp.copyto(out, res)


class _GridAttrs(dict):
    __getattr__ = dict.__getitem__


def _dconv_grad(modulated):
    def gradient(F, node, ograds):
        from .spatial import _sample_grads
        a = node.attrs
        names = _dconv_inputs(modulated)(a)
        got = dict(zip(names, node.inputs))
        shapes = dict(zip(names, node.input_shapes))
        n, c, h, w = shapes["data"]
        f, g, dg = a.num_filter, a.num_group, a.num_deformable_group
        kk = a.kernel[0] * a.kernel[1]
        ho, wo = shapes["offset"][2:]
        p = ho * wo
        grid = F._internal._deform_grid(got["offset"], **_grid_attrs(a, shapes["data"]))
        dat = F.reshape(got["data"], shape=(n * dg, c // dg, h, w))
        col = F.BilinearSampler(dat, grid)                       # (N*DG, C/DG, K*Ho, Wo)
        if modulated:
            m = F.reshape(got["mask"], shape=(n * dg, 1, kk * ho, wo))
            mcol = F.broadcast_mul(col, m)
        else:
            mcol = col
        cols = F.reshape(mcol, shape=(n * g, c // g * kk, p))
        og = F.reshape(ograds[0], shape=(n * g, f // g, p))
        wt = F.reshape(F.broadcast_to(F.reshape(got["weight"], shape=(1, g, f // g, c // g * kk)),
                                      shape=(n, g, f // g, c // g * kk)),
                       shape=(n * g, f // g, c // g * kk))
        dcols = F.batch_dot(wt, og, transpose_a=True)            # (N*G, C/G*K, P)
        dweight = F.reshape(F.sum(F.reshape(F.batch_dot(og, cols, transpose_b=True),
                                            shape=(n, f, c // g * kk)), axis=0),
                            shape=shapes["weight"])
        dm = F.reshape(dcols, shape=(n * dg, c // dg, kk * ho, wo))
        out = {"weight": dweight}
        if modulated:
            out["mask"] = F.reshape(F.sum(dm * col, axis=1), shape=shapes["mask"])
            dm = F.broadcast_mul(dm, m)
        ddata, dgrid = _sample_grads(F, dat, grid, dm, 0, 0, (h, w))
        out["data"] = F.reshape(ddata, shape=shapes["data"])
        out["offset"] = _grid_adjoint(F, dgrid, _GridAttrs(_grid_attrs(a, shapes["data"])),
                                      shapes["offset"])
        if not a.no_bias:
            out["bias"] = F.sum(ograds[0], axis=(0, 2, 3))
        return [out[k] for k in names]
    return gradient


def _dconv_record(op, modulated):
    inputs = ("data", "offset", "mask", "weight", "bias") if modulated else \
        ("data", "offset", "weight", "bias")
    register(OpDef(
        op, inputs=inputs, params=_dconv_params(modulated), list_inputs=_dconv_inputs(modulated),
        infer_shape=_dconv_shape(op, modulated),
        backward_shape=_dconv_backward_shape(op, modulated),
        infer_type=_float_type(op, inputs, _F3264),
        compute={"cpu": _dconv_compute(modulated)}, gradient=_dconv_grad(modulated),
        grad_needs=("inputs",),
        doc=("""Modulated deformable convolution (Deformable ConvNets v2): as
DeformableConvolution, each bilinear sample also multiplied by ``mask`` (N, DG * kh * kw,
Ho, Wo).""" if modulated else """Deformable convolution (Deformable ConvNets, 2-D, NCHW):
each output position's kernel taps read ``data`` at their positions moved by ``offset``
(N, num_deformable_group * 2 * kh * kw, Ho, Wo; per tap y then x), by bilinear
interpolation (zero outside the image), then a grouped convolution with ``weight``
(num_filter, C / num_group, kh, kw) and ``bias``.""") + """

Differentiable in data, offset""" + (", mask" if modulated else "") + """, weight and bias
to any order (the gradient is a graph of BilinearSampler's derivatives, batch_dot and
sums; the offsets' gradient jumps where a sample crosses a pixel border). data's height and
width must be >= 2."""))


_dconv_record(_DCONV, modulated=False)
_dconv_record(_MDCONV, modulated=True)
