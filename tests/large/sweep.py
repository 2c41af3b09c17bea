"""Runs the full-scale CPU rows of the large-tensor table two at a time where memory allows.

A row runs in a worker process of its own (tests/large/worker.py) and may take up to 16 GiB.
Most rows peak near 9 GB and much of a row's time is one core writing and checking its
arrays, so two rows side by side nearly halve the sweep on a machine with 24 GiB and 2
cores. Before a row starts, ``Sweep`` checks that it fits beside the rows already running:

- its expected peak is the one recorded for it in ``peaks.json`` (the peaks of the last
  full run, written by ``python tests/large/report.py REPORT.json --write-peaks``) plus a
  margin (5 % and 0.3 GB); a row with no record is expected to take the whole limit, so it
  runs alone;
- the expected peaks of the running rows and the new one stay within the machine's memory
  less ``RESERVE_GB`` (for the rest of the test run), and the new one within what the
  system reports available now.

A row that does not fit lets the first one behind it that does go first, so a big row
runs beside a small one rather than alone (rows peak near 4, 8 or 13 GB).

A worker that the system kills for memory while another row ran beside it runs its row
again, alone: a wrong estimate costs time, never a failed row. ``MXLITE_LARGE_JOBS=1`` runs
the rows one at a time. Results come back in the order the tests ask for them.
"""
import json
import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)
PEAKS = os.path.join(HERE, "peaks.json")
RESERVE_GB = 3.0            # beside the rows: pytest, the emulator run and the docs build
MARGIN_GB = (1.05, 0.3)     # a recorded peak may grow a little between runs: x1.05 + 0.3


def _meminfo_gb(field):
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 2 ** 20
    except OSError:
        pass
    return None


def recorded_peaks():
    """{op: peak GB} of the last full run (empty when there is none)."""
    try:
        with open(PEAKS) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


class Worker:
    """A worker process for rows on one device; a new one after a crash or a failed row."""

    def __init__(self, p32):
        self.proc = None
        self.p32 = p32

    def run(self, name, device):
        """The worker's answer for row ``name``, or {"died": exit code} when it died."""
        if self.proc is None or self.proc.poll() is not None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([TESTS, ROOT, env.get("PYTHONPATH", "")])
            self.proc = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "worker.py")], env=env, cwd=ROOT,
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.proc.stdin.write(json.dumps({"op": name, "device": device, "p32": self.p32}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.proc = None
            return {"op": name, "died": code}
        answer = json.loads(line)
        answer["device"] = device
        return answer

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


class Sweep:
    """Runs ``names`` (in order) on ``jobs`` workers, memory permitting (module docstring);
    ``result(name)`` waits for a row's answer."""

    def __init__(self, names, p32, limit_gb, jobs=2):
        self.names = list(names)
        self.limit_gb = limit_gb
        peaks = recorded_peaks()
        scale, extra = MARGIN_GB
        self.need = {n: min(limit_gb, peaks[n] * scale + extra) if n in peaks else limit_gb
                     for n in self.names}
        total = _meminfo_gb("MemTotal")
        self.capacity = (total - RESERVE_GB) if total else 0.0
        self.jobs = max(1, jobs)
        self.answers = {}
        self.queue = list(self.names)
        self.running = {}                   # name -> expected GB
        self.cond = threading.Condition()
        self.workers = [Worker(p32) for _ in range(self.jobs)]
        self.threads = [threading.Thread(target=self._serve, args=(w,), daemon=True)
                        for w in self.workers]
        for t in self.threads:
            t.start()

    def _fits(self, name):
        if not self.running:
            return True
        need = self.need[name]
        available = _meminfo_gb("MemAvailable")
        return (sum(self.running.values()) + need <= self.capacity
                and (available is None or need <= available - 1.0))

    def _next(self):
        """The first queued row that fits beside the running ones (a row too big to join
        them lets a smaller one behind it go first: a 13 GB row runs beside a 4 GB one, not
        alone), or None."""
        for i, name in enumerate(self.queue):
            if self._fits(name):
                return self.queue.pop(i)
        return None

    def _serve(self, worker):
        while True:
            with self.cond:
                name = None
                while self.queue and (name := self._next()) is None:
                    self.cond.wait(timeout=5.0)
                if name is None:
                    return
                alone = not self.running
                self.running[name] = self.need[name]
            answer = worker.run(name, "cpu")
            self._log(answer)
            with self.cond:
                del self.running[name]
                if "died" in answer and not alone and answer["died"] == -9:
                    self.need[name] = self.limit_gb         # killed beside another: alone
                    self.queue.insert(0, name)
                else:
                    self.answers[name] = answer
                self.cond.notify_all()

    def _log(self, answer):
        """Append the answer as a JSON line to ``$MXLITE_LARGE_REPORT.rows`` as it comes:
        the timings of a run that is still going, or was stopped."""
        path = os.environ.get("MXLITE_LARGE_REPORT")
        if path:
            with self.cond, open(path + ".rows", "a") as f:
                f.write(json.dumps(answer) + "\n")

    def result(self, name):
        """The answer for ``name`` (blocks until its row ran)."""
        with self.cond:
            while name not in self.answers:
                self.cond.wait(timeout=5.0)
            return self.answers[name]

    def close(self):
        with self.cond:
            self.queue.clear()
            self.cond.notify_all()
        for t in self.threads:
            t.join()
        for w in self.workers:
            w.close()
        return [self.answers[n] for n in self.names if n in self.answers]
