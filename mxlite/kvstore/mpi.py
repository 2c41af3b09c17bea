"""MPI for the dist stores (``mpi4py`` over the MPI library, ``mpich`` from PyPI by default).

``world()`` starts MPI once per process and returns the ``World``: the communicators, this
process's rank, and the rules that keep a job from hanging:

* every collective store call first **agrees** with the other workers (one small
  non-blocking allgather of "my arguments were valid" and a hash of the keys, shapes and
  dtypes): a bad argument on any rank raises MXNetError on every rank, and ranks that call
  with different arguments are told so, before any data moves;
* an uncaught exception on any rank aborts the whole job (``MPI_Abort``) after printing
  its traceback, as ``python -m mpi4py`` does;
* a rank whose script ends (or calls ``sys.exit``) tells the others at exit; a rank waiting
  for it in a store call raises MXNetError instead of waiting forever, and ranks that all
  reach the end finish normally.

Buffers go to MPI as they are (NumPy arrays through the buffer protocol: no copies),
split into pieces of at most ``MAX_COUNT`` elements for MPI libraries whose counts are
32-bit ints.
"""
import atexit
import contextlib
import hashlib
import sys
import time

import numpy as np

from ..base import MXNetError

__all__ = ["world", "load", "World", "MAX_COUNT"]

MAX_COUNT = 2 ** 31 - 1     # the most elements one MPI call is given (C int counts)
_DEPART = 77                # the tag of the "I have left" messages
_world = None


def load():
    """The ``mpi4py.MPI`` module, or an MXNetError saying what to install."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise MXNetError(
            "mx.kv.create('dist_*'): the dist stores need MPI through mpi4py, which is not "
            f"installed ({e}); install it with `pip install mxlite[dist]` (mpich and mpi4py), "
            "then run the script with `mpiexec -n N python train.py`") from None
    return MPI


def world():
    """The process's ``World`` (MPI is initialized on the first call)."""
    global _world
    if _world is None:
        _world = World(load())
    return _world


def _sums_natively(MPI, dtype):
    """Whether this MPI library sums ``dtype`` (MPICH has MPIX_C_FLOAT16; others may not)."""
    one = np.ones(1, dtype)
    try:
        MPI.COMM_SELF.Allreduce(one, np.empty_like(one))
    except Exception:                           # noqa: BLE001 (unknown datatype or op)
        return False
    return True


def signature(parts):
    """A 63-bit hash of ``repr(parts)``: what the ranks compare to agree on a call."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


class World:
    """The MPI job seen from this process: ``rank``, ``size``, the data communicator
    ``comm`` and a control communicator for agreements and exit notices."""

    def __init__(self, MPI):
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()
        self.ctrl = MPI.COMM_WORLD.Dup()
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self._mine = np.zeros(2, np.int64)                  # [rejected, hash]: agree()
        self._everyone = np.zeros((self.size, 2), np.int64)
        self.native = {np.dtype(np.float16): _sums_natively(MPI, np.float16)}
        self.departed = None            # the first rank seen leaving
        self.abandoned = False          # a collective was left unfinished (a rank left)
        self.aborting = False
        if self.size > 1:
            # one receive per other rank for its exit notice (a wildcard receive left
            # posted would slow every shared-memory transfer a little)
            self._others = [r for r in range(self.size) if r != self.rank]
            self._notice_bufs = np.zeros(len(self._others), np.int64)
            self._notices = [self.ctrl.Irecv(self._notice_bufs[i:i + 1], r, _DEPART)
                             for i, r in enumerate(self._others)]
            self._install_hooks()

    # ---- failure handling ----------------------------------------------------------------
    def _install_hooks(self):
        previous = sys.excepthook

        def abort_on_uncaught(kind, value, tb):
            previous(kind, value, tb)
            self.abort(f"rank {self.rank}: uncaught {kind.__name__}; aborting the MPI job")

        sys.excepthook = abort_on_uncaught
        atexit.register(self._leave)

    def abort(self, message, code=1):
        """Print ``message`` and end every process of the job."""
        self.aborting = True        # MPI_Abort may exit through atexit: no _leave then
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:                       # noqa: BLE001 (a closed stream)
                pass
        sys.stderr.write(f"mxlite.kvstore: {message}\n")
        sys.stderr.flush()
        # the launcher forwards output through pipes and stops reading when a rank aborts:
        # give it a moment to pass on the traceback just written
        time.sleep(0.2)
        self.MPI.COMM_WORLD.Abort(code)

    def _leave(self):
        """At exit: tell every other rank, wait (without spinning) until all have left,
        then collect their notices so MPI can finalize. After a store call was abandoned
        because a rank left, the job cannot end cleanly: abort it."""
        if self.aborting:
            return
        if self.abandoned:
            self.abort(f"rank {self.rank} exits after rank {self.departed} left the job "
                       "early; aborting the MPI job")
        me = np.array([self.rank], np.int64)          # alive until every send completes
        sends = [self.ctrl.Isend(me, r, _DEPART) for r in range(self.size) if r != self.rank]
        done = self.ctrl.Ibarrier()
        while not done.Test():
            time.sleep(0.005)
        self.MPI.Request.Waitall(self._notices)
        self.MPI.Request.Waitall(sends)

    def _check_departures(self, what):
        if self.departed is None:
            index, arrived = self.MPI.Request.Testany(self._notices)
            if not arrived or index == self.MPI.UNDEFINED:
                return
            self.departed = self._others[index]
        raise MXNetError(f"{what}: rank {self.departed} has left the job (its script ended, "
                         f"called sys.exit() or was stopped) while rank {self.rank} waited "
                         "for it; every rank must make the same store calls")

    def wait(self, request, what):
        """Complete ``request``, raising MXNetError if another rank leaves meanwhile."""
        spins = 0
        while not request.Test():
            try:
                self._check_departures(what)
            except MXNetError:
                self.abandoned = True
                raise
            spins += 1
            if spins > 20000:       # a slow peer: stop competing with it for the CPU
                time.sleep(1e-4)

    # ---- agreement -----------------------------------------------------------------------
    def agree(self, what, sig, error):
        """Every rank calls this with the hash of its call's arguments and its validation
        error (None when valid); every rank raises when any rank's arguments were bad or
        the hashes differ."""
        if self.size == 1:
            if error is not None:
                raise error
            return
        if self.departed is not None:
            self._check_departures(what)
        self._mine[0], self._mine[1] = (1, 0) if error is not None else (0, sig)
        self.wait(self.ctrl.Iallgather(self._mine, self._everyone), what)
        if error is not None:
            raise error
        rows = self._everyone.tolist()
        failed = [r for r, (bad, _) in enumerate(rows) if bad]
        if failed:
            raise MXNetError(f"{what}: rank(s) {failed} rejected the arguments of this call "
                             "(see their error); nothing was sent")
        differ = [r for r, (_, h) in enumerate(rows) if h != rows[0][1]]
        if differ:
            raise MXNetError(f"{what}: rank(s) {differ} called it with other keys, shapes, "
                             "dtypes or settings than rank 0; every rank must make the same "
                             "store calls in the same order")

    # ---- data ----------------------------------------------------------------------------
    @contextlib.contextmanager
    def collective(self, what):
        """The data phase of a call the ranks agreed on: every rank is inside the same MPI
        calls, so an exception here (on one rank) would leave the others waiting; it
        aborts the job instead."""
        try:
            yield
        except BaseException as e:          # noqa: BLE001 (KeyboardInterrupt too)
            self.abort(f"{what} failed on rank {self.rank} after the ranks agreed on it "
                       f"({type(e).__name__}: {e}); aborting the MPI job")
            raise

    def op_for(self, dtype):
        """MPI's sum for ``dtype``; logical or for bool (MPI has no sum of C bools)."""
        return self.MPI.LOR if dtype == np.bool_ else self.MPI.SUM

    def allreduce(self, send, recv):
        """``recv = sum over ranks of send`` for flat C-contiguous NumPy arrays of one
        dtype and size (``send is None``: in place in ``recv``), in pieces of at most
        ``MAX_COUNT`` elements. float16 goes through a float32 copy where the MPI library
        cannot sum it."""
        if not self.native.get(recv.dtype, True):
            wide = (recv if send is None else send).astype(np.float32)
            self.allreduce(None, wide)
            recv[...] = wide
            return
        op = self.op_for(recv.dtype)
        for lo in range(0, recv.size, MAX_COUNT):
            hi = min(lo + MAX_COUNT, recv.size)
            source = self.MPI.IN_PLACE if send is None else send[lo:hi]
            self.comm.Allreduce(source, recv[lo:hi], op)

    def bcast(self, buf, root=0):
        """Broadcast flat NumPy array ``buf`` from ``root`` in place, in pieces (as bytes
        of its item size: no datatype the MPI library might lack)."""
        buf = buf.view(f"u{buf.itemsize}") if buf.dtype.kind in "fb" else buf
        for lo in range(0, buf.size, MAX_COUNT):
            self.comm.Bcast(buf[lo:lo + MAX_COUNT], root)

    def allgather(self, send):
        """Every rank's flat int64 array ``send`` (one size on every rank): an array of shape
        ``(size, send.size)``, row ``r`` rank ``r``'s (small arrays: counts)."""
        send = np.ascontiguousarray(send, np.int64)
        recv = np.empty((self.size, send.size), np.int64)
        self.comm.Allgather(send, recv)
        return recv

    def allgatherv(self, send, counts):
        """Every rank's flat NumPy array, concatenated in rank order: rank ``r`` gives
        ``counts[r]`` elements (``send`` holds this rank's; ``counts`` is the same list on
        every rank, zeros allowed); one dtype on every rank. The data moves as bytes of the
        item size (no datatype the MPI library might lack), in rounds of at most
        ``MAX_COUNT`` elements in all (MPI's counts and displacements are ints)."""
        counts = [int(c) for c in counts]
        if send.size != counts[self.rank]:
            raise MXNetError(f"allgatherv: rank {self.rank} gives {send.size} elements, "
                             f"counts say {counts[self.rank]}")
        out = np.empty(sum(counts), send.dtype)
        as_bytes = (lambda a: a.view(f"u{a.itemsize}")) if send.dtype.kind in "fb" \
            else (lambda a: a)
        send, whole = as_bytes(np.ascontiguousarray(send)), as_bytes(out)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
        if whole.size <= MAX_COUNT:                 # one call, straight into the result
            self.comm.Allgatherv(send, [whole, (counts, starts.tolist())])
            return out
        step = max(1, MAX_COUNT // self.size)       # each rank's share of one round
        for lo in range(0, max(counts), step):
            piece = [max(0, min(c, lo + step) - lo) for c in counts]
            at = np.concatenate(([0], np.cumsum(piece)[:-1])).tolist()
            buf = np.empty(sum(piece), whole.dtype)
            self.comm.Allgatherv(send[lo:lo + piece[self.rank]], [buf, (piece, at)])
            for r, (n, a) in enumerate(zip(piece, at)):
                whole[starts[r] + lo:starts[r] + lo + n] = buf[a:a + n]
        return out

    def bcast_object(self, obj, root=0):
        """A picklable object from ``root``."""
        return self.comm.bcast(obj, root)
