"""``mx.util``: environment variables and the NumPy-semantics switches of MXNet 1.x.

* ``getenv``/``setenv``: the process environment (``os.environ``), as MXNet's C runtime
  sees it; ``getenv`` gives None for an unset variable and ``setenv(name, None)`` unsets it.
* ``set_np_shape``/``is_np_shape``/``np_shape``/``use_np_shape``: MXNet's NumPy shape
  semantics. Legacy MXNet read ``0`` in a shape as "unknown" and ``()`` as "no shape"; mxlite
  arrays always have NumPy shapes (``(0, 3)`` holds no elements, ``()`` is a scalar), in or
  out of this mode. The flag (per thread, or for every thread with ``set_np_shape(2)``,
  MXNet's rules) changes only how *partially known* shapes are written, as in MXNet:
  ``Symbol.infer_shape_partial`` and ``var(shape=...)`` mark an unknown dimension ``-1``
  and an unknown shape None under it, ``0`` and ``()`` without it.
* ``np_array``/``is_np_array``/``use_np_array``/``use_np``/``set_np``: MXNet's NumPy array
  semantics: Gluon blocks and parameters make ``mx.np.ndarray`` objects, and hybridized
  blocks trace ``mx.sym.np`` symbols. ``set_np(dtype=True)`` also makes float64 the
  default float of ``mx.np``.
"""
import functools
import inspect
import os
import threading

from .base import MXNetError

__all__ = ["getenv", "setenv", "set_np_shape", "is_np_shape", "np_shape", "use_np_shape",
           "np_array", "is_np_array", "use_np_array", "use_np", "set_np", "reset_np", "set_np_array",
           "set_module", "get_gpu_count", "get_gpu_memory"]


# ---- environment --------------------------------------------------------------------------
def getenv(name):
    """The value of environment variable ``name`` (a ``str``), or None when it is unset."""
    return os.environ.get(_env_name("getenv", name))


def setenv(name, value):
    """Set environment variable ``name`` to the string ``value``; ``value=None`` unsets it."""
    name = _env_name("setenv", name)
    if value is None:
        os.environ.pop(name, None)
    elif isinstance(value, str):
        os.environ[name] = value
    else:
        raise MXNetError(f"setenv: value of {name!r} must be a str or None, got "
                         f"{type(value).__name__} {value!r}")


def _env_name(fn, name):
    if not isinstance(name, str) or not name or "=" in name or "\0" in name:
        raise MXNetError(f"{fn}: name must be a non-empty str without '=' or NUL, got {name!r}")
    return name


# ---- NumPy shape semantics ----------------------------------------------------------------
_OFF, _THREAD, _GLOBAL = 0, 1, 2     # MXNet's set_np_shape values
_np_shape_global = False
_np_shape_local = threading.local()


def set_np_shape(active):
    """Turn NumPy shape semantics on (``True``/``1``: this thread; ``2``: every thread) or off
    (``False``/``0``: off here and globally). Returns the previous state of this thread.

    mxlite arrays always have NumPy shapes; the flag changes how partial shapes are written
    (module docstring).
    """
    global _np_shape_global
    if isinstance(active, bool) or active in (_OFF, _THREAD, _GLOBAL):
        level = int(active)
    else:
        raise MXNetError(f"set_np_shape: active must be True, False, 0, 1 or 2, got {active!r}")
    if level == _OFF and is_np_array():
        raise MXNetError("set_np_shape: NumPy array semantics are on; turn them off first")
    prev = is_np_shape()
    _np_shape_local.value = level != _OFF
    if level != _THREAD:
        _np_shape_global = level == _GLOBAL
    return prev


def is_np_shape():
    """Whether NumPy shape semantics are on in this thread (or for every thread)."""
    return _np_shape_global or getattr(_np_shape_local, "value", False)


class _NumpyShapeScope:
    """``with np_shape(active):``: NumPy shape semantics on or off inside the block (None:
    unchanged), the previous state restored after it."""

    def __init__(self, is_np_shape):  # noqa: A002  (MXNet's argument name)
        self._enter_is_np_shape = is_np_shape
        self._prev_is_np_shape = None

    def __enter__(self):
        if self._enter_is_np_shape is not None:
            self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)
        return self

    def __exit__(self, *exc):
        if self._enter_is_np_shape is not None and \
                self._prev_is_np_shape != bool(self._enter_is_np_shape):
            set_np_shape(self._prev_is_np_shape)


def np_shape(active=True):
    """A ``with`` scope with NumPy shape semantics on (``active=True``) or off."""
    return _NumpyShapeScope(active)


def use_np_shape(func):
    """Decorator: ``func`` (a function, or each function defined in a class) runs under
    ``np_shape(True)``."""
    return _decorate("use_np_shape", func, lambda: np_shape(True))


_CLASS_DUNDERS = ("__init__", "__call__", "__getitem__", "__setitem__", "__len__", "__iter__")


def _decorate(what, func, scope):
    """Wrap ``func`` to run inside ``scope()``. For a class: every function it has, its
    own and inherited ones (a Gluon block's ``initialize``, ``forward``, ``__call__``...,
    so parameters made by ``net.initialize()`` follow the semantics too), and the getters
    of its properties; other dunders are left alone."""
    if inspect.isclass(func):
        for key, member in inspect.getmembers(func):
            if key.startswith("__") and key not in _CLASS_DUNDERS:
                continue
            if inspect.isfunction(member):
                setattr(func, key, _decorate(what, member, scope))
            elif isinstance(member, property) and member.fget is not None:
                setattr(func, key, property(_decorate(what, member.fget, scope), member.fset,
                                            member.fdel, member.__doc__))
        return func
    if not callable(func):
        raise MXNetError(f"{what}: expected a function or class, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with scope():
            return func(*args, **kwargs)
    return wrapper


# ---- NumPy array semantics -----------------------------------------------------------------
_np_array_global = False


class _NumpyArrayScope:
    """``with np_array(active):`` (MXNet's per-thread scope object; ``_current.value`` is the
    innermost scope of the thread)."""

    _current = threading.local()

    def __init__(self, is_np_array):  # noqa: A002  (MXNet's argument name)
        self._old_scope = None
        self._is_np_array = bool(is_np_array)

    def __enter__(self):
        current = _NumpyArrayScope._current
        self._old_scope = getattr(current, "value", None)
        current.value = self
        return self

    def __exit__(self, *exc):
        _NumpyArrayScope._current.value = self._old_scope


def np_array(active=True):
    """A ``with`` scope with NumPy array semantics on or off: Gluon blocks and parameters
    make ``mx.np.ndarray`` objects, and traced symbols are ``mx.sym.np`` symbols."""
    return _NumpyArrayScope(active)


def is_np_array():
    """Whether NumPy array semantics are on in this thread (a ``np_array`` scope, else the
    process-wide ``set_np`` state)."""
    scope = getattr(_NumpyArrayScope._current, "value", None)
    if scope is not None:
        return scope._is_np_array
    return _np_array_global


def set_np_array(active):
    """Turn NumPy array semantics on or off for every thread; returns the previous state."""
    global _np_array_global
    prev = is_np_array()
    _np_array_global = bool(active)
    _NumpyArrayScope._current.value = None
    return prev


def use_np_array(func):
    """Decorator: ``func`` (a function, or each function defined in a class such as a Gluon
    block) runs with NumPy array semantics on."""
    return _decorate("use_np_array", func, lambda: np_array(True))


def use_np(func):
    """Decorator: NumPy shape and array semantics on inside ``func`` (or a class's
    functions), MXNet's ``use_np_shape(use_np_array(func))``."""
    return use_np_shape(use_np_array(func))


def set_np(shape=True, array=True, dtype=False):
    """Set NumPy shape and array semantics at once (array semantics without shape
    semantics are refused, as in MXNet); ``dtype=True`` makes float64 the default float of
    ``mx.np`` (NumPy's), False float32 (MXNet's)."""
    if array and not shape:
        raise MXNetError("set_np: NumPy array semantics need NumPy shape semantics "
                         "(shape=True)")
    from .numpy._dtypes import set_default_float64
    set_np_array(array)
    set_np_shape(shape)
    set_default_float64(dtype)


def reset_np():
    """Turn NumPy shape and array semantics off and float32 back on as the default float."""
    set_np(shape=False, array=False, dtype=False)


# ---- small helpers MXNet's util has ------------------------------------------------------
def set_module(module):
    """Decorator: set the ``__module__`` a function or class shows (its public home)."""
    if not isinstance(module, str):
        raise MXNetError(f"set_module: module must be a str, got {module!r}")

    def decorator(func):
        func.__module__ = module
        return func
    return decorator


def get_gpu_count():
    """The number of GPUs ``mx.gpu(i)`` may name (``mx.context.num_gpus()``)."""
    from .context import num_gpus
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """``(free, total)`` bytes of GPU ``gpu_dev_id`` (``mx.context.gpu_memory_info``)."""
    from .context import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)
