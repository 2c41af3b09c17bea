"""``Updater``: applies an optimizer to weights by index, keeping one state per index (what
MXNet's kvstore and ``Module`` call ``get_updater(optimizer)``)."""
from ..base import MXNetError
from ..ndarray import NDArray
from . import states_io

__all__ = ["Updater", "get_updater"]


class Updater:
    """Calls ``optimizer.update_multi_precision(index, weight, grad, state)``, making each
    index's state with ``create_state_multi_precision`` on its first update.

    >>> updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=0.5))
    >>> w = mx.nd.array([1.0, 2.0])
    >>> updater(0, mx.nd.array([1.0, 1.0]), w)
    >>> w.asnumpy().tolist()
    [0.5, 1.5]
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        """Update ``weight`` (in place) with ``grad``; ``index``, ``grad`` and ``weight`` may
        be lists of the same length."""
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
            if not len(indices) == len(grads) == len(weights):
                raise MXNetError(f"Updater: {len(indices)} indices, {len(grads)} gradients "
                                 f"and {len(weights)} weights")
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx],
                                                           weights[i].context)
                self.states_synced[idx] = True
        if self.aggregate_updates:
            self._update_aggregated(indices, weights, grads)
            return
        for i, w, g in zip(indices, weights, grads):
            self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def _update_aggregated(self, indices, weights, grads):
        """MXNet's aggregated updates: the weights grouped by dtype, each group in lists of
        at most ``optimizer.aggregate_num`` (SGD runs a list as one multi-tensor update); a
        sparse gradient or weight updates alone."""
        by_dtype = {}
        for i, w, g in zip(indices, weights, grads):
            if g.stype != "default" or w.stype != "default":
                # sparse: alone, so its update is the lazy one of its storage rule
                self.optimizer.update_multi_precision(i, w, g, self.states[i])
                continue
            by_dtype.setdefault(w.dtype, []).append((i, w, g))
        size = self.optimizer.aggregate_num
        for items in by_dtype.values():
            for start in range(0, len(items), size):
                idx, ws, gs = (list(x) for x in zip(*items[start:start + size]))
                self.optimizer.update_multi_precision(idx, ws, gs,
                                                      [self.states[i] for i in idx])

    def sync_state_context(self, state, context):
        """``state`` (an NDArray, or nested tuples/lists of them) moved to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states, allow_pickle=False):
        """Restore the states from ``get_states``' bytes (and the optimizer, when they hold
        it).

        MXNet's states are a pickle; they are read only with ``allow_pickle=True``, because
        unpickling runs whatever code the bytes name (MXNet unpickles without asking). Bytes
        that are not states raise MXNetError.
        """
        self._restore(states, "Updater.set_states", "the data", allow_pickle)

    def _restore(self, data, who, name, allow_pickle):
        """``set_states`` whose errors name ``who`` and the file ``name``."""
        states, optimizer = states_io.loads(data, who, name, allow_pickle)
        if optimizer is not None:
            self.optimizer = optimizer
            self.aggregate_updates = optimizer.aggregate_num > 0
        self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states as bytes; with ``dump_optimizer`` the optimizer too (its settings,
        learning-rate schedule and update counts).

        Not a pickle, unlike MXNet: an ``mx.nd.save`` container of the state arrays with a
        JSON header (``mxlite.optimizer.states_io``), so loading it runs no code. MXNet
        cannot read it.
        """
        return states_io.dumps(self.states, self.optimizer if dump_optimizer else None)


def get_updater(optimizer):
    """An ``Updater`` for ``optimizer``."""
    return Updater(optimizer)
