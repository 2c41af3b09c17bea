"""Time every benchmark case on each backend and print speed ratios against NumPy.

    python benchmarks/report.py            # full sizes (1e7/1e8 elements, 1024^2 dot)
    python benchmarks/report.py --quick    # 10x smaller
    python benchmarks/report.py --models [--quick] [--plot] [case ...]
                                           # whole-model steps vs torch and MXNet
                                           # (benchmarks/models/__init__.py)

A ratio is the other backend's time / mxlite's time: above 1 mxlite is faster. Each time
is the minimum (``--stat median`` for the median) of several samples; a sample runs the call
enough times to last ``--sample-ms``, and backends are sampled in turn so machine noise
hits them alike. The ``noise`` column is the spread of mxlite's samples (slowest / fastest
- 1): on a shared machine, trust ratios only where it is small. Results are checked against
NumPy before timing.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cases import BACKENDS, CASES, check_against_numpy, torch  # noqa: E402
from models import cli as models_cli  # noqa: E402


def calibrate(fn, sample_s):
    """Calls per sample so one sample lasts about ``sample_s`` seconds."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= sample_s or number >= 1 << 20:
            return number
        number = max(number * 2, int(number * sample_s / max(elapsed, 1e-9)))


def sample_times(fns, repeat, sample_s):
    """Seconds per call of each backend, ``repeat`` samples each, taken round-robin."""
    numbers = {b: calibrate(fn, sample_s) for b, fn in fns.items()}
    samples = {b: [] for b in fns}
    for _ in range(repeat):
        for b, fn in fns.items():
            start = time.perf_counter()
            for _ in range(numbers[b]):
                fn()
            samples[b].append((time.perf_counter() - start) / numbers[b])
    return samples


def fmt_time(t):
    if t is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def fmt_ratio(r):
    return "n/a" if r is None else f"{r:.2f}x"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="use 10x smaller sizes (--models: one step a round, fewer rounds)")
    parser.add_argument("--repeat", type=int, default=7, help="samples per backend")
    parser.add_argument("--sample-ms", type=float, default=50.0, help="length of one sample")
    parser.add_argument("--stat", choices=("min", "median"), default="min",
                        help="statistic of the samples (default: min)")
    parser.add_argument("cases", nargs="*",
                        help=f"subset of {sorted(CASES)} (with --models: of the model cases)")
    models_cli.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.models:
        return models_cli.main(args)
    keys = args.cases or list(CASES)
    stat = min if args.stat == "min" else statistics.median

    print(f"cpu count {os.cpu_count()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
          f"torch {'installed' if torch is not None else 'not installed'}, times: {args.stat}")
    header = (f"{'case':<24} {'numpy':>9} {'mxlite':>9} {'torch':>9} "
              f"{'mx vs numpy':>12} {'mx vs torch':>12} {'noise':>6}  GB/s or GFLOP/s (mxlite / numpy / torch)")
    print(header)
    print("-" * len(header))
    for key in keys:
        case = CASES[key]
        size = case.quick_size if args.quick else case.size
        fns = case.make(size)
        check_against_numpy(fns, case.rtol)
        samples = sample_times(fns, args.repeat, args.sample_ms / 1000)
        del fns
        t = {b: (stat(samples[b]) if b in samples else None) for b in BACKENDS}
        vs = {b: (t[b] / t["mxlite"] if t[b] and t["mxlite"] else None) for b in ("numpy", "torch")}
        noise = (f"{max(samples['mxlite']) / min(samples['mxlite']) - 1:.0%}"
                 if "mxlite" in samples else "-")
        extra = ""
        work = case.bytes_per_call or case.flops_per_call
        if work:
            amount = work(size) / 1e9
            extra = " / ".join(f"{amount / t[b]:.1f}" if t[b] else "-"
                               for b in ("mxlite", "numpy", "torch"))
            extra += " GB/s" if case.bytes_per_call else " GFLOP/s"
        name = case.name if not args.quick else f"{case.name} (n={size})"
        print(f"{name:<24} {fmt_time(t['numpy']):>9} {fmt_time(t['mxlite']):>9} "
              f"{fmt_time(t['torch']):>9} "
              f"{fmt_ratio(vs['numpy']):>12} {fmt_ratio(vs['torch']):>12} {noise:>6}  {extra}",
              flush=True)


if __name__ == "__main__":
    main()
