"""Learning-rate schedules (``mx.lr_scheduler``), as MXNet 1.x's.

A scheduler is called with ``num_update``, the largest number of updates any weight has
received (``Optimizer.num_update``), and returns the learning rate for the next update. Each
may start with a warm-up of ``warmup_steps`` updates from ``warmup_begin_lr`` to ``base_lr``
(``'linear'``) or at ``warmup_begin_lr`` (``'constant'``).

Unlike MXNet's, these schedules are pure functions of ``num_update`` and their attributes:
MXNet's ``FactorScheduler``/``MultiFactorScheduler`` multiplied ``base_lr`` in place as
updates went by (so a call with a smaller ``num_update`` returned the decayed rate, and
``base_lr`` no longer held the base rate), and ``PolyScheduler``/``CosineScheduler`` kept a
copy of ``base_lr`` taken at construction (so an optimizer's ``learning_rate`` that replaced
``base_lr`` was ignored by them, and by every warm-up). The values agree with MXNet's for
the increasing ``num_update`` of training.

>>> sched = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=1.0)
>>> [sched(n) for n in (1, 10, 11, 21)]
[1.0, 1.0, 0.5, 0.25]
"""
import weakref
from math import cos, pi

from .base import MXNetError

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, int):
        raise MXNetError(f"lr_scheduler: {name} must be an int, got {value!r}")
    if value < low:
        raise MXNetError(f"lr_scheduler: {name} must be >= {low}, got {value}")


# the last decay each FactorScheduler computed: ((base, factor, floor), k, rate); kept outside
# the scheduler's attributes so states files and pickles do not carry it
_LAST_DECAY = weakref.WeakKeyDictionary()


def _decayed(owner, base, factor, k, floor=None):
    """``base`` multiplied by ``factor`` ``k`` times, one multiplication after another and
    raised to ``floor`` after each where it falls below (MXNet's schedules decayed
    ``base_lr`` in place that way; ``base * factor**k`` differs in the last bits, and MXNet's
    tests compare rates exactly). Continues from ``owner``'s previous call when ``k`` has
    not decreased, so training's increasing ``num_update`` costs one multiplication per
    decay; stops early once the rate is constant (``factor == 1``, or at ``floor``)."""
    key = (base, factor, floor)
    last = _LAST_DECAY.get(owner)
    done, rate = (last[1], last[2]) if last and last[0] == key and last[1] <= k else (0, base)
    while done < k and factor != 1:
        rate *= factor
        if floor is not None and rate <= floor:
            rate = floor
            break           # floor * factor < floor for factor < 1: it stays at floor
        done += 1
    _LAST_DECAY[owner] = (key, k if rate == floor or factor == 1 else done, rate)
    return rate


class LRScheduler:
    """Base class of learning-rate schedules.

    Parameters
    ----------
    base_lr : float
        The learning rate after warm-up (an optimizer's ``learning_rate`` replaces it).
    warmup_steps : int
        Number of warm-up updates before the schedule proper starts.
    warmup_begin_lr : float
        The learning rate warm-up starts from (at most ``base_lr``).
    warmup_mode : str
        ``'linear'``: rises in equal steps from ``warmup_begin_lr`` to ``base_lr``;
        ``'constant'``: stays at ``warmup_begin_lr``.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        _check_int("warmup_steps", warmup_steps, 0)
        if warmup_begin_lr > base_lr:
            raise MXNetError(f"lr_scheduler: base_lr ({base_lr}) has to be higher than "
                             f"warmup_begin_lr ({warmup_begin_lr})")
        if warmup_mode not in ("linear", "constant"):
            raise MXNetError(f"lr_scheduler: warmup_mode must be 'linear' or 'constant', got "
                             f"{warmup_mode!r}")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    @property
    def warmup_final_lr(self):
        """``base_lr``, the rate warm-up ends at."""
        return self.base_lr

    def get_warmup_lr(self, num_update):
        """The learning rate at update ``num_update`` < ``warmup_steps``."""
        if not num_update < self.warmup_steps:
            raise MXNetError(f"lr_scheduler: num_update {num_update} is past the "
                             f"{self.warmup_steps} warm-up steps")
        if self.warmup_mode == "linear":
            increase = ((self.warmup_final_lr - self.warmup_begin_lr)
                        * float(num_update) / float(self.warmup_steps))
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update):
        """The learning rate for update number ``num_update``."""
        raise NotImplementedError("an LRScheduler subclass must define __call__")


class FactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` every ``step`` updates, never going below
    ``stop_factor_lr``: ``base_lr`` multiplied ``(num_update - 1) // step`` times by
    ``factor``, one multiplication at a time as MXNet did (the rate changes once
    ``num_update`` exceeds a multiple of ``step``, and equals MXNet's to the last bit).

    >>> sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.1, stop_factor_lr=0.005,
    ...                                         base_lr=1.0)
    >>> [round(sched(n), 6) for n in range(1, 8)]
    [1.0, 1.0, 0.1, 0.1, 0.01, 0.01, 0.005]
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise MXNetError(f"FactorScheduler: step must be >= 1, got {step}")
        if factor > 1.0:
            raise MXNetError(f"FactorScheduler: factor must be <= 1 to reduce the learning "
                             f"rate, got {factor}")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        k = max(0, (num_update - 1) // self.step)
        return _decayed(self, self.base_lr, self.factor, k, self.stop_factor_lr)


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` at each of the increasing updates in
    ``step``: ``base_lr * factor ** k`` where ``k`` counts the steps below ``num_update``.

    >>> sched = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.5, base_lr=1.0)
    >>> [sched(n) for n in range(1, 7)]
    [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, (list, tuple)) or len(step) < 1:
            raise MXNetError(f"MultiFactorScheduler: step must be a non-empty list of ints, "
                             f"got {step!r}")
        for i, s in enumerate(step):
            if i != 0 and step[i] <= step[i - 1]:
                raise MXNetError(f"MultiFactorScheduler: step must be increasing, got "
                                 f"{list(step)}")
            if s < 1:
                raise MXNetError(f"MultiFactorScheduler: every step must be >= 1, got "
                                 f"{list(step)}")
        if factor > 1.0:
            raise MXNetError(f"MultiFactorScheduler: factor must be <= 1 to reduce the "
                             f"learning rate, got {factor}")
        self.step = list(step)
        self.factor = factor

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        k = sum(1 for s in self.step if num_update > s)
        return _decayed(self, self.base_lr, self.factor, k)


class _DecayToFinal(LRScheduler):
    """Warm-up, then ``final_lr + (base_lr - final_lr) * self._decay(frac)`` with
    ``frac = (num_update - warmup_steps) / max_steps`` and ``max_steps = max_update -
    warmup_steps``; ``final_lr`` from ``max_update`` on (PolyScheduler, CosineScheduler)."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_int("max_update", max_update, 1)
        if max_update <= warmup_steps:
            raise MXNetError(f"{type(self).__name__}: max_update ({max_update}) must exceed "
                             f"warmup_steps ({warmup_steps})")
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = max_update - warmup_steps

    def _decay(self, span, done):
        """``span`` (``base_lr - final_lr``) scaled for ``done`` updates after warm-up, in
        MXNet's operation order (so the rates equal its to the last bit)."""
        raise NotImplementedError

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update >= self.max_update:
            return self.final_lr
        return self.final_lr + self._decay(self.base_lr - self.final_lr,
                                           num_update - self.warmup_steps)


class PolyScheduler(_DecayToFinal):
    """Polynomial decay from ``base_lr`` to ``final_lr`` over the updates after warm-up::

        final_lr + (base_lr - final_lr) * (1 - (num_update - warmup_steps) / max_steps) ** pwr

    with ``max_steps = max_update - warmup_steps``, and ``final_lr`` after ``max_update``.

    >>> sched = mx.lr_scheduler.PolyScheduler(max_update=4, base_lr=1.0, pwr=2, final_lr=0.1)
    >>> [round(sched(n), 6) for n in (0, 2, 4, 9)]
    [1.0, 0.325, 0.1, 0.1]
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = pwr

    def _decay(self, span, done):
        return span * pow(1 - float(done) / float(self.max_steps), self.power)


class CosineScheduler(_DecayToFinal):
    """Cosine decay from ``base_lr`` to ``final_lr`` over the updates after warm-up::

        frac = (num_update - warmup_steps) / max_steps
        final_lr + (base_lr - final_lr) * (1 + cos(pi * frac)) / 2

    with ``max_steps = max_update - warmup_steps``, and ``final_lr`` after ``max_update``.

    >>> sched = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0, final_lr=0.0)
    >>> [round(sched(n), 6) for n in (0, 5, 10, 20)]
    [1.0, 0.5, 0.0, 0.0]
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _decay(self, span, done):
        return span * (1 + cos(pi * done / self.max_steps)) / 2
