"""The device seam (mxlite/device): array data goes through the namespace of its device.

Two proofs. Statically, an AST scan finds no NumPy function called on array data in the
operator modules, NDArray or autograd outside a short allow-list whose entries say why
(host-side parameters and input conversion). At run time, a fake second device is
registered whose namespace forwards to the CPU one and counts the calls; every operator
(each differentiable one through its gradient spec, the others by name) runs on it while
NumPy's array functions and the CPU namespace refuse to run outside the fake namespace, and
the results, gradients and random streams must match the CPU's.
"""
import ast
import importlib
import collections
import contextlib
import pathlib
import re
import os
import sys
import zlib

import numpy as np
import pytest

import mxlite as mx
import mxlite.context
from mxlite import device
from mxlite.device import cpu as cpu_ns
from mxlite.ops.registry import NON_DIFFERENTIABLE, OpDef
from gradspecs import all_specs

ROOT = pathlib.Path(mx.__file__).parent
SCANNED = sorted((ROOT / "ops").glob("*.py")) + [ROOT / "ndarray" / "ndarray.py",
                                                  ROOT / "autograd.py"]

# NumPy functions that never touch array data: dtypes, limits, shape arithmetic, the
# floating-point error state, and scalar types built from Python numbers (np.uint64(3)).
METADATA = {"dtype", "iinfo", "finfo", "promote_types", "result_type", "can_cast", "errstate",
            "broadcast_shapes", "float16", "float32", "float64", "int8", "int16", "int32",
            "int64", "uint8", "uint16", "uint32", "uint64", "bool_"}

# (file relative to mxlite/, enclosing function or "<module>") -> (NumPy functions, why)
PACKAGE = os.path.dirname(os.path.abspath(mxlite.__file__))


def _package_path(filename):
    """``filename`` relative to the mxlite package ("ops/indexing.py"), whatever the folder
    holding the package is called (a checkout named mxlite included)."""
    return pathlib.Path(os.path.relpath(os.path.abspath(filename), PACKAGE)).as_posix()


ALLOWED = {
    ("ops/indexing.py", "<module>"): (
        {"zeros"}, "_PROBE: one host byte that index checks view with stride 0 (no data)"),
    ("ops/indexing.py", "_probe"): (
        {"ndarray"}, "a stride-0 view of _PROBE with the indexed shape: metadata only"),
    ("ops/indexing.py", "_index_array"): (
        {"asarray", "all", "isfinite", "array_equal", "trunc"},
        "index arrays of a key are parameters (attrs, host data; NDArray indices are "
        "copied to the host by NDArray.__getitem__ first)"),
    ("ops/indexing.py", "has_repeats"): (
        {"zeros", "add.at"}, "counts how often a key selects each position: host work on "
                             "the key (a parameter), before any array data is touched"),
    ("ops/param_index.py", "_array"): (
        {"asarray"}, "parses an index array of the 'index' parameter kind (host data)"),
    ("ops/param_index.py", "_decode"): (
        {"array"}, "decodes an index array from its JSON form (host data)"),
    ("ops/elemwise.py", "<module>"): (
        {"log"}, "log of the scalar parameter of _rpower_scalar's gradient (NaN for s < 0 "
                 "where math.log raises)"),
    ("ops/random.py", "uniform_top_bits"): (
        {"nextafter"}, "the largest value below the scalar parameter high, in the dtype"),
    ("ndarray/ndarray.py", "_checked_values"): (
        {"asarray"}, "converts host input (lists, NumPy arrays, an NDArray's to_host) "
                     "before the device gets it (from_host)"),
    ("ndarray/ndarray.py", "_check_fits"): (
        {"isfinite", "trunc", "abs", "isinf"},
        "validates that host input fits the target dtype, before it reaches a device"),
}

# Modules whose import would let an operator bypass its device's namespace.
FORBIDDEN_IMPORTS = ("numpy.", "mxlite._core.copy", "mxlite.device.cpu")


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _absolute(module, level, path):
    """``from ..x import y`` in ``path`` as an absolute module name."""
    if not level:
        return module or ""
    package = path.relative_to(ROOT.parent).with_suffix("").parts[:-level]
    return ".".join(package + ((module,) if module else ()))


def _numpy_calls(path):
    """(enclosing function, NumPy function, line) of every ``np.f(...)`` call, and every
    forbidden import, in the file at ``path``."""
    tree = ast.parse(path.read_text())
    calls, imports, stack = [], [], []

    class Visitor(ast.NodeVisitor):
        def visit_FunctionDef(self, node):
            stack.append(node.name)
            self.generic_visit(node)
            stack.pop()

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_Call(self, node):
            name = _dotted(node.func)
            if name and name.split(".")[0] in ("np", "numpy"):
                calls.append((stack[0] if stack else "<module>", name.split(".", 1)[1],
                              node.lineno))
            self.generic_visit(node)

        def visit_ImportFrom(self, node):
            module = _absolute(node.module, node.level, path)
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if any(full.startswith(f) or module.startswith(f) for f in FORBIDDEN_IMPORTS):
                    imports.append((full, node.lineno))

        def visit_Import(self, node):
            for alias in node.names:
                if any(alias.name.startswith(f) for f in FORBIDDEN_IMPORTS):
                    imports.append((alias.name, node.lineno))

    Visitor().visit(tree)
    return calls, imports


def _host_code(rel):
    """The ``HOST_CODE`` declaration of the operator module at ``rel`` ({function: why}):
    functions that work on host data only — tables computed from shapes and parameters,
    host copies of small parameter arrays, encoded bytes — and move results to the device
    through its namespace (``xp.from_host``)."""
    if not rel.startswith("ops/"):
        return {}
    module = importlib.import_module("mxlite." + rel[:-3].replace("/", "."))
    return getattr(module, "HOST_CODE", {})


def test_host_code_declarations_say_why_and_are_used():
    for path in SCANNED:
        rel = path.relative_to(ROOT).as_posix()
        declared = _host_code(rel)
        calls, _ = _numpy_calls(path)
        users = {where for where, name, _ in calls if name not in METADATA}
        assert set(declared) <= users, f"{rel}: HOST_CODE entries without a NumPy call: " \
                                       f"{sorted(set(declared) - users)}"
        assert all(isinstance(w, str) and len(w) > 30 for w in declared.values()), rel


def test_no_numpy_call_on_array_data_outside_the_allow_list():
    bad, used = [], set()
    for path in SCANNED:
        rel = path.relative_to(ROOT).as_posix()
        calls, imports = _numpy_calls(path)
        bad += [f"{rel}:{line}: imports {name}" for name, line in imports]
        host = _host_code(rel)
        for where, name, line in calls:
            if name in METADATA or where in host:
                continue
            names, _ = ALLOWED.get((rel, where), (set(), ""))
            if name in names:
                used.add((rel, where, name))
            else:
                bad.append(f"{rel}:{line}: np.{name}(...) in {where}: use the device namespace "
                           "(rctx.xp / namespace_for(ctx)), or allow it here with a reason")
    assert not bad, "\n".join(bad)
    stale = [f"{rel} {where}: np.{name}" for (rel, where), (names, _) in ALLOWED.items()
             for name in names if (rel, where, name) not in used]
    assert not stale, f"allow-list entries no longer needed: {stale}"


def test_the_allow_list_stays_short_and_says_why():
    assert len(ALLOWED) <= 10 and sum(len(names) for names, _ in ALLOWED.values()) <= 18
    assert all(len(why) > 30 for _, why in ALLOWED.values())


def test_the_engine_reaches_array_data_through_the_namespace():
    """The compiled backward engine (Cython: scanned as text) makes head gradients and writes
    .grad through the namespace of the array's device."""
    source = ROOT / "_core" / "engine.pyx"
    if not source.exists():         # an installed wheel ships the compiled module only
        pytest.skip("engine.pyx is not installed; the source-tree run scans it")
    text = source.read_text()
    calls = set(re.findall(r"\bnp\.([a-z_]+)\(", text)) - METADATA
    assert not calls, f"engine.pyx calls np.{sorted(calls)} on array data"


def test_the_scan_catches_a_violation(tmp_path):
    """The scan itself works: a compute function calling np.empty is found."""
    probe = tmp_path / "probe.py"
    probe.write_text("import numpy as np\nfrom numpy.lib.stride_tricks import as_strided\n"
                     "def _c(rctx, ins, outs, attrs):\n    t = np.empty(3, 'f4')\n"
                     "    np.add.at(t, 0, 1)\n    return np.dtype('f4')\n")
    calls, imports = _numpy_calls(probe)
    assert [(w, n) for w, n, _ in calls if n not in METADATA] == [("_c", "empty"),
                                                                  ("_c", "add.at")]
    assert [n for n, _ in imports] == ["numpy.lib.stride_tricks.as_strided"]


# ---- a fake second device --------------------------------------------------------------------
# NumPy functions that move or allocate array data: while the fake device runs, they may be
# called only from inside its namespace.
GUARDED_NUMPY = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
                 "copyto", "may_share_memory", "broadcast_to", "matmul", "ascontiguousarray",
                 "arange", "argmax", "concatenate", "stack", "tile", "repeat", "take")


class FakeDevice:
    """Device type 'fake' (compute device 'fake', NumPy storage, the CPU kernels) whose
    namespace forwards to the CPU namespace's functions and counts each call."""

    def __init__(self):
        self.calls = collections.Counter()
        self.active = False     # inside run(): array data must go through this namespace
        self.inside = 0         # depth of calls into this namespace
        self.xp = type(cpu_ns)("fake_namespace")
        for name in cpu_ns.__all__:
            value = getattr(cpu_ns, name)
            setattr(self.xp, name, self._recorded(name, value) if callable(value)
                    and not isinstance(value, type) else value)
        self.xp.name = "fake"
        self.ctx = None

    def _recorded(self, name, fn):
        def call(*args, **kwargs):
            self.calls[name] += 1
            self.inside += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self.inside -= 1
        return call

    def guard(self, owner, name, fn):
        """``fn`` refusing calls from mxlite code while the fake device runs, except from
        inside its namespace and from the allow-listed host code (NumPy's own internals,
        e.g. np.broadcast_shapes calling np.empty, are not mxlite code)."""
        def call(*args, **kwargs):
            if self.active and not self.inside:
                caller = sys._getframe(1)
                module = caller.f_globals.get("__name__", "")
                where = (_package_path(caller.f_globals.get("__file__", "")),
                         caller.f_code.co_name)
                host = getattr(sys.modules.get(module), "HOST_CODE", {})
                if module.startswith("mxlite") and name not in ALLOWED.get(where, ((),))[0] \
                        and caller.f_code.co_name not in host:
                    raise AssertionError(f"{owner}.{name} called by {module}.{where[1]} on the "
                                         "fake device, outside its namespace")
            return fn(*args, **kwargs)
        return call

    @contextlib.contextmanager
    def run(self):
        """Run with the fake device as the current context; array data must go through
        the fake namespace."""
        self.calls.clear()
        with self.ctx:
            self.active = True
            try:
                yield self
            finally:
                self.active = False


@pytest.fixture
def fake(monkeypatch):
    dev = FakeDevice()
    monkeypatch.setitem(mxlite.context._COMPUTE_DEVICE, "fake", "fake")
    device.register("fake", dev.xp, kernels="cpu")
    for name in GUARDED_NUMPY:
        monkeypatch.setattr(np, name, dev.guard("numpy", name, getattr(np, name)))
    for name in cpu_ns.__all__:
        value = getattr(cpu_ns, name)
        if callable(value) and not isinstance(value, type):
            monkeypatch.setattr(cpu_ns, name, dev.guard("the CPU namespace", name, value))
    dev.ctx = mx.Context("fake", 0)
    yield dev
    device.unregister("fake")


def _host(x):
    return [_host(v) for v in x] if isinstance(x, (list, tuple)) else x.asnumpy()


def _assert_close(a, b, what):
    if isinstance(a, list):
        assert len(a) == len(b), what
        for u, v in zip(a, b):
            _assert_close(u, v, what)
        return
    assert a.dtype == b.dtype and a.shape == b.shape, what
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=what)


def _on(ctx, values):
    return [mx.nd.array(v, ctx=ctx, dtype="float64") for v in values]


def _run_spec(spec, values, ctx):
    """The spec's call on ``ctx`` and the gradients of its outputs (head gradients of ones,
    made by the engine) with respect to every input."""
    xs = _on(ctx, values)
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = spec.call(mx.nd, *xs)
    heads = out if isinstance(out, (list, tuple)) else [out]
    mx.autograd.backward(heads)
    return _host(heads), [x.grad for x in xs]


SPECS = all_specs()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_differentiable_op_runs_through_the_namespace_of_its_device(name, fake):
    """Forward and backward of each gradient spec on the fake device: the same values as on
    the CPU, outputs and gradients on the fake device, every allocation and copy through the
    fake namespace (NumPy's array functions and the CPU namespace refuse to run)."""
    spec = SPECS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    values = spec.sample(rng) if spec.sample is not None else [
        rng.uniform(*spec.domain(i), size=shape) for i, shape in enumerate(spec.shapes)]
    expected, expected_grads = _run_spec(spec, values, mx.cpu())
    with fake.run():
        got, grads = _run_spec(spec, values, fake.ctx)
    assert all(g.context == fake.ctx for g in grads)
    _assert_close(got, expected, name)
    _assert_close(_host(grads), _host(expected_grads), f"{name} gradients")
    assert fake.calls["from_host"] and fake.calls["ones"]       # inputs, head gradients
    assert fake.calls["empty"] or fake.calls["zeros"]           # outputs


# name: a call on arrays of the current context (every input is built inside the call)
OTHER_CALLS = {
    "float16 unary, write-back": lambda: mx.nd.sin(mx.nd.array([0.5, 1], dtype="float16")),
    "mixed-dtype binary": lambda: mx.nd.array([1, 2], dtype="int32") + mx.nd.array([0.5, 1]),
    "integer scalar op": lambda: mx.nd.array([1, 2], dtype="int8") * 3,
    "float16 scalar op": lambda: mx.nd.array([1, 2], dtype="float16") / 3,
    "polygamma": lambda: mx.nd._internal._polygamma(mx.nd.array([1.5, 2.5]), n=1),
    "zeros": lambda: mx.nd.zeros((2, 3)),
    "full": lambda: mx.nd.full((2,), 7, dtype="int64"),
    "arange": lambda: mx.nd.arange(0, 6, 2, repeat=2),
    "arange float": lambda: mx.nd.arange(0.5, 3.1, 0.5, dtype="float64"),
    "ones_like": lambda: mx.nd.ones_like(mx.nd.array([[1, 2]])),
    "cast": lambda: mx.nd.cast(mx.nd.array([1.7, -2.5]), dtype="int32"),
    "copy": lambda: mx.nd.array([1, 2]).copy(),
    "sum int": lambda: mx.nd.sum(mx.nd.array([[1, 2], [3, 4]], dtype="int32"), axis=0),
    "sum float16 steps": lambda: mx.nd.sum(mx.nd.ones((2, 3, 4), dtype="float16"), axis=(0, 2)),
    "full reduction": lambda: mx.nd.sum(mx.nd.arange(10, dtype="float64")),
    "mean bool": lambda: mx.nd.mean(mx.nd.array([1, 0, 1], dtype="bool")),
    "norm": lambda: mx.nd.norm(mx.nd.array([[3, 4], [6, 8]], dtype="int32"), axis=1),
    "argmax": lambda: mx.nd.argmax(mx.nd.array([[1, 5, 2], [7, 0, 7]]), axis=1),
    "argmin keepdims": lambda: mx.nd.argmin(mx.nd.array([[1, 5], [0, 7]]), axis=0,
                                            keepdims=True),
    "one_hot": lambda: mx.nd.one_hot(mx.nd.array([1, 0, 5]), 3, dtype="int8"),
    "where int condition": lambda: mx.nd.where(mx.nd.array([1, 0], dtype="int32"),
                                               mx.nd.array([1, 2]), mx.nd.array([3, 4])),
    "clip float16": lambda: mx.nd.clip(mx.nd.array([-2, 0.5, 3], dtype="float16"), 0, 1),
    "take raise": lambda: mx.nd.take(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([1, 0]),
                                     mode="raise"),
    "_take_grad float16": lambda: mx.nd._internal._take_grad(
        mx.nd.ones((3, 2), dtype="float16"), mx.nd.array([0, 2, 2]),
        mx.nd.zeros((3, 2), dtype="float16")),
    "dot float16": lambda: mx.nd.dot(mx.nd.ones((2, 3), dtype="float16"),
                                     mx.nd.ones((3, 2), dtype="float16")),
    "batch_dot float16": lambda: mx.nd.batch_dot(mx.nd.ones((2, 2, 3), dtype="float16"),
                                                 mx.nd.ones((2, 3, 1), dtype="float16")),
    "isnan": lambda: mx.nd.contrib.isnan(mx.nd.array([1, float("nan")])),
    "all_finite": lambda: mx.nd.contrib.all_finite(mx.nd.array([1.0]), mx.nd.array([2.0])),
    "has_inf": lambda: mx.nd._internal._has_inf(mx.nd.array([1, float("inf")])),
    "hardmax bool": lambda: mx.nd.contrib.hardmax(mx.nd.array([[0, 1, 1]], dtype="bool")),
    "advanced getitem": lambda: mx.nd.array([[1, 2], [3, 4], [5, 6]])[[2, 0]],
    "getitem copy": lambda: mx.nd.array([[1, 2], [3, 4]])[:, 1],
    "concat": lambda: mx.nd.concat(mx.nd.ones((1, 2)), mx.nd.zeros((2, 2)), dim=0),
    "diag of a vector": lambda: mx.nd.diag(mx.nd.array([1, 2]), k=1),
    "uniform": lambda: mx.nd.random.uniform(shape=(4,)),
    "uniform float16": lambda: mx.nd.random.uniform(shape=(4,), dtype="float16"),
    "normal": lambda: mx.nd.random.normal(shape=(4,), dtype="float64"),
    "poisson float32": lambda: mx.nd.random.poisson(3.0, shape=(5,)),
    "gamma like": lambda: mx.nd.random.gamma_like(mx.nd.ones((3,)), alpha=2.0),
    "randint": lambda: mx.nd.random.randint(0, 100, shape=(5,)),
    "multinomial": lambda: mx.nd.random.multinomial(mx.nd.array([[0.2, 0.8], [1, 0]]),
                                                    shape=3, get_prob=True),
    "shuffle": lambda: mx.nd.random.shuffle(mx.nd.arange(6).reshape((3, 2))),
}


@pytest.mark.parametrize("what", sorted(OTHER_CALLS))
def test_other_paths_run_through_the_namespace_of_their_device(what, fake):
    """Non-differentiable ops and the cast, float16 and multi-output paths: the same values as
    on the CPU (random ops draw the same stream, counted per device) and outputs on the fake
    device."""
    call = OTHER_CALLS[what]
    mx.random.seed(7)
    expected = call()
    mx.random.seed(7)
    with fake.run():
        got = call()
    outs = got if isinstance(got, list) else [got]
    assert all(o.context == fake.ctx for o in outs)
    _assert_close(_host(got), _host(expected), what)
    assert fake.calls["from_host"] or fake.calls["empty"]


def test_array_methods_and_in_place_writes_use_the_namespace(fake):
    """asnumpy, asscalar, attach_grad, out=, +=, x[key] = v (basic, advanced, overlapping),
    copyto, pickling: each on the fake device through its namespace."""
    import pickle
    with fake.run():
        x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
        y = mx.nd.zeros((2, 3))
        mx.nd.sin(x, out=y)
        y += 1
        y[:, 0] = 0
        y[[1, 0], [2, 2]] = mx.nd.array([7, 8])
        y[0, 1:] = y[0, :2]                     # overlapping: copied first
        x.copyto(y)
        z = mx.nd.array(y)
        z[:] = z[::-1] * 2
        x.attach_grad()
        with mx.autograd.record():
            loss = mx.nd.sum(x * x)
        loss.backward()
        n = pickle.loads(pickle.dumps(x))
        s = float(loss.asscalar())
        host = x.asnumpy()
    assert fake.calls["may_share_memory"] and fake.calls["zeros"] and fake.calls["to_host"]
    assert fake.calls["cast_into"] and fake.calls["asnumpy"] and fake.calls["data_ptr"]
    assert n.context == fake.ctx and x.grad.context == fake.ctx
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    np.testing.assert_array_equal(z.asnumpy(), 2 * host[::-1])
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * host)
    assert s == float((host * host).sum())


def test_shape_ops_use_the_namespace_views_and_copy(fake):
    with fake.run():
        x = mx.nd.array([[1, 2], [3, 4]])
        mx.nd.tile(x, reps=(2, 1))
        assert fake.calls["broadcast_to"] and fake.calls["strided_copy"]
        mx.nd.diag(x)
        assert fake.calls["as_strided"]
        mx.nd._internal._getitem_scatter(mx.nd.ones((2,)), key=(np.array([0, 0]),), shape=(3,))
        assert fake.calls["add_at"]
        mx.nd.dot(x, x)
        assert fake.calls["matmul"]


def test_random_ops_draw_from_the_stream_of_their_device(fake):
    """Each device has its own stream; the same seed gives the same numbers on both."""
    mx.random.seed(11)
    cpu_before = mx.random.get_state(("cpu", 0))
    with fake.run():
        a = mx.nd.random.uniform(shape=(6,))
        b = mx.nd.random.normal(shape=(6,))
    assert mx.random.get_state(("fake", 0)) == (11, 2)
    assert mx.random.get_state(("cpu", 0)) == cpu_before == (11, 0)
    np.testing.assert_array_equal(a.asnumpy(), mx.nd.random.uniform(shape=(6,)).asnumpy())
    np.testing.assert_array_equal(b.asnumpy(), mx.nd.random.normal(shape=(6,)).asnumpy())
    mx.random.seed(5, ctx=fake.ctx)
    assert mx.random.get_state(("fake", 0)) == (5, 0)
    assert mx.random.get_state(("cpu", 0)) == (11, 2)


def test_one_run_context_per_device(fake):
    a, b = device.run_context(mx.cpu()), device.run_context(mx.Context("cpu", 0))
    assert a is b and a.xp is cpu_ns and a.stream is None and a.cpu and a.kernels == "cpu"
    assert a.rng.key == ("cpu", 0) and device.run_context(mx.Context("cpu_pinned")).rng.key \
        == ("cpu", 0)
    f = device.run_context(fake.ctx)
    assert f.xp is fake.xp and f.kernels == "cpu" and not f.cpu and f.rng.key == ("fake", 0)
    assert device.run_context(mx.cpu(1)) is not a and device.run_context(mx.cpu(1)).ctx == \
        mx.cpu(1)


_SEEN = []


def _record_run_context(rctx, ins, outs, attrs):
    _SEEN.append((rctx.ctx, rctx.is_train, rctx.stream, rctx.rng.key, rctx.xp.name))
    rctx.xp.copyto(outs[0], ins[0])


# not registered: the registry-wide tests must not see it
_RUN_CONTEXT_OP = OpDef("_test_run_context", inputs=("data",), infer_shape=lambda s, a: [s[0]],
                        infer_type=lambda d, a: [d[0]], compute={"cpu": _record_run_context},
                        gradient=NON_DIFFERENTIABLE, doc="Records the RunContext it gets.")


def test_compute_functions_get_the_run_context(fake):
    op = _RUN_CONTEXT_OP
    x = mx.nd.ones((2,))
    _SEEN.clear()
    mx.nd.ndarray.invoke(op, [x], {})
    with mx.autograd.train_mode():
        mx.nd.ndarray.invoke(op, [x], {})
    with mx.autograd.record():              # train mode by default
        mx.nd.ndarray.invoke(op, [x], {})
    with mx.autograd.record(train_mode=False):
        mx.nd.ndarray.invoke(op, [x], {})
    with fake.run():
        mx.nd.ndarray.invoke(op, [mx.nd.ones((2,))], {})
    cpu = (mx.cpu(), None, ("cpu", 0), "cpu")
    assert [(s[0], s[2], s[3], s[4]) for s in _SEEN[:4]] == [cpu] * 4
    assert [s[1] for s in _SEEN] == [False, True, True, False, False]
    assert _SEEN[4][0] == fake.ctx and _SEEN[4][3:] == (("fake", 0), "fake")


def test_a_device_without_a_namespace_is_refused(monkeypatch):
    monkeypatch.setitem(mxlite.context._COMPUTE_DEVICE, "nowhere", "nowhere")
    ctx = mx.Context("nowhere", 0)
    with pytest.raises(mx.MXNetError, match="no array backend"):
        mx.nd.zeros((2,), ctx=ctx)
    with pytest.raises(mx.MXNetError, match="no array backend"):
        mx.nd.array([1], ctx=ctx)


def test_blas_thread_policy_small_and_contended_products_run_on_one_thread():
    """mxlite.device.blas: a product of up to SERIAL_BELOW multiply-adds runs with OpenBLAS
    set to one thread and the setting restored; a large one keeps every thread unless a
    threaded product just ran slower than one thread does (contention), and then products
    run on one thread for HOLD_S seconds."""
    large = 2 * blas_module().SERIAL_BELOW
    import time
    from mxlite.device import blas
    blas.product(lambda: None, 0)            # finds the library (or marks it absent)
    state = blas._State
    if not state.setter or state.most == 1:
        pytest.skip("NumPy's BLAS is not a multi-threaded OpenBLAS whose threads can be set")
    seen, real = [], state.setter
    saved = (state.serial_rate, state.contended_until, state.adaptive)
    try:
        state.adaptive = True
        state.setter = lambda n: (seen.append(n), real(n))
        state.contended_until = 0.0
        # float64: float32 products run on oneDNN, not BLAS
        a = mx.nd.ones((128, 128), dtype="float64")
        mx.nd.dot(a, a).wait_to_read()                       # 2^21: serial
        assert seen == [1, state.most]
        seen.clear()
        # a convolution-sized product (2^26) too: OpenBLAS's threads would spin after it
        b = mx.nd.ones((1024, 256), dtype="float64")
        mx.nd.dot(b, mx.nd.ones((256, 256), dtype="float64")).wait_to_read()
        assert seen == [1, state.most]
        seen.clear()
        blas.product(lambda: None, large)        # large, uncontended: untouched
        assert seen == []
        state.serial_rate = 1e12                             # a stalled threaded product
        blas.product(lambda: time.sleep(0.01), large)
        assert state.contended_until > time.perf_counter()
        blas.product(lambda: None, large)        # now large ones run serially
        assert seen == [1, state.most]
        big = mx.nd.ones((256, 256), dtype="float64")
        assert np.array_equal(mx.nd.dot(big, big).asnumpy(), np.full((256, 256), 256.0))
        state.adaptive, state.contended_until = False, 0.0   # MXLITE_BLAS_THREADS=fixed
        seen.clear()
        blas.product(lambda: time.sleep(0.01), large)
        blas.product(lambda: None, large)
        assert seen == [] and state.contended_until == 0.0
    finally:
        state.setter = real
        state.serial_rate, state.contended_until, state.adaptive = saved


def test_blas_first_large_product_measures_the_one_thread_rate(monkeypatch):
    """Until a product has run on one thread there is no rate to call a threaded one slow
    against: the first large product runs on one thread and measures it (fake setter and
    clock: the policy alone)."""
    blas = blas_module()
    calls, clock = [], [0.0]
    monkeypatch.setattr(blas._State, "setter", calls.append)
    monkeypatch.setattr(blas._State, "most", 2)
    monkeypatch.setattr(blas._State, "adaptive", True)
    monkeypatch.setattr(blas._State, "serial_rate", 0.0)
    monkeypatch.setattr(blas._State, "contended_until", -1.0)
    monkeypatch.setattr(blas.time, "perf_counter", lambda: clock[0])

    def product(seconds):
        del calls[:]
        blas.product(lambda: clock.__setitem__(0, clock[0] + seconds), 4 * blas.SERIAL_BELOW)
        return list(calls)
    assert product(1e-3) == [1, 2]                     # one thread, then restored
    assert blas._State.serial_rate == 4 * blas.SERIAL_BELOW / 1e-3
    assert product(0.5e-3) == []                       # then the BLAS's own threads
    assert product(5e-3) == []                         # 5x slower than one thread...
    assert product(1e-3) == [1, 2]                     # ...holds the next on one thread


def blas_module():
    from mxlite.device import blas
    return blas


def test_malloc_keeps_freed_buffers_unless_the_user_chose():
    """mxlite.device.memory: on glibc the thresholds are set at import, except when the
    user chose (MXLITE_MALLOC=system or glibc's own variables): checked in subprocesses."""
    import platform
    import subprocess
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    probe = "import mxlite.device.memory as m, mxlite; print(m.configured)"

    def run(**env):
        full = {k: v for k, v in os.environ.items()
                if k not in ("MXLITE_MALLOC", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")}
        full.update(env)
        return subprocess.run([sys.executable, "-c", probe], env=full, capture_output=True,
                              text=True, check=True).stdout.strip()
    assert run() == "True"
    assert run(MXLITE_MALLOC="system") == "False"
    assert run(MALLOC_TRIM_THRESHOLD_="1000000") == "False"
