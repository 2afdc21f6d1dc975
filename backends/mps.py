"""dl.backends.mps: Apple's Metal backend, which dynamo_lite does not have.

Example:
    >>> dl.backends.mps.is_available()
    False
"""
from __future__ import annotations


def is_available() -> bool:
    """False: dynamo_lite has no Metal (MPS) backend."""
    return False


def is_built() -> bool:
    """False: dynamo_lite has no Metal (MPS) backend."""
    return False
