"""Per-operator overhead: ``a + b`` on 10-element float32 arrays, mxlite against NumPy (and
torch). The arrays are so small that the time is all Python front end and dispatch."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_overhead(run_case, backend):
    run_case("overhead 10", backend)
