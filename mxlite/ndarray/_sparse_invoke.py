"""How ``mx.nd`` runs an operator that has a sparse input (the compiled ``invoke`` hands the
call here when an input has no dense buffer).

The op's storage rules (``OpDef.storage``) are asked first: a rule that takes these input
storage types computes on the stored values and makes outputs of the storage types it
declares. Otherwise the call runs on dense copies of the sparse inputs and makes dense
outputs: MXNet's storage fallback, announced once per operator and storage types with
MXNet's warning (``MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0`` silences it, as in MXNet).
"""
import os
import warnings

import numpy as np

from ..base import op_error
from ..context import current_context
from ..device import run_context
from ..ops.sparse import formats as F
from ..ops.sparse.rules import find
from . import sparse as _sparse
from .ndarray import NDArray, tape_state

__all__ = ["sparse_invoke", "dense_invoke", "stype_of", "front_invoke"]

_warned = set()


def stype_of(x):
    """The storage type of NDArray ``x``."""
    return "default" if x._data is not None else x._sp.stype


def _warn_fallback(op, stypes):
    """``stypes``: those of the inputs, then those of any out= arrays."""
    key = (op.name, stypes)
    if key in _warned or os.environ.get("MXNET_STORAGE_FALLBACK_LOG_VERBOSE") == "0":
        return
    _warned.add(key)
    warnings.warn(
        f"Storage type fallback detected: operator {op.name!r} has no sparse implementation "
        f"for the storage types {list(stypes)} (inputs, then out=); it runs on temporary "
        "dense copies and makes dense outputs, converted into a sparse out= (the result is "
        "the same). Set MXNET_STORAGE_FALLBACK_LOG_VERBOSE=0 to silence this warning.",
        RuntimeWarning, stacklevel=4)


def _context_of(op, inputs):
    ctx = None
    for x in inputs:
        if ctx is None:
            ctx = x._ctx
        elif x._ctx != ctx:
            raise op_error(op.name, f"inputs are on different devices ({ctx} and {x._ctx})")
    return ctx


def dense_invoke(op, inputs, attrs, out=None):
    """The call on dense copies of its sparse inputs (the storage fallback). A sparse input
    the op writes (an optimizer's state) receives its dense copy's new value afterwards,
    converted to its storage."""
    from .ndarray import invoke
    dense = [x if x._data is not None else _densify(x) for x in inputs]
    if out is not None and any(o._data is None for o in _as_list(out)):
        result = _write_out(op, [r for r in _as_list(invoke(op, dense, attrs))], out)
    else:
        result = invoke(op, dense, attrs, out)
    if op.mutate_inputs:
        for i in op.mutated_indices(attrs):
            if inputs[i]._data is None:
                _write_out(op, [dense[i]], inputs[i])
    return result


def _densify(x):
    from .ndarray import invoke
    from ..ops.registry import REGISTRY
    return invoke(REGISTRY["cast_storage"], [x], {"stype": "default"})


def _as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def sparse_invoke(op, inputs, attrs, out=None):
    """Run ``op`` on ``inputs`` (at least one of them sparse); see the module docstring."""
    for x in inputs:
        if not isinstance(x, NDArray):
            raise TypeError(f"{op.name}: inputs must be NDArrays, got {type(x).__name__}")
    stypes = tuple(stype_of(x) for x in inputs)
    shapes = [tuple(x.shape) for x in inputs]
    rule = find(op, stypes, attrs, shapes)
    if rule is None:            # (dense inputs get here for a sparse out=)
        outs = [] if out is None else _as_list(out)
        _warn_fallback(op, stypes + tuple(stype_of(o) for o in outs))
        return dense_invoke(op, inputs, attrs, out)
    ctx = _context_of(op, inputs) or attrs.get("ctx") or current_context()
    dtypes = [np.dtype(x.dtype) for x in inputs]
    out_shapes = op.infer_shape(shapes, attrs)        # (bad arguments first, then the device)
    out_dtypes = op.infer_type(dtypes, attrs)
    ctx = _sparse._context(ctx)
    rctx = run_context(ctx)
    compute = rule.compute.get(rctx.kernels)
    if compute is None:                     # no sparse kernel on this device: dense compute
        return _device_fallback(op, rule, inputs, attrs, stypes, out)
    raw_in = [_sparse.raw(x) for x in inputs]
    targets = _as_list(out) if out is not None else None
    entries = None
    if tape_state.recording:            # read before the op runs (it may write an input)
        from .._core.dispatch import parents
        entries = parents(list(inputs))
    if rule.writes_out:
        raw_out = None
        if targets is not None and all(
                o._data is not None and tuple(o.shape) == tuple(s) and o._data.dtype == d
                for o, s, d in zip(targets, out_shapes, out_dtypes)):
            raw_out = [o._data for o in targets]
        values = compute(rctx, raw_in, attrs, out_shapes, out_dtypes, out=raw_out)
    else:
        values = compute(rctx, raw_in, attrs, out_shapes, out_dtypes)
    if op.mutate_inputs:
        for i in op.mutated_indices(attrs):
            inputs[i]._version[0] += 1
    want = rule.output_stypes(attrs, stypes)
    for v, s, shape in zip(values, want, out_shapes):
        got = F.stype_of_raw(v)
        if got != s or tuple(v.shape) != tuple(shape):     # a rule's programming error
            raise AssertionError(f"{op.name}: storage rule made {got} {tuple(v.shape)}, "
                                 f"declared {s} {tuple(shape)}")
    results = [_sparse.wrap(v, ctx) for v in values]
    if entries is not None:
        from .._core.dispatch import attach
        attach(op, attrs, entries, list(inputs), results if len(results) != 1 else results[0])
    if out is not None:
        return _write_out(op, results, out)
    if len(results) == 1:
        return results[0]
    n = op.num_visible_outputs(attrs) if op._num_visible is not None else len(results)
    return results[0] if n == 1 else results[:n]


def _device_fallback(op, rule, inputs, attrs, stypes, out):
    """A rule without kernels for the device (see ``mxlite.cuda.ops.sparse_rules.FALLBACK``):
    the op's dense kernels of that device on dense copies, announced as a storage fallback,
    each result converted to the storage type the rule declares (so the storage types do
    not depend on the device)."""
    outs = [] if out is None else _as_list(out)
    _warn_fallback(op, stypes + tuple(stype_of(o) for o in outs))
    want = rule.output_stypes(attrs, stypes)
    if all(s == F.DEFAULT for s in want):
        return dense_invoke(op, inputs, attrs, out)
    result = dense_invoke(op, inputs, attrs)
    results = [r if s == F.DEFAULT else r.tostype(s) for r, s in zip(_as_list(result), want)]
    if out is not None:
        return _write_out(op, results, out)
    return results[0] if not isinstance(result, (list, tuple)) else results


def _write_out(op, results, out):
    """Copy ``results`` into the ``out=`` arrays (any storage: converted on the way)."""
    targets = _as_list(out)
    if len(targets) != len(results):
        raise op_error(op.name, f"expected {len(results)} output array(s) in out=, got "
                       f"{len(targets)}")
    for r, o in zip(results, targets):
        if r._data is not None and r._data is o._data:     # written in place by the rule
            o._version[0] += 1
            continue
        if tuple(o.shape) != tuple(r.shape):
            raise op_error(op.name, f"out= has shape {tuple(o.shape)}, the result has shape "
                           f"{tuple(r.shape)}")
        if o._data is None and stype_of(r) != stype_of(o):
            r = r.tostype(stype_of(o)) if stype_of(r) == "default" else \
                r.tostype("default").tostype(stype_of(o))
        r.copyto(o)
    return out


def _sparse_device(ctx, rule):
    """Whether ``ctx``'s device holds sparse storage and has ``rule``'s kernels."""
    rctx = run_context(ctx)
    return rctx.kernels in rule.compute and (
        ctx.compute_device == "cpu" or F.device_formats(rctx) is not None)


def front_invoke(op, inputs, kwargs, out=None):
    """``mx.nd``'s strategy for an op with a storage rule that takes dense inputs (see
    ``mxlite.ops.frontend.set_storage_strategy``): a rule that makes sparse outputs from
    these dense inputs runs on a device it has kernels for (the CPU and the GPU:
    ``Embedding(sparse_grad=True)`` gives a row_sparse gradient on both); anything else goes
    to the compiled invoke. ``kwargs``: keywords, or parsed ``Attrs`` (an executor's step)."""
    from .._core.dispatch import parse_cached
    from ..ops.registry import Attrs
    from .ndarray import invoke
    if all(isinstance(x, NDArray) and x._data is not None for x in inputs):
        attrs = kwargs if type(kwargs) is Attrs else parse_cached(op, kwargs)
        stypes = ("default",) * len(inputs)
        rule = find(op, stypes, attrs, [tuple(x.shape) for x in inputs])
        # (a device without the rule's kernels or sparse storage computes the dense result)
        if rule is not None and any(s != "default" for s in rule.output_stypes(attrs, stypes)) \
                and (not inputs or _sparse_device(inputs[0]._ctx, rule)):
            return sparse_invoke(op, inputs, attrs, out)
    return invoke(op, inputs, kwargs, out)
