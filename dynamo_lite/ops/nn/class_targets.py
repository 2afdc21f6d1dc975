"""nll_class_targets: a loss's class-index targets checked against the class count (torch's IndexError), ignored ones as 0.

NOTE: [loss target bounds] torch's nll_loss kernels check every target that is not
``ignore_index`` and raise ``IndexError: Target N is out of bounds.`` for the first one
outside ``[0, C)``. The check is data-dependent, so it is an op of its own: eagerly it runs in
the kernel, and in a compiled graph the same kernel raises the same error from the graph,
with no graph break. Its output, the targets with ignored entries replaced by 0, is what
the loss gathers with.
"""
from __future__ import annotations

from ..core import meta_rules as mr
from ..core.registry import register_op

__all__ = ["nll_class_targets"]


def class_targets_meta(target, classes, ignore_index):
    if target._dtype.is_floating_point or target._dtype.name == "bool":
        raise RuntimeError(f"expected scalar type Long but found {mr.TYPE_NAMES[target._dtype]}")
    return mr.make_meta(target._sizes, target._dtype, None, target._device)


def class_targets_kernel(xp, target, classes, ignore_index, *, out):
    kept = target != ignore_index
    bad = kept & ((target < 0) | (target >= classes))
    if bad.any():
        first = int(target.reshape(-1)[int(bad.reshape(-1).argmax())])  # the first in memory order, as torch's loop
        raise IndexError(f"Target {first} is out of bounds.")
    out[...] = xp.where(kept, target, 0)
    return out


OPS = {"nll_class_targets": register_op("nll_class_targets", meta=class_targets_meta, kernel=class_targets_kernel)}


def nll_class_targets(target, classes: int, ignore_index: int):
    """``target`` with ignored entries as 0, after checking the others lie in ``[0, classes)``.

    Raises:
        IndexError: ``Target N is out of bounds.`` for the first target outside the classes.

    Example:
        >>> nll_class_targets(dl.tensor([2, -100, 0]), 3, -100).tolist()
        [2, 0, 0]
    """
    return OPS["nll_class_targets"](target, classes, ignore_index)
