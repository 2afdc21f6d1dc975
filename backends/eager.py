"""The ``eager`` backend: runs the graph module as is, each node through the op registry (the reference)."""
from __future__ import annotations

from .registry import register_backend


@register_backend("eager", devices=("cpu", "cuda"), priority=0)
def eager(gm, example_inputs):
    """Return ``gm.forward``: every node runs eagerly; other backends must agree with it.

    Example:
        >>> dl.compile(fn, backend="eager")
    """
    return gm.forward


eager.symbolic_shapes = True  # the graph computes its sizes from its inputs as it runs
