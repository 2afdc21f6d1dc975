"""Staged vector loops: a fused group cut after each exp-based member, run a block at a time through L1 scratch.

NOTE: [vector stages] A vector loop of a group with several exp-based members (exp, tanh,
sigmoid, silu, gelu's tanh form) is bound by the latency of its longest chain more than by
its instructions: one element's sigmoid is a chain of some twenty dependent operations ending
in a division, and the out-of-order window of a core holds only a few such chains, so the
FMA pipes sit idle much of the time (pointwise_chain's AVX2 loop ran at about two thirds of
the rate its multiply-adds allow on an AMD EPYC). Cutting the group after each such member
and running each part over a block of ``BLOCK`` elements, the values one part hands to a later
one kept in stack arrays, lets the core overlap many short independent chains instead. Each
element still goes through the same operations in the same order, so a staged loop gives the
bits of the single loop (and of the scalar loop: NOTE: [vector loops]). A group with at most
one such member, or whose last member is its only one, keeps the single loop.
"""
from __future__ import annotations

from dynamo_lite.graph.node import Node

from .c_ops import c_arguments, c_op_name

BLOCK = 256  # elements per block: a KiB per handed-over value, all of them well inside L1
# Members whose vector form is a long chain (an exp or expm1, a division): a stage ends after each.
EXP_BASED = frozenset({"exp", "tanh", "sigmoid", "silu", "gelu_tanh"})
MAX_HANDED = 12  # more values crossing stages than this: the single loop (the scratch would crowd L1)


def stages(members: list) -> list:
    """``members`` cut after each exp-based one (the last part may be empty and is then dropped)."""
    parts, current = [], []
    for member in members:
        current.append(member)
        if c_op_name(member) in EXP_BASED:
            parts.append(current)
            current = []
    return parts + [current] if current else parts


def handed_over(parts: list) -> list:
    """The members some later stage reads, in the order they are computed."""
    stage_of = {member: s for s, part in enumerate(parts) for member in part}
    needed = set()
    for s, part in enumerate(parts):
        for member in part:
            needed.update(arg for arg in c_arguments(member)
                          if isinstance(arg, Node) and stage_of.get(arg, s) < s)
    return [member for part in parts for member in part if member in needed]


def staged(members: list) -> tuple | None:
    """``(parts, handed)`` when ``members`` should run staged (NOTE: [vector stages]), else None."""
    parts = stages(members)
    if len(parts) < 2:
        return None
    handed = handed_over(parts)
    return (parts, handed) if len(handed) <= MAX_HANDED else None


def inputs_read(part: list, inputs: list) -> list:
    """Positions of the (unit-stride or broadcast) inputs the members of ``part`` read."""
    read = {arg for member in part for arg in c_arguments(member) if isinstance(arg, Node)}
    return [k for k, node in enumerate(inputs) if node in read]


def scratch_read(part: list, handed: list) -> list:
    """Positions in ``handed`` of the values computed by earlier stages that ``part`` reads."""
    read = {arg for member in part for arg in c_arguments(member) if isinstance(arg, Node)}
    return [t for t, node in enumerate(handed) if node in read and node not in part]
