"""Shared test set-up: a hypothesis profile for a slow shared CI box, and a seeded RNG."""
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Timing varies on a 2-core machine shared with the build: no per-example deadline.
# Each test still chooses its own max_examples.
settings.register_profile(
    "mxlite", deadline=None, derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("mxlite")


@pytest.fixture
def rng(request):
    """A NumPy Generator seeded from the test's id, so every test is reproducible."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
