"""``import mxnet`` that *is* mxlite: on the path only when the MXNet test runner runs a file
against mxlite.

``sys.modules['mxnet']`` becomes the ``mxlite`` package itself, and a finder maps every
``mxnet.a.b`` to ``mxlite.a.b`` -- the real submodule, or else a module that ``mxlite.a``
holds under the name ``b`` (``mxnet.nd`` is ``mxlite.ndarray``). Nothing is added: a module
or name mxlite lacks fails exactly as it would for ``import mxlite as mxnet``.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

import mxlite


def _mxlite_module(alias):
    """The mxlite module that ``alias`` (``mxnet.x.y``) names, or None when mxlite has none."""
    target = "mxlite" + alias[len("mxnet"):]
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        # re-raise when mxlite itself failed to import one of *its* dependencies
        if e.name is None or not (target == e.name or target.startswith(e.name + ".")):
            raise
    parent_alias, _, child = alias.rpartition(".")
    parent = sys.modules.get(parent_alias)
    value = getattr(parent, child, None) if parent is not None else None
    return value if isinstance(value, types.ModuleType) else None


class _Existing(importlib.abc.Loader):
    """Loads an alias by binding the already imported mxlite module to its name."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        sys.modules[module.__name__] = self.module


class _MxnetToMxlite(importlib.abc.MetaPathFinder):
    """Finds ``mxnet.*`` by importing the mxlite module of the same path."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("mxnet."):
            return None
        module = _mxlite_module(fullname)
        if module is None:
            return None          # ModuleNotFoundError, as for any missing module
        return importlib.machinery.ModuleSpec(fullname, _Existing(module))


sys.meta_path.insert(0, _MxnetToMxlite())
sys.modules["mxnet"] = mxlite
