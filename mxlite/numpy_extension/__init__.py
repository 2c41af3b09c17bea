"""``mx.npx``: MXNet's NumPy extensions: the switches of NumPy semantics (``set_np``,
``reset_np``, ``is_np_array``, ``use_np``), devices, and the neural-network operators under
NumPy conventions (``npx.relu``, ``npx.softmax``, ``npx.fully_connected``, ...), each an
entry point onto a registered operator giving ``mx.np.ndarray`` results."""
from ..context import cpu, current_context, gpu, num_gpus
from ..util import (is_np_array, is_np_shape, np_array, np_shape, reset_np, set_np,
                    set_np_shape, use_np, use_np_array, use_np_shape)
from ..numpy._dtypes import is_np_default_dtype
from . import _op, random
from ._op import *  # noqa: F401,F403

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "np_array", "np_shape",
           "set_np_shape", "use_np", "use_np_array", "use_np_shape", "is_np_default_dtype",
           "cpu", "gpu", "num_gpus", "current_context", "random"] + list(_op.__all__)
