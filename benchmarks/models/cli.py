"""``python benchmarks/report.py --models``: the options and the driver."""
import io
import os
import platform
import pstats
import subprocess
import sys
import tempfile
import time

from . import CASES, runner, table

__all__ = ["add_arguments", "main"]


def add_arguments(parser):
    """The model benchmark's options on report.py's parser."""
    g = parser.add_argument_group("model benchmarks (--models)")
    g.add_argument("--models", action="store_true",
                   help=f"time whole-model steps instead: {', '.join(CASES)}")
    g.add_argument("--plot", action="store_true", help="also draw PREFIX.png (matplotlib)")
    g.add_argument("--threads", type=int, default=1,
                   help="threads of every system (default 1: on a shared machine a "
                        "multi-threaded step waits for its slowest thread, and the ratios "
                        "turn to noise)")
    g.add_argument("--out", default="model_benchmarks",
                   help="prefix of the .md/.json/.png files written (default: "
                        "./model_benchmarks)")
    g.add_argument("--torch-python", help="interpreter with torch (default /tmp/torchvenv)")
    g.add_argument("--mxnet-python", help="interpreter with MXNet (default /tmp/mxvenv)")
    g.add_argument("--profile", nargs="?", const="", metavar="CASE",
                   help="then cProfile mxlite (hybridized) on CASE (default: the case with "
                        "the largest mxlite/torch ratio) and print the top 15 by tottime")


def _commit():
    """The checkout's commit (``-dirty`` with uncommitted changes), or '' outside git."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                              text=True, timeout=30,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _header(args, interpreters):
    found = ", ".join(f"{s}: {'yes' if p else 'no'}" for s, p in interpreters.items())
    return (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, mxlite {_commit()}, "
            f"{platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} cores, {args.threads} thread(s) per system, "
            f"{'quick' if args.quick else 'full'} run; times: median ms per step; ratios: "
            f"mxlite / other, median of per-round ratios (quartiles); peak MB: peak RSS "
            f"minus RSS after import, per system in its own process ({found})")


def _worst_case(summaries):
    ratios = {n: s["ratios"]["hybrid/torch"]["median"] for n, s in summaries.items()
              if "hybrid/torch" in s["ratios"]}
    return max(ratios, key=ratios.get) if ratios else next(iter(summaries))


def _print_profile(name, threads):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "profile.stats")
        runner.profile_case(name, "mxlite-hybrid", path, threads=threads)
        text = io.StringIO()
        pstats.Stats(path, stream=text).sort_stats("tottime").print_stats(15)
    print(f"\ncProfile of mxlite (hybridized), {name}, 3 steps, top 15 by tottime:")
    print(text.getvalue())


def main(args):
    """Run the model cases named in ``args.cases`` (all by default), print the table,
    write the files, optionally plot and profile."""
    names = args.cases or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit(f"report.py --models: unknown case(s) {unknown}; choose from {list(CASES)}")
    interpreters = runner.find_interpreters(args.torch_python, args.mxnet_python)
    header = _header(args, interpreters)
    print(header, flush=True)
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    summaries = runner.run_cases(names, interpreters, args.threads, args.quick, log)
    print()
    print(table.format_table(summaries))
    try:
        paths = table.write_outputs(summaries, args.out, header, with_plot=args.plot)
    except table.MissingMatplotlib as exc:
        print(f"\n{exc}", file=sys.stderr)
        paths = [args.out + ".md", args.out + ".json"]
    print("\nwrote " + ", ".join(paths))
    if args.profile is not None:
        _print_profile(args.profile or _worst_case(summaries), args.threads)
