"""Test-wide fixtures: every test starts with empty compile caches and counters; ``backend``."""
import os

import pytest
from hypothesis import settings

import dynamo_lite as dl
from tests.helpers import compiled_backends, native_skip_reason

# CI draws the same hypothesis examples on every run, so a red CI is reproducible.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _fresh_compiler():
    if hasattr(dl, "reset"):
        dl.reset()
    yield
    if hasattr(dl, "reset"):
        dl.reset()


def cuda_skip_reason():
    """Why tests marked ``cuda`` cannot run here (None when CuPy sees a device)."""
    try:
        import cupy
    except ImportError as exc:
        return f"needs CuPy: install the 'cuda' extra ({exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CuPy raises its own CUDARuntimeError when there is no driver
        return f"no usable CUDA device: {exc}"
    return None if count > 0 else "no CUDA device present"


def pytest_collection_modifyitems(config, items):
    """Skip ``@pytest.mark.cuda`` tests, with the reason, where there is no GPU."""
    marked = [item for item in items if item.get_closest_marker("cuda") is not None]
    reason = cuda_skip_reason() if marked else None
    if reason is not None:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=f"cuda: {reason}"))


COMPILED_BACKENDS = compiled_backends("cpu", cuda=cuda_skip_reason() is None, unavailable=True)


@pytest.fixture(params=COMPILED_BACKENDS)
def backend(request):
    """The name of each backend compiled code is checked on (``tests.helpers.compiled_backends``).

    A test taking ``backend`` runs once per backend: ``dl.compile(fn, backend=backend)``.
    """
    if request.param == "native" and native_skip_reason() is not None:
        pytest.skip(f"native: {native_skip_reason()}")
    return request.param
