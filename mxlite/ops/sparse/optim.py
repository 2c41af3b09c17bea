"""Storage rules of the optimizer updates for a row_sparse gradient (MXNet's lazy updates).

With ``lazy_update=True`` (the default of ``sgd_update``, ``sgd_mom_update`` and
``adam_update``; ``ftrl_update`` and ``_sparse_adagrad_update`` always) only the rows the
gradient stores are touched:
their weights and optimizer states are gathered, updated by the op's own dense kernel and
written back, so a step costs the rows a batch used, not the table. Weight decay and the
states' decay apply to those rows alone (MXNet's meaning of a lazy update). With
``lazy_update=False`` the gradient is made dense and every row is updated, as for a dense
gradient.

An update writes the weight into ``out=`` (the weight itself, as the optimizers call it)
and its states in place.

A row_sparse *weight* (and row_sparse states, as MXNet's optimizers make for one) is
updated by the same rules on dense copies (``sparse_weight``): the weight and the states
come back row_sparse, storing their rows and the gradient's, so a lazy update changes the
gradient's rows alone, as for a dense weight. (A row none of them stores is 0 before and
after every one of these updates.) The dense copies cost the table's dense size: Gluon's
row_sparse parameters keep their weight dense in the kvstore instead.
"""
import numpy as np

from ..registry import REGISTRY
from . import formats as F
from .rules import ANY, StorageRule, add_rule

CPU = "cpu"

# MXNet 1.9.1's updates that take a row_sparse gradient lazily
LAZY = ("sgd_update", "sgd_mom_update", "adam_update", "ftrl_update", "_sparse_adagrad_update")


def _is_lazy(attrs, shapes):
    return attrs.get("lazy_update", True)


def _is_dense(attrs, shapes):
    return not attrs.get("lazy_update", True)


def _lazy(op):
    def compute(rctx, values, attrs, shapes, dtypes, out=None):
        weight, grad, states = values[0], F.checked(values[1], op.name), values[2:]
        target = out[0] if out is not None else weight.copy()
        if target is not weight:
            np.copyto(target, weight)
        rows = grad.indices
        w_rows = np.ascontiguousarray(weight[rows])
        s_rows = [np.ascontiguousarray(s[rows]) for s in states]
        new_rows = np.empty_like(w_rows)
        op.compute[rctx.kernels](rctx, [w_rows, np.ascontiguousarray(grad.data)] + s_rows,
                                 [new_rows], attrs)
        target[rows] = new_rows
        for s, r in zip(states, s_rows):
            s[rows] = r
        return [target]
    return compute


def _densified(op):
    def compute(rctx, values, attrs, shapes, dtypes, out=None):
        ins = [values[0], F.to_dense(F.checked(values[1], op.name))] + list(values[2:])
        target = out[0] if out is not None else np.empty(shapes[0], dtypes[0])
        op.compute[rctx.kernels](rctx, ins, [target], attrs)
        return [target]
    return compute


def sparse_weight(op, inner, checked, to_dense, xp_of):
    """The update of a row_sparse weight by ``inner`` (a dense-weight rule's compute) on
    dense copies (module docstring). ``checked(rctx, value, op)``, ``to_dense(rctx, value)``
    and ``xp_of(rctx)`` are the device's format check, conversion and array namespace."""
    def compute(rctx, values, attrs, shapes, dtypes, out=None):
        xp = xp_of(rctx)
        grad = checked(rctx, values[1], op.name)
        keep, dense = [grad.indices], []
        for v in [values[0]] + list(values[2:]):
            if isinstance(v, F.RowSparse):
                v = checked(rctx, v, op.name)
                keep.append(v.indices)
                v = to_dense(rctx, v)
            dense.append(v)
        keep = xp.unique(xp.concatenate(keep))
        new_weight = inner(rctx, [dense[0], grad] + dense[1:], attrs, shapes, dtypes)[0]
        for raw, state in zip(values[2:], dense[1:]):
            if isinstance(raw, F.RowSparse):        # the state's new rows, in place
                raw.data, raw.indices = xp.ascontiguousarray(state[keep]), keep
                raw.valid = raw.in_range = True
        return [F.RowSparse(xp.ascontiguousarray(new_weight[keep]), keep, shapes[0], True)]
    return compute


def _cpu_checked(rctx, value, op):
    return F.checked(value, op)


def _cpu_dense(rctx, value):
    return F.to_dense(value)


def _numpy(rctx):
    return np


for _name in LAZY:
    _op = REGISTRY[_name]
    _states = (F.DEFAULT,) * (len(_op.inputs) - 2)
    _pattern = (F.DEFAULT, F.RSP_STYPE) + _states
    _modes = [(_is_lazy, _lazy(_op))]
    if any(p.name == "lazy_update" for p in _op.params):
        _modes.append((_is_dense, _densified(_op)))
    for _when, _inner in _modes:
        add_rule(_name, StorageRule(_pattern, (F.DEFAULT,), {CPU: _inner}, when=_when,
                                    writes_out=True))
    for _when, _inner in _modes:            # a row_sparse weight; states of either storage
        add_rule(_name, StorageRule(
            (F.RSP_STYPE, F.RSP_STYPE) + (ANY,) * len(_states), (F.RSP_STYPE,),
            {CPU: sparse_weight(_op, _inner, _cpu_checked, _cpu_dense, _numpy)},
            when=_when, writes_out=True))
