"""Every operator test runs on every device (the ``device`` fixture of tests/conftest.py)."""
import pytest


@pytest.fixture(autouse=True)
def _on_device(device):
    yield device
