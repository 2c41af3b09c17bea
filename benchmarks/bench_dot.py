"""1024 x 1024 float32 matrix product: mxlite ``dot`` against ``np.dot`` (and torch)."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_dot(run_case, backend):
    run_case("dot 1024", backend)
