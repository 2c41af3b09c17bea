"""Spatial sampling and cropping layers of MXNet 1.9.1: Crop, and the region assignments
_slice_assign / _slice_assign_scalar (MXNet's _crop_assign / _crop_assign_scalar).

Every compute function is written against the device namespace (``rctx.xp``: views,
``strided_copy``, ``copyto``), so one function serves every device. Every gradient is a
graph of registered operators: a crop's is ``_slice_scatter`` (zeros with the head gradient
in the cropped region, whose own gradient is ``slice``), an assignment's is the head
gradient with the region cleared (``_slice_assign_scalar`` with 0) and the region itself
(``slice``), so they differentiate to any order.
"""
import numpy as np

from ..base import op_error
from .registry import REQUIRED, OpDef, Param, register
from .shape import _slice_key, _sliced_shape


# ---- Crop -------------------------------------------------------------------------------------
def _crop_window(shapes, attrs):
    """(top, left, height, width) of the window Crop takes from the (N, C, H, W) data."""
    n_in = attrs.num_args
    if n_in not in (1, 2) or len(shapes) != n_in:
        raise op_error("Crop", f"num_args must be 1 (data, with h_w) or 2 (data, crop_like), "
                       f"got num_args={n_in} with {len(shapes)} inputs")
    data = tuple(shapes[0])
    if len(data) != 4:
        raise op_error("Crop", f"data must be 4-D (batch, channel, height, width), got shape "
                       f"{data}")
    if n_in == 2:
        like = tuple(shapes[1])
        if len(like) < 2:
            raise op_error("Crop", f"crop_like must have at least 2 axes (its last two are the "
                           f"crop's height and width), got shape {like}")
        h, w = like[-2], like[-1]
    else:
        h, w = _pair("h_w", attrs.h_w)
        if h < 1 or w < 1:
            raise op_error("Crop", f"h_w={tuple(attrs.h_w)} must be at least (1, 1) with one "
                           "input (the crop's height and width)")
    big_h, big_w = data[2], data[3]
    if h > big_h or w > big_w:
        raise op_error("Crop", f"the crop (h, w)=({h}, {w}) is larger than the data's "
                       f"(height, width)=({big_h}, {big_w}) (data shape {data})")
    if attrs.center_crop:
        top, left = (big_h - h) // 2, (big_w - w) // 2
    else:
        top, left = _pair("offset", attrs.offset)
        if not (0 <= top <= big_h - h and 0 <= left <= big_w - w):
            raise op_error("Crop", f"offset={(top, left)} puts the ({h}, {w}) crop outside the "
                           f"data's (height, width)=({big_h}, {big_w}) (data shape {data})")
    return top, left, h, w


def _pair(name, value):
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise op_error("Crop", f"{name}={value} must have two entries (y, x)")
    return value


def _crop_region(shapes, attrs):
    """The crop as slice parameters of the 4-D data: begin and end per axis."""
    top, left, h, w = _crop_window(shapes, attrs)
    return (None, None, top, left), (None, None, top + h, left + w)


def _crop_shape(shapes, attrs):
    top, left, h, w = _crop_window(shapes, attrs)
    return [tuple(shapes[0][:2]) + (h, w)]


def _crop_type(dtypes, attrs):
    return [dtypes[0]]


def _crop_compute(rctx, ins, outs, attrs):
    x = ins[0]
    top, left, h, w = _crop_window([a.shape for a in ins], attrs)
    rctx.xp.strided_copy(x[:, :, top:top + h, left:left + w], outs[0])


def _crop_grad(F, node, ograds):
    """y = x[:, :, top:top+h, left:left+w]: dx is zeros with dy in that window
    (``_slice_scatter``, whose gradient is ``slice``); crop_like only gives a shape, so its
    gradient is zero (as MXNet)."""
    begin, end = _crop_region(node.input_shapes, node.attrs)
    dx = F._internal._slice_scatter(ograds[0], shape=node.input_shapes[0], begin=begin, end=end)
    grads = [dx]
    if len(node.inputs) == 2:
        grads.append(F.zeros_like(node.inputs[1]))
    return grads


register(OpDef(
    "Crop", inputs=("data",), variadic=True, key_var_num_args="num_args",
    params=(Param("num_args", "int", REQUIRED, "number of inputs: 1 (data) or 2 (data, "
                  "crop_like)"),
            Param("offset", "shape", (0, 0), "crop offset coordinate: (y, x)"),
            Param("h_w", "shape", (0, 0), "crop height and width (h, w); read with one input"),
            Param("center_crop", "bool", False, "crop the centre (the offset is ignored)")),
    infer_shape=_crop_shape, infer_type=_crop_type, compute={"cpu": _crop_compute},
    gradient=_crop_grad,
    doc="""Crop the height and width (axes 2 and 3) of 4-D ``data`` (N, C, H, W): to ``h_w``
with one input, or to the last two sizes of the second input ``crop_like``. The window
starts at ``offset`` (y, x), or is centred (``center_crop``: offset ``((H - h) // 2,
(W - w) // 2)``). MXNet's legacy layer (``slice`` does the same and more).

A window that does not fit is a clear error when the shape is inferred (MXNet 1.9.1 inferred
the shape and failed only when it ran). Any dtype is cropped (MXNet's took float32 only).
The gradient in data is zeros with the head gradient in the window, differentiable again;
crop_like's is zero.

>>> x = mx.nd.array([[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]])
>>> mx.nd.Crop(x, h_w=(2, 2), offset=(1, 0)).asnumpy()[0, 0].tolist()
[[4.0, 5.0], [7.0, 8.0]]
"""))


# ---- _slice_assign / _slice_assign_scalar -----------------------------------------------------
def _region_shape(op, shape, attrs):
    """The shape of ``shape``'s region ``[begin:end:step]`` (``slice``'s rules)."""
    return _sliced_shape(tuple(shape), attrs, op)


def _slice_assign_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error("_slice_assign", f"takes 2 inputs (lhs, rhs), got {len(shapes)}")
    lhs, rhs = tuple(shapes[0]), tuple(shapes[1])
    region = _region_shape("_slice_assign", lhs, attrs)
    if rhs != region:
        raise op_error("_slice_assign", f"rhs of shape {rhs} does not fill the region "
                       f"begin={attrs.begin}, end={attrs.end}, step={attrs.step} of lhs of "
                       f"shape {lhs}, which has shape {region}")
    return [lhs]


def _slice_assign_type(dtypes, attrs):
    lhs, rhs = np.dtype(dtypes[0]), np.dtype(dtypes[1])
    if lhs != rhs:
        raise op_error("_slice_assign", f"lhs and rhs must have one dtype, got {lhs} and {rhs}")
    return [lhs]


def _slice_assign_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    lhs, rhs, out = ins[0], ins[1], outs[0]
    if xp.may_share_memory(rhs, out):
        rhs = rhs.copy()                  # out= is rhs: keep it before lhs is copied over it
    xp.copyto(out, lhs)
    xp.strided_copy(rhs, out[_slice_key(out.shape, attrs, "_slice_assign") + (Ellipsis,)])


def _slice_assign_grad(F, node, ograds):
    """out = lhs with rhs in the region (linear in both): d lhs is the head gradient with
    the region cleared, d rhs the head gradient's region (MXNet 1.9.1 declared no gradient)."""
    a, g = node.attrs, ograds[0]
    return [F._internal._slice_assign_scalar(g, scalar=0.0, begin=a.begin, end=a.end,
                                             step=a.step),
            F.slice(g, begin=a.begin, end=a.end, step=a.step)]


def _slice_assign_scalar_shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error("_slice_assign_scalar", f"takes 1 input (data), got {len(shapes)}")
    data = tuple(shapes[0])
    _region_shape("_slice_assign_scalar", data, attrs)
    return [data]


def _slice_assign_scalar_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    out = outs[0]
    xp.copyto(out, ins[0])
    region = out[_slice_key(out.shape, attrs, "_slice_assign_scalar") + (Ellipsis,)]
    xp.strided_copy(xp.broadcast_to(xp.scalar(attrs.scalar, out.dtype), region.shape), region)


def _slice_assign_scalar_grad(F, node, ograds):
    """out = data with a constant in the region: d data is the head gradient with the region
    cleared (this op again, with 0)."""
    a = node.attrs
    return [F._internal._slice_assign_scalar(ograds[0], scalar=0.0, begin=a.begin, end=a.end,
                                             step=a.step)]


def _region_params():
    return (Param("begin", "opt_ints", REQUIRED, "start index per axis, as in slice"),
            Param("end", "opt_ints", REQUIRED, "stop index per axis, exclusive, as in slice"),
            Param("step", "opt_ints", (), "step per axis, as in slice (may be negative)"))


register(OpDef(
    "_slice_assign", inputs=("lhs", "rhs"), aliases=("_crop_assign",), params=_region_params(),
    infer_shape=_slice_assign_shape, infer_type=_slice_assign_type,
    compute={"cpu": _slice_assign_compute}, gradient=_slice_assign_grad, in_place=True,
    doc="""``lhs`` with ``rhs`` written into its region ``[begin:end:step]`` (``slice``'s rules
for negative and None entries); ``rhs`` must have that region's shape and lhs's dtype. MXNet
calls it with ``out=lhs`` (assignment in place); without ``out`` it gives a new array.

MXNet 1.9.1 declared no gradient; here it is linear in both inputs: lhs gets the head
gradient with the region cleared, rhs the head gradient's region, differentiable again.

>>> y = mx.nd._internal._crop_assign(mx.nd.zeros((2, 3)), mx.nd.ones((1, 2)), begin=(1, 1),
...                                  end=(2, 3))
>>> y.asnumpy().tolist()
[[0.0, 0.0, 0.0], [0.0, 1.0, 1.0]]
"""))

register(OpDef(
    "_slice_assign_scalar", inputs=("data",), aliases=("_crop_assign_scalar",),
    params=(Param("scalar", "float", 0.0, "the value to assign"),) + _region_params(),
    infer_shape=_slice_assign_scalar_shape, infer_type=lambda dtypes, attrs: [dtypes[0]],
    compute={"cpu": _slice_assign_scalar_compute}, gradient=_slice_assign_scalar_grad,
    in_place=True,
    doc="""``data`` with ``scalar`` written into its region ``[begin:end:step]`` (``slice``'s
rules), cast to data's dtype. MXNet calls it with ``out=data``; without ``out`` it gives a
new array. Differentiable (MXNet 1.9.1 declared no gradient): the head gradient with the
region cleared.

>>> y = mx.nd._internal._crop_assign_scalar(mx.nd.zeros((2, 3)), scalar=5, begin=(None, -1),
...                                         end=(None, None))
>>> y.asnumpy().tolist()
[[0.0, 0.0, 5.0], [0.0, 0.0, 5.0]]
"""))
