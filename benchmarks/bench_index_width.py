"""The cost of 64-bit indexing: mxlite's CPU kernels (int64 sizes, indices, strides and loop
counters) against the same kernels built with a 32-bit index type.

    python benchmarks/bench_index_width.py               # build (once), measure, print the table
    python benchmarks/bench_index_width.py --rounds 24 --processes 3   # docs/index_width.md
    OMP_NUM_THREADS=1 python benchmarks/bench_index_width.py   # the kernels alone, no threads
    pytest benchmarks/bench_index_width.py               # the same table, fewer rounds

The int32 variant exists only for this measurement. ``build(bits)`` copies the package and
``setup.py`` into a temporary directory and builds it there with ``setup.py build_ext
--inplace``; for 32 bits it first rewrites the index type in the copy (``PATCHES``: the
``idx_t`` typedef of ``mxlite/_core/common.pxd``, the loops of the kernels written in C, and
the int64 *positions* that ``take``/``pick`` hand to their kernels). The int64 variant is
built the same way from the same snapshot, so the index type is the only difference; the
checkout's own modules are never touched. Builds are reused while the sources are unchanged.

Each variant runs in several worker processes (``--worker ROOT``, ``--processes`` of them:
where an array lands in physical memory moves a bandwidth-bound kernel's time from one
process to the next); a third variant runs the int64 build again as a control. The parent
times every case in rounds, rotating the order of the workers, so machine noise hits all
alike. A time is the minimum over rounds and processes; the ratio is int64 / int32 (above 1:
the 64-bit index costs time); the control ratio (int64 / int64) shows what the method reports
when nothing differs; ``noise`` is each variant's median / minimum - 1.
Both variants must give bit-identical results (the last column): the ratio compares the same
arithmetic.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOAL = 1.02

# ---- the int32 build ----------------------------------------------------------------------
# (file, regular expression, replacement, expected number of matches or None for "at least one").
# A count that no longer matches the sources stops the build instead of measuring a half-int64
# int32 build.
_C_INDEX = (r"\bint64_t(\s+)(n|n2|m|i|j|k|ia|ib|r|nb|nrows|inner|t|lo|hi|start|len|first)\b"
            r"(?!\s*=\s*\(int64_t\))")
PATCHES = [
    # the one index type of the Cython kernels
    ("mxlite/_core/common.pxd", r"^from libc\.stdint cimport int64_t$",
     "from libc.stdint cimport int32_t, int64_t", 1),
    ("mxlite/_core/common.pxd", r"^ctypedef int64_t idx_t$", "ctypedef int32_t idx_t", 1),
    # a shape handed to NumPy's C API must be npy_intp whatever idx_t is
    ("mxlite/_core/random.pyx",
     r"cdef cnp\.ndarray draws = cnp\.PyArray_EMPTY\(1, &n, ",
     "cdef cnp.npy_intp n_dims = n\n    cdef cnp.ndarray draws = "
     "cnp.PyArray_EMPTY(1, &n_dims, ", 1),
    # a limit above 2^31 is compared in 64 bits
    ("mxlite/_core/random.pyx", r"<idx_t>1 << 48", "<int64_t>1 << 48", 1),
    # take/pick/one_hot/Embedding positions: an array of idx_t
    ("mxlite/ops/index.py", r"pos = xp\.empty\(indices\.shape, np\.int64\)",
     "pos = xp.empty(indices.shape, np.int32)", 1),
    ("mxlite/_core/index.pyx.in", r"cnp\.PyArray_TYPE\(pos\) != cnp\.NPY_INT64 and not \(\n"
     r"\s*cnp\.PyArray_TYPE\(pos\) == cnp\.NPY_LONGLONG and sizeof\(long long\) == 8\)",
     "cnp.PyArray_TYPE(pos) != cnp.NPY_INT32", 1),
    # the inner loops written in C (element-wise, reductions, randint, activations,
    # normalisation statistics, optimizer updates); their values stay int64 where they are data
    ("mxlite/_core/elemwise.pyx.in", _C_INDEX, r"int32_t\1\2", None),
    ("mxlite/_core/reduce.pyx.in", _C_INDEX, r"int32_t\1\2", None),
    ("mxlite/_core/reduce.pyx.in", r"static int64_t mxr_argrow_", "static int32_t mxr_argrow_", 1),
    ("mxlite/_core/random.pyx", r"\bint64_t(\s+)(i|t|first|n)\b(?=[,;) ])", r"int32_t\1\2", None),
    ("mxlite/_core/mx_act.h", _C_INDEX, r"int32_t\1\2", None),
    ("mxlite/_core/mx_norm.h", _C_INDEX, r"int32_t\1\2", None),
    ("mxlite/_core/mx_optim.h", _C_INDEX, r"int32_t\1\2", None),
]
# what the build copies (generated and compiled files are left behind and regenerated)
_COPY_IGNORE = shutil.ignore_patterns("*.so", "*.c", "*.cpp", "*.html", "__pycache__",
                                      "elemwise.pyx", "reduce.pyx", "index.pyx", "finite.pyx")


def _source_hash():
    """A hash of every file a build is made from."""
    h = hashlib.sha256()
    files = [os.path.join(ROOT, "setup.py")]
    for folder, dirs, names in os.walk(os.path.join(ROOT, "mxlite")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files += [os.path.join(folder, n) for n in sorted(names)
                  if n.endswith((".py", ".pyx", ".pyx.in", ".pxd", ".pxi", ".h"))]
    for path in files:
        rel = os.path.relpath(path, ROOT)
        if rel.endswith(".pyx") and os.path.exists(path + ".in"):
            continue                                 # generated from the template
        h.update(rel.encode())
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def apply_patches(root, patches=PATCHES):
    """Rewrite the index type in the copy at ``root``; raise if a pattern's count is off."""
    for rel, pattern, repl, expected in patches:
        path = os.path.join(root, rel)
        with open(path) as f:
            text = f.read()
        text, count = re.subn(pattern, repl, text, flags=re.M)
        if count == 0 or (expected is not None and count != expected):
            raise RuntimeError(f"int32 build: {rel}: {pattern!r} matched {count} times, "
                               f"expected {expected or 'at least 1'}; update PATCHES")
        with open(path, "w") as f:
            f.write(text)


def build(bits, base=None, verbose=False):
    """The root of a copy of the checkout built with a ``bits``-bit index type (64: the
    sources as they are; 32: with ``PATCHES``), built there if missing.

    Both variants are built from one snapshot of the sources, with the same compiler, so
    the index type is the only difference (the checkout's own modules may be older or newer
    than its sources). Builds of older sources under ``base`` are removed.
    """
    base = base or os.path.join(tempfile.gettempdir(), "mxlite-index-width")
    key = _source_hash()
    variant = "int64" if bits == 64 else \
        "int32-" + hashlib.sha256(repr(PATCHES).encode()).hexdigest()[:8]
    root = os.path.join(base, f"{key}-{variant}")
    if os.path.exists(os.path.join(root, "BUILT")):
        return root
    os.makedirs(base, exist_ok=True)
    for old in os.listdir(base):
        if not old.startswith(key):
            shutil.rmtree(os.path.join(base, old), ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    shutil.copy(os.path.join(ROOT, "setup.py"), root)
    shutil.copytree(os.path.join(ROOT, "mxlite"), os.path.join(root, "mxlite"),
                    ignore=_COPY_IGNORE)
    if bits == 32:
        apply_patches(root)
    proc = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
                          cwd=root, capture_output=not verbose, text=True)
    if proc.returncode:
        raise RuntimeError(f"int{bits} build failed in {root}:\n{(proc.stderr or '')[-4000:]}")
    open(os.path.join(root, "BUILT"), "w").close()
    return root


# ---- the cases ----------------------------------------------------------------------------
def _cases(mx, np):
    """``{name: (fn, result)}``: ``fn()`` runs the case once; ``result()`` gives the arrays
    whose bytes both builds must agree on."""
    rng = np.random.default_rng(0)
    f32 = lambda *shape: mx.nd.array(rng.random(shape, dtype=np.float32))  # noqa: E731
    out = {}

    a, b, c = f32(10 ** 7), f32(10 ** 7), mx.nd.zeros((10 ** 7,))
    out["add 1e7 float32"] = (lambda: mx.nd.elemwise_add(a, b, out=c), lambda: [c])

    m, col, mc = f32(1000, 1000), f32(1000, 1), mx.nd.zeros((1000, 1000))
    out["broadcast (1000,1000)+(1000,1)"] = (lambda: mx.nd.broadcast_add(m, col, out=mc),
                                             lambda: [mc])

    s_all = mx.nd.zeros((1,))
    out["sum 1e7"] = (lambda: mx.nd.sum(a, out=s_all), lambda: [s_all])
    rows, s_rows = f32(1000, 10 ** 4), mx.nd.zeros((1000,))
    out["sum axis=1 (1000,1e4)"] = (lambda: mx.nd.sum(rows, axis=1, out=s_rows), lambda: [s_rows])

    table = f32(10 ** 5, 16)
    ids = mx.nd.array(rng.integers(0, 10 ** 5, 10 ** 6), dtype="int32")
    taken = mx.nd.zeros((10 ** 6, 16))
    out["take (1e5,16)[1e6]"] = (lambda: mx.nd.take(table, ids, out=taken), lambda: [taken])
    scores = f32(10 ** 6, 10)
    labels = mx.nd.array(rng.integers(0, 10, 10 ** 6), dtype="int32")
    picked = mx.nd.zeros((10 ** 6,))
    out["pick (1e6,10) axis=1"] = (lambda: mx.nd.pick(scores, labels, axis=1, out=picked),
                                   lambda: [picked])

    square, tr = f32(2000, 2000), mx.nd.zeros((2000, 2000))
    out["transpose 2000x2000"] = (lambda: mx.nd.transpose(square, out=tr), lambda: [tr])

    drawn = mx.nd.zeros((10 ** 7,), dtype="int32")

    def randint():
        mx.random.seed(7)
        mx.nd.random.randint(0, 1000, shape=(10 ** 7,), dtype="int32", out=drawn)
    out["randint 1e7 int32"] = (randint, lambda: [drawn])

    out["MLP 784-256-256-10 step"] = _mlp_step(mx, np, rng)
    return out


def _mlp_step(mx, np, rng, batch=64, lr=0.01):
    """One imperative training step: forward, softmax cross-entropy backward, SGD update."""
    sizes = [784, 256, 256, 10]
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        params.append(mx.nd.array(rng.normal(0, fan_in ** -0.5, (fan_out, fan_in))
                                  .astype(np.float32)))
        params.append(mx.nd.zeros((fan_out,)))
    for p in params:
        p.attach_grad()
    x = mx.nd.array(rng.random((batch, 784), dtype=np.float32))
    y = mx.nd.array(rng.integers(0, 10, batch), dtype="float32")

    def step():
        with mx.autograd.record():
            h = x
            for layer in range(3):
                h = mx.nd.FullyConnected(h, params[2 * layer], params[2 * layer + 1],
                                         num_hidden=sizes[layer + 1])
                if layer < 2:
                    h = mx.nd.relu(h)
            loss = mx.nd.SoftmaxOutput(h, y)
        loss.backward()
        for p in params:
            mx.nd.sgd_update(p, p.grad, lr=lr, out=p)
    return step, lambda: params


# ---- one build's worker -------------------------------------------------------------------
def worker(root):
    """Serve timing requests for the mxlite under ``root``: read ``name number`` lines on
    stdin, answer each with a JSON line ``{"s": seconds per call}``; the first line answered
    lists the cases with a digest of their first results."""
    sys.path.insert(0, root)
    import numpy as np
    import mxlite as mx
    assert os.path.dirname(os.path.dirname(os.path.abspath(mx.__file__))) == root, mx.__file__
    cases = _cases(mx, np)
    digests = {}
    for name, (fn, result) in cases.items():
        fn()
        h = hashlib.sha256()
        for arr in result():
            h.update(arr.asnumpy().tobytes())
        digests[name] = h.hexdigest()[:12]
    print(json.dumps(digests), flush=True)
    for line in sys.stdin:
        name, number = line.rsplit(" ", 1)
        fn = cases[name][0]
        start = time.perf_counter()
        for _ in range(int(number)):
            fn()
        print(json.dumps({"s": (time.perf_counter() - start) / int(number)}), flush=True)


class _Worker:
    def __init__(self, root):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", root],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     cwd=tempfile.gettempdir())
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the benchmark worker for {root} failed to start")
        self.digests = json.loads(line)

    def time(self, name, number):
        self.proc.stdin.write(f"{name} {number}\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())["s"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


# ---- the measurement ----------------------------------------------------------------------
def measure(rounds=21, sample_s=0.05, processes=2):
    """Rows ``(case, int64 s, int32 s, ratio, control ratio, noise64, noise32, same results)``.

    A third variant runs the int64 build again: the *control* ratio (int64 / int64) is what
    the method reports when nothing differs, the yardstick for every other ratio. Each
    variant runs in ``processes`` worker processes (where an array lands in physical memory
    moves a bandwidth-bound kernel's time by up to 20% from one process to the next) and
    its time is the minimum over all of them; the order of the workers rotates from round
    to round.
    """
    roots = {"int64": build(64), "int32": build(32)}
    roots["control"] = roots["int64"]
    workers = [(k, _Worker(root)) for k, root in roots.items() for _ in range(processes)]
    first = workers[0][1]
    try:
        rows = []
        for name in first.digests:
            # calls per sample, so a sample lasts about sample_s
            once = min(first.time(name, 1) for _ in range(3))
            number = max(1, round(sample_s / max(once, 1e-6)))
            samples = {k: [] for k in roots}
            for r in range(rounds):
                shift = r % len(workers)
                for k, w in workers[shift:] + workers[:shift]:
                    samples[k].append(w.time(name, number))
            best = {k: min(v) for k, v in samples.items()}
            noise = {k: statistics.median(v) / best[k] - 1 for k, v in samples.items()}
            same = all(w.digests[name] == first.digests[name] for _, w in workers)
            rows.append((name, best["int64"], best["int32"], best["int64"] / best["int32"],
                         best["int64"] / best["control"], noise["int64"], noise["int32"], same))
        return rows
    finally:
        for _, w in workers:
            w.close()


def machine():
    """The CPU model and core count, from /proc/cpuinfo where there is one."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def print_table(rows, rounds, processes):
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    print(f"\nint64 / int32 index type, min of {rounds} rotated rounds x {processes} "
          f"processes; {machine()}, "
          f"OMP threads {threads}; {time.strftime('%Y-%m-%d', time.gmtime())}; goal <= {GOAL}")
    print(f"{'case':<32}{'int64 ms':>10}{'int32 ms':>10}{'ratio':>8}{'control':>9}"
          f"{'noise64':>9}{'noise32':>9}  same results")
    for name, t64, t32, ratio, control, n64, n32, same in rows:
        flag = "" if ratio <= GOAL else "  above goal"
        print(f"{name:<32}{t64 * 1e3:>10.3f}{t32 * 1e3:>10.3f}{ratio:>8.3f}{control:>9.3f}"
              f"{n64:>9.1%}{n32:>9.1%}  {'yes' if same else 'NO'}{flag}")


def test_index_width_table(capsys):
    """Build the int32 variant (at run time, not collection), time both, print the table;
    both builds must compute bit-identical results."""
    rows = measure(rounds=7, processes=1)
    with capsys.disabled():
        print_table(rows, 7, 1)
    assert all(row[-1] for row in rows), [row[0] for row in rows if not row[-1]]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--sample-ms", type=float, default=50)
    parser.add_argument("--processes", type=int, default=2, help="worker processes per build")
    parser.add_argument("--worker", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
    else:
        print_table(measure(args.rounds, args.sample_ms / 1e3, args.processes), args.rounds,
                    args.processes)
