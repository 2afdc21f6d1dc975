"""Fixtures for graph tests: the exact registry call behind a dl.* function."""
import pytest

from dynamo_lite.ops.core.dispatch import TRACING


class _FirstOp:
    def __init__(self):
        self.calls = []

    def record(self, op, args, kwargs):
        self.calls.append((op, args, kwargs))
        raise _Stop


class _Stop(Exception):
    pass


def _registry_call(fn, *args, **kwargs):
    """(op, args, kwargs) of the first registry op ``fn(*args, **kwargs)`` dispatches."""
    recorder, previous = _FirstOp(), TRACING.tracer
    TRACING.tracer = recorder
    try:
        fn(*args, **kwargs)
    except _Stop:
        pass
    finally:
        TRACING.tracer = previous
    return recorder.calls[0]


@pytest.fixture(scope="session")
def registry_call():
    """Find how a dl.* function calls the registry (e.g. the kwargs ``dl.rand_like`` passes)."""
    return _registry_call
