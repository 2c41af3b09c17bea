"""MXNet 1.9.1's list-taking front ends of the multi-tensor optimizer operators in
``mx.nd.contrib``: ``multi_adamw_update``, ``multi_mp_adamw_update``, ``multi_lamb_update``,
``multi_mp_lamb_update``. Each interleaves its lists into the operator's weight groups."""
from ..base import MXNetError
from ..ops.registry import REGISTRY
from .ndarray import NDArray, _call, array

__all__ = ["multi_adamw_update", "multi_mp_adamw_update", "multi_lamb_update",
           "multi_mp_lamb_update"]


def _interleave(name, lists):
    n = len(lists[0])
    if any(len(group) != n for group in lists):
        raise MXNetError(f"{name}: the lists must have one entry per weight, got lengths "
                         f"{[len(group) for group in lists]}")
    return [a for group in zip(*lists) for a in group], n


def _rescale(rescale_grad, like):
    """MXNet's front end took a Python number for ``rescale_grad`` too."""
    if isinstance(rescale_grad, NDArray):
        return rescale_grad
    return array([rescale_grad], ctx=like.context, dtype="float32")


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                       name=None, size=0, **kwargs):
    """AdamW on every weight of the lists (``_multi_adamw_update``); ``rescale_grad`` is a
    one-element array or a number. Pass ``out=weights`` to update the weights in place."""
    arrays, n = _interleave("multi_adamw_update", [weights, grads, mean, var])
    arrays.append(_rescale(rescale_grad, weights[0]))
    return _call(REGISTRY["_multi_adamw_update"], *arrays, out=out, **kwargs,
                 lrs=lrs, wds=wds, etas=etas, num_weights=size or n)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """Mixed-precision AdamW on every weight of the lists (``_multi_mp_adamw_update``)."""
    arrays, n = _interleave("multi_mp_adamw_update", [weights, grads, mean, var, weights32])
    arrays.append(_rescale(rescale_grad, weights[0]))
    return _call(REGISTRY["_multi_mp_adamw_update"], *arrays, out=out, **kwargs,
                 lrs=lrs, wds=wds, etas=etas, num_weights=size or n)


def multi_lamb_update(weights, grads, mean, var, step_count, lrs, wds, out=None,
                      num_tensors=0, **kwargs):
    """The whole LAMB step on every weight of the lists (``_multi_lamb_update``)."""
    arrays, n = _interleave("multi_lamb_update", [weights, grads, mean, var])
    return _call(REGISTRY["_multi_lamb_update"], *arrays, out=out, **kwargs,
                 step_count=step_count, learning_rates=lrs, wds=wds,
                 num_tensors=num_tensors or n)


def multi_mp_lamb_update(weights, grads, mean, var, weights32, step_count, lrs, wds,
                         out=None, num_tensors=0, **kwargs):
    """Mixed-precision LAMB on every weight of the lists (``_multi_mp_lamb_update``)."""
    arrays, n = _interleave("multi_mp_lamb_update", [weights, grads, mean, var, weights32])
    return _call(REGISTRY["_multi_mp_lamb_update"], *arrays, out=out, **kwargs,
                 step_count=step_count, learning_rates=lrs, wds=wds,
                 num_tensors=num_tensors or n)
