"""A small-graph autograd step, ``y = sum(sin(x * x)); y.backward()`` on 10 elements:
mxlite against torch (and the hand-written NumPy gradient). All Python-side overhead."""
import pytest

from cases import BACKENDS


@pytest.mark.parametrize("backend", BACKENDS)
def test_autograd_step(run_case, backend):
    run_case("autograd 10", backend)
