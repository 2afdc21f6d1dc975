"""Pointwise-fusion partitioning: maximal acyclic groups of same-shape pointwise nodes."""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ...ops.core.registry import Op
from ...tensor.meta import TensorMeta
from ..node import Node


@dataclass(eq=False)
class FusionGroup:
    """Pointwise nodes a backend may evaluate as one loop over ``shape``.

    Attributes:
        nodes: the members, in graph (topological) order.
        inputs: Nodes outside the group that members read (constants stay in the
            members' arguments); each broadcasts to ``shape``.
        outputs: members read outside the group (by other nodes or the output).
        shape: the output shape shared by every member.
        device: the device every member runs on.
    """

    nodes: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    shape: tuple = ()
    device: object = None

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"FusionGroup(nodes={self.nodes}, inputs={self.inputs}, outputs={self.outputs}, shape={self.shape})"


def is_fusible(node: Node) -> bool:
    """A call of a registry Op tagged pointwise (not in-place, not random) with one known output."""
    target = node.target
    return (
        node.op == "call_function"
        and isinstance(target, Op)
        and "pointwise" in target.tags
        and not target.tags & {"inplace", "random"}
        and isinstance(node.meta.get("val"), TensorMeta)
    )


class _Partial:
    """A group being grown: members, the bitmask of its members' positions, its segment."""

    __slots__ = ("members", "bits", "shape", "device", "segment")

    def __init__(self, node: Node, bit: int, segment: int):
        meta = node.meta["val"]
        self.members, self.bits, self.segment = [node], bit, segment
        self.shape, self.device = tuple(meta.shape), meta.device


def partition_pointwise(graph, *, include_singletons: bool = True) -> list:
    """Group pointwise nodes into maximal fusion groups (needs ``meta["val"]``, see ShapeProp).

    Rules: members are pointwise registry ops (not in-place, not random) whose outputs
    all have the group's shape and device; inputs may be smaller and broadcast.
    Reductions, matmuls and views are never members, so groups never span them except
    as external inputs. Merging never creates a cycle (group -> outside node -> group),
    and no group spans an impure node (in-place, random, module call): the group may be
    computed at one point only if no mutation could be observed differently there.

    Greedy in graph order: each fusible node joins the groups of the producers it reads
    (when shapes agree and the merge stays acyclic) or starts a new group.

    NOTE: [fusion cycle check] ``reach[v]`` is a bitmask with bit i set when the fusible
    node at position i is an ancestor of (or is) ``v``; a group's bits are its members'.
    Merging a set M of groups with node n creates a cycle iff some node outside M that
    M reaches feeds n or a member of M; it suffices to test the direct external inputs
    of n and of each group in M. Sibling groups that share only inputs are not merged.

    Args:
        graph: the Graph to partition (it is not changed).
        include_singletons: also return groups of a single node (default); False keeps
            only groups with two or more members.

    Returns:
        FusionGroups ordered by their first member.

    Example:
        >>> [len(g) for g in partition_pointwise(gm.graph)]   # relu(x * 2 + 1), sum
        [3]
    """
    reach: dict[Node, int] = {}
    group_of: dict[Node, _Partial] = {}
    segment = 0
    for index, node in enumerate(graph.nodes):
        inputs = node.all_input_nodes
        mask = 0
        for arg in inputs:
            mask |= reach.get(arg, 0)
        if is_fusible(node):
            _join(node, inputs, reach, group_of, segment, 1 << index)
            mask |= 1 << index
        elif node.op not in ("placeholder", "output") and node.is_impure():
            segment += 1  # an ordering barrier: no group spans it
        reach[node] = mask
    order = {node: i for i, node in enumerate(graph.nodes)}
    groups = {id(g): g for g in group_of.values()}.values()
    result = [_finish(g, order) for g in groups if include_singletons or len(g.members) > 1]
    result.sort(key=lambda g: order[g.nodes[0]])
    return result


def _join(node, inputs, reach, group_of, segment, bit) -> _Partial:
    meta = node.meta["val"]
    shape, device = tuple(meta.shape), meta.device
    candidates = []
    for arg in inputs:
        group = group_of.get(arg)
        if (group is not None and group not in candidates and group.segment == segment
                and group.shape == shape and group.device == device):
            candidates.append(group)
    chosen: list[_Partial] = []
    for group in candidates:  # greedily keep every producer group that stays acyclic
        if _acyclic(node, inputs, chosen + [group], reach, group_of):
            chosen.append(group)
    if not chosen:
        new = _Partial(node, bit, segment)
        group_of[node] = new
        return new
    target = chosen[0]
    for other in chosen[1:]:
        target.members += other.members
        target.bits |= other.bits
        for member in other.members:
            group_of[member] = target
    target.members.append(node)
    target.bits |= bit
    group_of[node] = target
    return target


def _acyclic(node, inputs, merging: list, reach, group_of) -> bool:
    merged_bits = 0
    for group in merging:
        merged_bits |= group.bits
    inside = set(map(id, merging))

    def is_outside(arg) -> bool:
        owner = group_of.get(arg)
        return owner is None or id(owner) not in inside

    for arg in inputs:  # n's own external inputs must not come from M
        if is_outside(arg) and reach.get(arg, 0) & merged_bits:
            return False
    for group in merging:  # nor may one group of M feed another through outside nodes
        others = merged_bits & ~group.bits
        if not others:
            continue
        for member in group.members:
            for arg in member.all_input_nodes:
                if is_outside(arg) and reach.get(arg, 0) & others:
                    return False
    return True


def _finish(partial: _Partial, order: dict) -> FusionGroup:
    ordered = sorted(partial.members, key=order.__getitem__)
    members = set(ordered)
    inputs: dict[Node, None] = {}
    outputs: list = []
    for member in ordered:
        for arg in member.all_input_nodes:
            if arg not in members:
                inputs.setdefault(arg, None)
        if any(user not in members for user in member.users):
            outputs.append(member)
    return FusionGroup(ordered, list(inputs), outputs, partial.shape, partial.device)


def fusion_schedule(graph, groups: list) -> list:
    """An execution order in which every group appears once, as a unit.

    Returns a list of Nodes (outside any group) and FusionGroups such that everything
    an item reads comes before it. Ties keep graph order, so impure nodes keep their
    relative order and groups stay between the same impure nodes as their members.

    Example:
        >>> for item in fusion_schedule(graph, partition_pointwise(graph)):
        ...     emit_loop(item) if isinstance(item, FusionGroup) else emit_call(item)
    """
    order = {node: i for i, node in enumerate(graph.nodes)}
    unit_of: dict = {}
    for group in groups:
        for member in group.nodes:
            unit_of[member] = group
    units = {id(u): u for u in (unit_of.get(n, n) for n in graph.nodes)}
    key = {uid: min(order[n] for n in (u.nodes if isinstance(u, FusionGroup) else [u])) for uid, u in units.items()}
    waiting = {uid: set() for uid in units}
    readers: dict = {uid: set() for uid in units}
    for node in graph.nodes:
        mine = id(unit_of.get(node, node))
        for arg in node.all_input_nodes:
            theirs = id(unit_of.get(arg, arg))
            if theirs != mine:
                waiting[mine].add(theirs)
                readers[theirs].add(mine)
    _add_barrier_edges(graph, order, unit_of, waiting, readers)
    ready = [(key[uid], uid) for uid, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    schedule = []
    while ready:
        _, uid = heapq.heappop(ready)
        schedule.append(units[uid])
        for reader in readers[uid]:
            waiting[reader].discard(uid)
            if not waiting[reader]:
                heapq.heappush(ready, (key[reader], reader))
    if len(schedule) != len(units):
        raise ValueError("fusion groups form a cycle; they did not come from partition_pointwise")
    return schedule


def _add_barrier_edges(graph, order, unit_of, waiting, readers) -> None:
    """Impure nodes stay ordered against everything before and after them."""
    previous_barrier = None
    since_barrier: list = []
    for node in graph.nodes:
        unit = id(unit_of.get(node, node))
        if node.op not in ("placeholder", "output") and node.is_impure():
            for before in since_barrier:
                if before != unit:
                    waiting[unit].add(before)
                    readers[before].add(unit)
            previous_barrier, since_barrier = unit, []
        elif previous_barrier is not None and unit != previous_barrier:
            waiting[unit].add(previous_barrier)
            readers[previous_barrier].add(unit)
        since_barrier.append(unit)
