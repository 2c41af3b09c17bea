"""Fork safety of the kernels' thread pools (the rule: ``mxlite/_core/__init__.py``).

GCC's OpenMP runtime keeps a thread's worker threads in a pool that ``fork()`` copies
without its threads; a child that ran a kernel on several threads then waited forever
(every ``multiprocessing.Pool`` of forked workers hung). Each scenario runs in a fresh Python
process (this file run as a script) with ``OMP_NUM_THREADS`` set to several threads, so the
parent's kernels really ran on a team whatever the machine's cores. Every child has a
deadline and is killed past it, so a hang fails the test instead of the suite, and each
child's results must equal the parent's, bit for bit: no kernel's result depends on the
number of threads.
"""
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
import time

import numpy as np

import mxlite as mx

THREADS = "4"           # the parent's team: several threads even on a 2-core machine
DEADLINE = 60           # seconds a child may take (each family runs in well under one)
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__)))


# ---- one function per kernel family: deterministic inputs, results as NumPy ---------------
# Sizes are above the kernels' parallel threshold (2**16 elements), so each forms a team.
def _data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _elementwise():
    x = mx.nd.array(_data(1 << 18))
    return [(mx.nd.exp(x) * 2 + x).asnumpy(), mx.nd.tanh(x).asnumpy()]


def _broadcast():
    a, b = mx.nd.array(_data((512, 512))), mx.nd.array(_data((1, 512), 1))
    return [mx.nd.broadcast_add(a, b).asnumpy(), mx.nd.broadcast_mul(a, b).asnumpy()]


def _reduction():
    x = mx.nd.array(_data((512, 512)))
    return [x.sum(axis=1).asnumpy(), x.max(axis=0).asnumpy(), x.sum().asnumpy()]


def _index():
    table = mx.nd.array(_data((1024, 64)))
    idx = mx.nd.array(np.random.default_rng(2).integers(0, 1024, 1 << 12), dtype="int64")
    x = mx.nd.array(_data((1 << 12, 64)))
    return [mx.nd.take(table, idx).asnumpy(),
            mx.nd.pick(x, mx.nd.array(np.arange(1 << 12) % 64), axis=1).asnumpy()]


def _copy():
    x = mx.nd.array(_data((512, 512)))
    return [mx.nd.transpose(x).asnumpy(), mx.nd.flip(x, axis=1).asnumpy()]


def _random():
    mx.random.seed(7)
    return [mx.nd.random.normal(shape=1 << 18).asnumpy(),
            mx.nd.random.uniform(shape=1 << 18).asnumpy()]


def _conv():
    x, w = mx.nd.array(_data((4, 8, 64, 64))), mx.nd.array(_data((16, 8, 3, 3), 1))
    y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=16, no_bias=True)
    return [y.asnumpy(), mx.nd.Pooling(y, kernel=(2, 2), stride=(2, 2)).asnumpy()]


def _norm():
    x = mx.nd.array(_data((1024, 256)))
    gamma, beta = mx.nd.ones(256), mx.nd.zeros(256)
    return [mx.nd.LayerNorm(x, gamma, beta).asnumpy(), mx.nd.softmax(x).asnumpy()]


def _sort():
    x = mx.nd.array(_data((256, 1024)))
    return [mx.nd.sort(x).asnumpy(), mx.nd.topk(x, k=5).asnumpy()]


def _optimizer():
    w, g, mom = (mx.nd.array(_data(1 << 18, s)) for s in range(3))
    mx.nd.sgd_mom_update(w, g, mom, lr=0.1, momentum=0.9, wd=1e-4, out=w)
    return [w.asnumpy(), mom.asnumpy()]


def _linalg():
    # more than la.BLOCK elements, so the blocks run on the linalg thread pool
    n = 70000
    a = _data((n, 8, 8)) * 0.1
    spd = a @ a.transpose(0, 2, 1) + 8 * np.eye(8, dtype=np.float32)
    return [mx.nd.linalg.potrf(mx.nd.array(spd)).asnumpy()]


FAMILIES = {f.__name__[1:]: f for f in (
    _elementwise, _broadcast, _reduction, _index, _copy, _random, _conv, _norm, _sort,
    _optimizer, _linalg)}


def run_family(name):
    """``(name, results)`` of one family, as a child computes it."""
    return name, FAMILIES[name]()


def _check_equal(got, where):
    for name, results in got:
        expected = FAMILIES[name]()
        assert len(results) == len(expected), (where, name)
        for r, e in zip(results, expected):
            if r.shape != e.shape or not np.array_equal(r, e, equal_nan=True):
                raise AssertionError(f"{where}: {name} differs from the parent's")


def _os_threads():
    """The threads of this process (Linux), or None."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


# ---- scenarios (each runs in its own fresh process, see _run) -------------------------------
def scenario_pool(method, parent_family):
    """A ``Pool(2)`` of ``method`` runs every family after the parent ran another one."""
    FAMILIES[parent_family]()
    ctx = multiprocessing.get_context(method)
    pool = ctx.Pool(2)
    try:
        got = pool.map_async(run_family, list(FAMILIES), chunksize=1).get(timeout=DEADLINE)
    except multiprocessing.TimeoutError:
        pool.terminate()
        raise AssertionError(f"a {method} worker hung (parent ran {parent_family})") from None
    pool.close()
    pool.join()
    _check_equal(got, f"{method} pool")


def _fork_child(fn):
    """``fn()``'s value, computed in a child made by ``os.fork()`` (killed past DEADLINE)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                         # the child
        code = 1
        try:
            os.close(read)
            with os.fdopen(write, "wb") as f:
                pickle.dump(fn(), f)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    box, f = [], os.fdopen(read, "rb")
    reader = threading.Thread(target=lambda: box.append(f.read()), daemon=True)
    reader.start()
    reader.join(DEADLINE)
    if reader.is_alive():
        os.kill(pid, signal.SIGKILL)                    # the read then ends at EOF
        os.waitpid(pid, 0)
        reader.join()
        f.close()
        raise AssertionError(f"the os.fork() child hung in {fn.__name__}")
    f.close()
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code == 0, f"the os.fork() child of {fn.__name__} " + (
        f"exited with {code}" if code > 0 else f"was killed by signal {-code}")
    return pickle.loads(box[0])


def _child_all_families():
    """Every family's results, and how the child's OpenMP stood: serial after fork, the
    threads a region may use, and the process's threads after the copy kernels (before conv
    and linalg, which may start BLAS threads and a Python thread pool)."""
    import mxlite._core as core
    got, threads = [], None
    for name in FAMILIES:
        got.append(run_family(name))
        if name == "copy":
            threads = _os_threads()
    return got, core.serial_after_fork, core.copy.openmp_max_threads(), threads


def scenario_os_fork(parent_family):
    """A raw ``os.fork()`` child runs every family on a team of its own."""
    FAMILIES[parent_family]()
    got, serial, max_threads, os_threads = _fork_child(_child_all_families)
    _check_equal(got, "os.fork child")
    assert not serial and max_threads == int(THREADS), (serial, max_threads)
    if os_threads is not None:       # the child started its own workers
        assert os_threads >= int(THREADS), os_threads


def _child_serial_then_thread():
    got, serial, max_threads, os_threads = _child_all_families()
    before, box = _os_threads(), []
    # a thread the child starts has a pool of its own: its kernels form a team again
    t = threading.Thread(target=lambda: box.append((run_family("copy"), _os_threads())))
    t.start()
    t.join()
    started = None if before is None else box[0][1] - before
    return got + [box[0][0]], serial, max_threads, os_threads, started


def scenario_os_fork_unreleased(parent_family):
    """Where the runtime cannot release its pool (libgomp before GCC 9, simulated), the
    forking thread's kernels run serially in the child, and a thread the child starts is
    parallel again."""
    import mxlite._core as core
    FAMILIES[parent_family]()
    core._release = lambda: False
    got, serial, max_threads, os_threads, started = _fork_child(_child_serial_then_thread)
    _check_equal(got, "os.fork child, pool not released")
    assert serial and max_threads == 1, (serial, max_threads)
    if os_threads is not None:
        assert os_threads == 1, os_threads           # no team was formed
        assert started == int(THREADS), started     # the thread and its workers


def _dataloader_epoch():
    x = _data((64, 256, 256))        # a batch of 8 is 2**19 elements: stacked on a team
    y = np.arange(64, dtype=np.float32)
    data = mx.gluon.data.ArrayDataset(mx.nd.array(x), mx.nd.array(y))
    loader = mx.gluon.data.DataLoader(data, batch_size=8, num_workers=2)
    batches = list(loader)
    everything = mx.nd.concat(*[bx for bx, _ in batches], dim=0)     # on the main thread
    return [(bx.asnumpy(), by.asnumpy()) for bx, by in batches], everything.asnumpy()


def scenario_dataloader(parent_family):
    """One epoch of a DataLoader with two workers in a forked child equals the parent's."""
    FAMILIES[parent_family]()
    batches, everything = _fork_child(_dataloader_epoch)
    want_batches, want_everything = _dataloader_epoch()
    assert len(batches) == len(want_batches) == 8
    for (bx, by), (wx, wy) in zip(batches, want_batches):
        assert np.array_equal(bx, wx) and np.array_equal(by, wy)
    assert np.array_equal(everything, want_everything)


def scenario_rng_lock():
    """A fork while another thread holds the random streams' lock: the child's random
    kernels still run (the lock is taken around the fork, not copied held)."""
    from mxlite.device import rng
    held = threading.Event()

    def hold():
        with rng._lock:
            held.set()
            time.sleep(0.2)          # the fork below comes while the lock is held
    t = threading.Thread(target=hold)
    t.start()
    held.wait()
    got = _fork_child(lambda: run_family("random"))
    t.join()
    _check_equal([got], "os.fork child, random lock held at fork")


SCENARIOS = {f.__name__[len("scenario_"):]: f for f in (
    scenario_pool, scenario_os_fork, scenario_os_fork_unreleased, scenario_dataloader,
    scenario_rng_lock)}


def _run(scenario, *args):
    """Run a scenario in a fresh interpreter with a team of THREADS threads; fail on a
    nonzero exit or when it outlives its children's deadlines."""
    env = dict(os.environ, OMP_NUM_THREADS=THREADS,
               PYTHONPATH=os.pathsep.join([PACKAGE_ROOT] + sys.path))   # this mxlite
    try:
        done = subprocess.run([sys.executable, os.path.abspath(__file__), scenario, *args],
                              env=env, capture_output=True, text=True,
                              timeout=3 * DEADLINE)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{scenario}{args} did not finish in {3 * DEADLINE} s") from None
    assert done.returncode == 0, done.stdout + done.stderr


# ---- the tests ---------------------------------------------------------------------------
if __name__ != "__main__" and __name__ != "__mp_main__":
    import pytest

    pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this OS")

    @pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
    def test_pool_runs_every_family(method):
        _run("pool", method, "reduction")

    def test_fork_pool_after_elementwise():
        _run("pool", "fork", "elementwise")

    def test_fork_pool_after_linalg():
        # the linalg kernels' Python thread pool must not be inherited either
        _run("pool", "fork", "linalg")

    def test_os_fork_while_random_lock_held():
        _run("rng_lock")

    def test_os_fork_child_runs_every_family_on_threads():
        _run("os_fork", "elementwise")

    def test_os_fork_child_without_release_runs_serially():
        _run("os_fork_unreleased", "reduction")

    def test_dataloader_epoch_in_forked_child():
        _run("dataloader", "reduction")


if __name__ == "__main__":
    SCENARIOS[sys.argv[1]](*sys.argv[2:])
