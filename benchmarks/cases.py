"""Benchmark cases shared by the pytest-benchmark files and ``report.py``.

A case builds the same inputs for every backend and returns ``{backend: callable}``; each
callable runs the operation once and returns its result (checked against NumPy before
timing). A backend is left out when it is not installed (torch) or when the mxlite operator
is not registered yet, so a benchmark skips instead of failing.
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:            # run from a checkout without installing
    sys.path.insert(0, ROOT)

import mxlite as mx  # noqa: E402

try:
    import torch
except ImportError:                 # torch is an optional comparison
    torch = None

BACKENDS = ("mxlite", "numpy", "torch")


def has_op(name):
    """True when ``mx.nd.<name>`` exists (the operator family has landed)."""
    return hasattr(mx.nd, name)


def _inputs(n, count, seed=0):
    # uniform [0, 1): positive, so a sum is well conditioned and comparable across backends
    rng = np.random.default_rng(seed)
    return [rng.random(n, dtype=np.float32) for _ in range(count)]


def add_case(n):
    """c = a + b on float32 vectors of ``n`` elements, each backend writing into ``out``."""
    a, b = _inputs(n, 2)
    fns = {"numpy": lambda c=np.empty_like(a): np.add(a, b, out=c)}
    if has_op("broadcast_add"):
        ma, mb, mc = mx.nd.array(a), mx.nd.array(b), mx.nd.array(np.empty_like(a))
        fns["mxlite"] = lambda: mx.nd.broadcast_add(ma, mb, out=mc)
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        tc = torch.empty_like(ta)
        fns["torch"] = lambda: torch.add(ta, tb, out=tc)
    return fns


def _unary_case(n, name):
    """``name(x)`` (NumPy's, ``mx.nd``'s and torch's function of that name) on a float32
    vector of ``n`` elements."""
    (a,) = _inputs(n, 1)
    fns = {"numpy": lambda: getattr(np, name)(a)}
    if has_op(name):
        ma, fn = mx.nd.array(a), getattr(mx.nd, name)
        fns["mxlite"] = lambda: fn(ma)
    if torch is not None:
        ta, tfn = torch.from_numpy(a), getattr(torch, name)
        fns["torch"] = lambda: tfn(ta)
    return fns


def sum_case(n):
    """Sum of all ``n`` elements of a float32 vector."""
    return _unary_case(n, "sum")


def max_case(n):
    """Maximum of all ``n`` elements of a float32 vector."""
    return _unary_case(n, "max")


def min_case(n):
    """Minimum of all ``n`` elements of a float32 vector."""
    return _unary_case(n, "min")


def argmax_case(n):
    """Index of the maximum of a float32 vector of ``n`` elements."""
    return _unary_case(n, "argmax")


def dot_case(n):
    """(n, n) @ (n, n) in float32."""
    a, b = (x.reshape(n, n) for x in _inputs(n * n, 2))
    fns = {"numpy": lambda: np.dot(a, b)}
    if has_op("dot"):
        ma, mb = mx.nd.array(a), mx.nd.array(b)
        fns["mxlite"] = lambda: mx.nd.dot(ma, mb)
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fns["torch"] = lambda: torch.mm(ta, tb)
    return fns


def overhead_case(n):
    """``a + b`` on tiny arrays: the per-operator cost of the Python front end."""
    a, b = _inputs(n, 2)
    fns = {"numpy": lambda: a + b}
    if has_op("broadcast_add"):
        ma, mb = mx.nd.array(a), mx.nd.array(b)
        fns["mxlite"] = lambda: ma + mb
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        fns["torch"] = lambda: ta + tb
    return fns


def sin_overhead_case(n):
    """``sin(x)`` on tiny arrays: the per-operator cost of a generated ``mx.nd`` function."""
    return _unary_case(n, "sin")


def autograd_case(n):
    """One small-graph training step: y = sum(sin(x * x)); y.backward(), returning dy/dx.
    NumPy has no autograd: its column is the hand-written gradient 2x cos(x^2)."""
    (a,) = _inputs(n, 1)
    fns = {"numpy": lambda: 2 * a * np.cos(a * a)}
    if has_op("sum"):
        x = mx.nd.array(a)
        x.attach_grad()

        def mxlite_step():
            with mx.autograd.record():
                y = mx.nd.sum(mx.nd.sin(x * x))
            y.backward()
            return x.grad
        fns["mxlite"] = mxlite_step
    if torch is not None:
        t = torch.from_numpy(a.copy()).requires_grad_()

        def torch_step():
            t.grad = None
            torch.sin(t * t).sum().backward()
            return t.grad
        fns["torch"] = torch_step
    return fns


class Case:
    """A named benchmark: ``make(size)`` gives the backends; ``work`` bytes or flops per call."""

    def __init__(self, name, make, size, quick_size, bytes_per_call=None, flops_per_call=None,
                 rtol=1e-5):
        self.name, self.make, self.size, self.quick_size = name, make, size, quick_size
        self.bytes_per_call, self.flops_per_call, self.rtol = bytes_per_call, flops_per_call, rtol


CASES = {
    "add 1e6": Case("add 1e6 float32", add_case, 10 ** 6, 10 ** 5,
                    bytes_per_call=lambda n: 3 * 4 * n),
    "add 1e7": Case("add 1e7 float32", add_case, 10 ** 7, 10 ** 6,
                    bytes_per_call=lambda n: 3 * 4 * n),
    "add 1e8": Case("add 1e8 float32", add_case, 10 ** 8, 10 ** 7,
                    bytes_per_call=lambda n: 3 * 4 * n),
    "sum 1e8": Case("sum 1e8 float32", sum_case, 10 ** 8, 10 ** 7,
                    bytes_per_call=lambda n: 4 * n, rtol=1e-3),
    "max 1e8": Case("max 1e8 float32", max_case, 10 ** 8, 10 ** 7,
                    bytes_per_call=lambda n: 4 * n),
    "min 1e8": Case("min 1e8 float32", min_case, 10 ** 8, 10 ** 7,
                    bytes_per_call=lambda n: 4 * n),
    "argmax 1e8": Case("argmax 1e8 float32", argmax_case, 10 ** 8, 10 ** 7,
                       bytes_per_call=lambda n: 4 * n),
    "dot 1024": Case("dot 1024x1024 float32", dot_case, 1024, 256,
                     flops_per_call=lambda n: 2 * n ** 3, rtol=1e-3),
    "overhead 10": Case("a + b, 10 elements", overhead_case, 10, 10),
    "sin 10": Case("sin(x), 10 elements", sin_overhead_case, 10, 10),
    "sum 10": Case("sum(x), 10 elements", sum_case, 10, 10),
    "autograd 10": Case("sum(sin(x*x)).backward(), 10 elements", autograd_case, 10, 10),
}


def to_numpy(result):
    """A backend's result as a NumPy array."""
    if isinstance(result, mx.nd.NDArray):
        return result.asnumpy()
    if torch is not None and isinstance(result, torch.Tensor):
        return result.numpy()
    return np.asarray(result)


def check_against_numpy(fns, rtol):
    """Run every backend once and compare its result with NumPy's; raise AssertionError if off."""
    want = to_numpy(fns["numpy"]()).astype(np.float64)
    for backend, fn in fns.items():
        got = to_numpy(fn()).astype(np.float64).reshape(want.shape)
        scale = max(float(np.abs(want).max()) if want.size else 0.0, 1.0)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale,
                                   err_msg=f"{backend} disagrees with NumPy")
