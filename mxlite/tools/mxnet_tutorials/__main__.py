"""python -m mxlite.tools.mxnet_tutorials MXNET_SOURCE [PAGE ...] [options]

Runs the Python code blocks of MXNet 1.9.1's tutorial pages (read from the MXNet source tree
you give; nothing of them ships with mxlite) against mxlite, offline, one fresh process per
page, and with ``--mxnet-python`` against a real MXNet for the baseline; then prints per page
how many blocks each side runs. See docs/guide/mxnet_tutorials.rst.
"""
import argparse
import os
import sys

from .pages import extract_blocks, page_set, tutorials_dir
from .report import PageTally, details, failure_report, table
from .runner import clear_workdirs, read_records, run_page, slug


def _parser():
    p = argparse.ArgumentParser(prog="python -m mxlite.tools.mxnet_tutorials",
                                description=__doc__.split("\n\n")[1])
    p.add_argument("source", help="an MXNet 1.9.1 source tree (or its tutorials folder)")
    p.add_argument("pages", nargs="*", help="pages, relative to the tutorials folder "
                   "(default: the page set; see --list)")
    p.add_argument("--list", action="store_true", help="list the page set and the pages "
                   "left out, with the reason, and stop")
    p.add_argument("--mxnet-python", help="a Python that imports MXNet 1.9.1: run the baseline")
    p.add_argument("--no-mxlite", action="store_true", help="run the baseline only")
    p.add_argument("--out", default="mxnet_tutorials_results", help="results folder")
    p.add_argument("--timeout", type=float, default=120, help="seconds per block")
    p.add_argument("--memory-gb", type=float, default=8, help="address-space limit per page")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS for the pages")
    p.add_argument("--details", action="store_true",
                   help="list the block that stopped each side on every page, and why")
    p.add_argument("--pythonpath", action="append", default=[],
                   help="a folder both sides import from first (matplotlib, Pillow); "
                        "may be repeated")
    return p


def _list(pages, left_out):
    print("%d pages run:" % len(pages))
    for page in pages:
        print("  " + page)
    print("%d pages left out:" % len(left_out))
    for page, reason in sorted(left_out.items()):
        print("  %-60s %s" % (page, reason))


def main(argv=None):
    args = _parser().parse_args(argv)
    tutorials = tutorials_dir(args.source)
    chosen, left_out = page_set(tutorials)
    if args.list:
        _list(chosen, left_out)
        return 0
    sides = [] if args.no_mxlite else [("mxlite", sys.executable)]
    if args.mxnet_python:
        sides.append(("mxnet", args.mxnet_python))
    for side, _ in sides:
        clear_workdirs(os.path.join(args.out, side))
    tallies = []
    for page in args.pages or chosen:
        path = os.path.join(tutorials, page)
        if not os.path.exists(path):
            print("no such page: %s" % page, file=sys.stderr)
            continue
        with open(path, encoding="utf-8") as f:
            blocks = extract_blocks(f.read())
        records = {}
        for side, python in sides:
            out = os.path.join(args.out, side)
            os.makedirs(out, exist_ok=True)
            records[side] = run_page(python, side, page, blocks, out, args.timeout,
                                     args.memory_gb, args.threads,
                                     [os.path.abspath(p) for p in args.pythonpath])
        for side in ("mxlite", "mxnet"):       # an earlier run's records
            if side not in records:
                saved = os.path.join(args.out, side, slug(page) + ".jsonl")
                records[side] = read_records(saved) if os.path.exists(saved) else None
        tally = PageTally.of(page, len(blocks), records["mxlite"] or [], records["mxnet"])
        tallies.append(tally)
        print("%-60s %d blocks: mxlite ran %d%s" % (
            page, len(blocks), tally.ran("mxlite"),
            "" if tally.mxnet is None else ", MXNet %d" % tally.ran("mxnet")), flush=True)
    print()
    print(table(tallies))
    grouped = failure_report(tallies)
    if grouped:
        print()
        print("mxlite's failures (where it stops before MXNet), by cause:")
        print(grouped)
    if args.details:
        print()
        print(details(tallies))
    return 0


if __name__ == "__main__":
    sys.exit(main())
