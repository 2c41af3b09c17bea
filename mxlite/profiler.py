"""``mx.profiler``: operator timing, user scopes, a Chrome trace and an aggregate table.

As MXNet 1.9.1's profiler::

    mx.profiler.set_config(filename="profile.json", aggregate_stats=True)
    mx.profiler.set_state("run")
    y = mx.nd.dot(a, b)                   # every operator call is timed
    mx.profiler.set_state("stop")
    mx.profiler.dump()                    # profile.json: open in chrome://tracing or Perfetto
    print(mx.profiler.dumps())            # per operator: count, total, min, max, avg (ms)

How operators are timed. The compiled dispatch path (``mxlite/_core/dispatch.pyx``) reads
an operator's kernels from its registry record on every call (``op.compute``, and
``op.cpu_kernel`` for the compiled fast path). ``set_state('run')`` swaps every record's
kernels for timed wrappers of the same functions, and ``set_state('stop')`` puts the
originals back, so a profiler that is not running costs nothing at all: no flag is tested
on the dispatch path. While it runs, the compiled CPU fast path is set aside and operators
run their Python compute functions (the same results, bit for bit: ``tests/test_registry.py``
checks each fast kernel against them), so tiny operators time a little slower than they run
unprofiled. An operator registered while the profiler runs is timed from the next
``set_state('run')`` on. An operator called by another one's kernel appears nested inside it, and every
call of a custom operator (``mx.nd.Custom``) is in the ``Custom Operator`` domain as
``<op_type>::pure_python``, the operators its Python code calls as ``<op_type>::<op>``.
A GPU operator's time includes waiting for its stream, so the trace shows the kernel's
time rather than its launch.

Kept in memory while running: the events of the trace (at most ``MAX_EVENTS``; later ones
are counted and dropped, and the trace says how many) and, with ``aggregate_stats=True``,
one row of statistics per name. A counter's samples closer together than
``COUNTER_RESOLUTION_US`` replace one another, so a counter in a tight loop stays small.

Differences from MXNet: ``profile_api`` (MXNet's C API calls) and ``profile_memory``
(MXNet's storage pool) are accepted and record nothing, since mxlite has neither; the
aggregate's ``Memory`` section is empty. ``profile_process='server'`` raises: mxlite's
distributed kvstore has no server processes. ``start()`` and ``stop()`` are shorthands for
``set_state``.
"""
import atexit
import json
import os
import threading
import time
import warnings

from .base import MXNetError

__all__ = ["set_config", "set_state", "start", "stop", "pause", "resume", "dump", "dumps",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker", "state",
           "profiler_set_config", "profiler_set_state", "dump_profile", "set_kvstore_handle"]

MAX_EVENTS = 1_000_000
COUNTER_RESOLUTION_US = 10.0

OPERATOR_DOMAIN = "operator"
CUSTOM_DOMAIN = "Custom Operator"

# MXNet's ProfileConfigParam defaults
_DEFAULTS = {"filename": "profile.json", "profile_all": False, "profile_symbolic": True,
             "profile_imperative": True, "profile_memory": True, "profile_api": True,
             "continuous_dump": False, "dump_period": 1.0, "aggregate_stats": False,
             "profile_process": "worker"}
_SORT_KEYS = {"total": "Total", "avg": "Avg", "min": "Min", "max": "Max", "count": "Count"}
_MARKER_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class _Profiler:
    """The process's profiler state. Events are tuples, turned into trace dicts at dump:
    ``('X', domain, name, begin_ns, duration_ns, tid)``, ``('i', domain, name, ns, scope,
    tid)`` and counter samples ``['C', domain, name, ns, value, tid]`` (a list: a sample
    close to the previous one is overwritten)."""

    def __init__(self):
        self.config = dict(_DEFAULTS)
        self.running = False
        self.paused = False
        self.lock = threading.Lock()
        self.events = []
        self.dropped = 0
        self.stats = {}              # domain -> name -> [count, total_ns, min_ns, max_ns]
        self.last_sample = {}        # (domain, counter name) -> its last sample
        self.last_dump = time.perf_counter()
        self.origin = time.perf_counter_ns()

    @property
    def recording(self):
        return self.running and not self.paused

    def add(self, event):
        """Keep one trace event (or count it as dropped past MAX_EVENTS)."""
        with self.lock:
            if len(self.events) < MAX_EVENTS:
                self.events.append(event)
            else:
                self.dropped += 1

    def span(self, domain, name, begin, end):
        """A completed interval: a trace event and, when asked for, an aggregate row."""
        self.add(("X", domain, name, begin, end - begin, threading.get_native_id()))
        if self.config["aggregate_stats"]:
            self.aggregate(domain, name, end - begin)
        if self.config["continuous_dump"]:
            self.maybe_dump()

    def aggregate(self, domain, name, duration):
        with self.lock:
            row = self.stats.setdefault(domain, {}).get(name)
            if row is None:
                self.stats[domain][name] = [1, duration, duration, duration]
            else:
                row[0] += 1
                row[1] += duration
                row[2] = min(row[2], duration)
                row[3] = max(row[3], duration)

    def sample(self, domain, name, value):
        """A counter's new value, merged with its previous sample when they are close."""
        now = time.perf_counter_ns()
        key = (domain, name)
        with self.lock:
            last = self.last_sample.get(key)
            if last is not None and (now - last[3]) < COUNTER_RESOLUTION_US * 1000:
                last[4] = value
                return
        event = ["C", domain, name, now, value, threading.get_native_id()]
        self.last_sample[key] = event
        self.add(event)

    def maybe_dump(self):
        """``continuous_dump``: write the trace once ``dump_period`` seconds have passed."""
        if time.perf_counter() - self.last_dump >= self.config["dump_period"]:
            try:
                write_trace(self, finished=False)
            except MXNetError as e:     # the operator that got here succeeded: say, go on
                self.last_dump = time.perf_counter()
                warnings.warn(str(e), RuntimeWarning, stacklevel=2)

    def reset_trace(self):
        with self.lock:
            self.events = []
            self.dropped = 0
            self.last_sample = {}


_STATE = _Profiler()


@atexit.register
def _dump_at_exit():
    """``continuous_dump``: a program that ends while profiling keeps its last events (as
    MXNet's profiler does when the process ends)."""
    if _STATE.running and _STATE.config["continuous_dump"]:
        try:
            write_trace(_STATE, finished=True)
        except MXNetError as e:
            warnings.warn(str(e), RuntimeWarning)


# ---------------------------------------------------------------- the operator hook

class _OperatorHook:
    """Swaps every registered operator's kernels for timed wrappers and back. The swap is
    the whole cost of profiling operators: nothing on the dispatch path tests a flag."""

    def __init__(self):
        self.saved = None        # [(op, compute dict, cpu_kernel, ...)] while installed
        self.local = threading.local()     # the custom operator being run, per thread

    def install(self):
        from .ops.registry import REGISTRY
        if self.saved is not None:
            return
        ops = {id(op): op for op in REGISTRY.values()}.values()
        self.saved = []
        for op in ops:
            name = _trace_name(op)
            timed = {key: self.timed(op, name, kernel) for key, kernel in op.compute.items()}
            self.saved.append((op, op.compute, op.cpu_kernel, op.cpu_result, op.gradient,
                               timed))
            if op.name == "Custom":  # its imperative backward runs Python, not a kernel
                op.gradient = self.timed_custom_backward(op.gradient)
            op.compute = timed
            op.cpu_kernel = None     # a compiled kernel cannot be wrapped: run compute[]
            op.cpu_result = None     # (zeros: allocate and fill, as a timed kernel call)

    def uninstall(self):
        """Put the kernels back, keeping what was registered meanwhile: a kernel attached
        to the timed dict (a GPU backend's) moves to the original one, and a record whose
        kernels were replaced altogether keeps the replacement."""
        if self.saved is None:
            return
        for op, compute, cpu_kernel, cpu_result, gradient, timed in self.saved:
            if op.compute is timed:
                compute.update({key: kernel for key, kernel in timed.items()
                                if not getattr(kernel, "_profiler_wrapper", False)})
                op.compute = compute
            op.cpu_kernel, op.cpu_result, op.gradient = cpu_kernel, cpu_result, gradient
        self.saved = None

    def timed(self, op, op_name, kernel):
        """``kernel`` with its calls recorded while the profiler records."""
        hook = self

        def run(rctx, ins, outs, attrs):
            if not _STATE.recording:
                return kernel(rctx, ins, outs, attrs)
            domain, name, custom = hook.name_of(op, op_name, attrs)
            stack = hook.custom_stack()
            if custom is not None:
                stack.append(custom)
            begin = time.perf_counter_ns()
            try:
                kernel(rctx, ins, outs, attrs)
                _wait(rctx)
            finally:
                end = time.perf_counter_ns()
                if custom is not None:
                    stack.pop()
            _STATE.span(domain, name, begin, end)

        run.__wrapped__ = kernel
        run._profiler_wrapper = True
        run.__name__ = getattr(kernel, "__name__", "kernel")
        return run

    def timed_custom_backward(self, gradient):
        """Custom's gradient: imperatively (``F`` is ``mx.nd``) it runs the user's Python
        backward right away, recorded as ``_backward_<op_type>::pure_python``; in a graph it
        makes a ``_backward_Custom`` node, whose kernel is timed like any other."""
        hook = self

        def run(F, node, ograds):
            from . import ndarray
            if not _STATE.recording or F is not ndarray:
                return gradient(F, node, ograds)
            op_type = node.attrs["op_type"]
            stack = hook.custom_stack()
            stack.append(op_type)
            begin = time.perf_counter_ns()
            try:
                return gradient(F, node, ograds)
            finally:
                end = time.perf_counter_ns()
                stack.pop()
                _STATE.span(CUSTOM_DOMAIN, f"_backward_{op_type}::pure_python", begin, end)

        run.__wrapped__ = gradient
        return run

    def custom_stack(self):
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        return stack

    def name_of(self, op, op_name, attrs):
        """(domain, event name, op_type if ``op`` runs a custom operator's Python code)."""
        if op.name in ("Custom", "_backward_Custom"):
            op_type = attrs["op_type"]
            prefix = "" if op.name == "Custom" else "_backward_"
            return CUSTOM_DOMAIN, f"{prefix}{op_type}::pure_python", op_type
        stack = self.custom_stack()
        if stack:
            return CUSTOM_DOMAIN, f"{stack[-1]}::{op_name}", None
        return OPERATOR_DOMAIN, op_name, None


def _trace_name(op):
    """The operator's name as MXNet's profiler shows it: MXNet's kernel of ``mx.nd.zeros``
    (``ones``, ``full``, ``arange``, ...) is ``_zeros``, which mxlite registers as an alias
    of ``zeros``."""
    internal = "_" + op.name
    return internal if internal in op.aliases else op.name


def _wait(rctx):
    """A GPU kernel is asynchronous: its time is until its stream is done."""
    stream = getattr(rctx, "stream", None)
    if stream is not None and hasattr(stream, "synchronize"):
        stream.synchronize()


_HOOK = _OperatorHook()


def _profiles_operators(config):
    return config["profile_all"] or config["profile_imperative"] or config["profile_symbolic"]


# ---------------------------------------------------------------- configuration and state

def _as_bool(key, value):
    """MXNet passes every value as ``str(value)``: True/False, 1/0 (any case)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise MXNetError(f"profiler.set_config: {key} must be a boolean, got {value!r}")


def _checked_config(kwargs):
    """The validated new values of ``set_config``'s keywords."""
    new = {}
    for key, value in kwargs.items():
        if key not in _DEFAULTS:
            raise MXNetError(f"profiler.set_config: unknown option {key!r}; the options are "
                             f"{', '.join(sorted(_DEFAULTS))}")
        if key == "filename":
            if not isinstance(value, (str, os.PathLike)) or not str(value):
                raise MXNetError(f"profiler.set_config: filename must be a non-empty path, "
                                 f"got {value!r}")
            new[key] = os.fspath(value)
        elif key == "dump_period":
            try:
                period = float(value)
            except (TypeError, ValueError):
                period = float("nan")
            if not period > 0:
                raise MXNetError(f"profiler.set_config: dump_period must be a positive number "
                                 f"of seconds, got {value!r}")
            new[key] = period
        elif key == "profile_process":
            new[key] = _checked_process("set_config", value)
        else:
            new[key] = _as_bool(key, value)
    return new


def _checked_process(where, profile_process):
    if profile_process == "worker":
        return profile_process
    if profile_process == "server":
        raise MXNetError(f"profiler.{where}: profile_process='server' is not supported: "
                         "mxlite's distributed kvstore has no server processes")
    raise MXNetError(f"profiler.{where}: profile_process must be 'worker' or 'server', "
                     f"got {profile_process!r}")


def set_config(**kwargs):
    """Configure the profiler (keywords only): ``filename`` (the trace ``dump`` writes,
    default ``profile.json``), ``profile_all``, ``profile_symbolic``, ``profile_imperative``
    (operators are timed if any of these is true), ``profile_memory``, ``profile_api``
    (accepted; mxlite records nothing for them), ``continuous_dump`` and ``dump_period``
    (write the trace every ``dump_period`` seconds while running), ``aggregate_stats`` (keep
    the statistics ``dumps`` prints) and ``profile_process`` (``'worker'``)."""
    new = _checked_config(kwargs)
    _STATE.config.update(new)
    if _STATE.running:
        _apply_hook()


def _apply_hook():
    if _STATE.running and _profiles_operators(_STATE.config):
        _HOOK.install()
    else:
        _HOOK.uninstall()


def set_state(state="stop", profile_process="worker"):
    """Start (``'run'``) or stop (``'stop'``) profiling."""
    _checked_process("set_state", profile_process)
    if state not in ("run", "stop"):
        raise MXNetError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _STATE.running = state == "run"
    _STATE.paused = False
    if _STATE.running:
        _STATE.last_dump = time.perf_counter()
    _apply_hook()


def state():
    """``'run'`` or ``'stop'`` (mxlite: the state ``set_state`` set last)."""
    return "run" if _STATE.running else "stop"


def start(profile_process="worker"):
    """``set_state('run')``."""
    set_state("run", profile_process)


def stop(profile_process="worker"):
    """``set_state('stop')``."""
    set_state("stop", profile_process)


def pause(profile_process="worker"):
    """Record nothing until ``resume`` (the profiler keeps its state and events)."""
    _checked_process("pause", profile_process)
    _STATE.paused = True


def resume(profile_process="worker"):
    """Record again after ``pause``."""
    _checked_process("resume", profile_process)
    _STATE.paused = False


def set_kvstore_handle(handle):
    """Accepted for MXNet's API; mxlite profiles the worker process only."""


# ---------------------------------------------------------------- output

def _trace_event(event, pid):
    """One Chrome trace event (times in microseconds from the profiler's origin)."""
    kind, domain, name, ns, extra, tid = event
    ts = (ns - _STATE.origin) / 1000.0
    out = {"name": name, "cat": domain, "ph": kind, "ts": ts, "pid": pid, "tid": tid}
    if kind == "X":
        out["dur"] = extra / 1000.0
    elif kind == "i":
        out["s"] = extra
    else:
        out["args"] = {name: extra}
    return out


def trace(profiler=None):
    """The profile as a Chrome trace (the dict ``dump`` writes as JSON)."""
    profiler = profiler or _STATE
    pid = os.getpid()
    names = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "mxlite"}}]
    with profiler.lock:
        events = names + [_trace_event(e, pid) for e in profiler.events]
        dropped = profiler.dropped
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"producer": "mxlite.profiler", "dropped_events": dropped}}


def write_trace(profiler, finished):
    """Write the trace so far to the configured file (whole, so it is always valid JSON)."""
    filename = profiler.config["filename"]
    data = trace(profiler)
    tmp = filename + ".tmp"
    try:
        with open(tmp, "w") as f:
            json.dump(data, f)
        os.replace(tmp, filename)
    except OSError as e:
        raise MXNetError(f"profiler.dump: cannot write {filename!r}: {e}") from e
    profiler.last_dump = time.perf_counter()
    if finished:
        profiler.reset_trace()


def dump(finished=True, profile_process="worker"):
    """Write the Chrome trace of everything recorded to ``filename`` (see ``set_config``).
    ``finished=True`` ends that trace: its events are dropped and the next dump starts a new
    file; ``finished=False`` keeps them, so later dumps rewrite the file with more."""
    _checked_process("dump", profile_process)
    write_trace(_STATE, bool(finished))


def _stat_rows(stats, sort_by, ascending):
    """{domain: [(name, {Count, Total, Min, Max, Avg} in ms)]}, sorted within each domain."""
    key = _SORT_KEYS[sort_by]
    out = {}
    for domain in sorted(stats):
        rows = []
        for name, (count, total, low, high) in stats[domain].items():
            rows.append((name, {"Count": count, "Total": total / 1e6, "Min": low / 1e6,
                                "Max": high / 1e6, "Avg": total / count / 1e6}))
        rows.sort(key=lambda r: r[1][key], reverse=not ascending)
        out[domain] = rows
    return out


def _table(rows):
    """The aggregate statistics as a text table, one section per domain."""
    lines = ["Profile Statistics:", "\tTimes are in milliseconds."]
    header = ("Name", "Total Count", "Time (ms)", "Min Time (ms)", "Max Time (ms)",
              "Avg Time (ms)")
    for domain, entries in rows.items():
        width = max([len(header[0])] + [len(name) for name, _ in entries]) + 2
        lines += ["", domain, "=" * max(len(domain), 17),
                  header[0].ljust(width) + "".join(h.rjust(16) for h in header[1:]),
                  "----".ljust(width) + "".join(("-" * len(h)).rjust(16) for h in header[1:])]
        for name, s in entries:
            lines.append(name.ljust(width) + str(s["Count"]).rjust(16)
                         + "".join(f"{s[k]:16.4f}" for k in ("Total", "Min", "Max", "Avg")))
    return "\n".join(lines) + "\n"


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """The aggregate statistics (``aggregate_stats=True``): per name, within each domain
    (``operator``, ``Custom Operator``, the domains of Tasks and Frames, ``event``), the
    count and the total, min, max and average time in milliseconds; ``format='table'``
    (text) or ``'json'`` (``{"Time": {domain: {name: {"Count", "Total", "Min", "Max",
    "Avg"}}}, "Memory": {}, "Unit": {...}}``), sorted by ``sort_by`` (``total``, ``avg``,
    ``min``, ``max``, ``count``), descending unless ``ascending``. ``reset=True`` clears
    the statistics after reading them."""
    if format not in ("table", "json"):
        raise MXNetError(f"profiler.dumps: format must be 'table' or 'json', got {format!r}")
    if sort_by not in _SORT_KEYS:
        raise MXNetError(f"profiler.dumps: sort_by must be one of {', '.join(_SORT_KEYS)}, "
                         f"got {sort_by!r}")
    for arg, value in (("reset", reset), ("ascending", ascending)):
        if not isinstance(value, bool):
            raise MXNetError(f"profiler.dumps: {arg} must be True or False, got {value!r}")
    with _STATE.lock:
        rows = _stat_rows(_STATE.stats, sort_by, ascending)
        if reset:
            _STATE.stats = {}
    if format == "table":
        return _table(rows)
    time_section = {d: {name: s for name, s in entries} for d, entries in rows.items()}
    return json.dumps({"Time": time_section, "Memory": {},
                       "Unit": {"Time": "ms", "Memory": "kB"}}, indent=4)


# ---------------------------------------------------------------- user scopes

def _checked_name(cls, name):
    if not isinstance(name, str):
        raise MXNetError(f"profiler.{cls}: name must be a string, got {name!r}")
    return name


def _checked_domain(cls, domain):
    if not isinstance(domain, Domain):
        raise MXNetError(f"profiler.{cls}: domain must be a profiler.Domain, got {domain!r}")
    return domain


class Domain:
    """A named group (a category of the trace, a section of ``dumps``) for tasks, frames,
    counters and markers."""

    def __init__(self, name):
        self.name = _checked_name("Domain", name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A ``Task`` in this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A ``Frame`` in this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A ``Counter`` in this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A ``Marker`` in this domain."""
        return Marker(self, name)


class _Span:
    """An interval between ``start()`` and ``stop()``, recorded at ``stop`` if the profiler
    records then. Also a context manager (``with profiler.Event('load'):``)."""

    def __init__(self, domain_name, name):
        self._domain = domain_name
        self.name = _checked_name(type(self).__name__, name)
        self._begin = None

    def start(self):
        """Begin the interval."""
        self._begin = time.perf_counter_ns()

    def stop(self):
        """End the interval and record it."""
        if self._begin is None:
            raise MXNetError(f"profiler.{type(self).__name__} {self.name!r}: stop() before "
                             "start()")
        end, begin, self._begin = time.perf_counter_ns(), self._begin, None
        if _STATE.recording:
            _STATE.span(self._domain, self.name, begin, end)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def __str__(self):
        return self.name


class Task(_Span):
    """A named piece of work in a ``Domain``, timed from ``start()`` to ``stop()``."""

    def __init__(self, domain, name):
        super().__init__(_checked_domain("Task", domain).name, name)
        self.domain = domain


class Frame(_Span):
    """A named frame (one iteration, say) in a ``Domain``, from ``start()`` to ``stop()``."""

    def __init__(self, domain, name):
        super().__init__(_checked_domain("Frame", domain).name, name)
        self.domain = domain


class Event(_Span):
    """A named interval outside any domain (the ``event`` section of ``dumps``)."""

    def __init__(self, name):
        super().__init__("event", name)


class Counter:
    """A named integer in a ``Domain`` whose values the trace plots over time."""

    def __init__(self, domain, name, value=None):
        self.domain = _checked_domain("Counter", domain)
        self.name = _checked_name("Counter", name)
        self.value = 0
        if value is not None:
            self.set_value(value)

    def _record(self):
        if _STATE.recording:
            _STATE.sample(self.domain.name, self.name, self.value)

    def set_value(self, value):
        """Set the counter to the integer ``value``."""
        self.value = self._int("set_value", value)
        self._record()

    def increment(self, delta=1):
        """Add the integer ``delta``."""
        self.value += self._int("increment", delta)
        self._record()

    def decrement(self, delta=1):
        """Subtract the integer ``delta``."""
        self.value -= self._int("decrement", delta)
        self._record()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def _int(self, where, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MXNetError(f"profiler.Counter {self.name!r}.{where}: the value must be an "
                             f"integer, got {value!r}")
        return value

    def __str__(self):
        return self.name


class Marker:
    """A named instant in a ``Domain``: ``mark(scope)`` puts it on the trace."""

    def __init__(self, domain, name):
        self.domain = _checked_domain("Marker", domain)
        self.name = _checked_name("Marker", name)

    def mark(self, scope="process"):
        """Record the instant, drawn across the ``'global'``, ``'process'`` or ``'thread'``
        (also ``'task'``, ``'marker'``) scope."""
        if scope not in _MARKER_SCOPES:
            raise MXNetError(f"profiler.Marker {self.name!r}.mark: scope must be one of "
                             f"{', '.join(_MARKER_SCOPES)}, got {scope!r}")
        if _STATE.recording:
            _STATE.add(("i", self.domain.name, self.name, time.perf_counter_ns(),
                        _MARKER_SCOPES[scope], threading.get_native_id()))


# ---------------------------------------------------------------- MXNet's deprecated names

def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated: ``set_config(profile_<mode>=True, filename=filename)``."""
    warnings.warn("profiler.profiler_set_config() is deprecated; use profiler.set_config()",
                  DeprecationWarning, stacklevel=2)
    if mode not in ("symbolic", "all"):
        raise MXNetError(f"profiler.profiler_set_config: mode must be 'symbolic' or 'all', "
                         f"got {mode!r}")
    set_config(**{"profile_" + mode: True, "filename": filename})


def profiler_set_state(state="stop"):
    """Deprecated: ``set_state(state)``."""
    warnings.warn("profiler.profiler_set_state() is deprecated; use profiler.set_state()",
                  DeprecationWarning, stacklevel=2)
    set_state(state)


def dump_profile():
    """Deprecated: ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated; use profiler.dump()",
                  DeprecationWarning, stacklevel=2)
    dump(True)
