"""One system's side of a model benchmark, run in that system's own interpreter.

    python worker.py --export JSON                      # mxlite: write weights and batch
    python worker.py SYSTEM CASE DIMS_JSON NPZ WARMUP   # serve timing requests

A serving worker builds the case from the file's weights, runs ``WARMUP`` untimed steps and
answers one JSON line per request on its standard input: ``run K`` times K steps,
``profile K PATH`` writes a cProfile of K steps, ``quit`` reports memory and exits. Its
own standard output is kept for the answers (anything a library prints goes to stderr).

Memory: the peak resident set (VmHWM) minus the resident set right after the framework was
imported, so the interpreter and the libraries' code are left out and the model, the
batch, optimizer state, caches and the largest step's working set are in. The high-water
mark is reset after the imports (``/proc/self/clear_refs``) where Linux allows it.
"""
import cProfile
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SYSTEMS = ("torch", "mxnet", "mxlite-hybrid", "mxlite-imperative")


def _status_kb(field):
    """A ``kB`` field of /proc/self/status (None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak():
    """Reset VmHWM to the current resident set; False where the kernel refuses."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _framework(system):
    """Import the system's framework; returns the module (torch_nets for torch)."""
    if system == "torch":
        import torch
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count())
        from models import torch_nets
        return torch_nets
    if system == "mxnet":
        import mxnet
        return mxnet
    import mxlite
    return mxlite


def build_step(system, module, case, dims, path):
    """The step function of ``case`` for ``system`` from the weights in ``path``."""
    from models import data, gluon_nets
    names, weights, inputs = data.load(path)
    if system == "torch":
        return module.make_step(case, dims, names, weights, inputs)
    return gluon_nets.make_step(module, case, dims, weights, inputs,
                                hybrid=system != "mxlite-imperative")


def _summary(value):
    """A JSON-able summary of a step's result: the loss, or an output's sum and norm."""
    if isinstance(value, float):
        return value
    import numpy as np
    return [float(np.sum(value)), float(np.linalg.norm(value))]


def serve(system, case, dims, path, warmup, out):
    """Build, warm up and answer requests on stdin until ``quit``."""
    module = _framework(system)
    base_kb = _status_kb("VmRSS")
    reset = _reset_peak()
    step = build_step(system, module, case, dims, path)
    first = [_summary(step()) for _ in range(max(1, warmup))]
    _send(out, ready=True, first=first[0], second=first[1] if len(first) > 1 else None)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "run":
            times = []
            for _ in range(int(words[1])):
                start = time.perf_counter()
                step()
                times.append(time.perf_counter() - start)
            _send(out, times=times)
        elif words[0] == "profile":
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(int(words[1])):
                step()
            profiler.disable()
            profiler.dump_stats(words[2])
            _send(out, profiled=words[2])
    peak_kb = _status_kb("VmHWM")
    _send(out, base_kb=base_kb, peak_kb=peak_kb, peak_reset=reset)


def export(jobs):
    """Write each case's initial weights (shapes from mxlite's Gluon net) and batch;
    ``jobs`` is [[case, dims, path]]."""
    import mxlite
    from models import data, gluon_nets
    for case, dims, path in jobs:
        inputs = data.batch(case, dims)
        shapes = gluon_nets.parameter_shapes(mxlite, case, dims, inputs)
        data.save(path, [n for n, _ in shapes], data.initial_weights(shapes), inputs)


def _send(out, **message):
    out.write(json.dumps(message) + "\n")
    out.flush()


def main(argv):
    # answers go to a private copy of stdout; fd 1 becomes stderr for library chatter
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        if argv[0] == "--export":
            export(json.loads(argv[1]))
            _send(out, exported=True)
        else:
            system, case, dims, path, warmup = argv
            if system not in SYSTEMS:
                raise ValueError(f"unknown system {system!r}; one of {SYSTEMS}")
            serve(system, case, json.loads(dims), path, int(warmup), out)
    except Exception as exc:  # the parent reports it in the table: n/a and why
        lines = str(exc).strip().splitlines()
        last = lines[-1] if lines else ""
        name = type(exc).__name__
        _send(out, error=last if last.startswith(name) else f"{name}: {last}")
        raise


if __name__ == "__main__":
    main(sys.argv[1:])
