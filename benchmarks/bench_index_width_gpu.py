"""The cost of 64-bit indexing on the GPU: mxlite's generated CUDA kernels (``mx_idx``, a
64-bit integer, for every size, index, loop counter and offset) against the same kernels
compiled with a 32-bit ``mx_idx``.

    python benchmarks/bench_index_width_gpu.py            # on a CUDA device: the table
    MXLITE_GPU_EMULATOR=1 python benchmarks/bench_index_width_gpu.py --check
                                                          # no GPU: both variants agree
    pytest benchmarks/bench_index_width_gpu.py            # the table (skips without CUDA)

The 32-bit variant exists only here. ``index_type_32()`` prefixes every kernel's source with
``#define MX_INDEX_T int`` (mx_cuda.h reads it), compiles into a separate kernel cache, and
passes the kernels' ``mx_idx`` parameters as int32 (read from each kernel's signature);
nothing else changes. The cases are the CPU benchmark's (bench_index_width.py: element-wise,
broadcast, reductions, take/pick, strided copy, randint, an MLP training step) on
``mx.gpu(0)``. Both variants run in one process, alternating round by round, each call
timed to completion; the ratio is int64 / int32 of the best of ``--rounds``. Both must give
bit-identical results.
"""
import argparse
import contextlib
import hashlib
import os
import re
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (ROOT, HERE):
    if path not in sys.path:
        sys.path.insert(0, path)

import mxlite as mx  # noqa: E402
from mxlite.cuda import kernels, launch, runtime  # noqa: E402
from bench_index_width import GOAL, _cases  # noqa: E402

_SIGNATURE = re.compile(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)')
_PARAM_TYPES = {}      # kernel name -> parameter types


def _param_types(kernel):
    types = _PARAM_TYPES.get(kernel.name)
    if types is None:
        for name, params in _SIGNATURE.findall(kernel.code):
            _PARAM_TYPES[name] = [p.rsplit(None, 1)[0].replace("const ", "").strip()
                                  for p in params.split(",") if p.strip()]
        types = _PARAM_TYPES[kernel.name]
    return types


def _narrow(kernel, args):
    """``args`` with every ``mx_idx`` parameter as int32 (refusing a value that needs 64)."""
    out = []
    for kind, a in zip(_param_types(kernel), args):
        if kind == "mx_idx":
            if not -2 ** 31 <= int(a) < 2 ** 31:
                raise OverflowError(f"{kernel.name}: {a} needs a 64-bit index")
            a = np.int32(a)
        out.append(a)
    return out


@contextlib.contextmanager
def index_type_32():
    """Compile and launch every kernel with a 32-bit ``mx_idx`` inside the block."""
    saved_preamble, saved_functions = kernels.PREAMBLE, launch._FUNCTIONS
    namespaces = _gpu_namespaces()
    saved_launchers = [n._launch for n in namespaces]
    kernels.PREAMBLE = "#define MX_INDEX_T int\n" + saved_preamble
    launch._FUNCTIONS = {}
    for n, launcher in zip(namespaces, saved_launchers):
        n._launch = (lambda f: lambda kernel, count, args: f(kernel, count,
                                                             _narrow(kernel, args)))(launcher)
    try:
        yield
    finally:
        kernels.PREAMBLE, launch._FUNCTIONS = saved_preamble, saved_functions
        for n, launcher in zip(namespaces, saved_launchers):
            n._launch = launcher


def _gpu_namespaces():
    x = mx.nd.zeros((1,), ctx=mx.gpu(0))
    return [runtime.namespace_of(x._data)]


def _digest(result):
    h = hashlib.sha256()
    for arr in result():
        h.update(arr.asnumpy().tobytes())
    return h.hexdigest()[:12]


def _variants():
    """{"int64": cases, "int32": cases}: the same cases built twice on mx.gpu(0)."""
    out = {}
    for label, ctx in (("int64", contextlib.nullcontext()), ("int32", index_type_32())):
        with ctx, mx.gpu(0):
            out[label] = _cases(mx, np)
    return out


def check():
    """Run every case once in both variants; return ``{case: (digest64, digest32)}``."""
    variants = _variants()
    digests = {}
    for name in variants["int64"]:
        pair = []
        for label, ctx in (("int64", contextlib.nullcontext()), ("int32", index_type_32())):
            fn, result = variants[label][name]
            with ctx, mx.gpu(0):
                fn()
                pair.append(_digest(result))
        digests[name] = tuple(pair)
    return digests


def measure(rounds=20, number=5):
    """Rows ``(case, int64 s, int32 s, ratio, same results)``: best of ``rounds`` samples
    of ``number`` calls, the variants alternating, the device synchronized around each."""
    variants, rows = _variants(), []
    sync = mx.nd.waitall
    for name in variants["int64"]:
        best, digests = {}, {}
        for r in range(rounds):
            order = ("int64", "int32") if r % 2 == 0 else ("int32", "int64")
            for label in order:
                fn, result = variants[label][name]
                ctx = index_type_32() if label == "int32" else contextlib.nullcontext()
                with ctx, mx.gpu(0):
                    fn()                                    # warm (compiles on round 0)
                    sync()
                    start = time.perf_counter()
                    for _ in range(number):
                        fn()
                    sync()
                    s = (time.perf_counter() - start) / number
                    digests[label] = _digest(result)
                best[label] = min(best.get(label, s), s)
        rows.append((name, best["int64"], best["int32"], best["int64"] / best["int32"],
                     digests["int64"] == digests["int32"]))
    return rows


def print_table(rows, rounds):
    import cupy
    props = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"\nint64 / int32 mx_idx on {props['name'].decode()}, best of {rounds}; "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}; goal <= {GOAL}")
    print(f"{'case':<32}{'int64 ms':>10}{'int32 ms':>10}{'ratio':>8}  same results")
    for name, t64, t32, ratio, same in rows:
        flag = "" if ratio <= GOAL else "  above goal"
        print(f"{name:<32}{t64 * 1e3:>10.3f}{t32 * 1e3:>10.3f}{ratio:>8.3f}  "
              f"{'yes' if same else 'NO'}{flag}")


@pytest.mark.skipif(runtime.backend() != "cupy", reason="needs a CUDA device")
def test_index_width_gpu_table():
    rows = measure(rounds=10)
    print_table(rows, 10)
    assert all(same for *_, same in rows), "the int32 kernels computed different results"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--check", action="store_true",
                        help="run each case once in both variants and compare the results "
                             "(works on the host emulator)")
    args = parser.parse_args()
    if mx.num_gpus() == 0:
        sys.exit("no GPU: needs CuPy with a CUDA device, or MXLITE_GPU_EMULATOR=1 with --check")
    if args.check or runtime.backend() != "cupy":
        bad = {k: v for k, v in check().items() if v[0] != v[1]}
        print("both index types give identical results" if not bad else f"DIFFER: {bad}")
        sys.exit(1 if bad else 0)
    print_table(measure(args.rounds), args.rounds)


if __name__ == "__main__":
    main()
