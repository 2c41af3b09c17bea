"""A small stand-in for ``nose`` (which does not import on Python >= 3.10), for the MXNet test
runner: the names MXNet's test files import from it, with nose's meaning. Both sides of a
comparison (MXNet and mxlite) run with this same stand-in.
"""
from unittest import SkipTest

from . import tools

__version__ = "1.3.7"
__all__ = ["SkipTest", "tools", "runmodule"]


def runmodule(*args, **kwargs):
    """nose's script entry point; the test files call it only when run as a script."""
    raise RuntimeError("run MXNet's test files with `python -m mxlite.tools.mxnet_suite`")
