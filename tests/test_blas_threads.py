"""mxlite/device/blas.py: the thread count of one BLAS product (a fake OpenBLAS setter and
fake clocks, so the policy is checked without timing anything)."""
import pytest

from mxlite.device import blas


@pytest.fixture
def fake(monkeypatch):
    calls = []
    clock = [0.0]
    monkeypatch.setattr(blas._State, "setter", calls.append)
    monkeypatch.setattr(blas._State, "most", 2)
    monkeypatch.setattr(blas._State, "adaptive", True)
    monkeypatch.setattr(blas._State, "serial_rate", 0.0)
    monkeypatch.setattr(blas._State, "contended_until", -1.0)
    monkeypatch.setattr(blas.time, "perf_counter", lambda: clock[0])

    def run(macs, seconds):
        """One product of ``macs`` taking ``seconds``; the thread counts it was run with."""
        del calls[:]

        def work():
            clock[0] += seconds
        blas.product(work, macs)
        return list(calls)
    return run


def test_the_first_large_product_measures_the_one_thread_rate(fake):
    big = 4 * blas.SERIAL_BELOW
    assert fake(big, 1e-3) == [1, 2]                 # one thread, then restored
    assert blas._State.serial_rate == pytest.approx(big / 1e-3)
    assert fake(big, 0.5e-3) == []                   # then the BLAS's own threads


def test_a_slow_multithreaded_product_holds_later_ones_on_one_thread(fake):
    big = 4 * blas.SERIAL_BELOW
    fake(big, 1e-3)                                  # the one-thread rate
    assert fake(big, 5e-3) == []                     # 5x slower on two threads: contended
    assert fake(big, 1e-3) == [1, 2]                 # within HOLD_S: one thread
    assert fake(blas.SERIAL_BELOW, 1e-4) == [1, 2]   # small products: one thread always
