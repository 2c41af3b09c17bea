"""c = a + b on 1e6, 1e7 and 1e8 float32 elements: mxlite ``broadcast_add(a, b, out=c)`` against
NumPy ``np.add(a, b, out=c)`` (and torch). ``extra_info`` holds the effective bandwidth,
3 * 4 * N bytes per call."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("key", ["add 1e6", "add 1e7", "add 1e8"])
def test_add(run_case, key, backend):
    run_case(key, backend)
