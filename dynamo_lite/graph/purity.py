"""Which nodes are pure (removable, mergeable, foldable) and which may mutate tensors."""
from __future__ import annotations

import math
import operator

from ..ops.core.registry import REGISTRY, Op
from ..tensor.symint import sym_size

# Plain callables known to be free of side effects on their arguments. Anything not
# listed (and not a registry Op) is treated as impure: the safe default for DCE and CSE.
KNOWN_PURE_CALLABLES = frozenset({
    operator.getitem, operator.add, operator.sub, operator.mul, operator.truediv,
    operator.floordiv, operator.mod, operator.pow, operator.neg, operator.pos,
    operator.abs, operator.matmul, operator.eq, operator.ne, operator.lt, operator.le,
    operator.gt, operator.ge, operator.and_, operator.or_, operator.xor, operator.invert,
    operator.not_, operator.truth, operator.index,
    len, abs, min, max, int, float, bool, tuple, math.sqrt, math.floor, math.ceil, sym_size,
})

# Dunder methods that mutate their receiver (ordinary methods say so with a trailing "_").
MUTATING_DUNDERS = frozenset({
    "__setitem__", "__delitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
    "__ifloordiv__", "__imod__", "__ipow__", "__imatmul__", "__iand__", "__ior__",
    "__ixor__", "__ilshift__", "__irshift__",
})


def _method_is_mutating(name: str) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return name in MUTATING_DUNDERS
    return name.endswith("_")


def is_pure_call(op: str, target) -> bool:
    """True if a node with this IR op and target has no side effects.

    Registry Ops are pure unless tagged ``inplace`` or ``random``; Tensor methods are
    pure unless they mutate (trailing ``_``) or name an impure registry op; modules and
    unknown callables are impure.
    """
    if op == "get_attr":
        return True
    if op == "call_function":
        if isinstance(target, Op):
            return target.is_pure
        try:
            return target in KNOWN_PURE_CALLABLES
        except TypeError:  # unhashable callable
            return False
    if op == "call_method":
        registered = REGISTRY.get(target)
        if registered is not None and not registered.is_pure:
            return False
        return not _method_is_mutating(target)
    return False  # placeholder, output, call_module



def may_mutate_inputs(node) -> bool:
    """True if running ``node`` may write into a tensor it reads.

    In-place ops and mutating methods do; random ops only advance their generator;
    unknown callables and modules might do anything.
    """
    if node.op in ("placeholder", "get_attr", "output"):
        return False
    target = node.target
    if node.op == "call_function" and isinstance(target, Op):
        return "inplace" in target.tags
    if node.op == "call_method":
        registered = REGISTRY.get(target)
        if registered is not None:
            return "inplace" in registered.tags
        return _method_is_mutating(target)
    return not is_pure_call(node.op, target)


def may_alias_input(node) -> bool:
    """True if ``node``'s value may share memory with a value it reads.

    Registry ops allocate their outputs unless they are views or in-place (which return
    their first argument); ``getitem`` returns an element (or a view) of its input;
    anything unknown might return an alias.
    """
    target = node.target
    if node.op == "call_function" and isinstance(target, Op):
        return bool(target.tags & {"view", "inplace"})
    if node.op == "call_method":
        registered = REGISTRY.get(target)
        return registered is None or bool(registered.tags & {"view", "inplace"})
    return node.op in ("call_function", "call_module")


def possibly_mutated(nodes) -> set:
    """Nodes whose value some node of ``nodes`` may write into (directly or through aliases).

    NOTE: [mutation and aliasing] A pass that merges, folds or reorders values must leave
    these alone: two equal computations are two buffers in eager mode, so if one of
    them is written into later, sharing a single buffer would change the other.
    """
    stack = [arg for node in nodes if may_mutate_inputs(node) for arg in node.all_input_nodes]
    found: set = set()
    while stack:
        node = stack.pop()
        if node in found:
            continue
        found.add(node)
        if may_alias_input(node):
            stack.extend(node.all_input_nodes)
    return found
