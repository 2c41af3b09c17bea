"""``mx.numpy_op_signature``: the NumPy-interface function behind an operator name.

``_get_builtin_op('_np_sum')`` is ``mx.np.sum``, ``_get_builtin_op('_np_linalg_svd')``
``mx.np.linalg.svd``, ``_get_builtin_op('_npx_relu')`` ``mx.npx.relu``; other names give
None. mxlite's ``mx.np`` functions carry their real signatures, so nothing is patched.
"""
from .base import MXNetError

__all__ = []

_SUBMODULES = ("random", "linalg")


def _get_builtin_op(op_name):
    """The ``mx.np``/``mx.npx`` function named by operator ``op_name`` (``_np_*``,
    ``_npx_*``), None for another name; MXNetError when there is no such function."""
    from . import numpy as mx_np, numpy_extension as mx_npx
    for prefix, root in (("_np_", mx_np), ("_npx_", mx_npx)):
        if op_name.startswith(prefix):
            break
    else:
        return None
    rest = op_name[len(prefix):]
    module = root
    for sub in _SUBMODULES:
        if rest.startswith(sub + "_") and hasattr(root, sub):
            module, rest = getattr(root, sub), rest[len(sub) + 1:]
            break
    op = getattr(module, rest, None)
    if op is None or not callable(op):
        raise MXNetError(f"_get_builtin_op: no function {rest!r} in {module.__name__} for "
                         f"operator {op_name!r}")
    return op
