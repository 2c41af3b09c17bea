"""Spatial sampling and cropping layers of MXNet 1.9.1: Crop, the region assignments
_slice_assign / _slice_assign_scalar (MXNet's _crop_assign / _crop_assign_scalar),
BilinearSampler, GridGenerator, SpatialTransformer, ROIPooling,
_contrib_AdaptiveAvgPooling2D and _contrib_BilinearResize2D.

Every compute function is written against the device namespace (``rctx.xp``: views,
``strided_copy``, ``copyto``, ``matmul``, ``add_at``) and the array methods NumPy and CuPy
share, so one function serves every device. Every gradient is a graph of registered
operators, so they differentiate to any order:

- a crop's is ``_slice_scatter`` (its gradient is ``slice``); an assignment's is the head
  gradient with the region cleared (``_slice_assign_scalar`` with 0) and its region;
- the bilinear sampler's are ``_bilinear_sampler_d`` (the weights differentiated in the
  grid) and ``_bilinear_sampler_adjoint`` (the scatter back to the pixels): a family closed
  under differentiation, since the weights are linear in each coordinate within a cell;
- the linear ops (affine GridGenerator, AdaptiveAvgPooling2D, BilinearResize2D) have an
  adjoint op each, whose gradient is the op again (the pooling and resize are separable:
  two products with small (out, in) matrices);
- ROIPooling's adds the head gradient back at each bin's maximum (``_roi_pooling_argmax``,
  then ``_backward_gather_nd``, whose gradient is ``gather_nd``).
"""
import numpy as np

from .._core import resample as _resample
from ..base import op_error
from .registry import NON_DIFFERENTIABLE, REQUIRED, Attrs, OpDef, Param, register
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


# ---- bilinear sampling: BilinearSampler and its derivatives -----------------------------------
# S_{dx,dy}(data, grid) samples data at the grid's points with the bilinear weights
# differentiated dx times in the grid's x and dy times in its y (dx, dy in {0, 1}); its
# adjoint A_{dx,dy}(g, grid) scatters g back to the pixels with the same weights. The weights
# are linear in each coordinate inside a cell, so a second derivative in one direction is
# zero (away from the cell borders): the family closes under differentiation, and every
# gradient below is a graph of these two operators, to any order.
_SAMPLE, _ADJOINT = "_bilinear_sampler_d", "_bilinear_sampler_adjoint"


def _float_pair(op, dtypes, names):
    dts = [np.dtype(d) for d in dtypes]
    if dts[0] not in (np.dtype("float32"), np.dtype("float64")) or len(set(dts)) != 1:
        raise op_error(op, f"{' and '.join(names)} must be float32 or float64 of one dtype, got "
                       f"{', '.join(str(d) for d in dts)}")
    return [dts[0]]


def _grid_shape(op, grid, batch, what="data"):
    grid = tuple(grid)
    if len(grid) != 4 or grid[1] != 2:
        raise op_error(op, f"grid must be (batch, 2, height, width) (x, y in [-1, 1]), got "
                       f"shape {grid}")
    if grid[0] != batch:
        raise op_error(op, f"grid's batch {grid[0]} differs from {what}'s {batch}")
    return grid


def _sample_shape(op, shapes):
    if len(shapes) != 2:
        raise op_error(op, f"takes 2 inputs (data, grid), got {len(shapes)}")
    data = tuple(shapes[0])
    if len(data) != 4:
        raise op_error(op, f"data must be 4-D (batch, channel, height, width), got shape "
                       f"{data}")
    grid = _grid_shape(op, shapes[1], data[0])
    return [data[:2] + grid[2:]]


def _corners(xp, grid, height, width, dx, dy):
    """The four corners each grid point reads: [(flat pixel index, weight)], each (N, P);
    weights of corners outside the image are zero (zero padding, as MXNet)."""
    n = grid.shape[0]
    sx, sy = (width - 1) / 2.0, (height - 1) / 2.0
    x = (grid[:, 0].reshape(n, -1) + 1) * sx
    y = (grid[:, 1].reshape(n, -1) + 1) * sy
    x0, y0 = x // 1, y // 1
    fx, fy = x - x0, y - y0
    wx = ((1 - fx, fx) if dx == 0 else (-sx + 0 * fx, sx + 0 * fx))
    wy = ((1 - fy, fy) if dy == 0 else (-sy + 0 * fy, sy + 0 * fy))
    out = []
    for j in (0, 1):
        for i in (0, 1):
            xi, yi = x0 + i, y0 + j
            inside = (xi >= 0) & (xi <= width - 1) & (yi >= 0) & (yi <= height - 1)
            idx = (yi.clip(0, height - 1) * width + xi.clip(0, width - 1)).astype("int64")
            out.append((idx, wx[i] * wy[j] * inside))
    return out


def _sample_compute(dx, dy):
    def compute(rctx, ins, outs, attrs):
        xp = rctx.xp
        data, grid, out = ins[0], ins[1], outs[0]
        n, c, h, w = data.shape
        flat = data.reshape(n, c, h * w)
        corners = _corners(xp, grid, h, w, dx, dy)
        if _compiled_gather(rctx, flat, corners, out):
            return
        rows = xp.arange(n, "int64").reshape(n, 1, 1)
        chans = xp.arange(c, "int64").reshape(1, c, 1)
        acc = None
        for idx, wt in corners:
            term = flat[rows, chans, idx[:, None, :]] * wt[:, None, :]
            acc = term if acc is None else acc + term
        xp.copyto(out, acc.reshape(out.shape).astype(out.dtype))
    return compute


def _compiled_gather(rctx, flat, corners, out):
    """On the CPU, the four corners' gather and weighted sum in one compiled pass
    (``mxlite._core.resample.bilinear_gather``: the products and sums of the array path
    below, in its order, so the same bits; it took four fancy-indexed gathers of the whole
    block). Returns False where the array path runs (other devices, other layouts)."""
    if rctx.kernels != "cpu" or not (flat.flags.c_contiguous and out.flags.c_contiguous) \
            or any(wt.dtype != flat.dtype for _, wt in corners):
        return False
    xp, points = rctx.xp, corners[0][0].shape
    index, weights = xp.empty((4,) + points, "int64"), xp.empty((4,) + points, flat.dtype)
    for k, (idx, wt) in enumerate(corners):
        xp.copyto(index[k], idx)
        xp.copyto(weights[k], wt)
    _resample.bilinear_gather(flat, index, weights, out.reshape(flat.shape[:2] + (-1,)))
    return True


def _sample_d_compute(rctx, ins, outs, attrs):
    _sample_compute(attrs.dx, attrs.dy)(rctx, ins, outs, attrs)


def _adjoint_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    g, grid, out = ins[0], ins[1], outs[0]
    n, c, h, w = out.shape
    xp.fill_zero(out)
    flat = out.reshape(n, c, h * w)
    gf = g.reshape(n, c, -1)
    rows = xp.arange(n, "int64").reshape(n, 1, 1)
    chans = xp.arange(c, "int64").reshape(1, c, 1)
    for idx, wt in _corners(xp, grid, h, w, attrs.dx, attrs.dy):
        # a pixel is a corner of many points: accumulate (unbuffered)
        xp.add_at(flat, (rows, chans, idx[:, None, :]), (gf * wt[:, None, :]).astype(out.dtype))


def _adjoint_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error(_ADJOINT, f"takes 2 inputs (ograd, grid), got {len(shapes)}")
    g = tuple(shapes[0])
    if len(g) != 4:
        raise op_error(_ADJOINT, f"ograd must be 4-D, got shape {g}")
    grid = _grid_shape(_ADJOINT, shapes[1], g[0], "ograd")
    if grid[2:] != g[2:]:
        raise op_error(_ADJOINT, f"ograd of shape {g} and grid of shape {grid} differ in "
                       "their points")
    if attrs.height < 1 or attrs.width < 1:
        raise op_error(_ADJOINT, f"height={attrs.height}, width={attrs.width} must be >= 1")
    return [g[:2] + (attrs.height, attrs.width)]


def _grid_grad(F, data, grid, g, dx, dy):
    """d/d grid of sum(g * S_{dx,dy}(data, grid)): per direction, the channel sum of g times
    the sampler differentiated once more there (zero past the first derivative)."""
    parts = []
    for ex, ey in ((dx + 1, dy), (dx, dy + 1)):
        if ex > 1 or ey > 1:
            parts.append(F.zeros_like(F.slice_axis(grid, axis=1, begin=0, end=1)))
        else:
            s = F._internal._bilinear_sampler_d(data, grid, dx=ex, dy=ey)
            parts.append(F.sum(g * s, axis=1, keepdims=True))
    return F.concat(*parts, dim=1)


def _sample_grads(F, data, grid, g, dx, dy, hw):
    """Gradients of S_{dx,dy}(data, grid) for head g: data's is the adjoint scatter."""
    ddata = F._internal._bilinear_sampler_adjoint(g, grid, dx=dx, dy=dy, height=hw[0],
                                                  width=hw[1])
    return [ddata, _grid_grad(F, data, grid, g, dx, dy)]


def _bilinear_sampler_grad(F, node, ograds):
    data, grid = node.inputs
    return _sample_grads(F, data, grid, ograds[0], 0, 0, node.input_shapes[0][2:])


def _sample_d_grad(F, node, ograds):
    data, grid = node.inputs
    a = node.attrs
    return _sample_grads(F, data, grid, ograds[0], a.dx, a.dy, node.input_shapes[0][2:])


def _adjoint_grad(F, node, ograds):
    """A(g, grid) is linear in g with adjoint S: for head h, dg = S(h, grid) and d grid is
    the grid derivative of sum(g * S(h, grid))."""
    g, grid = node.inputs
    a, h = node.attrs, ograds[0]
    return [F._internal._bilinear_sampler_d(h, grid, dx=a.dx, dy=a.dy),
            _grid_grad(F, h, grid, g, a.dx, a.dy)]


def _order_params():
    return (Param("dx", "int", 0, "derivative order in the grid's x (0 or 1)", choices=(0, 1)),
            Param("dy", "int", 0, "derivative order in the grid's y (0 or 1)", choices=(0, 1)))


register(OpDef(
    "BilinearSampler", inputs=("data", "grid"),
    params=(Param("cudnn_off", "bool", None, "accepted for compatibility; no effect"),),
    infer_shape=lambda shapes, attrs: _sample_shape("BilinearSampler", shapes),
    infer_type=lambda dtypes, attrs: _float_pair("BilinearSampler", dtypes, ("data", "grid")),
    compute={"cpu": _sample_compute(0, 0)}, gradient=_bilinear_sampler_grad,
    doc="""Sample 4-D ``data`` (N, C, H, W) at the points of ``grid`` (N, 2, Ho, Wo) by bilinear
interpolation: ``grid[:, 0]`` is x and ``grid[:, 1]`` is y, each in [-1, 1] (-1 the first
pixel's centre, 1 the last's: source x = (x + 1) * (W - 1) / 2). Corners outside the image
read zero. Output (N, C, Ho, Wo). float32 or float64.

Differentiable in data and grid, to any order: the gradients are graphs of the sampler with
differentiated weights and its adjoint scatter (the grid gradient is that of a function
piecewise bilinear in the coordinates: it jumps on pixel borders).

>>> data = mx.nd.array([[[[1.0, 3.0]]]])
>>> grid = mx.nd.array([[[[0.0]], [[-1.0]]]])          # x = 0 (half way), y = -1
>>> mx.nd.BilinearSampler(data, grid).asnumpy().ravel().tolist()
[2.0]
"""))

register(OpDef(
    _SAMPLE, inputs=("data", "grid"), params=_order_params(),
    infer_shape=lambda shapes, attrs: _sample_shape(_SAMPLE, shapes),
    infer_type=lambda dtypes, attrs: _float_pair(_SAMPLE, dtypes, ("data", "grid")),
    compute={"cpu": _sample_d_compute}, gradient=_sample_d_grad,
    doc="""BilinearSampler with its weights differentiated ``dx`` times in the grid's x and
``dy`` times in its y: the derivatives of the sampler in its grid (the gradients of
BilinearSampler, GridGenerator's users and SpatialTransformer are graphs of it)."""))

register(OpDef(
    _ADJOINT, inputs=("ograd", "grid"),
    params=_order_params() + (
        Param("height", "int", REQUIRED, "the height of the sampled data"),
        Param("width", "int", REQUIRED, "the width of the sampled data")),
    infer_shape=_adjoint_shape,
    infer_type=lambda dtypes, attrs: _float_pair(_ADJOINT, dtypes, ("ograd", "grid")),
    compute={"cpu": _adjoint_compute}, gradient=_adjoint_grad,
    doc="""The adjoint of ``_bilinear_sampler_d`` in its data: ``ograd`` (N, C, Ho, Wo)
scattered to (N, C, height, width) with the sampling weights of ``grid``; the gradient of
BilinearSampler in its data."""))


# ---- GridGenerator ----------------------------------------------------------------------------
_AFFINE_ADJ = "_grid_generator_affine_adjoint"


def _target(op, target_shape):
    """(H, W) of an affine grid: both at least 2 (the grid spans [-1, 1] with steps
    2 / (size - 1); MXNet 1.9.1 divided by zero on a size of 1)."""
    hw = tuple(int(v) for v in target_shape)
    if len(hw) != 2 or min(hw) < 2:
        raise op_error(op, f"target_shape={hw} must be (height, width), each at least 2")
    return hw


def _grid_generator_shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error("GridGenerator", f"takes 1 input (data), got {len(shapes)}")
    data = tuple(shapes[0])
    if attrs.transform_type == "affine":
        if len(data) != 2 or data[1] != 6:
            raise op_error("GridGenerator", f"affine data must be (batch, 6) (a 2x3 matrix "
                           f"per item), got shape {data}")
        return [(data[0], 2) + _target("GridGenerator", attrs.target_shape)]
    if len(data) != 4 or data[1] != 2:
        raise op_error("GridGenerator", f"warp data must be a flow (batch, 2, height, width), "
                       f"got shape {data}")
    _target("GridGenerator", data[2:])
    return [data]


def _float_one(op, dtypes):
    dt = np.dtype(dtypes[0])
    if dt not in (np.dtype("float32"), np.dtype("float64")):
        raise op_error(op, f"data must be float32 or float64, got {dt}")
    return [dt]


def _base_grid(xp, hw, dtype):
    """(3, H*W): the target's x, y in [-1, 1] (x along the width, fastest) and ones."""
    h, w = hw
    xs = xp.arange(w, dtype) * (2.0 / (w - 1)) - 1
    ys = xp.arange(h, dtype) * (2.0 / (h - 1)) - 1
    base = xp.empty((3, h, w), dtype)
    xp.copyto(base[0], xs.reshape(1, w))
    xp.copyto(base[1], ys.reshape(h, 1))
    base[2].fill(1)
    return base.reshape(3, h * w)


def _grid_generator_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    data, out = ins[0], outs[0]
    n = data.shape[0]
    if attrs.transform_type == "affine":
        base = _base_grid(xp, out.shape[2:], data.dtype)
        xp.matmul(data.reshape(n, 2, 3), base, out.reshape(n, 2, -1))
        return
    h, w = data.shape[2:]
    base = _base_grid(xp, (h, w), data.dtype)[:2].reshape(1, 2, h, w)
    scale = xp.from_host(np.array([2.0 / (w - 1), 2.0 / (h - 1)], data.dtype)).reshape(1, 2, 1, 1)
    # out = (flow + pixel) / ((size - 1) / 2) - 1 = flow * scale + base
    xp.copyto(out, data * scale + base)


def _grid_generator_grad(F, node, ograds):
    """affine: linear in the matrices, the adjoint op; warp: the head gradient scaled by
    2 / (W - 1) in x and 2 / (H - 1) in y."""
    g, a = ograds[0], node.attrs
    if a.transform_type == "affine":
        return [F._internal._grid_generator_affine_adjoint(g, target_shape=a.target_shape)]
    h, w = node.input_shapes[0][2:]
    return [F.concat(F.slice_axis(g, axis=1, begin=0, end=1) * (2.0 / (w - 1)),
                     F.slice_axis(g, axis=1, begin=1, end=2) * (2.0 / (h - 1)), dim=1)]


def _affine_adjoint_shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error(_AFFINE_ADJ, f"takes 1 input (ograd), got {len(shapes)}")
    g = tuple(shapes[0])
    hw = _target(_AFFINE_ADJ, attrs.target_shape)
    if len(g) != 4 or g[1:] != (2,) + hw:
        raise op_error(_AFFINE_ADJ, f"ograd must be (batch, 2) + target_shape {hw}, got shape "
                       f"{g}")
    return [(g[0], 6)]


def _affine_adjoint_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    g, out = ins[0], outs[0]
    n = g.shape[0]
    base = _base_grid(xp, g.shape[2:], g.dtype)
    xp.matmul(g.reshape(n, 2, -1), base.transpose(1, 0), out.reshape(n, 2, 3))


register(OpDef(
    "GridGenerator", inputs=("data",),
    params=(Param("transform_type", "str", REQUIRED, "'affine' (data (N, 6)) or 'warp' (data "
                  "a flow (N, 2, H, W))", choices=("affine", "warp")),
            Param("target_shape", "shape", (0, 0), "(H, W) of the affine grid")),
    infer_shape=_grid_generator_shape,
    infer_type=lambda dtypes, attrs: _float_one("GridGenerator", dtypes),
    compute={"cpu": _grid_generator_compute}, gradient=_grid_generator_grad,
    doc="""The sampling grid of BilinearSampler (N, 2, H, W), x in channel 0 and y in channel
1, in [-1, 1]:

- ``affine``: data (N, 6) is a 2x3 matrix per item, applied to the target's coordinates
  ``(x, y, 1)`` (x = -1 + 2 w / (W - 1), y = -1 + 2 h / (H - 1)), ``(H, W) = target_shape``;
- ``warp``: data is a flow (N, 2, H, W) in pixels, added to each pixel's coordinates and
  normalised: ``(flow_x + w) / ((W - 1) / 2) - 1``, the same for y.

Both are linear in data; the gradient differentiates to any order. Sizes of 1 are an error
(MXNet 1.9.1 divided by zero). float32 or float64.

>>> theta = mx.nd.array([[1, 0, 0, 0, 1, 0]])                    # the identity
>>> grid = mx.nd.GridGenerator(theta, transform_type="affine", target_shape=(2, 3))
>>> grid[0, 0].asnumpy().tolist()
[[-1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]]
"""))

register(OpDef(
    _AFFINE_ADJ, inputs=("ograd",),
    params=(Param("target_shape", "shape", REQUIRED, "(H, W) of the grid"),),
    infer_shape=_affine_adjoint_shape,
    infer_type=lambda dtypes, attrs: _float_one(_AFFINE_ADJ, dtypes),
    compute={"cpu": _affine_adjoint_compute},
    gradient=lambda F, node, ograds: [F.GridGenerator(
        ograds[0], transform_type="affine", target_shape=node.attrs.target_shape)],
    doc="""The adjoint of the affine GridGenerator: a grid's gradient (N, 2, H, W) to the
matrices' (N, 6); its gradient is the affine GridGenerator."""))


# ---- SpatialTransformer -----------------------------------------------------------------------
def _st_shape(shapes, attrs):
    if len(shapes) != 2:
        raise op_error("SpatialTransformer", f"takes 2 inputs (data, loc), got {len(shapes)}")
    data, loc = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 4:
        raise op_error("SpatialTransformer", f"data must be 4-D (batch, channel, height, "
                       f"width), got shape {data}")
    if loc != (data[0], 6):
        raise op_error("SpatialTransformer", f"loc must be (batch, 6) = {(data[0], 6)} (a 2x3 "
                       f"affine matrix per item), got shape {loc}")
    return [data[:2] + _target("SpatialTransformer", attrs.target_shape)]


def _st_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    data, loc, out = ins[0], ins[1], outs[0]
    grid = xp.empty((data.shape[0], 2) + out.shape[2:], data.dtype)
    _grid_generator_compute(rctx, [loc], [grid], Attrs(transform_type="affine"))
    _sample_compute(0, 0)(rctx, [data, grid], [out], attrs)


def _st_grad(F, node, ograds):
    """BilinearSampler(data, GridGenerator(loc)): the sampler's gradients, the grid's taken
    back to loc through the affine adjoint."""
    data, loc = node.inputs
    ts = node.attrs.target_shape
    grid = F.GridGenerator(loc, transform_type="affine", target_shape=ts)
    ddata, dgrid = _sample_grads(F, data, grid, ograds[0], 0, 0, node.input_shapes[0][2:])
    return [ddata, F._internal._grid_generator_affine_adjoint(dgrid, target_shape=ts)]


register(OpDef(
    "SpatialTransformer", inputs=("data", "loc"),
    params=(Param("target_shape", "shape", (0, 0), "(H, W) of the output"),
            Param("transform_type", "str", REQUIRED, "'affine'", choices=("affine",)),
            Param("sampler_type", "str", REQUIRED, "'bilinear'", choices=("bilinear",)),
            Param("cudnn_off", "bool", None, "accepted for compatibility; no effect")),
    infer_shape=_st_shape,
    infer_type=lambda dtypes, attrs: _float_pair("SpatialTransformer", dtypes, ("data", "loc")),
    compute={"cpu": _st_compute}, gradient=_st_grad,
    doc="""``BilinearSampler(data, GridGenerator(loc, 'affine', target_shape))``: each item of
4-D ``data`` sampled on the affine grid of its 2x3 matrix ``loc`` (N, 6). Output (N, C) +
target_shape; differentiable in data and loc to any order. float32 or float64.

>>> data = mx.nd.array([[[[1.0, 2.0], [3.0, 4.0]]]])
>>> loc = mx.nd.array([[0.5, 0, 0, 0, 0.5, 0]])                  # zoom in on the centre
>>> y = mx.nd.SpatialTransformer(data, loc, target_shape=(2, 2),
...                              transform_type="affine", sampler_type="bilinear")
>>> y.asnumpy().round(3).ravel().tolist()
[1.75, 2.25, 2.75, 3.25]
"""))


# ---- ROIPooling -------------------------------------------------------------------------------
_ROI_ARGMAX = "_roi_pooling_argmax"


def _roi_shapes(op, shapes, attrs):
    if len(shapes) != 2:
        raise op_error(op, f"takes 2 inputs (data, rois), got {len(shapes)}")
    data, rois = tuple(shapes[0]), tuple(shapes[1])
    if len(data) != 4:
        raise op_error(op, f"data must be 4-D (batch, channel, height, width), got shape {data}")
    if len(rois) != 2 or rois[1] != 5:
        raise op_error(op, f"rois must be (num_rois, 5) rows [batch_index, x1, y1, x2, y2], "
                       f"got shape {rois}")
    ph, pw = _pooled(op, attrs)
    if not 0.0 <= attrs.spatial_scale <= 1.0:
        raise op_error(op, f"spatial_scale={attrs.spatial_scale} must be in [0, 1] (MXNet's "
                       "bound: 1 / the total stride)")
    return [(rois[0], data[1], ph, pw)]


def _pooled(op, attrs):
    size = tuple(int(v) for v in attrs.pooled_size)
    if len(size) != 2 or min(size) < 1:
        raise op_error(op, f"pooled_size={size} must be (height, width), each at least 1")
    return size


def _c_round(v):
    """C's round: halves away from zero (MXNet rounds the scaled corners so)."""
    return int(np.sign(v) * np.floor(abs(v) + 0.5))


def _roi_bins(op, roi, shape, attrs):
    """The batch item and the [h0, h1) x [w0, w1) window of each bin of one roi."""
    n, _, height, width = shape
    b = roi[0]
    if not (b == int(b) and 0 <= b < n):
        raise op_error(op, f"roi {roi.tolist()} has batch_index {b}, not an integer in [0, {n})")
    x1, y1, x2, y2 = (_c_round(v * attrs.spatial_scale) for v in roi[1:])
    ph, pw = _pooled(op, attrs)
    bin_h, bin_w = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
    clip = lambda v, hi: min(max(v, 0), hi)                         # noqa: E731
    for i in range(ph):
        h0 = clip(int(np.floor(i * bin_h)) + y1, height)
        h1 = clip(int(np.ceil((i + 1) * bin_h)) + y1, height)
        for j in range(pw):
            w0 = clip(int(np.floor(j * bin_w)) + x1, width)
            w1 = clip(int(np.ceil((j + 1) * bin_w)) + x1, width)
            yield int(b), i, j, h0, h1, w0, w1


def _roi_pool(rctx, data, rois, attrs, out=None, index=None):
    """Max over each bin per channel into ``out`` and/or the flat position of the (first)
    maximum in data into ``index`` (-1 and 0 for an empty bin, as MXNet)."""
    xp = rctx.xp
    n, c, height, width = data.shape
    host = xp.to_host(rois).astype(np.float64)
    chans = xp.arange(c, "int64")
    for r, roi in enumerate(host):
        for b, i, j, h0, h1, w0, w1 in _roi_bins("ROIPooling", roi, data.shape, attrs):
            if h1 <= h0 or w1 <= w0:
                if out is not None:
                    out[r, :, i, j].fill(0)
                if index is not None:
                    index[r, :, i, j].fill(-1)
                continue
            region = data[b, :, h0:h1, w0:w1].reshape(c, -1)
            if out is not None:
                xp.copyto(out[r, :, i, j], region.max(axis=1))
            if index is not None:
                k = region.argmax(axis=1)          # the first maximum in (h, w) scan order
                plane = (k // (w1 - w0) + h0) * width + k % (w1 - w0) + w0
                xp.copyto(index[r, :, i, j], (b * c + chans) * (height * width) + plane)


def _roi_pooling_compute(rctx, ins, outs, attrs):
    _roi_pool(rctx, ins[0], ins[1], attrs, out=outs[0])


def _roi_argmax_compute(rctx, ins, outs, attrs):
    _roi_pool(rctx, ins[0], ins[1], attrs, index=outs[0])


def _roi_pooling_grad(F, node, ograds):
    """Each output is one element of data (its bin's maximum): data's gradient adds the head
    gradient back at those elements (``_backward_gather_nd``, whose gradient is
    ``gather_nd``); empty bins give nothing. The rois get none (as MXNet)."""
    data, rois = node.inputs
    shape = tuple(node.input_shapes[0])
    total = int(np.prod(shape))
    idx = F.reshape(F._internal._roi_pooling_argmax(data, rois, **_roi_params_of(node.attrs)),
                    shape=(1, -1))
    keep = F.reshape(F.cast(idx >= 0, dtype=node.input_dtypes[0]), shape=(-1,))
    g = F.reshape(ograds[0], shape=(-1,)) * keep
    flat = F._internal._backward_gather_nd(g, F.clip(idx, 0, total - 1), shape=(total,))
    return [F.reshape(flat, shape=shape), None]


def _roi_params_of(attrs):
    return dict(pooled_size=attrs.pooled_size, spatial_scale=attrs.spatial_scale)


def _roi_params():
    return (Param("pooled_size", "shape", REQUIRED, "(height, width) of the pooled output"),
            Param("spatial_scale", "float", REQUIRED, "the scale from the rois' coordinates to "
                  "data's (1 / the total stride)"))


def _roi_type(op):
    def infer(dtypes, attrs):
        return [_float_one(op, dtypes[:1])[0]] if op == "ROIPooling" else [np.dtype("int64")]
    return infer


register(OpDef(
    "ROIPooling", inputs=("data", "rois"), params=_roi_params(),
    infer_shape=lambda shapes, attrs: _roi_shapes("ROIPooling", shapes, attrs),
    infer_type=_roi_type("ROIPooling"), compute={"cpu": _roi_pooling_compute},
    gradient=_roi_pooling_grad,
    doc="""Max pooling of regions of 4-D ``data`` (N, C, H, W) to ``pooled_size`` (ph, pw)
bins: ``rois`` (R, 5) rows ``[batch_index, x1, y1, x2, y2]`` in image coordinates, scaled by
``spatial_scale`` and rounded (halves away from zero) to pixels; the region (y2 - y1 + 1,
x2 - x1 + 1) (at least 1) is split into bins with floor/ceil edges, clipped to the data.
An empty bin gives 0. Output (R, C, ph, pw).

The gradient in data adds the head gradient at each bin's (first) maximum, a graph of
registered ops (differentiable again); the rois get none, as MXNet. A batch_index outside
the batch is an error (MXNet 1.9.1 read outside the data).

>>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> rois = mx.nd.array([[0, 0, 0, 3, 3]])
>>> mx.nd.ROIPooling(x, rois, pooled_size=(2, 2), spatial_scale=1.0)[0, 0].asnumpy().tolist()
[[5.0, 7.0], [13.0, 15.0]]
"""))

register(OpDef(
    _ROI_ARGMAX, inputs=("data", "rois"), params=_roi_params(),
    infer_shape=lambda shapes, attrs: _roi_shapes(_ROI_ARGMAX, shapes, attrs),
    infer_type=_roi_type(_ROI_ARGMAX), compute={"cpu": _roi_argmax_compute},
    gradient=NON_DIFFERENTIABLE,
    doc="""The flat position in ``data`` of each ROIPooling output's maximum (int64; -1 for an
empty bin): the selection ROIPooling's gradient scatters back to. Integer indices: not
differentiable."""))


# ---- _contrib_AdaptiveAvgPooling2D ------------------------------------------------------------
_ADAPTIVE, _ADAPTIVE_ADJ = "_contrib_AdaptiveAvgPooling2D", "_adaptive_avg_pooling2d_adjoint"


def _output_size(op, attrs):
    """(oh, ow): () is (1, 1), one entry is square (MXNet's forms)."""
    size = tuple(int(v) for v in attrs.output_size)
    size = (1, 1) if not size else size * 2 if len(size) == 1 else size
    if len(size) != 2 or min(size) < 1:
        raise op_error(op, f"output_size={tuple(attrs.output_size)} must be empty, one size or "
                       "(height, width), each at least 1")
    return size


def _bin_matrix(xp, n_in, n_out, dtype):
    """(n_out, n_in): row i averages inputs floor(i n_in / n_out) .. ceil((i + 1) n_in /
    n_out) - 1 (adaptive bins; they overlap when n_out > n_in)."""
    m = np.zeros((n_out, n_in), dtype)
    for i in range(n_out):
        lo, hi = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return xp.from_host(m)


def _adaptive_shape(shapes, attrs):
    if len(shapes) != 1:
        raise op_error(_ADAPTIVE, f"takes 1 input (data), got {len(shapes)}")
    data = tuple(shapes[0])
    if len(data) != 4:
        raise op_error(_ADAPTIVE, f"data must be 4-D (batch, channel, height, width), got "
                       f"shape {data}")
    if min(data[2:]) < 1:
        raise op_error(_ADAPTIVE, f"data's height and width must be at least 1, got shape "
                       f"{data}")
    return [data[:2] + _output_size(_ADAPTIVE, attrs)]


def _separable(xp, x, rows, cols, out):
    """out = rows @ x @ cols^T on the last two axes, in blocks of images (bounded scratch)."""
    n, c = x.shape[:2]
    step = max(1, (1 << 22) // max(c * x.shape[2] * cols.shape[0], 1))
    for b in range(0, n, step):
        blk = slice(b, min(n, b + step))
        tmp = xp.empty(x[blk].shape[:3] + (cols.shape[0],), x.dtype)
        xp.matmul(x[blk], cols.transpose(1, 0), tmp)
        xp.matmul(rows, tmp, out[blk])


def _adaptive_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    x, out = ins[0], outs[0]
    (h, w), (oh, ow) = x.shape[2:], out.shape[2:]
    _separable(xp, x, _bin_matrix(xp, h, oh, x.dtype), _bin_matrix(xp, w, ow, x.dtype), out)


def _adaptive_adjoint_shape(shapes, attrs):
    if len(shapes) != 1 or len(shapes[0]) != 4:
        raise op_error(_ADAPTIVE_ADJ, f"takes one 4-D input (ograd), got shapes {shapes}")
    if attrs.height < 1 or attrs.width < 1:
        raise op_error(_ADAPTIVE_ADJ, f"height={attrs.height}, width={attrs.width} must be >= 1")
    return [tuple(shapes[0][:2]) + (attrs.height, attrs.width)]


def _adaptive_adjoint_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    g, out = ins[0], outs[0]
    (oh, ow), (h, w) = g.shape[2:], out.shape[2:]
    rows, cols = _bin_matrix(xp, h, oh, g.dtype), _bin_matrix(xp, w, ow, g.dtype)
    _separable(xp, g, rows.transpose(1, 0), cols.transpose(1, 0), out)


register(OpDef(
    _ADAPTIVE, inputs=("data",), params=(
        Param("output_size", "shape", (), "() for (1, 1), one size for a square, or (height, "
              "width)"),),
    infer_shape=_adaptive_shape, infer_type=lambda dtypes, attrs: _float_one(_ADAPTIVE, dtypes),
    compute={"cpu": _adaptive_compute},
    gradient=lambda F, node, ograds: [F._internal._adaptive_avg_pooling2d_adjoint(
        ograds[0], height=node.input_shapes[0][2], width=node.input_shapes[0][3])],
    doc="""Average pooling of 4-D ``data`` (N, C, H, W) to ``output_size`` (oh, ow) whatever H
and W: output row i averages the input rows ``floor(i H / oh)`` to ``ceil((i + 1) H / oh) -
1`` (the bins overlap when oh > H), the same for the columns. Linear: its gradient is the
adjoint (spreading each output over its bin), whose gradient is this op again. float32 or
float64.

>>> x = mx.nd.array([[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]])
>>> mx.nd.contrib.AdaptiveAvgPooling2D(x, output_size=(1, 2)).asnumpy().ravel().tolist()
[3.0, 4.0]
"""))

register(OpDef(
    _ADAPTIVE_ADJ, inputs=("ograd",), params=(
        Param("height", "int", REQUIRED, "the pooled data's height"),
        Param("width", "int", REQUIRED, "the pooled data's width")),
    infer_shape=_adaptive_adjoint_shape,
    infer_type=lambda dtypes, attrs: _float_one(_ADAPTIVE_ADJ, dtypes),
    compute={"cpu": _adaptive_adjoint_compute},
    gradient=lambda F, node, ograds: [F.contrib.AdaptiveAvgPooling2D(
        ograds[0], output_size=tuple(node.input_shapes[0][2:]))],
    doc="""The adjoint of _contrib_AdaptiveAvgPooling2D: ``ograd`` (N, C, oh, ow) spread over
the bins of (height, width), each value divided by its bin's size."""))


# ---- _contrib_BilinearResize2D ----------------------------------------------------------------
_RESIZE, _RESIZE_ADJ = "_contrib_BilinearResize2D", "_bilinear_resize2d_adjoint"
_PARITY = {"to_even_down": (0, -1), "to_even_up": (0, 1), "to_odd_down": (1, -1),
           "to_odd_up": (1, 1)}           # mode -> (the parity kept, the step to reach it)


def _resized(size, mode, target, scale):
    """One axis's output size in ``mode`` (MXNet 1.9.1's rules, sizes truncated)."""
    if mode == "size":
        return target if scale is None else int(size * scale)
    if mode == "odd_scale":
        return int(size * scale) if size % 2 == 0 else int((size - 1) * scale + 1)
    parity, step = _PARITY[mode]
    return size if size % 2 == parity else size + step


def _resize_out(shapes, attrs):
    """(oh, ow) of the resize of data (and like, in mode 'like')."""
    data = tuple(shapes[0])
    mode = attrs.mode
    if mode == "like":
        like = tuple(shapes[1])
        if len(like) < 2:
            raise op_error(_RESIZE, f"like must have at least 2 axes, got shape {like}")
        return like[-2:]
    if mode == "odd_scale" and (attrs.scale_height is None or attrs.scale_width is None):
        raise op_error(_RESIZE, "mode='odd_scale' needs scale_height and scale_width")
    for name in ("scale_height", "scale_width"):
        v = getattr(attrs, name)
        if v is not None and not v > 0:
            raise op_error(_RESIZE, f"{name}={v} must be positive")
    out = (_resized(data[2], mode, attrs.height, attrs.scale_height),
           _resized(data[3], mode, attrs.width, attrs.scale_width))
    if min(out) < 1:
        raise op_error(_RESIZE, f"the output (height, width)={out} of data of shape {data} "
                       f"(mode={mode!r}, height={attrs.height}, width={attrs.width}, "
                       f"scale_height={attrs.scale_height}, scale_width={attrs.scale_width}) "
                       "must be at least (1, 1)")
    return out


def _resize_inputs(attrs):
    return ("data", "like") if attrs.mode == "like" else ("data",)


def _resize_shape(shapes, attrs):
    want = len(_resize_inputs(attrs))
    if len(shapes) != want:
        raise op_error(_RESIZE, f"mode={attrs.mode!r} takes {want} input(s), got {len(shapes)}")
    data = tuple(shapes[0])
    if len(data) != 4 or min(data[2:]) < 1:
        raise op_error(_RESIZE, f"data must be 4-D (batch, channel, height, width) with a "
                       f"height and width, got shape {data}")
    return [data[:2] + tuple(_resize_out(shapes, attrs))]


def _interp_matrix(xp, n_in, n_out, align_corners, dtype):
    """(n_out, n_in): the bilinear weights of each output position along one axis. Source
    ``i (n_in - 1) / (n_out - 1)`` with align_corners, else ``(i + 0.5) n_in / n_out - 0.5``
    clamped at 0; a single output reads the first input (MXNet's ratio 0)."""
    m = np.zeros((n_out, n_in), np.float64)
    if n_out == 1:
        ratio = 0.0
    else:
        ratio = (n_in - 1) / (n_out - 1) if align_corners else n_in / n_out
    for i in range(n_out):
        src = i * ratio if align_corners else max((i + 0.5) * ratio - 0.5, 0.0)
        lo = min(int(src), n_in - 1)
        hi = lo + (lo < n_in - 1)
        frac = src - lo if hi > lo else 0.0
        m[i, lo] += 1 - frac
        m[i, hi] += frac
    return xp.from_host(m.astype(dtype))


def _resize_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    x, out = ins[0], outs[0]
    (h, w), (oh, ow) = x.shape[2:], out.shape[2:]
    ac = attrs.align_corners
    _separable(xp, x, _interp_matrix(xp, h, oh, ac, x.dtype),
               _interp_matrix(xp, w, ow, ac, x.dtype), out)


def _resize_grad(F, node, ograds):
    """Linear in data: its adjoint (whose gradient is this resize in mode 'size'); 'like'
    only gives a shape (zero gradient)."""
    h, w = node.input_shapes[0][2:]
    dx = F._internal._bilinear_resize2d_adjoint(ograds[0], height=h, width=w,
                                                align_corners=node.attrs.align_corners)
    return [dx] + [F.zeros_like(v) for v in node.inputs[1:]]


def _resize_adjoint_shape(shapes, attrs):
    if len(shapes) != 1 or len(shapes[0]) != 4:
        raise op_error(_RESIZE_ADJ, f"takes one 4-D input (ograd), got shapes {shapes}")
    if attrs.height < 1 or attrs.width < 1:
        raise op_error(_RESIZE_ADJ, f"height={attrs.height}, width={attrs.width} must be >= 1")
    return [tuple(shapes[0][:2]) + (attrs.height, attrs.width)]


def _resize_adjoint_compute(rctx, ins, outs, attrs):
    xp = rctx.xp
    g, out = ins[0], outs[0]
    (oh, ow), (h, w) = g.shape[2:], out.shape[2:]
    ac = attrs.align_corners
    _separable(xp, g, _interp_matrix(xp, h, oh, ac, g.dtype).transpose(1, 0),
               _interp_matrix(xp, w, ow, ac, g.dtype).transpose(1, 0), out)


register(OpDef(
    _RESIZE, inputs=("data", "like"), list_inputs=_resize_inputs,
    params=(Param("height", "int", 1, "output height (mode 'size' without scale_height)"),
            Param("width", "int", 1, "output width (mode 'size' without scale_width)"),
            Param("scale_height", "float", None, "the height's scale (modes 'size', "
                  "'odd_scale')"),
            Param("scale_width", "float", None, "the width's scale (modes 'size', 'odd_scale')"),
            Param("mode", "str", "size", "how the output size is chosen", choices=(
                "like", "odd_scale", "size", "to_even_down", "to_even_up", "to_odd_down",
                "to_odd_up")),
            Param("align_corners", "bool", True, "map the corner pixels onto each other")),
    infer_shape=_resize_shape, infer_type=lambda dtypes, attrs: _float_one(_RESIZE, dtypes[:1]),
    compute={"cpu": _resize_compute}, gradient=_resize_grad,
    doc="""Bilinear resize of the height and width of 4-D ``data`` (N, C, H, W). The output
size by ``mode``: 'size' (``height``/``width``, or ``int(H * scale_height)`` where a scale is
given, per axis: MXNet 1.9.1 failed unless both scales were), 'odd_scale' (``int(H * scale)``
for an even H, ``int((H - 1) * scale + 1)`` for an odd one), 'like' (the last two sizes of
the second input ``like``), 'to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up' (the
nearest size of that parity, below or above). Output position i reads source
``i (H - 1) / (oh - 1)`` with ``align_corners`` (the default), else ``(i + 0.5) H / oh - 0.5``
clamped at 0; a single output position reads the first pixel (as MXNet).

Linear in data: the gradient is the adjoint, differentiable again; like's is zero.

>>> x = mx.nd.array([[[[0.0, 3.0]]]])
>>> mx.nd.contrib.BilinearResize2D(x, height=1, width=4).asnumpy().ravel().tolist()
[0.0, 1.0, 2.0, 3.0]
"""))

register(OpDef(
    _RESIZE_ADJ, inputs=("ograd",), params=(
        Param("height", "int", REQUIRED, "the resized data's height"),
        Param("width", "int", REQUIRED, "the resized data's width"),
        Param("align_corners", "bool", True, "as the resize's")),
    infer_shape=_resize_adjoint_shape,
    infer_type=lambda dtypes, attrs: _float_one(_RESIZE_ADJ, dtypes),
    compute={"cpu": _resize_adjoint_compute},
    gradient=lambda F, node, ograds: [F.contrib.BilinearResize2D(
        ograds[0], height=node.input_shapes[0][2], width=node.input_shapes[0][3],
        align_corners=node.attrs.align_corners)],
    doc="""The adjoint of _contrib_BilinearResize2D: ``ograd`` (N, C, oh, ow) spread back to
(height, width) with the interpolation weights."""))

# Functions that compute on the host: interpolation and pooling-bin matrices from the sizes,
# roi bins from a host copy of the rois, scalar rounding (tests/test_device.py reads this).
HOST_CODE = {
    "_bin_matrix": "adaptive pooling's bin weights from the input and output sizes",
    "_interp_matrix": "bilinear resize weights from the input and output sizes",
    "_grid_generator_compute": "the two scale factors of the grid from the target size",
    "_c_round": "C's round-half-away-from-zero of one scalar",
    "_roi_bins": "the integer bin edges of one roi from a host copy of the rois",
    "_roi_pooling_grad": "the element count of a shape (metadata)",
}
