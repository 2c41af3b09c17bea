"""Large-tensor rows: NN layers: convolution, pooling, normalization, activations, softmax
family, output layers.

Every NN layer computes in float32 (float16 data runs through a float32 copy of the whole
input), so the rows go past 2**31 float32 elements (8 GiB): 2**32 would be 16 GiB for one
array, the whole peak. Each row holds one big array and keeps the others small:

* element-wise layers (Activation, LeakyReLU, _rrelu_slope, the regression outputs) and the
  row-wise ones (the softmax family, SoftmaxOutput, the normalisations, _norm_project,
  _pool_max_scatter, Dropout's output) run in place, ``out=`` the data itself;
* batched layers (FullyConnected, Convolution, Pooling, ...) take a batch of many small
  items (rows of 16, or 2048 elements) whose input or output is the big array, the other
  side small (a stride, one filter);
* the weight gradient reduces over the whole batch, the head gradient zero except at the
  checked items.

The items around 2**31 and the last ones equal the same op on a small batch of those items;
values are small integers (and power-of-two slopes and weights), so sums and products are
exact in any order and the small-batch oracle gives the very same bits.

Dropout's row stops at 2**30: its mask, a hidden output of the data's size and dtype, is a
second big array, and two of 2**31 float32 elements are the whole 16 GiB peak.
"""
import numpy as np

import mxlite as mx

from . import Row, elementwise

DROPOUT_REASON = ("float32 only; the mask, a hidden output of the data's size and dtype, is "
                  "a second array: past 2**31 the data (the output in place over it) and the "
                  "mask are 16 GiB, the whole peak (measured 16.05 GiB)")
F32_REASON = ("float32 only (float16 data is computed through a float32 copy of the whole "
              "input): 2**32 float32 elements are 16 GiB, the whole peak")


# ---- items of a batch ------------------------------------------------------------------------
def _items(t, n, per):
    """Batch items (``per`` elements each) of an ``n``-element array holding the positions a
    check reads and the markers of ``t.big``."""
    return sorted({p // per for p in set(t.positions(n)) | set(t.marks(n))})


def _flat(items, per):
    return [i * per + k for i in items for k in range(per)]


def _take_items(t, x, items):
    """``x``'s ``items`` (along axis 0) as a small batch on the trial's device."""
    per = x.size // x.shape[0]
    return t.small(x, _flat(items, per)).reshape((len(items),) + tuple(x.shape[1:]))


def _marked_batch(t, shape, items):
    """A zero float32 batch of ``shape`` with small distinct integers in each of ``items``."""
    x = mx.nd.zeros(shape, dtype="float32")
    per = int(np.prod(shape[1:]))
    for i in items:
        x[i] = mx.nd.array((np.arange(per) % 7 + 1 + i % 5).reshape(shape[1:]),
                           dtype="float32")
    return x


def _check_items(t, y, items, want, what):
    """``y``'s ``items`` (read from the device) equal the small batch ``want``."""
    t.shape(y, (y.shape[0],) + tuple(want.shape[1:]), what)
    per = y.size // y.shape[0]
    got = t.values(y, _flat(items, per)).reshape(want.shape)
    t.equal(got, want, what)


# ---- row builders ----------------------------------------------------------------------------
def batch_in(shape, call, fill=1, inplace=False):
    """A row for a layer applied to each item of a batch: the big array is the input, a
    batch of ``shape(t)`` (past 2**31 elements) filled with ``fill`` and ``t.big``'s markers;
    the items around 2**31 and at the tail of ``call(x)`` (``call(x, out=x)`` with
    ``inplace``: the output over the input) equal ``call`` on those items (in place too)."""
    def run(t):
        shp = shape(t)
        x = t.big("float32", int(np.prod(shp)), shape=shp, fill=fill)
        items = _items(t, x.size, x.size // shp[0])
        small = _take_items(t, x, items)
        y = call(x, out=x) if inplace else call(x)
        # the small batch the same way (in place too: an op may pick another kernel for a
        # call that does not write over its input, as LRN's oneDNN path)
        want = _first(call(small, out=small) if inplace else call(small)).asnumpy()
        _check_items(t, x if inplace else y, items, want, "output items")
    return Row(run, "float32", "2**31", F32_REASON)


def _first(result):
    """The (first) output of a call."""
    return result[0] if isinstance(result, (list, tuple)) else result


def batch_out(shape, out_per_item, call):
    """A row for a layer whose output is the big array: the input, a batch of ``shape(t)``,
    holds distinct integers in the items whose outputs (``out_per_item`` elements each, past
    2**31 in all) sit around 2**31 and at the tail; those output items equal ``call`` on
    the small batch of those inputs."""
    def run(t):
        shp = shape(t)
        items = _items(t, shp[0] * out_per_item, out_per_item)
        x = _marked_batch(t, shp, items)
        small = _take_items(t, x, items)
        y = call(x)
        t.seen(y)
        _check_items(t, y, items, call(small).asnumpy(), "output items")
    return Row(run, "float32", "2**31", F32_REASON)


def _batch(t, per):
    """Items of ``per`` elements, a batch just past 2**31 elements."""
    return t.P31 // per + 1


def _rows16(t):
    """Rows of 16, a batch just past 2**31 elements."""
    return (_batch(t, 16), 16)


# ---- element-wise layers, in place -----------------------------------------------------------
def _inplace(op, **kw):
    """``op(x, **kw)`` as an element-wise call ``call(x, out=None)``."""
    return lambda x, out=None: op(x, out=out, **kw)


def _loss(op):
    """A regression output layer on data with itself as the label (the forward pass does not
    read the label), in place."""
    return elementwise(lambda x, out=None: op(x, x, out=out), dtype="float32",
                       values=(-3, 5, -7, 9), size="2**31", reason=F32_REASON, inplace=True)


_PRELU_GAMMA = (0.5, 0.25, 2.0, 4.0)


def _prelu(t):
    """PReLU with a slope per channel over (2, 4, M) in place: every element past 2**31 is
    read with the slope of its channel, (position // M) % 4."""
    m = t.N31 // 8
    x = t.big("float32", 8 * m, shape=(2, 4, m), values=(-3, 5, -7, -9), fill=-1)
    pos = sorted(set(t.positions(x.size)) | set(t.marks(x.size)))
    before = t.values(x, pos)
    gamma = mx.nd.array(_PRELU_GAMMA, dtype="float32")
    y = mx.nd.LeakyReLU(x, gamma, act_type="prelu", out=x)
    t.shape(y, (2, 4, m), "output")
    slope = np.array(_PRELU_GAMMA, dtype=np.float32)[(np.array(pos) // m) % 4]
    want = np.where(before > 0, before, slope * before).astype(np.float32)
    t.equal(t.values(y, pos), want, "output at the far end")


def _rrelu_slope(t):
    """The slope read back from (data, output) = (x, x) in place: 1 everywhere but at the
    -inf markers (-inf / -inf is NaN)."""
    n = t.N31
    x = t.big("float32", n, values=(-np.inf, 5, -np.inf, -2), fill=-3)
    pos = sorted(set(t.positions(n)) | set(t.marks(n)))
    before = t.small(x, pos)
    y = mx.nd._internal._rrelu_slope(x, x, out=x)
    t.shape(y, (n,), "output")
    t.equal(t.values(y, pos), mx.nd._internal._rrelu_slope(before, before), "slopes")


# ---- convolution and pooling: batches of small images -----------------------------------------
# Items of 2048 elements (two at small scale): a 4x4 window with stride 4 leaves an output a
# sixteenth of the input (or an input a sixteenth of the output), and items this size keep
# the per-item overhead of the kernels low.
_WIN = dict(kernel=(4, 4), stride=(4, 4))
_POOL = dict(_WIN, pad=(0, 0))
_ITEM = 2048


def _w(shape):
    """Small integer weights."""
    return mx.nd.array((np.arange(int(np.prod(shape))) % 3 + 1).reshape(shape),
                       dtype="float32")


def _images(*shape):
    """The batch shape of items of ``shape`` (``_ITEM`` elements)."""
    return lambda t: (_batch(t, _ITEM),) + shape


def _conv(x):
    return mx.nd.Convolution(x, _w((1, 2, 4, 4)), mx.nd.array([1.0]), num_filter=1, **_WIN)


def _deconv(y):
    return mx.nd.Deconvolution(y, _w((1, 2, 4, 4)), num_filter=2, **_WIN)


# The same layers channels last (NHWC; weights (O, *kernel, I)): the call copies and
# computes a batch chunk at a time, so its reads (Convolution, Pooling: the big input) and
# writes (Deconvolution: the big output) go through slices of the big array at offsets past
# 2**31, and the weight gradient adds its chunks up. Measured with both layouts (CPU, 2
# cores): Convolution 16 s, Deconvolution 9-14 s, _conv_weight_grad 17 s, Pooling 18 s,
# each peak 8.3-8.6 GiB (the big array; a chunk's copies are 2**21 elements).
LAYOUT_REASON = ("float32, past 2**31 (8 GiB; 2**32 float32 elements are the whole 16 GiB "
                 "peak): a large float16 call computes on float32 batch chunks, the path a "
                 "channels-last call takes (tests/ops/test_conv.py), which this row covers "
                 "by running NCHW, then NHWC")


def _conv_nhwc(x):
    return mx.nd.Convolution(x, _w((1, 4, 4, 2)), mx.nd.array([1.0]), num_filter=1,
                             layout="NHWC", **_WIN)


def _deconv_nhwc(y):
    return mx.nd.Deconvolution(y, _w((1, 4, 4, 2)), num_filter=2, layout="NHWC", **_WIN)


def _conv_weight_grad_nhwc(x, g, out=None):
    return mx.nd._internal._conv_weight_grad(x, g, num_filter=1, out=out, layout="NHWC",
                                             **_WIN)


def _in_turn(*rows):
    """One row running ``rows`` one after the other (each frees its arrays before the next:
    the peak is the larger one's)."""
    def run(t):
        for row in rows:
            row.run(t)
    return Row(run, rows[0].dtype, rows[0].size, LAYOUT_REASON)


def with_head(x_shape, g_shape, call, inplace=False, reduced=False):
    """A row for a gradient op ``call(x, g)`` of data ``x`` (the big array, ``x_shape(t)``,
    ones with ``t.big``'s markers) and a head gradient ``g`` of ``g_shape`` per item, zero
    but at the checked items: the output items (``reduced``: the whole output, a sum over
    the batch, exact as only those items add to it) equal ``call`` on those items alone.
    ``inplace`` writes the output over the data."""
    def run(t):
        shp = x_shape(t)
        x = t.big("float32", int(np.prod(shp)), shape=shp, fill=1)
        items = _items(t, x.size, x.size // shp[0])
        g = _marked_batch(t, (shp[0],) + g_shape, items)
        want = call(_take_items(t, x, items), _take_items(t, g, items))
        got = call(x, g, out=x) if inplace else call(x, g)
        if reduced:
            t.equal(got, want, "output")
        else:
            _check_items(t, got, items, want.asnumpy(), "output items")
    return Row(run, "float32", "2**31", F32_REASON)


def _conv_weight_grad(x, g, out=None):
    return mx.nd._internal._conv_weight_grad(x, g, num_filter=1, out=out, **_WIN)


def _pool_scatter(x, g, out=None):
    return mx.nd._internal._pool_max_scatter(x, g, pool_type="max", out=out, **_POOL)


def _pool_gather(x):
    return mx.nd._internal._pool_max_gather(x, x, pool_type="max", **_POOL)


# ---- row-wise layers, in place --------------------------------------------------------------
def _vector(n, start=1):
    """Small integers ``start, start + 1, ...`` cycling over 3 values, ``n`` of them."""
    return mx.nd.array(np.arange(n) % 3 + start, dtype="float32")


def _with_stats(op, stat_shape, params, **kw):
    """``op(x, *params(x), **kw)``; in place its hidden statistics go to small arrays of
    ``stat_shape(x.shape)``."""
    def call(x, out=None):
        args = params(x)
        if out is None:
            return op(x, *args, **kw)
        stats = [mx.nd.empty(stat_shape(x.shape), dtype="float32") for _ in range(2)]
        return op(x, *args, out=[out] + stats, **kw)
    return call


def _batch_norm(x, out=None, op=mx.nd.BatchNorm):
    """BatchNorm (or ``op`` with its outputs) in inference (the moving statistics) over
    channels of axis 1; in place the normalised data (a hidden output) goes over the output
    too (gamma is fixed at 1 and beta is 0, so both are the same values before a ReLU)."""
    c = x.shape[1]
    args = (_vector(c), mx.nd.zeros((c,)), _vector(c, 0), _vector(c, 2))
    if out is None:
        return op(x, *args)
    small = [mx.nd.empty((c,)), mx.nd.empty((c,))]
    return op(x, *args, out=[out] + small + [out, mx.nd.empty((c,)), mx.nd.empty((1,))])


def _sync_batch_norm(x, out=None):
    """SyncBatchNorm as BatchNorm's row (one process): its seventh output, the count, is a
    one-element array."""
    if out is None:
        return _batch_norm(x, None, mx.nd.contrib.SyncBatchNorm)
    c = x.shape[1]
    args = (_vector(c), mx.nd.zeros((c,)), _vector(c, 0), _vector(c, 2))
    small = [mx.nd.empty((c,)), mx.nd.empty((c,))]
    return mx.nd.contrib.SyncBatchNorm(x, *args, out=[out] + small + [
        out, mx.nd.empty((c,)), mx.nd.empty((1,)), mx.nd.empty((1,))])


def _batch_norm_relu(x, out=None):
    """BatchNormWithReLU as BatchNorm's row: the ReLU runs last, over the output."""
    return _batch_norm(x, out, mx.nd.contrib.BatchNormWithReLU)


def _norm_project(x, out=None):
    """The normalisation backward over rows, with grad = xhat = x."""
    b = x.shape[0]
    return mx.nd._internal._norm_project(
        x, x, mx.nd.full((b, 1), 0.5), mx.nd.ones((1,)), mx.nd.full((b, 1), 2.0),
        mx.nd.ones((b, 1)), axis=1, out=out)


def _layer_norm_grad(x, out=None):
    """LayerNorm's fused backward over rows, with ograd = data = x, mean 1 and std 2 (exact
    halves); in place the data gradient goes over x, the gamma and beta sums to small
    arrays."""
    b, c = x.shape
    stats = [mx.nd.full((b, 1), v) for v in (1.0, 2.0, 0.0, 1.0)]
    outs = {} if out is None else {"out": [out, mx.nd.empty((c,)), mx.nd.empty((c,))]}
    return mx.nd._internal._layer_norm_grad(x, x, _vector(c), *stats, **outs)


def _softmax_output(x, out=None):
    return mx.nd.SoftmaxOutput(x, mx.nd.zeros((x.shape[0],)), out=out)


def _softmax_cross_entropy(t):
    """The loss summed over rows of 2048 classes past 2**31 elements: ones (every class has
    log-probability -log 2048) but for the rows holding the markers, whose labels (1 or 2,
    never a marker's column) are set, and the last row. Every term is at least log 2048, so
    the sum in double is exact in any order: rows of ones times their term plus each marked
    row's term, the terms read from log_softmax of those rows."""
    shp = _images(2048)(t)
    x = t.big("float32", shp[0] * 2048, shape=shp, fill=1)
    rows = sorted({p // 2048 for p in t.marks(x.size)} | {shp[0] - 1})
    label = mx.nd.zeros((shp[0],), dtype="int8")
    labels = [1 + r % 2 for r in rows]
    for r, v in zip(rows, labels):
        label[r] = v
    got = mx.nd.softmax_cross_entropy(x, label)
    ones = -mx.nd.log_softmax(mx.nd.ones((1, 2048))).asnumpy().astype(np.float64)[0, 0]
    logp = mx.nd.log_softmax(_take_items(t, x, rows)).asnumpy().astype(np.float64)
    marked = -logp[np.arange(len(rows)), labels]
    want = (shp[0] - len(rows)) * ones + float(np.sum(marked))
    t.equal(got, np.array([want], dtype=np.float32), "loss")


def _dropout(t):
    """Dropout (mode 'always', p = 1/2) over rows of 2048 sharing one draw (axes=(1,): the
    draws are a 2048th of the data) past 2**30 elements, the output in place: each row
    around 2**30 and at the tail is the input times its mask, 0 or 2 along the row."""
    shp = (t.power("2**30") // 2048 + 1, 2048)
    x = t.big("float32", shp[0] * 2048, shape=shp, fill=1)
    pos = _flat(_items(t, x.size, 2048), 2048)
    before = t.values(x, pos)
    mask = mx.nd.empty(shp)
    mx.nd.Dropout(x, p=0.5, mode="always", axes=(1,), out=[x, mask])
    m = t.values(mask, pos).reshape(-1, 2048)
    t.check(set(np.unique(m).tolist()) <= {0.0, 2.0}, f"mask values {np.unique(m)}")
    t.check((m == m[:, :1]).all(), "one draw per row")
    t.equal(t.values(x, pos), before * m.reshape(-1), "output = data * mask")


ROWS = {
    # float16 past 2**32 in place: computed through float32 a block at a time
    "Activation": elementwise(_inplace(mx.nd.Activation, act_type="relu"), dtype="float16",
                              values=(-3, 5, -7, 9), inplace=True),
    "LeakyReLU": Row(_prelu, "float32", "2**31", F32_REASON),
    "_rrelu_slope": Row(_rrelu_slope, "float32", "2**31", F32_REASON),
    # float16 past 2**32 in place, computed through float32 a block at a time
    "_gelu_derivative": elementwise(_inplace(mx.nd._internal._gelu_derivative, order=2),
                                    dtype="float16", values=(-3, 5, -7, 1), inplace=True),
    "LinearRegressionOutput": _loss(mx.nd.LinearRegressionOutput),
    "LogisticRegressionOutput": _loss(mx.nd.LogisticRegressionOutput),
    "MAERegressionOutput": _loss(mx.nd.MAERegressionOutput),
    "FullyConnected": batch_in(
        _rows16, lambda x: mx.nd.FullyConnected(x, _w((1, 16)), mx.nd.array([2.0]), num_hidden=1)),
    "Convolution": _in_turn(batch_in(_images(2, 16, 64), _conv),
                            batch_in(_images(16, 64, 2), _conv_nhwc)),
    "Deconvolution": _in_turn(batch_out(_images(1, 4, 16), _ITEM, _deconv),
                              batch_out(_images(4, 16, 1), _ITEM, _deconv_nhwc)),
    "_conv_weight_grad": _in_turn(
        with_head(_images(2, 16, 64), (1, 4, 16), _conv_weight_grad, reduced=True),
        with_head(_images(16, 64, 2), (4, 16, 1), _conv_weight_grad_nhwc, reduced=True)),
    "Pooling": _in_turn(batch_in(_images(1, 32, 64),
                                 lambda x: mx.nd.Pooling(x, pool_type="avg", **_POOL)),
                        batch_in(_images(32, 32, 2),
                                 lambda x: mx.nd.Pooling(x, pool_type="avg", layout="NHWC",
                                                         **_POOL))),
    "_pool_backward": batch_out(
        _images(1, 8, 16), _ITEM,
        lambda g: mx.nd._internal._pool_backward(g, pool_type="avg", in_shape=(32, 64),
                                                 **_POOL)),
    "_pool_max_gather": batch_in(_images(1, 32, 64), _pool_gather),
    "softmax": batch_in(_images(2048), _inplace(mx.nd.softmax), inplace=True),
    "softmin": batch_in(_images(2048), _inplace(mx.nd.softmin, temperature=2.0),
                        inplace=True),
    "log_softmax": batch_in(_images(4, 512), _inplace(mx.nd.log_softmax, axis=1),
                            inplace=True),
    "SoftmaxOutput": batch_in(_images(2048), _softmax_output, inplace=True),
    "_softmax_grad": batch_in(_images(2048), lambda x, out=None: mx.nd._internal._softmax_grad(
        x, x, axis=1, out=out), inplace=True),
    "_log_softmax_grad": batch_in(_images(4, 512), lambda x, out=None:
                                  mx.nd._internal._log_softmax_grad(x, x, axis=1, out=out),
                                  inplace=True),
    "softmax_cross_entropy": Row(_softmax_cross_entropy, "float32", "2**31", F32_REASON),
    "LayerNorm": batch_in(_images(2048), _with_stats(
        mx.nd.LayerNorm, lambda s: (s[0], 1), lambda x: (_vector(2048), _vector(2048, 0))),
        inplace=True),
    "InstanceNorm": batch_in(_images(2, 1024), _with_stats(
        mx.nd.InstanceNorm, lambda s: (s[0], 2, 1), lambda x: (_vector(2), _vector(2, 0))),
        inplace=True),
    "L2Normalization": batch_in(_images(2048), _inplace(mx.nd.L2Normalization), inplace=True),
    "BatchNorm": batch_in(_images(4, 512), _batch_norm, inplace=True),
    "_contrib_BatchNormWithReLU": batch_in(_images(4, 512), _batch_norm_relu, inplace=True),
    "_contrib_SyncBatchNorm": batch_in(_images(4, 512), _sync_batch_norm, inplace=True),
    "_norm_project": batch_in(_images(2048), _norm_project, inplace=True),
    "_layer_norm_grad": batch_in(_images(2048), _layer_norm_grad, inplace=True),
    "_pool_max_scatter": with_head(_images(1, 32, 64), (1, 8, 16), _pool_scatter,
                                   inplace=True),
    "Dropout": Row(_dropout, "float32", "2**30", DROPOUT_REASON),
    "UpSampling": batch_out(_images(1, 8, 16), _ITEM,
                            lambda x: mx.nd.UpSampling(x, scale=4, sample_type="nearest")),
}
