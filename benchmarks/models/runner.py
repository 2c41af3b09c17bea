"""The parent of a model benchmark: one worker process per system (each in its own
interpreter), timed in turn round after round so load from other processes falls on all of
them alike, then summarised.

The weights and batches of every case are written first (by one mxlite process); per case
every worker loads them, the workers are started together (building and warming up are not
timed), then each round asks every worker in turn for ``steps`` timed steps, in an order
drawn afresh each round (seeded) so no system always runs right after the same other one
(a rotation would keep the neighbours: what one system leaves behind -- spinning OpenMP
threads, a cold cache -- would always fall on the same next one); finally each reports its
peak memory. ``quick`` runs one step per round and fewer rounds.
"""
import json
import os
import selectors
import subprocess
import sys
import tempfile

import numpy as np

from . import CASES

__all__ = ["SYSTEMS", "find_interpreters", "run_case", "run_cases", "summarise", "profile_case"]

SYSTEMS = ("torch", "mxnet", "mxlite-hybrid", "mxlite-imperative")
_HERE = os.path.dirname(os.path.abspath(__file__))
_WORKER = os.path.join(_HERE, "worker.py")
_REPO = os.path.dirname(os.path.dirname(_HERE))
_DEFAULT_VENVS = {"torch": "/tmp/torchvenv/bin/python", "mxnet": "/tmp/mxvenv/bin/python"}
_IMPORTS = {"torch": "torch", "mxnet": "mxnet"}
REPLY_TIMEOUT_S = 900


def _imports(python, module):
    """True if ``python`` can import ``module``."""
    try:
        return subprocess.run([python, "-c", f"import {module}"], capture_output=True,
                              timeout=120).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_interpreters(torch_python=None, mxnet_python=None):
    """{system: interpreter path or None (not available)}: torch and MXNet from the given
    paths, else their venvs under /tmp, else this interpreter if it imports them; mxlite
    always from this interpreter."""
    found = {"mxlite-hybrid": sys.executable, "mxlite-imperative": sys.executable}
    for system, given in (("torch", torch_python), ("mxnet", mxnet_python)):
        candidates = [given] if given else [_DEFAULT_VENVS[system], sys.executable]
        found[system] = next((p for p in candidates
                              if p and os.path.exists(p) and _imports(p, _IMPORTS[system])), None)
    return found


def _environment(threads):
    """Every worker's environment: one thread count for every pool, mxlite importable."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_REPO, env.get("PYTHONPATH")]))
    env["MXNET_ENGINE_INFO"] = "0"
    return env


class Worker:
    """A worker process and its line protocol (see ``worker.py``)."""

    def __init__(self, python, args, env, log_path):
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen([python, _WORKER, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log, env=env,
                                     text=True, bufsize=1)

    def request(self, line=None, timeout=REPLY_TIMEOUT_S):
        """Send ``line`` (if any) and return the JSON answer; raises RuntimeError with the
        worker's error (or its log's tail) when it fails or stays silent."""
        if line is not None:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(timeout):
                self.close()
                raise RuntimeError(f"no answer in {timeout} s")
        reply = self.proc.stdout.readline()
        if not reply:
            self.close()
            raise RuntimeError(self._log_tail())
        answer = json.loads(reply)
        if "error" in answer:
            self.close()
            raise RuntimeError(answer["error"])
        return answer

    def _log_tail(self):
        """The last line the worker wrote to its log (after it exited)."""
        with open(self.log_path) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        return lines[-1] if lines else f"exited with {self.proc.poll()}"

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


def export(names, workdir, env):
    """Write the weights and batch of every case in ``names`` to ``workdir``/<case>.npz
    (one mxlite process); returns {case: path}."""
    paths = {n: os.path.join(workdir, f"{n}.npz") for n in names}
    jobs = [[n, CASES[n].dims, paths[n]] for n in names]
    worker = Worker(sys.executable, ["--export", json.dumps(jobs)], env,
                    os.path.join(workdir, "export.log"))
    try:
        worker.request()
    finally:
        worker.close()
    return paths


def _start(name, path, interpreters, env, workdir, warmup, log):
    """({system: ready Worker}, {system: result stub}) for case ``name``: every worker is
    started at once, then each one's readiness (or its error) is collected."""
    results, started = {}, {}
    dims = json.dumps(CASES[name].dims)
    for system in SYSTEMS:
        python = interpreters.get(system)
        if python is None:
            results[system] = {"error": "not installed"}
            continue
        started[system] = Worker(python, [system, name, dims, path, str(warmup)], env,
                                 os.path.join(workdir, f"{name}-{system}.log"))
    workers = {}
    for system, worker in started.items():
        try:
            ready = worker.request()
        except RuntimeError as exc:
            results[system] = {"error": str(exc)}
            log(f"  {system}: n/a ({exc})")
            continue
        workers[system] = worker
        results[system] = {"times": [], "first": ready["first"], "second": ready["second"]}
    return workers, results


def run_case(name, path, interpreters, threads=1, quick=False, log=print, workdir=None):
    """Time case ``name`` (weights and batch in ``path``, see :func:`export`) on every
    available system; returns {system: {"times": [[s per step] per round], "first",
    "second" (the warm-up steps' results), "base_kb", "peak_kb"} or {"error": why}}."""
    case = CASES[name]
    env = _environment(threads)
    rounds, steps = (case.quick_rounds, 1) if quick else (case.rounds, case.steps)
    workdir = workdir or os.path.dirname(path)
    workers, results = _start(name, path, interpreters, env, workdir,
                              1 if quick else case.warmup, log)
    try:
        rng = np.random.default_rng(0)
        for _ in range(rounds):
            for system in map(str, rng.permutation(list(workers))):
                if system not in workers:      # failed earlier in this round
                    continue
                answer = _ask(workers, results, system, f"run {steps}", log)
                if answer:
                    results[system]["times"].append(answer["times"])
        for system in list(workers):
            results[system].update(_ask(workers, results, system, "quit", log) or {})
    finally:
        for worker in workers.values():
            worker.close()
    return results


def _ask(workers, results, system, line, log):
    """The worker's answer to ``line``; None, the system's result marked with the error
    and the worker dropped, if it fails (the other systems go on)."""
    try:
        return workers[system].request(line)
    except RuntimeError as exc:
        log(f"  {system}: failed ({exc})")
        results[system] = {"error": str(exc)}
        workers.pop(system).close()
        return None


def summarise(results):
    """Medians, quartiles and ratios of one case's ``results`` (see :func:`run_case`):
    {"systems": {system: {"median", "q1", "q3" (s per step), "peak_mb", "first", "times"}},
    "ratios": {"hybrid/torch", "imperative/torch", "hybrid/mxnet": {"median", "q1", "q3"}},
    "disagreement": see :func:`disagreement`}.
    A ratio's quartiles are those of the per-round ratios of round medians (rounds are
    interleaved, so each round's ratio compares the systems under the same load)."""
    systems, round_medians = {}, {}
    for system, res in results.items():
        if "times" not in res or not res["times"]:
            systems[system] = {"error": res.get("error", "no times")}
            continue
        q1, median, q3 = np.percentile(np.concatenate(res["times"]), [25, 50, 75])
        peak = (res["peak_kb"] - res["base_kb"]) / 1024 if res.get("peak_kb") else None
        systems[system] = {"median": float(median), "q1": float(q1), "q3": float(q3),
                           "peak_mb": peak, "first": res.get("first"), "times": res["times"]}
        round_medians[system] = np.array([np.median(t) for t in res["times"]])
    return {"systems": systems, "ratios": _ratios(round_medians),
            "disagreement": disagreement(results)}


def disagreement(results):
    """The largest relative difference between any system's first-step result (the loss,
    or an output's sum and norm) and torch's (else mxlite-hybrid's): all start from the
    same weights and batch, so this is float32 rounding unless a model differs."""
    firsts = {s: np.atleast_1d(np.asarray(r["first"], dtype=np.float64))
              for s, r in results.items() if r.get("first") is not None}
    ref = firsts.get("torch", firsts.get("mxlite-hybrid"))
    if ref is None or len(firsts) < 2:
        return None
    scale = np.maximum(np.abs(ref), 1e-12)
    return float(max(np.max(np.abs(v - ref) / scale) for v in firsts.values()))


def _ratios(round_medians):
    ratios = {}
    for label, num, den in (("hybrid/torch", "mxlite-hybrid", "torch"),
                            ("imperative/torch", "mxlite-imperative", "torch"),
                            ("hybrid/mxnet", "mxlite-hybrid", "mxnet")):
        if num in round_medians and den in round_medians:
            per_round = round_medians[num] / round_medians[den]
            q1, median, q3 = np.percentile(per_round, [25, 50, 75])
            ratios[label] = {"median": float(median), "q1": float(q1), "q3": float(q3)}
    return ratios


def run_cases(names, interpreters, threads=1, quick=False, log=print):
    """{case: summarise(run_case(case))} for ``names``, logging progress."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="mxlite-models-") as workdir:
        paths = export(names, workdir, _environment(threads))
        for name in names:
            log(f"{name}: {CASES[name].title}")
            out[name] = summarise(run_case(name, paths[name], interpreters, threads, quick,
                                           log, workdir))
    return out


def profile_case(name, system, stats_path, steps=3, threads=1, python=None):
    """Write a cProfile of ``steps`` steps of case ``name`` on ``system`` (after its
    warm-up) to ``stats_path``."""
    case = CASES[name]
    env = _environment(threads)
    with tempfile.TemporaryDirectory(prefix="mxlite-models-") as workdir:
        path = export([name], workdir, env)[name]
        worker = Worker(python or sys.executable,
                        [system, name, json.dumps(case.dims), path, str(case.warmup)], env,
                        os.path.join(workdir, "profile.log"))
        try:
            worker.request()
            worker.request(f"profile {steps} {stats_path}")
            worker.request("quit")
        finally:
            worker.close()
