"""Memory planning: liveness of intermediates and a pool of buffers reused across them and across calls.

NOTE: [buffer pool] Intermediates (``buffer`` roots, see NOTE: [value kinds]) get slots
of one pool: walking the schedule, a root takes the best-fitting slot whose previous
tenant is dead (its last reader, through any view or in-place alias, ran at an earlier
step), else a new slot. Strictly earlier: a kernel may not write into memory it reads.
A *pool set* is one allocation of every slot plus everything precomputed over them
(array windows, fused-group blocks and scratch); it is made once per input signature
and reused by every call. Calls take a set from a free list and give it back when they
return, so concurrent calls (threads, recursion) each get their own set and never share
scratch memory. Outputs are ``fresh`` roots, never pool slots, so a returned tensor is
never overwritten by a later call.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .runtime import UINT8, window

ALIGN = 64  # bytes; slots and scratch start on cache-line boundaries


@dataclass
class MemoryPlan:
    """Pool slots and which buffer root lives in which.

    Attributes:
        slot_bytes: the size of each slot.
        slot_of: buffer root Value -> slot index.
        arena_bytes: bytes of block scratch shared by the fused groups (they run one at a time).
        zeros_bytes: bytes of the read-only block of zeros some templates take.
        reused: how many roots took a slot a dead root had used.
    """

    slot_bytes: list = field(default_factory=list)
    slot_of: dict = field(default_factory=dict)
    arena_bytes: int = 0
    zeros_bytes: int = 0
    reused: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(self.slot_bytes) + self.arena_bytes + self.zeros_bytes

    def allocate(self, shape) -> "PoolMemory":
        """Fresh memory for one pool set of ``shape`` (the ShapePlan this plan belongs to)."""
        slots = [np.empty(max(n, 1), UINT8) for n in self.slot_bytes]
        arena = np.empty(max(self.arena_bytes, 1), UINT8)
        zeros = np.zeros(max(self.zeros_bytes, 1), UINT8)
        return PoolMemory(self, slots, arena, zeros, shape)


@dataclass
class PoolMemory:
    """The buffers of one pool set, with helpers to carve arrays out of them.

    Attributes:
        shape: the ShapePlan of the inputs the set serves: pool entries find values
            (``shape.by_key``) and group plans (``shape.group_plans``) there.
    """

    plan: MemoryPlan
    slots: list
    arena: np.ndarray
    zeros: np.ndarray
    shape: object = None

    def array(self, value):
        """The array of a value living in a pool slot (a buffer root or a view/alias of one)."""
        buffer = self.slots[self.plan.slot_of[value.root]]
        return window(buffer, value.sizes, value.dtype.numpy, value.offset * value.dtype.itemsize, value.byte_strides)


def liveness(schedule_steps: dict, values: dict) -> dict:
    """Buffer root -> (first step, last step) over the schedule.

    Args:
        schedule_steps: node -> index of the schedule item that runs it.
        values: node -> Value (from ``values.analyze``).
    """
    spans: dict = {}
    for node, value in values.items():
        root = value.root
        if root is None or root.kind != "buffer":
            continue
        step = schedule_steps[node]
        last = max([step] + [schedule_steps[r] for r in value.readers if r in schedule_steps])
        first, old_last = spans.get(root, (schedule_steps[root.node], step))
        spans[root] = (first, max(old_last, last))
    return spans


def plan_memory(schedule_steps: dict, values: dict) -> MemoryPlan:
    """Assign every buffer root a pool slot (see NOTE: [buffer pool])."""
    plan = MemoryPlan()
    spans = liveness(schedule_steps, values)
    tenants: list = []  # slot -> last step of its current tenant
    for root, (first, last) in sorted(spans.items(), key=lambda item: (item[1][0], item[0].name)):
        need = _aligned(root.nbytes)
        free = [i for i, end in enumerate(tenants) if end < first]
        slot = _best_fit(free, plan.slot_bytes, need)
        if slot is None:
            slot = len(tenants)
            tenants.append(last)
            plan.slot_bytes.append(need)
        else:
            plan.reused += 1
            tenants[slot] = last
            plan.slot_bytes[slot] = max(plan.slot_bytes[slot], need)
        plan.slot_of[root] = slot
    return plan


def _best_fit(free: list, sizes: list, need: int):
    """The smallest free slot holding ``need`` bytes, else the largest free one (it grows)."""
    if not free:
        return None
    fitting = [i for i in free if sizes[i] >= need]
    if fitting:
        return min(fitting, key=lambda i: sizes[i])
    return max(free, key=lambda i: sizes[i])


def _aligned(nbytes: int) -> int:
    return -(-nbytes // ALIGN) * ALIGN
