"""Run a training script on N MPI ranks: ``python -m mxlite.launch -n N train.py [args]``.

The same as ``mpiexec -n N python train.py [args]``, plus:

* each line a rank prints starts with ``[rank R]`` (``--no-prefix`` turns it off), and
  its output is line-buffered, so lines of different ranks do not mix;
* ``OMP_NUM_THREADS`` is set to the machine's cores divided by N when it is not set, so
  N ranks on one machine do not each start a thread per core;
* ``--timeout S`` ends the whole job after S seconds (exit status 124);
* an exception that escapes the script, or a non-zero exit status, on one rank ends every
  rank (``MPI_Abort``), also before the script has created a store (under a bare
  ``mpiexec``, a rank that fails before MPI starts leaves the others waiting in
  ``MPI_Init``).

``mpiexec`` is looked for next to the Python interpreter first (where ``pip install
mxlite[dist]`` puts MPICH's), then on ``PATH``.
"""
import argparse
import io
import os
import runpy
import shutil
import signal
import subprocess
import sys
import time
import traceback

__all__ = ["find_mpiexec", "main"]


def find_mpiexec():
    """The path of ``mpiexec``: beside ``sys.executable``, else on ``PATH``, else None."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    return shutil.which("mpiexec")


class _Prefixed(io.TextIOBase):
    """A text stream that writes whole lines to ``stream``, each starting with ``prefix``
    (a partial line waits for its end, or for ``flush``)."""

    def __init__(self, stream, prefix):
        self._stream, self._prefix, self._pending = stream, prefix, ""

    def write(self, text):
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        if lines:
            self._stream.write("".join(f"{self._prefix}{line}\n" for line in lines))
            self._stream.flush()
        return len(text)

    def flush(self):
        if self._pending:
            self._stream.write(self._prefix + self._pending)
            self._pending = ""
        self._stream.flush()

    def fileno(self):
        return self._stream.fileno()

    def isatty(self):
        return self._stream.isatty()

    @property
    def encoding(self):
        return self._stream.encoding


def _rank_from_environment():
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"):
        if name in os.environ:
            return os.environ[name]
    return "?"


def _abort_job(message, code):
    """End every rank: through the store's MPI world when one exists, else by starting MPI
    just to abort (a rank that fails before MPI starts would leave the others waiting in
    MPI_Init forever)."""
    from .kvstore import mpi as kv_mpi
    if kv_mpi._world is not None:
        kv_mpi._world.abort(message, code)
    try:
        from mpi4py import MPI
    except ImportError:
        return
    sys.stderr.write(f"mxlite.launch: {message}\n")
    sys.stderr.flush()
    time.sleep(0.2)         # let mpiexec pass the traceback on before the ranks are killed
    MPI.COMM_WORLD.Abort(code)


def _worker(script, args, prefix):
    """Run ``script`` as ``__main__`` on this rank."""
    if prefix:
        tag = f"[rank {_rank_from_environment()}] "
        sys.stdout = _Prefixed(sys.stdout, tag)
        sys.stderr = _Prefixed(sys.stderr, tag)
    sys.argv = [script] + list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        from .kvstore import mpi as kv_mpi
        if code != 0 and kv_mpi._world is None:     # with a store, its exit notices serve
            _abort_job(f"the script exited with status {code}; aborting the MPI job", code)
        raise
    except BaseException as e:              # noqa: BLE001 (the script's failure, whatever it is)
        traceback.print_exc()
        sys.stderr.flush()
        _abort_job(f"the script raised {type(e).__name__}; aborting the MPI job", 1)
        sys.exit(1)


def main(argv=None):
    """The command line (see the module docstring); returns the job's exit status."""
    parser = argparse.ArgumentParser(prog="python -m mxlite.launch", description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--np", type=int, default=None, dest="n", help="number of ranks")
    parser.add_argument("--timeout", type=float, default=None,
                        help="end the job after this many seconds (exit status 124)")
    parser.add_argument("--no-prefix", action="store_true", help="no [rank R] line prefixes")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args(argv)
    if opts.worker:
        _worker(opts.script, opts.args, not opts.no_prefix)
        return 0
    if opts.n is None or opts.n < 1:
        parser.error("-n N (a positive number of ranks) is required")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        sys.stderr.write("mxlite.launch: mpiexec not found next to Python or on PATH; "
                         "install it with `pip install mxlite[dist]`\n")
        return 127
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // opts.n)))
    cmd = [mpiexec, "-n", str(opts.n), sys.executable, "-m", "mxlite.launch", "--worker"]
    if opts.no_prefix:
        cmd.append("--no-prefix")
    cmd += [opts.script] + opts.args
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        sys.stderr.write(f"mxlite.launch: the job ran past --timeout {opts.timeout:g} s; "
                         "ended it\n")
        return 124
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGINT)
        return proc.wait()


if __name__ == "__main__":
    sys.exit(main())
