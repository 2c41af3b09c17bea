"""``mx.np`` beside ``mx.nd``, NumPy and torch: what the NumPy front end costs.

    pytest benchmarks/bench_np.py            # pytest-benchmark tables
    python benchmarks/bench_np.py [repeats]  # interleaved times and ratios

Small calls (10 float32 elements: ``a + b``, ``sin``, ``sum``, ``a[1:3]``, mixed-dtype
``a + i`` with its promotion) measure the front end, where mx.np adds its NumPy rules on
top of mx.nd's compiled dispatch; large calls (1M elements) measure that the kernels are
the same. The systems run in turn each round (interleaved), and the table gives the median
of the per-round ratios mx.np / mx.nd, mx.np / NumPy and mx.np / torch with quartiles.
"""
import sys

import numpy as onp
import pytest

import mxlite as mx
from timing import interleaved, quartiles

try:
    import torch
except ImportError:          # pragma: no cover - optional
    torch = None


def cases(n):
    """{case: {system: fn}} on ``n``-element float32 arrays (and an int32 one)."""
    rng = onp.random.default_rng(0)
    xh, yh = (rng.uniform(0.5, 2, n).astype(onp.float32) for _ in range(2))
    ih = rng.integers(0, 5, n).astype(onp.int32)
    a, b, i = mx.np.array(xh), mx.np.array(yh), mx.np.array(ih, dtype="int32")
    c, d, j = mx.nd.array(xh), mx.nd.array(yh), mx.nd.array(ih, dtype="int32")
    table = {
        "a + b": {"mx.np": lambda: a + b, "mx.nd": lambda: c + d, "numpy": lambda: xh + yh},
        "sin(a)": {"mx.np": lambda: mx.np.sin(a), "mx.nd": lambda: mx.nd.sin(c),
                   "numpy": lambda: onp.sin(xh)},
        "sum(a)": {"mx.np": lambda: a.sum(), "mx.nd": lambda: c.sum(),
                   "numpy": lambda: xh.sum()},
        "a[1:3]": {"mx.np": lambda: a[1:3], "mx.nd": lambda: c[1:3],
                   "numpy": lambda: xh[1:3]},
        "a + i (promotion)": {"mx.np": lambda: a + i,
                              "mx.nd": lambda: c + j.astype("float32"),
                              "numpy": lambda: xh + ih.astype(onp.float32)},
    }
    if torch is not None:
        xt, yt, it = torch.from_numpy(xh), torch.from_numpy(yh), torch.from_numpy(ih)
        table["a + b"]["torch"] = lambda: xt + yt
        table["sin(a)"]["torch"] = lambda: torch.sin(xt)
        table["sum(a)"]["torch"] = lambda: xt.sum()
        table["a[1:3]"]["torch"] = lambda: xt[1:3]
        table["a + i (promotion)"]["torch"] = lambda: xt + it
    for name, fns in table.items():     # the systems agree before they are timed
        want = onp.asarray(fns["numpy"]())
        for system, fn in fns.items():
            got = fn()
            got = got.asnumpy() if hasattr(got, "asnumpy") else onp.asarray(got)
            onp.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{name} {system}")
    return table


SIZES = (10, 1_000_000)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("case", ["a + b", "sin(a)", "sum(a)", "a[1:3]", "a + i (promotion)"])
@pytest.mark.parametrize("system", ["mx.np", "mx.nd", "numpy"])
def test_np_front_end(benchmark, n, case, system):
    benchmark(cases(n)[case][system])


def main(repeat=200):
    print(f"{'case':<28}{'mx.np':>12}{'np/nd':>18}{'np/numpy':>18}{'np/torch':>18}")
    for n in SIZES:
        rounds = repeat if n < 1000 else max(repeat // 10, 10)
        for name, fns in cases(n).items():
            times = interleaved(fns, rounds)
            base = onp.asarray(times["mx.np"])
            cells = []
            for other in ("mx.nd", "numpy", "torch"):
                if other not in times:
                    cells.append(f"{'-':>18}")
                    continue
                q = quartiles(base / onp.asarray(times[other]))
                cells.append(f"{q['median']:>8.2f} [{q['q1']:.2f},{q['q3']:.2f}]")
            label = f"{name}, n={n}"
            print(f"{label:<28}{quartiles(base)['median'] * 1e6:>10.1f}us" + "".join(cells))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
