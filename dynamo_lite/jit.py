"""dl.jit: the ``torch.jit`` queries ported code asks (dynamo_lite has no TorchScript)."""
from __future__ import annotations


def is_scripting() -> bool:
    """Always False: dynamo_lite never scripts code (also inside compiled code).

    Example:
        >>> if not dl.jit.is_scripting(): pass   # the Python-only branch always runs
    """
    return False


def is_tracing() -> bool:
    """Always False: dynamo_lite has no ``jit.trace`` (compiled code is traced by dl.compile)."""
    return False
