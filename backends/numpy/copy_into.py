"""Copy-backs computed in place: a fused group writes the new value of a tensor straight into it.

NOTE: [copy into the updated tensor] A functionalized update (frames/aot/functionalize.py)
computes ``new = f(param, ...)`` out of place, then ``copy_(param, new)``. When ``new``
is an output of a fused pointwise group, the group can
write ``new`` into ``param``'s memory (members and nodes reading ``new`` before the
``copy_`` then read it there) and the copy is a no-op (``emit_node`` skips a
``copy_`` of a tensor onto its own memory; the version bump stays). That is exact when
no read of ``param``'s old value can happen after the write:

- ``param`` is an attribute of the graph (parameters and optimizer state: objects fixed
  for the compiled function, unlike inputs, which another call may pass aliased) whose
  storage no other input or attribute shares, with no view or in-place result of it in
  the graph but the ``copy_``'s, and the same dtype, sizes and strides as ``new`` (so
  every block reads and writes the same elements of it: no broadcast);
- every other reader of ``param`` runs before the group, or after the ``copy_``; inside
  the group, a member reading ``param`` comes before ``new``'s member, or is that member
  itself, computed by an alias-safe template or kernel (it reads each element before
  writing it);
- every reader of ``new`` is in the group or runs no later than the ``copy_``.

The copies so computed are part of a shape's ``structure``: code generated for one shape
serves another only if the same copies are elided there.
"""
from __future__ import annotations

from collections import Counter

from .templates import template_for

__all__ = ["compute_copy_backs_in_place"]


def compute_copy_backs_in_place(layout, values: dict) -> tuple:
    """Make each eligible copy-back's source an alias of its destination; returns the names of those copy_ nodes."""
    group_of = {m: g for g in layout.groups for m in g.nodes}
    externals = [v for v in values.values() if v.kind in ("input", "param") and v.is_tensor]
    storages = Counter(id(v.obj._storage) for v in externals)
    # roots other values share memory with (views, in-place results); a copy_'s own result is its alias
    shared = Counter(v.root for v in values.values() if v.is_tensor and v.root is not v and v.root is not None)
    done = []
    for node in layout.graph.nodes:
        if not _is_copy_back(node):
            continue
        dst, src = values[node.args[0]], values[node.args[1]]
        if dst.kind != "param" or dst.root is not dst or storages[id(dst.obj._storage)] > 1:
            continue
        if shared[dst] > 1 or src.kind != "buffer" or src.root is not src:
            continue
        if (src.dtype, tuple(src.sizes), tuple(src.strides)) != (dst.dtype, tuple(dst.sizes), tuple(dst.strides)):
            continue
        group = group_of.get(node.args[1])
        if group is None or not _reads_end_before_write(dst, node, node.args[1], group, group_of, layout.steps):
            continue
        if not all(group_of.get(r) is group or layout.steps[r] <= layout.steps[node] for r in src.readers):
            continue  # a later write to the tensor would change what they read
        src.kind, src.root, src.offset, src.base = "alias", dst, dst.offset, dst
        done.append(node.name)
    return tuple(done)


# Registry kernels of ops that read every element of their inputs (into temporaries, or in
# one ufunc call) before writing it: ``out`` may be one of their inputs.
ALIAS_SAFE_KERNELS = ("lerp", "addcmul", "addcdiv")


def _alias_safe(node) -> bool:
    template = template_for(node)
    return template.alias_safe if template is not None else node.target.name in ALIAS_SAFE_KERNELS


def _is_copy_back(node) -> bool:
    return (node.op == "call_function" and getattr(node.target, "name", None) == "copy_" and not node.kwargs
            and len(node.args) == 2 and all(hasattr(a, "op") for a in node.args))


def _reads_end_before_write(dst, copy, producer, group, group_of, steps) -> bool:
    members = group.nodes
    at = members.index(producer)
    for reader in dst.readers:
        if reader is copy:
            continue
        if group_of.get(reader) is group:
            position = members.index(reader)
            if position > at:
                return False
            if reader is producer and not _alias_safe(producer):
                return False
        elif not (steps[reader] < steps[producer] or steps[reader] > steps[copy]):
            return False
    return True
