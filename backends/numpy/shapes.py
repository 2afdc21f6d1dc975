"""The plans of one concrete shape for a function serving all sizes, and their lookup by shape.

A function generated for a symbolic graph (NOTE: [signatures] in compiler.py) reads its
geometry from a pool set of the call's shape: ``ShapePlan`` holds the values, buffers and
blocks of one shape, ``ShapeState`` its free pool sets, and ``serves``/``add_shape`` find
or add the state of a call's shape.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from dynamo_lite.tensor.tensor import Tensor

from .copy_into import compute_copy_backs_in_place
from .fused import plan_group
from .memory import MemoryPlan, plan_memory
from .values import Unsupported, analyze

MAX_SHAPES = 16  # pool sets of the most recent shapes kept by a function for all sizes


@dataclass
class ShapePlan:
    """Everything about one concrete shape of a Layout: values, buffers, blocks.

    Attributes:
        values: node -> Value (see ``values.py``).
        by_key: Value.key -> Value, how pool entries find a value in any shape's plan.
        memory: the MemoryPlan of the buffer roots.
        group_plans: FusionGroup -> GroupPlan.
    """

    values: dict
    by_key: dict
    memory: MemoryPlan
    group_plans: dict
    lowered: dict = field(default_factory=dict)
    copied_in_place: tuple = ()  # copy_ nodes whose source is computed in the destination

    @property
    def structure(self) -> tuple:
        """What the code depends on beyond names: which fused groups run in blocks, and what
        a lowering emits for a group or node at this shape (``lowering.structure``)."""
        groups = tuple(self.lowered.get(g, p.blocking is None) for g, p in self.group_plans.items())
        lowered = tuple(code for key, code in self.lowered.items() if key not in self.group_plans)
        return groups + lowered + ((self.copied_in_place,) if self.copied_in_place else ())

    @classmethod
    def of(cls, layout, attributes: dict, inputs: list, block_bytes: int, threads: int,
           lowering=None) -> "ShapePlan":
        """Plan ``layout`` (a compiler ``Layout``) for ``inputs`` (whose metas ``layout.graph`` already holds).

        Raises:
            Unsupported: this shape cannot run the layout's code (e.g. an empty tensor).
        """
        values = analyze(layout.graph, attributes, inputs, layout.scratch)
        copied_in_place = compute_copy_backs_in_place(layout, values)
        by_key = {}
        for value in values.values():
            if value.is_tensor and value.kind != "multi" and value.numel == 0:
                raise Unsupported(f"{value.name} has no elements")
            by_key[value.key] = value
            by_key.update((part.key, part) for part in value.parts)
        steps, lowered = layout.steps, {}
        if lowering is not None:  # nodes a lowering computes at another node's step (native row prologues)
            steps = {**steps, **{node: steps[at] for node, at in lowering.relocated(layout.groups, values).items()}}
            lowered = lowering.structure(layout.groups, values)
        memory = plan_memory(steps, values)
        plans = {g: plan_group(g, values, block_bytes, threads) for g in layout.groups}
        memory.arena_bytes = max([p.arena_bytes for p in plans.values()], default=0)
        memory.zeros_bytes = max([p.zeros_bytes for p in plans.values()], default=0)
        return cls(values, by_key, memory, plans, lowered, copied_in_place)


    def forget_inputs(self) -> None:
        """Drop the call's own input objects once the code is generated: a plan outlives the
        call it was made for and must not keep the user's tensors alive."""
        for value in self.values.values():
            if value.node is not None and value.node.op == "placeholder" and type(value.obj) is not int:
                value.obj = None


class ShapeState(list):
    """The free pool sets of one shape (the generated code pops one per call and gives it
    back) and how to make another."""

    def __init__(self, shape: ShapePlan, builds: list):
        super().__init__()
        self.shape, self.builds = shape, builds

    def new_set(self) -> tuple:
        memory = self.shape.memory.allocate(self.shape)
        return tuple(build(memory) for build in self.builds)


def shape_key(args, positions: tuple) -> tuple:
    """What a function for all sizes looks its pool sets up by: the geometry of the tensors
    and the values of the ints at ``positions`` (the generated code builds the same tuple)."""
    key = []
    for i in positions:
        arg = args[i]
        key += (arg._sizes, arg._strides, arg._offset) if isinstance(arg, Tensor) else (arg,)
    return tuple(key)


def serves(function, args) -> bool:
    """Whether ``function`` runs ``args`` itself (a function for all sizes needs their shape planned)."""
    shapes = getattr(function, "shapes", None)
    return shapes is None or (serves_geometry(function, args) and shape_key(args, function.symbolic_inputs) in shapes)


def serves_geometry(function, args) -> bool:
    """Whether the inputs of ``args`` with a fixed geometry in ``function`` have that geometry
    (else its own check hands the call back to be re-planned, for ever)."""
    return all(tuple(args[i]._sizes) == sizes and tuple(args[i]._strides) == strides and args[i]._offset == offset
               for i, sizes, strides, offset in function.static_geometry)


def add_shape(function, args, shape: ShapePlan) -> None:
    """Let a function for all sizes run ``args``' shape (the oldest of ``MAX_SHAPES`` goes)."""
    shapes = function.shapes
    if len(shapes) >= MAX_SHAPES:
        del shapes[next(iter(shapes))]
    shapes[shape_key(args, function.symbolic_inputs)] = ShapeState(shape, function.builds)
