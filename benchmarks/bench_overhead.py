"""Per-operator overhead: ``a + b``, ``sin(x)`` and ``sum(x)`` on 10-element float32 arrays,
mxlite against NumPy (and torch). The arrays are so small that the time is all front end and
dispatch (the goal: mxlite's time at most torch's)."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_overhead(run_case, backend):
    run_case("overhead 10", backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sin_overhead(run_case, backend):
    run_case("sin 10", backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sum_overhead(run_case, backend):
    run_case("sum 10", backend)
