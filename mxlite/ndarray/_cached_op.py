"""``mx.nd.CachedOp``: a Symbol called like an operator on NDArrays (MXNet's imperative
CachedOp handle).

``CachedOp(sym)(*arrays)`` binds the arrays to ``sym.list_inputs()`` in order (arguments
and auxiliary states as they appear in the graph) and runs the graph through the same plans
a hybridized Gluon block uses (``mxlite.gluon.cached_op``): one plan per input signature,
recorded under ``autograd.record()`` as one tape node, differentiable to any order.
"""
from ..base import MXNetError
from .ndarray import NDArray

__all__ = ["CachedOp"]


class CachedOp:
    """Runs Symbol ``sym`` on NDArrays given positionally in ``sym.list_inputs()`` order.

    ``flags`` (MXNet's ``(key, value)`` pairs such as ``('static_alloc', True)``) are
    accepted; ``static_shape`` keeps one plan, ``static_alloc`` runs it over buffers
    planned once (as a hybridized block's), the others change nothing here. A call
    returns an NDArray for a one-output graph, else a list; ``out=`` (an NDArray or a list
    of them) receives copies of the outputs and is returned.
    """

    def __init__(self, sym, flags=()):
        # the plans live with the executor, a layer above mx.nd: imported when first used
        from ..gluon.cached_op import CachedOp as _GraphOp
        options = dict(flags)
        self._inputs = sym.list_inputs()
        self._graph = _GraphOp(sym, self._inputs, {}, name="CachedOp",
                               static_shape=bool(options.get("static_shape", False)),
                               static_alloc=bool(options.get("static_alloc", False)))
        self._single = len(sym.list_outputs()) == 1

    def __call__(self, *args, out=None, **kwargs):
        if kwargs:
            raise TypeError(f"CachedOp.__call__ got unexpected keyword argument(s): "
                            f"{', '.join(sorted(kwargs))}")
        if len(args) != len(self._inputs):
            raise MXNetError(f"CachedOp: the graph takes {len(self._inputs)} inputs "
                             f"{self._inputs}, got {len(args)}")
        bad = [i for i, a in enumerate(args) if not isinstance(a, NDArray)]
        if bad:
            raise MXNetError(f"CachedOp: inputs must be NDArrays; input(s) {bad} "
                             f"({[self._inputs[i] for i in bad]}) are not")
        outs = self._graph(list(args))
        if out is not None:
            return self._write(outs, out)
        return outs[0] if self._single else outs

    def _write(self, outs, out):
        targets = [out] if isinstance(out, NDArray) else list(out)
        if len(targets) != len(outs):
            raise MXNetError(f"CachedOp: out= holds {len(targets)} arrays for "
                             f"{len(outs)} outputs")
        for value, target in zip(outs, targets):
            value.copyto(target)
        return out

    def __repr__(self):
        return f"<CachedOp over inputs {self._inputs}>"
