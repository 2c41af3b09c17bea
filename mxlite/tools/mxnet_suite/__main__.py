"""python -m mxlite.tools.mxnet_suite MXNET_SOURCE [FILE ...] [options]

Runs MXNet 1.9.1's own unit-test files (read from the MXNet source tree you give; nothing of
them is shipped with mxlite) unmodified against mxlite, and with ``--mxnet-python`` against a
real MXNet for the baseline, then prints per file how many tests each side passes. See
docs/guide/mxnet_suite.rst.
"""
import argparse
import glob
import os
import sys

from .report import FileTally, details, table
from .runner import GOAL_FILES, read_records, run_file, unittest_dir


def _parser():
    p = argparse.ArgumentParser(prog="python -m mxlite.tools.mxnet_suite",
                                description=__doc__.split("\n\n")[1])
    p.add_argument("source", help="an MXNet 1.9.1 source tree (or its tests/python/unittest)")
    p.add_argument("files", nargs="*", help="test files (default: the issue-21 set)")
    p.add_argument("--all", action="store_true", help="every test_*.py in the folder")
    p.add_argument("--mxnet-python", help="a Python that imports MXNet 1.9.1: run the baseline")
    p.add_argument("--no-mxlite", action="store_true", help="run the baseline only")
    p.add_argument("--out", default="mxnet_suite_results", help="results folder")
    p.add_argument("--timeout", type=float, default=60, help="seconds per test")
    p.add_argument("-k", dest="keyword", help="pytest -k expression")
    p.add_argument("--memory-gb", type=float, default=8, help="address-space limit per file")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for the tests")
    p.add_argument("--details", action="store_true",
                   help="list each test MXNet passes and mxlite does not")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    tests_dir = unittest_dir(args.source)
    files = args.files or (sorted(os.path.basename(f) for f in
                                  glob.glob(os.path.join(tests_dir, "test_*.py")))
                           if args.all else list(GOAL_FILES))
    sides = [] if args.no_mxlite else [("mxlite", sys.executable)]
    if args.mxnet_python:
        sides.append(("mxnet", args.mxnet_python))
    tallies = []
    for name in files:
        if not os.path.exists(os.path.join(tests_dir, name)):
            print("no such test file: %s" % name, file=sys.stderr)
            continue
        records = {}
        for side, python in sides:
            out = os.path.join(args.out, side)
            os.makedirs(out, exist_ok=True)
            records[side] = run_file(python, side, tests_dir, name, out, args.timeout,
                                     args.keyword, args.memory_gb, args.threads)
        baseline = os.path.join(args.out, "mxnet", name + ".jsonl")
        if "mxnet" not in records and os.path.exists(baseline):
            records["mxnet"] = read_records(baseline)    # an earlier baseline run
        mine = records.get("mxlite")
        if mine is None:
            mine = read_records(os.path.join(args.out, "mxlite", name + ".jsonl"))
        tally = FileTally.of(name, mine, records.get("mxnet"))
        tallies.append(tally)
        print("%-28s mxlite %d/%d passed%s" % (
            name, len(tally.passed("mxlite")), len(tally.mxlite),
            "" if tally.mxnet is None else ", MXNet %d" % len(tally.passed("mxnet"))),
            flush=True)
    print()
    print(table(tallies))
    if args.details:
        print()
        print(details(tallies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
