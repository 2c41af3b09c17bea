"""Sum of 1e8 float32 elements: mxlite ``sum`` against ``np.sum`` (and torch)."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_sum(run_case, backend):
    run_case("sum 1e8", backend)
