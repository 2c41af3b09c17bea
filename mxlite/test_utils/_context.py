"""The test run's surroundings: default context and dtype, environment variables, retries,
stderr, and the questions tests ask about the machine (``mx.test_utils``' names)."""
import contextlib
import functools
import os
import platform
import sys

import numpy as np

from .. import context as _ctx
from ..base import MXNetError
from ..ndarray import waitall
from ..util import setenv


def default_context():
    """The context tests run on: the current context (``cpu(0)`` unless set)."""
    return _ctx.current_context()


def set_default_context(ctx):
    """Make ``ctx`` this thread's current context.

    Inside a ``with some_ctx:`` block it replaces that block's context until the block ends
    (MXNet restores the saved default on exit the same way); outside any block it stays.
    """
    if not isinstance(ctx, _ctx.Context):
        raise MXNetError(f"set_default_context: ctx must be a Context, got {ctx!r}")
    _ctx._set_current(ctx)   # pylint: disable=protected-access


def default_dtype():
    """The dtype test data is made in: float32."""
    return np.float32


def list_gpus():
    """``range(n)`` over the ``n`` visible GPUs."""
    return range(_ctx.num_gpus())


class environment(contextlib.ContextDecorator):  # pylint: disable=invalid-name
    """Set environment variables for the duration of a ``with`` block or a decorated call,
    then restore them (unsetting those that were unset), even when the body raises.

    ``environment('NAME', 'value')`` or ``environment({'A': '1', 'B': None})``; a value of
    None unsets the variable. Reusable and reentrant: each entry saves its own snapshot.

    >>> with environment('MXNET_TEST_FLAG', '1'):
    ...     os.environ['MXNET_TEST_FLAG']
    '1'
    """

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], dict):
            settings = dict(args[0])
        elif len(args) == 2:
            settings = {args[0]: args[1]}
        else:
            raise MXNetError("environment: expected a dict of name -> value, or a name and "
                             f"a value; got {len(args)} arguments {args!r}")
        for name, value in settings.items():
            if not isinstance(name, str) or not (value is None or isinstance(value, str)):
                raise MXNetError(f"environment: names and values must be str (a value may be "
                                 f"None to unset), got {name!r}: {value!r}")
        self._settings = settings
        self._saved = []

    def __enter__(self):
        self._saved.append({name: os.environ.get(name) for name in self._settings})
        for name, value in self._settings.items():
            setenv(name, value)
        return self

    def __exit__(self, *exc):
        waitall()   # work queued under the settings finishes under them
        for name, value in self._saved.pop().items():
            setenv(name, value)
        return False


@contextlib.contextmanager
def discard_stderr():
    """Send what is written to file descriptor 2 (also by C code) to /dev/null for the
    duration of the ``with`` block; a no-op where ``sys.stderr`` has no file descriptor."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), fd)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, fd)
    finally:
        os.close(saved)


def retry(n):
    """Decorator: run a stochastic test up to ``n`` times, raising its last AssertionError
    only if every run fails."""
    if not isinstance(n, int) or n < 1:
        raise MXNetError(f"retry: n must be a positive int, got {n!r}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for attempt in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if attempt == n - 1:
                        raise
            return None
        return wrapper
    return decorate


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``."""
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise "
                         f"{getattr(exception_type, '__name__', exception_type)!s}")


def is_cd_run():
    """True in a continuous-delivery run (environment variable ``CD_JOB=1``)."""
    return os.environ.get("CD_JOB") == "1"


def is_aarch64_run():
    """True on an aarch64 machine."""
    return platform.machine() == "aarch64"


def has_tvm_ops():
    """False: mxlite has no TVM-generated operators."""
    return False


def is_op_runnable():
    """True: every mxlite operator runs on every device it has kernels for (MXNet said False
    only for TVM operators on old GPUs, which mxlite does not have)."""
    return True


def get_cuda_compute_capability(ctx):
    """The compute capability of GPU context ``ctx`` as an int (80 for sm_80)."""
    if not isinstance(ctx, _ctx.Context) or ctx.device_type != "gpu":
        raise MXNetError(f"get_cuda_compute_capability: expected a GPU context, got {ctx!r}")
    try:
        import cupy
        return int(cupy.cuda.Device(ctx.device_id).compute_capability)
    except Exception as e:   # no CuPy, no driver, no such device: all say why
        raise MXNetError(f"get_cuda_compute_capability({ctx}): {e}") from e
