"""Where oneDNN starts to pay: convolution, matrix product and max pooling over growing
sizes, on oneDNN and on the reference kernels, interleaved in one run.

    python benchmarks/bench_onednn_small.py

A primitive call has a fixed cost (its reorders and OpenMP regions each wake the threads:
0.1-0.3 ms on 2 busy cores), so small problems are faster on the reference kernels. The
crossovers printed here are ``mxlite/ops/onednn.py``'s ``_WORK`` thresholds.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import mxlite as mx  # noqa: E402
from mxlite.ops import onednn  # noqa: E402
from timing import quartiles  # noqa: E402


def conv_case(n, c, side):
    x = mx.nd.random.normal(shape=(n, c, side, side))
    w = mx.nd.random.normal(shape=(c, c, 3, 3))
    work = n * c * side * side * c * 9
    return f"conv {n}x{c}x{side}x{side}", work, lambda: mx.nd.Convolution(
        x, w, kernel=(3, 3), pad=(1, 1), num_filter=c, no_bias=True).wait_to_read()


def dot_case(m):
    a = mx.nd.random.normal(shape=(m, m))
    return f"dot {m}x{m}x{m}", m ** 3, lambda: mx.nd.dot(a, a).wait_to_read()


def pool_case(n, c, side):
    x = mx.nd.random.normal(shape=(n, c, side, side))
    return f"maxpool {n}x{c}x{side}x{side}", x.size, lambda: mx.nd.Pooling(
        x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max").wait_to_read()


def timed(fn, on):
    """10 calls on oneDNN or on the reference kernels, timed after a settling pause and two
    untimed calls: BLAS's threads spin for about 0.1 s after a threaded product, and would
    slow the OpenMP threads of whatever runs next (the interleaving would charge the
    reference kernels' BLAS products to oneDNN)."""
    def call():
        with onednn.enabled(on, any_size=True):
            for _ in range(10):
                fn()
    def settle():
        time.sleep(0.2)
        with onednn.enabled(on, any_size=True):
            fn()
            fn()
    call.settle = settle
    return call


def settled_rounds(fns, repeat):
    """{name: per-round times} of ``fns`` called in turn, each after its settle()."""
    rounds = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            fn.settle()
            start = time.perf_counter()
            fn()
            rounds[k].append(time.perf_counter() - start)
    return rounds


def main():
    print(onednn.status())
    cases = [conv_case(2, 8, 8), conv_case(4, 16, 8), conv_case(8, 16, 16),
             conv_case(8, 32, 16), conv_case(16, 32, 32), dot_case(32), dot_case(64),
             dot_case(128), dot_case(256), pool_case(2, 4, 8), pool_case(8, 16, 16),
             pool_case(8, 32, 32), pool_case(16, 64, 32)]
    print(f"{'case':28} {'work':>7} {'oneDNN':>10} {'reference':>10} {'ref/oneDNN':>18}")
    for name, work, fn in cases:
        rounds = settled_rounds({"dnnl": timed(fn, True), "ref": timed(fn, False)}, 5)
        ratio = quartiles(np.array(rounds["ref"]) / np.array(rounds["dnnl"]))
        d, r = (quartiles(rounds[k])["median"] * 100 for k in ("dnnl", "ref"))   # ms per call
        print(f"{name:28} 2^{np.log2(work):4.1f} {d:8.3f}ms {r:8.3f}ms "
              f"{ratio['median']:6.2f} ({ratio['q1']:.2f}-{ratio['q3']:.2f})")


if __name__ == "__main__":
    main()
