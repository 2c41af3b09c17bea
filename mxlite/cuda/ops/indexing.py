"""GPU compute functions of ``_getitem``, ``_getitem_scatter`` and ``_setitem``
(``mxlite/ops/indexing.py``), and the scatter-add behind ``GpuNamespace.add_at``.

A basic key (ints, slices, None, Ellipsis) is a strided view moved by the copy kernel, as on
the CPU. An advanced key (index arrays) is applied by the array library to *index grids*:
for every axis d of the indexed array, a stride-0 view holding the index along d, so that
``grid_d[key]`` gives, for every selected element, its coordinate d under NumPy's full
indexing rules. Their dot product with the strides is each element's flat offset; the data
then moves through mxlite's kernels: a gather, a deterministic scatter-add in NumPy's order
(``numpy.add.at``), or a scatter in which the last of repeated writes wins (NumPy's
assignment order), whatever the number of threads.
"""
import numpy as np

from ...ops import indexing as _cpu
from . import attach
from .gather import I64, gather_flat, scatter_last, segment_add


def _device_key(xp, key, shape):
    """``key`` with every index array on the device: a bool array as the int64 coordinates
    of its true entries (host work on the host key), negative indices counted from the end
    (the key was checked against ``shape`` by shape inference)."""
    items, axis = [], 0
    n_axes = sum(k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
                 for k in key if k is not None and k is not Ellipsis)
    for k in key:
        if k is Ellipsis:
            items.append(k)
            axis += len(shape) - n_axes
        elif k is None:
            items.append(k)
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim == 0:
            items.append(xp.from_host(k))           # a new axis of length 1 or 0
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            for coords in np.nonzero(k):
                items.append(xp.from_host(coords.astype(np.int64)))
            axis += k.ndim
        elif isinstance(k, np.ndarray):
            items.append(xp.from_host(np.where(k < 0, k + shape[axis], k).astype(np.int64)))
            axis += 1
        else:
            items.append(k)
            axis += 1
    return tuple(items)


def flat_offsets(xp, shape, key):
    """int64 flat (C-order) offsets into an array of ``shape`` of the elements ``key``
    selects, in the shape of the selection (NumPy's rules, applied by the array library to
    stride-0 index grids: no array of ``shape``'s size is made)."""
    lib, dkey = xp.lib, _device_key(xp, key, shape)
    offsets, stride = None, 1
    for d in range(len(shape) - 1, -1, -1):
        axis_index = lib.arange(shape[d], dtype=I64).reshape(
            tuple(-1 if i == d else 1 for i in range(len(shape))))
        coord = xp.broadcast_to(axis_index, shape)[dkey]
        term = coord * stride if stride != 1 else coord
        offsets = term if offsets is None else offsets + term
        stride *= shape[d]
    if offsets is None:                     # a 0-d array: its one element
        offsets = lib.zeros((), I64)[dkey]
    return xp.ascontiguousarray(offsets)


def add_at(xp, a, key, values):
    """``a[key] += values`` (``values`` broadcast to the selection), repeated elements
    accumulating in NumPy's order: bit-identical to ``numpy.add.at`` (float16 rounds after
    every addition, as NumPy's float16 arithmetic does)."""
    offsets = flat_offsets(xp, a.shape, key)
    src = xp.ascontiguousarray(xp.broadcast_to(values, offsets.shape), a.dtype)
    segment_add(xp, src, offsets, a.reshape(-1) if a.flags.c_contiguous else a,
                round_each=True)


def _getitem(rctx, ins, outs, attrs):
    key, xp = attrs.key, rctx.xp
    if _cpu.is_basic(key):
        return _cpu._getitem_compute(rctx, ins, outs, attrs)
    offsets = flat_offsets(xp, ins[0].shape, key)
    gather_flat(xp, ins[0], offsets, outs[0])


def _getitem_scatter(rctx, ins, outs, attrs):
    out, xp = outs[0], rctx.xp
    xp.fill_zero(out)
    if _cpu.is_basic(attrs.key):
        _cpu.write_region(xp, out, attrs.key, ins[0])
    else:
        add_at(xp, out, attrs.key, ins[0])


def _setitem(rctx, ins, outs, attrs):
    data, value = ins
    out, xp = outs[0], rctx.xp
    xp.strided_copy(data, out)
    if _cpu.is_basic(attrs.key):
        _cpu.write_region(xp, out, attrs.key, value)
        return
    offsets = flat_offsets(xp, out.shape, attrs.key)
    src = xp.ascontiguousarray(xp.broadcast_to(value, offsets.shape))
    scatter_last(xp, src, offsets, out)


attach("_getitem", _getitem)
attach("_getitem_scatter", _getitem_scatter)
attach("_setitem", _setitem)
