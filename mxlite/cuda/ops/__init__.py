"""GPU compute functions of the registered operators.

Each module attaches ``op.compute['gpu']`` to the operators of one family; ``EXEMPT`` names
the operators that have no GPU kernel on purpose, each with the reason. The registry-wide
test (``tests/gpu/test_coverage.py``) fails when an operator has neither.

``device_generic(names)`` marks operators whose CPU compute function is written against the
device namespace alone (``rctx.xp``: views and ``strided_copy``); they run unchanged on GPU.
"""
from ...ops.registry import get_op as _get

__all__ = ["attach", "device_generic", "EXEMPT"]

# operator name -> why it has no GPU kernel
EXEMPT = {}


def attach(name, compute):
    """Make ``compute(rctx, ins, outs, attrs)`` the GPU compute function of op ``name``."""
    op = _get(name)
    if "gpu" in op.compute:
        raise ValueError(f"{name} already has a GPU compute function")
    op.compute["gpu"] = compute
    return compute


def device_generic(*names):
    """Run the CPU compute functions of ``names`` on GPU too (they use ``rctx.xp`` only)."""
    for name in names:
        attach(name, _get(name).compute["cpu"])


from . import elemwise, index, nn, random, reduce    # noqa: E402,F401  (attach on import)
from . import layers    # noqa: E402,F401  (attach on import)
from . import array_ops    # noqa: E402,F401  (attach on import)
from . import roi    # noqa: E402,F401  (attach on import)
from . import la_factor    # noqa: E402,F401  (attach on import)
from . import image    # noqa: E402,F401  (attach on import)
from . import rnn    # noqa: E402,F401  (attach on import)
from . import sampling    # noqa: E402,F401  (attach on import)
from . import detection    # noqa: E402,F401  (attach on import)
from . import ctc    # noqa: E402,F401  (attach on import)
from . import spatial    # noqa: E402,F401  (attach on import)
from . import contrib_math    # noqa: E402,F401  (attach on import)
from . import legacy    # noqa: E402,F401  (attach on import)
from . import loops    # noqa: E402,F401  (attach on import)
from . import pdf    # noqa: E402,F401  (attach on import)
from . import correlation    # noqa: E402,F401  (attach on import)
from . import proposal    # noqa: E402,F401  (attach on import)
from . import hawkes    # noqa: E402,F401  (attach on import)
from . import softmax_grad    # noqa: E402,F401  (attach on import)
from . import sparse    # noqa: E402,F401  (attach on import)
