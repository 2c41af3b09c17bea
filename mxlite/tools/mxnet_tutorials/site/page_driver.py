"""Runs one tutorial page's code blocks in this (fresh) process, as a notebook would.

``python page_driver.py PAGE.json RESULTS.jsonl``: PAGE.json holds ``blocks`` (the sources),
``timeout`` (seconds per block) and ``harness`` (the folder of the NumPy aliases). The
blocks share one namespace and run in order; the value of a block's last expression is
recorded as a notebook shows it. The first block that raises ends the page. One JSON line
per event goes to RESULTS.jsonl: ``start`` before a block (so the runner can name the block
a crash or a hang was in), ``result`` after it (``ran`` or ``error`` with the exception's
type and last line, its printed text and value, seconds).

Standalone on purpose: it imports only ``mxnet`` (MXNet itself, or mxlite through the
``mxnet`` alias) and the standard library, so the MXNet side can run it too.
"""
import ast
import io
import json
import os
import signal
import sys
import time
import traceback

TEXT_LIMIT = 2000                   # characters of a block's output kept in the record


class BlockTimeout(BaseException):
    """A block ran past its time (a BaseException, so a tutorial's ``except Exception``
    does not swallow it)."""


class _Tee(io.TextIOBase):
    """Writes to the real stream (the page's log) and keeps a copy."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.stream.write(text)
        self.copy.write(text)
        return len(text)

    def flush(self):
        self.stream.flush()


def _write(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record) + "\n")


def _compiled(source, index):
    """(code to exec, code of the last expression to eval, or None)."""
    name = "<block %d>" % (index + 1)       # numbered from 1, as the table names blocks
    tree = ast.parse(source, name)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        return compile(tree, name, "exec"), compile(last, name, "eval")
    return compile(tree, name, "exec"), None


def _last_line(error):
    text = "".join(traceback.format_exception_only(type(error), error)).strip()
    return text.splitlines()[-1] if text else type(error).__name__


def run_block(source, index, namespace, timeout):
    """Run one block in ``namespace``; the result record (without writing it)."""
    started, tee = time.time(), _Tee(sys.stdout)
    record = {"type": "result", "block": index}

    def on_alarm(signum, frame):
        raise BlockTimeout("the block timed out after %g s" % timeout)
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    sys.stdout = tee
    try:
        body, last = _compiled(source, index)
        exec(body, namespace)
        value = eval(last, namespace) if last is not None else None
        record.update(outcome="ran", value=None if value is None else repr(value)[:TEXT_LIMIT])
    except BaseException as error:    # noqa: B036  (KeyboardInterrupt, SystemExit: recorded)
        record.update(outcome="error", error=type(error).__name__,
                      message=_last_line(error)[:TEXT_LIMIT],
                      traceback="".join(traceback.format_exception(
                          type(error), error, error.__traceback__))[-TEXT_LIMIT:])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.stdout = tee.stream
    record.update(output=tee.copy.getvalue()[-TEXT_LIMIT:],
                  seconds=round(time.time() - started, 3))
    return record


def _setup(spec):
    """Import MXNet (or mxlite as ``mxnet``) and install the offline stand-ins."""
    sys.path.insert(1, spec["harness"])
    import numpy_aliases  # noqa: F401  (NumPy 2 removed np.int, np.float, ...)
    import mxnet
    import standins
    standins.install(mxnet)


def main(spec_path, results):
    with open(spec_path) as f:
        spec = json.load(f)
    try:
        _setup(spec)
    except BaseException as error:      # noqa: B036
        _write(results, {"type": "setup_error", "error": type(error).__name__,
                         "message": _last_line(error)})
        sys.exit(1)
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    pid = os.getpid()
    for index, source in enumerate(spec["blocks"]):
        _write(results, {"type": "start", "block": index})
        record = run_block(source, index, namespace, spec["timeout"])
        if os.getpid() != pid:
            os._exit(0)     # a child the block forked (a page tries os.fork()): not the page
        _write(results, record)
        sys.stdout.flush()
        if record["outcome"] != "ran":
            break
    sys.stdout.flush()
    os._exit(0)     # a page's leftover threads or DataLoader workers must not hold it open


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
