"""Collectives of picklable Python objects: broadcast_object_list, all_gather_object, gather/scatter of objects.

Objects travel pickled (as in torch): only exchange them between the processes of one job,
which trust each other.
"""
from __future__ import annotations

from . import state


def broadcast_object_list(object_list: list, src: int = 0, group=None, device=None, group_src=None) -> None:
    """Replace ``object_list``'s items on every rank by those of global rank ``src``.

    Example:
        >>> objects = [{"lr": 0.1}, 7] if dist.get_rank() == 0 else [None, None]
        >>> dist.broadcast_object_list(objects, src=0)
    """
    g = state.resolve(group)
    if g is None:
        return
    root = group_src if group_src is not None else state.get_group_rank(g, src)
    received = g.broadcast_object(list(object_list) if g.rank() == root else None, root)
    if len(received) != len(object_list):
        raise ValueError(f"broadcast_object_list: rank {g.ranks[root]} sent {len(received)} objects, this rank's "
                         f"list holds {len(object_list)}")
    object_list[:] = received


def all_gather_object(object_list: list, obj, group=None) -> None:
    """``object_list[i]`` becomes rank i's ``obj`` (the list is sized as the group).

    Example:
        >>> out = [None] * dist.get_world_size()
        >>> dist.all_gather_object(out, {"rank": dist.get_rank()})
    """
    g = state.resolve(group)
    if g is None:
        return
    if len(object_list) != g.size():
        raise ValueError(f"all_gather_object: object_list must hold {g.size()} items (the group's size), "
                         f"got {len(object_list)}")
    object_list[:] = g.allgather_object(obj)


def gather_object(obj, object_gather_list=None, dst: int = 0, group=None, group_dst=None) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on global rank ``dst``."""
    g = state.resolve(group)
    if g is None:
        return
    root = group_dst if group_dst is not None else state.get_group_rank(g, dst)
    if g.rank() == root and (object_gather_list is None or len(object_gather_list) != g.size()):
        raise ValueError(f"gather_object: object_gather_list must hold {g.size()} items on the destination rank")
    received = g.gather_object(obj, root)
    if g.rank() == root:
        object_gather_list[:] = received


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list=None, src: int = 0,
                        group=None, group_src=None) -> None:
    """``scatter_object_output_list[0]`` of rank i becomes ``scatter_object_input_list[i]`` of rank ``src``."""
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    g = state.resolve(group)
    if g is None:
        return
    root = group_src if group_src is not None else state.get_group_rank(g, src)
    objects = None
    if g.rank() == root:
        if scatter_object_input_list is None or len(scatter_object_input_list) != g.size():
            raise ValueError(f"scatter_object_list: the input list must hold {g.size()} items on the source rank")
        objects = list(scatter_object_input_list)
    scatter_object_output_list[0] = g.scatter_object(objects, root)
