"""Full reductions of 1e8 float32 elements: mxlite ``sum``, ``max``, ``min`` and ``argmax``
against NumPy (and torch). ``extra_info`` holds the effective bandwidth, 4 * N bytes per call."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key", ["sum 1e8", "max 1e8", "min 1e8", "argmax 1e8"])
def test_reduce(run_case, key, backend):
    run_case(key, backend)
