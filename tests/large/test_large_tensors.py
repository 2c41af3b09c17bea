"""64-bit indexing past 2**31 and 2**32 elements, on int8 arrays of 2**32 + 16 elements.

Run with ``pytest -m large tests/large`` (excluded from the default run). Each case runs in
its own interpreter, so an index bug that crashes (segfault, out-of-bounds write) fails that
test instead of killing pytest; a case reports its peak memory, which must stay under
PEAK_LIMIT_GB (CI has 24 GiB). Arrays are deleted as soon as a check is done.
"""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.large

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
N = 2 ** 32 + 16          # one int8 array: 4 GiB
PEAK_LIMIT_GB = 13.0

PRELUDE = """
import resource
import numpy as np
import mxlite as mx

N = 2 ** 32 + 16

def check(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what)
"""
EPILOGUE = """
print("PEAK_GB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20)
"""


def run_case(body, timeout=900):
    """Run ``body`` (after PRELUDE) in a fresh interpreter; fail on a bad exit or peak memory."""
    code = PRELUDE + textwrap.dedent(body) + EPILOGUE
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    output = proc.stdout + proc.stderr
    if proc.returncode < 0:
        hint = " (SIGKILL: out of memory?)" if proc.returncode == -9 else ""
        pytest.fail(f"the case died with signal {-proc.returncode}{hint}:\n{output}")
    assert proc.returncode == 0, output
    peaks = [float(line.split()[1]) for line in proc.stdout.splitlines()
             if line.startswith("PEAK_GB")]
    assert peaks, output
    assert peaks[0] < PEAK_LIMIT_GB, f"peak memory {peaks[0]:.1f} GB:\n{output}"
    return proc.stdout


def test_create_and_write_past_2_31_and_2_32():
    run_case("""
        a = mx.nd.zeros((N,), dtype="int8")
        check(a.shape == (N,) and a.size == N and a.dtype == np.int8, f"shape {a.shape}")
        a[-1] = 3
        a[2 ** 31 + 5] = 9
        check(int(a[-1].asscalar()) == 3, "a[-1]")
        check(int(a[N - 1].asscalar()) == 3, "a[N - 1]")
        check(int(a[2 ** 31 + 5].asscalar()) == 9, "a[2**31 + 5]")
        for i in (0, 2 ** 31 + 4, 2 ** 31 + 6, 2 ** 32 - 1, 2 ** 32, N - 2):
            check(int(a[i].asscalar()) == 0, f"a[{i}] should still be 0")
        # nothing else was written (a wrapped 32-bit index would land elsewhere)
        check(np.count_nonzero(np.asarray(a)) == 2, "exactly two non-zero elements")
    """)


def test_tail_slices_are_views_past_2_32():
    run_case("""
        a = mx.nd.zeros((N,), dtype="int8")
        tail = a[2 ** 32:]                       # first-axis slice: a view
        check(tail.shape == (16,), f"tail shape {tail.shape}")
        tail[:] = mx.nd.arange(1, 17, dtype="int8")
        want = np.arange(1, 17, dtype=np.int8)
        check(np.array_equal(a[2 ** 32:].asnumpy(), want), "a[2**32:] after writing the view")
        check(np.array_equal(np.asarray(a)[2 ** 32:], want), "storage behind the view")
        across = a[2 ** 32 - 4: 2 ** 32 + 4].asnumpy()
        check(np.array_equal(across, [0, 0, 0, 0, 1, 2, 3, 4]), f"slice across 2**32: {across}")
        # a copy of more than 2**31 elements goes through the strided-copy kernel
        big = a[2 ** 31 - 8:].copy()
        check(big.shape == (N - 2 ** 31 + 8,), f"copy shape {big.shape}")
        check(np.array_equal(big[-16:].asnumpy(), want), "tail of a 2**31-element copy")
        check(np.count_nonzero(np.asarray(big)) == 16, "copy has only the tail set")
    """)


def test_add_correct_at_the_far_end():
    run_case("""
        a = mx.nd.zeros((N,), dtype="int8")
        a[-1] = 3
        a[2 ** 31 + 5] = 9
        c = a + a
        check(c.shape == (N,) and c.dtype == np.int8, f"a + a: {c.shape} {c.dtype}")
        check(int(c[-1].asscalar()) == 6, "(a + a)[-1]")
        check(int(c[2 ** 31 + 5].asscalar()) == 18, "(a + a)[2**31 + 5]")
        check(np.count_nonzero(np.asarray(c)) == 2, "a + a has exactly two non-zero elements")
        del c
        # broadcasting a row over 2**28 + 1 rows: the binary kernel's row/offset arithmetic
        rows = a.reshape((N // 16, 16))
        d = rows + mx.nd.arange(16, dtype="int8")
        check(int(d[-1][15].asscalar()) == 3 + 15, "last element of rows + arange(16)")
        check(int(d[(2 ** 31 + 5) // 16][5].asscalar()) == 9 + 5, "element 2**31 + 5")
        check(np.array_equal(d[-2].asnumpy(), np.arange(16)), "second-to-last row")
    """)


def test_sum_counts_past_2_32_in_int64():
    # sum keeps an int8 input's dtype (MXNet), so int64 accumulation is only visible through
    # a result that is int64: the count of a bool array. An int32 accumulator (or a 32-bit
    # element count) would give 16 here instead of 2**32 + 16.
    run_case("""
        a = mx.nd.ones((N,), dtype="bool")
        s = mx.nd.sum(a)
        check(s.dtype == np.int64, f"sum of bool gives {s.dtype}")
        check(int(s.asscalar()) == N, f"count of ones = {s.asscalar()}, want {N}")
        a[2 ** 32 + 3] = False
        s = mx.nd.sum(a)
        check(int(s.asscalar()) == N - 1, f"count after clearing one = {s.asscalar()}")
    """)


def test_sum_of_int8_past_2_32():
    # The int8 result wraps modulo 256 as in MXNet; a marker past 2**32 makes the answer
    # differ from what a 32-bit element count (16 elements) or a dropped tail would give.
    run_case("""
        a = mx.nd.ones((N,), dtype="int8")
        a[2 ** 32 + 5] = 100
        total = N + 99
        s = mx.nd.sum(a)
        check(s.dtype == np.int8, f"sum of int8 gives {s.dtype}")
        want = np.array(total % 256).astype(np.uint8).view(np.int8)
        check(int(s.asscalar()) == int(want), f"sum = {s.asscalar()}, want {want}")
        # column sums of (2**28 + 1, 16): the reduce kernel's strided path past 2**32
        cols = mx.nd.sum(a.reshape((N // 16, 16)), axis=0)
        want_cols = np.full(16, (N // 16) % 256, np.int64)
        want_cols[5] += 99
        want_cols = want_cols.astype(np.uint8).view(np.int8)
        check(np.array_equal(cols.asnumpy(), want_cols), f"column sums {cols.asnumpy()}")
    """)


def test_argmax_returns_an_index_past_2_32():
    run_case("""
        a = mx.nd.zeros((N,), dtype="int8")
        a[2 ** 31 + 5] = 4
        a[2 ** 32 + 15] = 5
        i = mx.nd.argmax(a, axis=0)
        check(int(i.asscalar()) == 2 ** 32 + 15, f"argmax = {i.asscalar()!r}, want {2 ** 32 + 15}")
    """)
