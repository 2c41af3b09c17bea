"""mx.lr_scheduler: values at chosen updates against the formulas of MXNet 1.x's docs."""
import math

import pytest

import mxlite as mx
from mxlite import MXNetError
from mxlite.lr_scheduler import (CosineScheduler, FactorScheduler, LRScheduler,
                                 MultiFactorScheduler, PolyScheduler)


def test_factor_scheduler_steps_after_each_multiple():
    s = FactorScheduler(step=3, factor=0.5, base_lr=2.0)
    # base_lr * factor ** floor((n - 1) / step): the rate changes once n exceeds 3, 6, ...
    for n, want in [(0, 2.0), (1, 2.0), (3, 2.0), (4, 1.0), (6, 1.0), (7, 0.5),
                    (30, 2.0 * 0.5 ** 9)]:
        assert s(n) == pytest.approx(want), n
    # any order gives the same values (MXNet's version could only move forward)
    assert [s(n) for n in (7, 1, 4)] == pytest.approx([0.5, 2.0, 1.0])
    assert s.base_lr == 2.0


def test_factor_scheduler_stops_at_stop_factor_lr():
    s = FactorScheduler(step=1, factor=0.1, stop_factor_lr=1e-3, base_lr=1.0)
    assert [s(n) for n in (1, 2, 3, 4, 5, 50)] == pytest.approx([1.0, 0.1, 0.01, 1e-3, 1e-3, 1e-3])


def test_multifactor_scheduler():
    s = MultiFactorScheduler(step=[5, 8, 20], factor=0.1, base_lr=1.0)
    for n, want in [(1, 1.0), (5, 1.0), (6, 0.1), (8, 0.1), (9, 0.01), (21, 0.001), (100, 0.001)]:
        assert s(n) == pytest.approx(want), n


def test_poly_scheduler():
    s = PolyScheduler(max_update=100, base_lr=0.5, pwr=3, final_lr=0.01)
    for n in (0, 1, 37, 99, 100, 150):
        want = 0.01 + (0.5 - 0.01) * (1 - min(n, 100) / 100) ** 3
        assert s(n) == pytest.approx(want), n


def test_cosine_scheduler():
    s = CosineScheduler(max_update=50, base_lr=0.3, final_lr=0.02)
    for n in (0, 10, 25, 49, 50, 80):
        want = 0.02 + (0.3 - 0.02) * (1 + math.cos(math.pi * min(n, 50) / 50)) / 2
        assert s(n) == pytest.approx(want), n


@pytest.mark.parametrize("cls,kwargs", [
    (PolyScheduler, dict(max_update=20, pwr=1)), (CosineScheduler, dict(max_update=20)),
    (FactorScheduler, dict(step=100)), (MultiFactorScheduler, dict(step=[100]))])
def test_warmup_linear_and_constant(cls, kwargs):
    s = cls(base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2, warmup_mode="linear", **kwargs)
    assert [s(n) for n in range(4)] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert s(4) == pytest.approx(1.0)
    c = cls(base_lr=1.0, warmup_steps=4, warmup_begin_lr=0.2, warmup_mode="constant", **kwargs)
    assert [c(n) for n in range(4)] == [0.2] * 4


def test_warmup_then_decay_counts_from_the_end_of_warmup():
    s = PolyScheduler(max_update=14, base_lr=1.0, pwr=1, warmup_steps=4)
    # max_steps = 10 decay updates after 4 of warm-up
    assert s(9) == pytest.approx(0.5)
    c = CosineScheduler(max_update=14, base_lr=1.0, final_lr=0.0, warmup_steps=4)
    assert c(9) == pytest.approx(0.5)


def test_an_optimizer_learning_rate_reaches_every_schedule():
    # MXNet's Poly/Cosine schedules and every warm-up kept the base_lr given at construction
    for sched in (PolyScheduler(max_update=10, base_lr=1.0, pwr=1),
                  CosineScheduler(max_update=10, base_lr=1.0),
                  FactorScheduler(step=5, base_lr=1.0, warmup_steps=2)):
        with pytest.warns(UserWarning):
            opt = mx.optimizer.SGD(learning_rate=0.5, lr_scheduler=sched)
        assert sched.base_lr == 0.5
        assert opt.learning_rate == pytest.approx(0.0 if sched.warmup_steps else 0.5)
        opt.num_update = 5
        assert opt.learning_rate <= 0.5


def test_bad_arguments_raise():
    with pytest.raises(MXNetError, match="step"):
        FactorScheduler(step=0)
    with pytest.raises(MXNetError, match="factor"):
        FactorScheduler(step=2, factor=1.5)
    with pytest.raises(MXNetError, match="increasing"):
        MultiFactorScheduler(step=[5, 3])
    with pytest.raises(MXNetError, match="step"):
        MultiFactorScheduler(step=[0, 3])
    with pytest.raises(MXNetError, match="step"):
        MultiFactorScheduler(step=[])
    with pytest.raises(MXNetError, match="max_update"):
        PolyScheduler(max_update=0)
    with pytest.raises(MXNetError, match="max_update"):
        CosineScheduler(max_update=3.5)
    with pytest.raises(MXNetError, match="max_update.*warmup_steps"):
        CosineScheduler(max_update=3, warmup_steps=3)
    with pytest.raises(MXNetError, match="warmup_mode"):
        LRScheduler(warmup_mode="cubic")
    with pytest.raises(MXNetError, match="warmup_begin_lr"):
        LRScheduler(base_lr=0.1, warmup_begin_lr=0.5)
    with pytest.raises(MXNetError, match="warmup_steps"):
        LRScheduler(warmup_steps=-1)
    with pytest.raises(NotImplementedError):
        LRScheduler()(3)
    with pytest.raises(MXNetError, match="warm-up"):
        LRScheduler(warmup_steps=2).get_warmup_lr(5)


# ---- bit-exact rates: MXNet decayed base_lr in place, one multiplication per step ----------
def _multiplied(base, factor, times, floor=None):
    """The rate a training loop gets with ``lr *= factor`` once per decay."""
    lr = base
    for _ in range(times):
        lr *= factor
        if floor is not None and lr < floor:
            lr = floor
    return lr


def test_factor_scheduler_equals_repeated_multiplication_exactly():
    # 0.1 * 0.9**k and ((0.1 * 0.9) * 0.9)... differ in the last bit from k = 3 on
    sched = FactorScheduler(step=1, factor=0.9, base_lr=0.1)
    for n in range(1, 400):
        assert sched(n) == _multiplied(0.1, 0.9, n - 1, floor=1e-8), n    # default floor
    sched = FactorScheduler(step=3, factor=0.3, base_lr=0.7, stop_factor_lr=1e-6)
    for n in range(1, 60):
        assert sched(n) == _multiplied(0.7, 0.3, (n - 1) // 3, floor=1e-6), n


def test_factor_scheduler_is_a_function_of_num_update_and_base_lr():
    sched = FactorScheduler(step=2, factor=0.7, base_lr=0.3)
    late = sched(41)
    assert sched(5) == _multiplied(0.3, 0.7, 2)        # going back recomputes
    assert sched(41) == late
    sched.base_lr = 0.2                                 # an optimizer's learning_rate
    assert sched(41) == _multiplied(0.2, 0.7, 20)
    assert "_" not in "".join(k[0] for k in vars(sched))   # nothing cached in its attributes


def test_multifactor_scheduler_equals_repeated_multiplication_exactly():
    sched = MultiFactorScheduler(step=[2, 5, 9, 14, 20], factor=0.7, base_lr=0.3)
    for n in range(1, 30):
        passed = sum(1 for s in (2, 5, 9, 14, 20) if n > s)
        assert sched(n) == _multiplied(0.3, 0.7, passed), n


def test_cosine_scheduler_in_mxnets_operation_order():
    # MXNet: final + (base - final) * (1 + cos(pi * done / max_steps)) / 2, evaluated left to
    # right; (base - final) * ((1 + cos(...)) / 2) differs in the last bit at many steps
    sched = CosineScheduler(1000, base_lr=0.3, final_lr=0.01, warmup_steps=30,
                            warmup_begin_lr=0.001)
    for n in range(30, 1000):
        want = 0.01 + (0.3 - 0.01) * (1 + math.cos(math.pi * (n - 30) / 970)) / 2
        assert sched(n) == want, n
