"""Run one tutorial page in a fresh Python process, on mxlite or on MXNet.

The page's blocks go to ``site/page_driver.py`` in a new process per page and side: its own
process group, an address-space limit, ``OMP_NUM_THREADS`` small, matplotlib's Agg backend,
a working folder per tutorial folder (where the page's files and ``$MXNET_HOME`` go:
pages of one folder share it, as when MXNet's documentation was built, so
``crash-course/5-predict.md`` loads the parameters ``4-train.md`` saved), and for mxlite the
MXNet test runner's alias first on the path (``import mxnet`` is mxlite). The driver times
each block out itself (SIGALRM); a block stuck where no signal reaches it (a C loop, a
deadlock) is caught by a watchdog here, which kills the process group when the results
file has not grown for the block time and a grace period: that block is recorded as a
``hang``, one that kills the process as a ``crash``, and the run goes on with the next page.
"""
import json
import os
import re
import shutil
import subprocess

from ..mxnet_suite.runner import SITE as SUITE_SITE, _limits, read_records, wait_while_growing

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site", "page_driver.py")
HARNESS = os.path.join(SUITE_SITE, "harness")
ALIAS = os.path.join(SUITE_SITE, "alias")
GRACE_SECONDS = 30


def slug(page):
    """A file name for a page path (``packages/gluon/image/mnist.md`` ->
    ``packages__gluon__image__mnist``)."""
    stem = page[:-3] if page.endswith(".md") else page
    return "__".join(re.sub(r"[^A-Za-z0-9_.-]", "_", part) for part in stem.split("/"))


def clear_workdirs(out_dir):
    """Remove the working folders an earlier run left in ``out_dir`` (call once per run)."""
    shutil.rmtree(os.path.join(out_dir, "work"), ignore_errors=True)


def _environment(side, workdir, threads, pythonpath):
    env = dict(os.environ)
    paths = ([ALIAS] if side == "mxlite" else []) + list(pythonpath or [])
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env.update(PYTHONPATH=os.pathsep.join(paths), OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), MPLBACKEND="Agg",
               MXNET_HOME=os.path.join(workdir, "mxnet_home"),
               MPLCONFIGDIR=os.path.join(workdir, "matplotlib"), PYTHONUNBUFFERED="1")
    for name in ("MXNET_TEST_SEED", "MXLITE_GPU_EMULATOR"):
        env.pop(name, None)
    return env


def run_page(python, side, page, blocks, out_dir, timeout=120, memory_gb=8, threads=1,
             pythonpath=()):
    """Run ``blocks`` (one page's sources) with ``python`` on ``side`` ('mxlite' or
    'mxnet'); returns the page's records (also written to ``out_dir/<slug>.jsonl``)."""
    name = slug(page)
    results = os.path.join(out_dir, name + ".jsonl")
    log = os.path.join(out_dir, name + ".log")
    spec = os.path.join(out_dir, name + ".page.json")
    workdir = os.path.join(out_dir, "work", slug(os.path.dirname(page)) or "_")
    for path in (results, log):
        if os.path.exists(path):
            os.remove(path)
    os.makedirs(workdir, exist_ok=True)
    with open(spec, "w") as f:
        json.dump({"page": page, "blocks": blocks, "timeout": timeout, "harness": HARNESS}, f)
    with open(log, "w") as out:
        proc = subprocess.Popen([python, DRIVER, os.path.abspath(spec),
                                 os.path.abspath(results)],
                                cwd=workdir, env=_environment(side, workdir, threads, pythonpath),
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_limits(int(memory_gb * 2 ** 30)))
        killed = wait_while_growing(proc, results, timeout + GRACE_SECONDS, poll=0.2)
    records = read_records(results)
    _record_lost_block(records, results, killed, proc.returncode, log)
    return read_records(results)


def _record_lost_block(records, results, killed, returncode, log):
    """A ``hang``/``crash`` result for a block that started and never finished."""
    finished = {r["block"] for r in records if r["type"] == "result"}
    lost = [r["block"] for r in records if r["type"] == "start" and r["block"] not in finished]
    setup_failed = any(r["type"] == "setup_error" for r in records)
    if not lost and (records or setup_failed):
        return
    record = {"type": "result", "block": lost[-1] if lost else 0,
              "outcome": "hang" if killed else "crash",
              "error": "hang" if killed else "crash",
              "message": "the page process %s (exit %s); see %s" % (
                  "made no progress and was killed" if killed else "died", returncode, log)}
    with open(results, "a") as f:
        f.write(json.dumps(record) + "\n")
