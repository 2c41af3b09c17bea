"""Shared by the oneDNN tests (tests/ops/test_onednn*.py): a spy that proves a oneDNN path
ran, and a fixture letting oneDNN take the tests' small problems."""
import pytest

from mxlite.ops import onednn


@pytest.fixture
def small_problems_too(monkeypatch):
    """Tests use small shapes: let oneDNN take them (``onednn.worth_it`` would send them to
    the reference kernels)."""
    monkeypatch.setitem(onednn._state, "any_size", True)


class Spy:
    """Counts the calls of the oneDNN module's functions (``onednn.run`` looks them up by
    name each call) and how many of them oneDNN took (returned without ``Refused``)."""

    def __init__(self, monkeypatch, *names):
        self.calls = {n: 0 for n in names}
        self.ran = {n: 0 for n in names}
        module = onednn._load()
        for n in names:
            monkeypatch.setattr(module, n, self._counting(n, getattr(module, n)))

    def _counting(self, name, real):
        def call(*args, **kwargs):
            self.calls[name] += 1
            real(*args, **kwargs)
            self.ran[name] += 1
        return call
