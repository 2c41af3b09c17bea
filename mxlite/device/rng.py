"""Per-device random streams: the state ``(seed, offset)`` of the Philox4x32-10 generator.

Each device has one state; all CPU contexts share ``('cpu', 0)`` (as in MXNet), a GPU ``i``
has ``('gpu', i)``. A random operator call takes the stream ``(seed, offset)`` of its device
(``rctx.rng.next()``) and advances the offset by one, so consecutive calls differ and a seed
replays them all; element ``i`` of a call is a pure function of ``(seed, offset, i)``
(``mxlite/_core/philox.h``), so every device gives the same numbers for the same calls.
``mx.random.seed`` (``mxlite.ops.random.seed``) validates the seed and calls ``seed_all`` or
``seed_device``.
"""
import os
import threading

__all__ = ["DEFAULT_SEED", "RandomStream", "device_key", "seed_all", "seed_device",
           "next_stream", "get_state"]

DEFAULT_SEED = 0          # MXNet's generators also start from a fixed seed
_SEED_MOD = 1 << 64
_lock = threading.Lock()
if hasattr(os, "register_at_fork"):
    # a fork while another thread holds the lock would leave it held forever in the child
    os.register_at_fork(before=_lock.acquire, after_in_parent=_lock.release,
                        after_in_child=_lock.release)
_default_seed = DEFAULT_SEED
_states = {}              # device key -> [seed, offset]


def device_key(ctx):
    """The generator a Context draws from: ('cpu', 0) for every CPU context, else
    (compute device, device id)."""
    if ctx.compute_device == "cpu":
        return ("cpu", 0)
    return (ctx.compute_device, ctx.device_id)


def seed_all(seed):
    """Every device restarts from ``seed`` (an int in [0, 2^64)), offset 0."""
    global _default_seed
    with _lock:
        _default_seed = seed
        _states.clear()


def seed_device(key, seed):
    """Device ``key`` restarts from ``seed``, offset 0."""
    with _lock:
        _states[key] = [seed, 0]


def next_stream(key=("cpu", 0)):
    """``(seed, offset)`` for one operator call on device ``key``; advances the offset."""
    with _lock:
        state = _states.get(key)
        if state is None:
            state = _states[key] = [_default_seed, 0]
        seed, offset = state
        state[1] = (offset + 1) % _SEED_MOD
    return seed, offset


def get_state(key=("cpu", 0)):
    """The ``(seed, offset)`` the next call on device ``key`` will use (does not advance)."""
    with _lock:
        state = _states.get(key)
        return (_default_seed, 0) if state is None else tuple(state)


class RandomStream:
    """The generator of one device, as a run context hands it to random operators."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def next(self):
        """``(seed, offset)`` for one operator call; advances the device's offset."""
        return next_stream(self.key)

    def state(self):
        """The ``(seed, offset)`` the next call will use."""
        return get_state(self.key)

    def __repr__(self):
        return f"RandomStream({self.key!r})"
