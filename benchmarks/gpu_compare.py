"""The machinery of the GPU benchmarks (``bench_*_gpu.py``): mxlite on a CUDA device against
torch and CuPy on the same device, each call timed to completion (stream synchronized), best
of 10 calls after a warm-up.

A benchmark file only declares its cases, ``{name: case(...)}``, and gets from here its
pytest functions (``benchmark_tests``: a pytest-benchmark timing per case and backend, one
group per case, and a printed table of ratios) and its command line (``main``: the table
alone). Everything skips without a CUDA device: the host emulator of the tests is not timed.
"""
import os
import sys
from typing import Callable, Dict, NamedTuple

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:            # run from a checkout without installing
    sys.path.insert(0, ROOT)

import mxlite as mx  # noqa: E402
from mxlite.cuda import runtime  # noqa: E402
from timing import best_time  # noqa: E402

__all__ = ["mx", "BACKENDS", "Case", "case", "normal", "has_cuda", "needs_cuda", "best_time",
           "libraries", "backends", "timings", "ratio_table", "benchmark_tests", "main"]

BACKENDS = ("mxlite", "torch", "cupy")


class Case(NamedTuple):
    """A GPU benchmark case: ``inputs(rng)`` gives the host (NumPy) arrays, copied once to
    each library's device; ``calls[backend](lib, *arrays)`` runs the operation on them with
    ``lib`` the library's namespace (``mx.nd``, ``torch``, ``cupy``)."""
    inputs: Callable
    calls: Dict[str, Callable]


def case(inputs=None, same=None, **calls):
    """A ``Case`` from ``inputs`` (none by default) and the calls by backend name; ``same``
    is a call that serves every backend not given its own (the arrays of the three
    libraries share their operators: ``a + b``, ``lib.sin(a)``)."""
    for backend in calls:
        if backend not in BACKENDS:
            raise ValueError(f"case: unknown backend {backend!r} (one of {BACKENDS})")
    if same is not None:
        calls = {**{b: same for b in BACKENDS}, **calls}
    return Case(inputs or (lambda rng: ()), calls)


def normal(*shapes, dtype="float32"):
    """``inputs`` of a case: standard normal arrays of ``shapes`` (drawn in float32, stored
    as ``dtype``)."""
    return lambda rng: tuple(rng.standard_normal(s, dtype=np.float32).astype(dtype)
                             for s in shapes)


def has_cuda():
    """True when mxlite runs on a CUDA device (the host emulator of the tests is not timed)."""
    return runtime.backend() == "cupy"


needs_cuda = pytest.mark.skipif(not has_cuda(), reason="no CUDA device (CuPy with a GPU)")


def libraries():
    """{backend: (namespace handed to the calls, copy from a NumPy array to the device,
    synchronize)} for mxlite, CuPy and, where it is installed with CUDA, torch."""
    import cupy as cp
    libs = {
        "mxlite": (mx.nd, lambda a: mx.nd.array(a, ctx=mx.gpu(), dtype=a.dtype), mx.nd.waitall),
        "cupy": (cp, cp.asarray, lambda: cp.cuda.get_current_stream().synchronize()),
    }
    try:
        import torch
    except ImportError:
        return libs
    if torch.cuda.is_available():
        libs["torch"] = (torch, lambda a: torch.as_tensor(a, device="cuda"),
                         torch.cuda.synchronize)
    return libs


def backends(c):
    """{backend: a call that runs case ``c`` on its device copies and waits for the result}
    for every backend that has a call and is installed."""
    host = c.inputs(np.random.default_rng(0))
    fns = {}
    for backend, (lib, to_device, sync) in libraries().items():
        call = c.calls.get(backend)
        if call is None:
            continue
        arrays = [to_device(a) for a in host]

        def run(call=call, lib=lib, arrays=arrays, sync=sync):
            call(lib, *arrays)
            sync()
        fns[backend] = run
    return fns


def timings(cases):
    """Rows (name, {backend: seconds}) for every case of ``cases``."""
    return [(name, {b: best_time(fn) for b, fn in backends(c).items()})
            for name, c in cases.items()]


def ratio_table(title, rows):
    """The text of a table of ``timings`` rows with the faster other / mxlite ratio (> 1:
    mxlite faster)."""
    lines = [f"{title}; ratio = faster other / mxlite (> 1: mxlite faster)",
             f"{'case':<32}{'mxlite ms':>11}{'torch ms':>10}{'cupy ms':>10}{'vs best':>9}"]
    for name, times in rows:
        others = [times[b] for b in ("torch", "cupy") if b in times]
        cols = "".join(f"{times[b] * 1e3:>10.3f}" if b in times else f"{'-':>10}"
                       for b in ("torch", "cupy"))
        ratio = f"{min(others) / times['mxlite']:>8.2f}x" if others else f"{'-':>9}"
        lines.append(f"{name:<32}{times['mxlite'] * 1e3:>11.3f}{cols}{ratio}")
    return "\n".join(lines)


def _report(cases, title, note):
    text = ratio_table(title, timings(cases))
    return text if note is None else f"{text}\n{note()}"


def benchmark_tests(cases, title, note=None):
    """The two pytest functions of a GPU benchmark file, ``(timing, ratio_table)``: the first
    times one backend of one case (parametrized over both), the second prints the table of
    ratios, then ``note()`` (a line of its own) if given."""
    @needs_cuda
    @pytest.mark.parametrize("backend", BACKENDS)
    @pytest.mark.parametrize("name", list(cases))
    def timing(benchmark, name, backend):
        fns = backends(cases[name])
        if backend not in fns:
            pytest.skip(f"{backend}: no call for this case, or not installed with CUDA")
        benchmark.group = f"{name} (GPU)"
        benchmark(fns[backend])

    @needs_cuda
    def ratio_table_test(capsys):
        text = _report(cases, title, note)
        with capsys.disabled():
            print("\n" + text)

    timing.__doc__ = f"Time one backend of one case: {title}."
    ratio_table_test.__doc__ = f"Print other / mxlite for every case: {title}."
    return timing, ratio_table_test


def main(cases, title, note=None):
    """The command line of a GPU benchmark file: print its table, or exit saying why there
    is no CUDA device."""
    if not has_cuda():
        sys.exit(f"no CUDA device: {runtime.unavailable_reason()}")
    print(_report(cases, title, note))
