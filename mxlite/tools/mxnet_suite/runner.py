"""Run MXNet 1.9.1's unit-test files, unmodified, against mxlite or against MXNet.

Each file runs in its own pytest process, with ``site/harness`` on the path (a ``nose``
stand-in and the recording plugin) and, for mxlite, ``site/alias`` first (``import mxnet``
resolves to mxlite). A test that crashes the process (segfault, abort, out of memory) or
hangs past the watchdog is recorded as ``crash``/``hang`` and the file resumes after it.
"""
import json
import os
import resource
import signal
import subprocess
import time

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")

# The files issue 21 measures (MXNet's core semantics, before operators, io and sparse).
GOAL_FILES = ("test_ndarray.py", "test_autograd.py", "test_higher_order_grad.py",
              "test_symbol.py", "test_executor.py", "test_infer_shape.py", "test_infer_type.py",
              "test_random.py", "test_init.py", "test_optimizer.py", "test_attr.py")

MAX_RESUMES = 50


def unittest_dir(source):
    """``tests/python/unittest`` of an MXNet source tree (or ``source`` if it is that folder)."""
    for path in (os.path.join(source, "tests", "python", "unittest"), source):
        if os.path.exists(os.path.join(path, "common.py")):
            return os.path.abspath(path)
    raise SystemExit("%s is neither an MXNet source tree nor its tests/python/unittest "
                     "folder (no common.py found)" % source)


def read_records(path):
    """The JSON records a file's run wrote (a line cut short by a crash is ignored)."""
    records = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    records.append(json.loads(line))
                except ValueError:
                    pass
    return records


def _limits(memory_bytes):
    def apply():
        os.setsid()              # its own process group, so the watchdog kills all of it
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    return apply


def _environment(side, results, done, timeout, threads):
    env = dict(os.environ)
    paths = [os.path.join(SITE, "harness")]
    if side == "mxlite":
        paths.insert(0, os.path.join(SITE, "alias"))
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env.update(PYTHONPATH=os.pathsep.join(paths), MXNET_SUITE_RESULTS=results,
               MXNET_SUITE_DONE=done, MXNET_SUITE_TIMEOUT=str(timeout),
               OMP_NUM_THREADS=str(threads))
    env.pop("MXNET_TEST_SEED", None)
    return env


def wait_while_growing(proc, results, stall_seconds, poll=1.0):
    """Wait for ``proc``; kill its group if the file ``results`` stops growing for
    ``stall_seconds`` (checked every ``poll`` seconds). True if killed."""
    size, changed = -1, time.time()
    while proc.poll() is None:
        time.sleep(poll)
        now = os.path.getsize(results) if os.path.exists(results) else 0
        if now != size:
            size, changed = now, time.time()
        elif time.time() - changed > stall_seconds:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
    return False


def run_file(python, side, tests_dir, name, out_dir, timeout=60, keyword=None,
             memory_gb=8, threads=1):
    """Run one test file with ``python``; returns its result records (also in ``out_dir``)."""
    results = os.path.join(out_dir, name + ".jsonl")
    log = os.path.join(out_dir, name + ".log")
    done = os.path.join(out_dir, name + ".done")
    for path in (results, log, done):
        if os.path.exists(path):
            os.remove(path)
    env = _environment(side, results, done, timeout, threads)
    cmd = [python, "-m", "pytest", name, "-q", "-rA", "-p", "no:cacheprovider",
           "-p", "mxnet_suite_plugin"]
    if keyword:
        cmd += ["-k", keyword]
    for _ in range(MAX_RESUMES):
        with open(log, "a") as out:
            proc = subprocess.Popen(cmd, cwd=tests_dir, env=env, stdout=out,
                                    stderr=subprocess.STDOUT,
                                    preexec_fn=_limits(int(memory_gb * 2 ** 30)))
            killed = wait_while_growing(proc, results, 2 * timeout + 60)
        records = read_records(results)
        finished = {r["nodeid"] for r in records if r["type"] == "result"}
        in_flight = [r["nodeid"] for r in records
                     if r["type"] == "start" and r["nodeid"] not in finished]
        if not in_flight:
            break
        with open(results, "a") as f:
            f.write(json.dumps({
                "type": "result", "nodeid": in_flight[-1], "duration": None,
                "outcome": "hang" if killed else "crash",
                "message": "the process %s in this test (exit %s); see %s" % (
                    "made no progress" if killed else "died", proc.returncode, log)}) + "\n")
        with open(done, "w") as f:
            f.write("\n".join(sorted(finished | {in_flight[-1]})) + "\n")
    return read_records(results)
