"""MXNet's automatic names and attribute scopes (``mx.name.NameManager``, ``Prefix``,
``mx.AttrScope``).

A node created without ``name=`` is named ``<hint><n>`` where the hint is the lower-cased
function name (``fullyconnected0``, ``_plus1``) and ``n`` counts per hint in the current
``NameManager``; ``with NameManager():`` starts fresh counters, ``with Prefix('net_'):``
puts a prefix on every name.
"""
import threading

__all__ = ["NameManager", "Prefix", "AttrScope", "current_attrs"]

_local = threading.local()


class _Current(type):
    """``NameManager.current`` / ``AttrScope.current``: this thread's instance, a class
    property as in MXNet (assignable)."""

    @property
    def current(cls):
        return cls._get_current()

    @current.setter
    def current(cls, value):
        cls._set_current(value)


class NameManager(metaclass=_Current):
    """Automatic names, as ``mxnet.name.NameManager``: ``get(name, hint)``;
    ``NameManager.current`` is this thread's manager."""

    def __init__(self):
        self._counter = {}
        self._old = None

    def get(self, name, hint):
        """``name`` when given, else ``hint`` followed by its counter."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return f"{hint}{n}"

    def __enter__(self):
        self._old = current()
        _local.names = self
        return self

    def __exit__(self, *exc):
        _local.names = self._old

    @classmethod
    def _get_current(cls):
        return current()

    @classmethod
    def _set_current(cls, value):
        _local.names = value


class Prefix(NameManager):
    """A NameManager that puts ``prefix`` before every name (given ones too, as MXNet)."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        """``prefix`` + the name NameManager would give."""
        return self._prefix + super().get(name, hint)


def current():
    """This thread's NameManager (one is created per thread on first use)."""
    names = getattr(_local, "names", None)
    if names is None:
        names = _local.names = NameManager()
    return names


class AttrScope(metaclass=_Current):
    """``with AttrScope(ctx_group='dev1'):`` adds these string attributes to every symbol
    created inside (MXNet's ``mx.AttrScope``); inner scopes extend outer ones.
    ``AttrScope.current`` is the scope in effect (an empty one outside any)."""

    @classmethod
    def _get_current(cls):
        scope = getattr(_local, "attrs", None)
        return scope if scope is not None else AttrScope()

    @classmethod
    def _set_current(cls, value):
        _local.attrs = value

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError(f"AttrScope: attribute {k!r} must be a string, got {v!r}")
        self._attr = kwargs
        self._old = None

    def get(self, attr):
        """The scope's attributes updated with ``attr``."""
        out = dict(self._attr)
        out.update(attr or {})
        return out

    def __enter__(self):
        self._old = getattr(_local, "attrs", None)
        merged = dict(self._old._attr) if self._old else {}
        merged.update(self._attr)
        scope = AttrScope.__new__(AttrScope)
        scope._attr, scope._old = merged, None
        _local.attrs = scope
        return self

    def __exit__(self, *exc):
        _local.attrs = self._old


def current_attrs(attr=None):
    """The attributes of the current AttrScope updated with ``attr`` (a new dict)."""
    scope = getattr(_local, "attrs", None)
    out = dict(scope._attr) if scope else {}
    out.update(attr or {})
    return out
