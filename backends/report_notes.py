"""What a backend notes on a graph it compiled for the compile report (its fused groups)."""
from __future__ import annotations


def record_fused_groups(gm, groups) -> None:
    """Note on ``gm`` the node groups the backend evaluates as one fused loop or kernel;
    the HTML report outlines each group of two or more in the graph's picture.

    Names are kept, not nodes: they survive the copies of the graph made after compiling.

    Args:
        gm: the GraphModule the backend was given.
        groups: one iterable of ``gm``'s nodes per fused loop or kernel.

    Example:
        >>> record_fused_groups(gm, [group.nodes for group in fusion_groups])
        >>> gm.fused_groups
        [['sin', 'mul', 'add']]
    """
    gm.fused_groups = [[node.name for node in group] for group in groups]
