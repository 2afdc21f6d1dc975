"""Test-wide fixtures: every test starts with empty compile caches and counters."""
import pytest

import dynamo_lite as dl


@pytest.fixture(autouse=True)
def _fresh_compiler():
    if hasattr(dl, "reset"):
        dl.reset()
    yield
    if hasattr(dl, "reset"):
        dl.reset()
