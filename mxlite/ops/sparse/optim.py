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
"""
import numpy as np

from ..registry import REGISTRY
from . import formats as F
from .rules import StorageRule, add_rule

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


for _name in LAZY:
    _op = REGISTRY[_name]
    _pattern = (F.DEFAULT, F.RSP_STYPE) + (F.DEFAULT,) * (len(_op.inputs) - 2)
    add_rule(_name, StorageRule(_pattern, (F.DEFAULT,), {CPU: _lazy(_op)}, when=_is_lazy,
                                writes_out=True))
    if any(p.name == "lazy_update" for p in _op.params):
        add_rule(_name, StorageRule(_pattern, (F.DEFAULT,), {CPU: _densified(_op)},
                                    when=_is_dense, writes_out=True))
