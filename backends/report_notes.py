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


def record_build_units(gm, units) -> None:
    """Note on ``gm`` how its native library was built: ``(distinct kernels, seconds)`` per unit
    (NOTE: [native build units]); ``dl.explain`` prints them under the graph.

    Example:
        >>> record_build_units(gm, [(3, 0.82), (2, 0.4)])
        >>> gm.build_units
        'native build: 2 units (3 kernels 820 ms, 2 kernels 400 ms)'
    """
    units = list(units)
    if units:
        parts = ", ".join(f"{kernels} kernels {seconds * 1e3:.0f} ms" for kernels, seconds in units)
        gm.build_units = f"native build: {len(units)} unit{'s' if len(units) > 1 else ''} ({parts})"
