"""A scan body's sums of zero-padded slices (a ``chunk``'s gradient) as one zero tensor written slice by slice.

NOTE: [padded slice sums] The gradient of ``x.chunk(4, 1)`` (each chunk a ``narrow``) is traced
as one zero tensor per chunk with that chunk's gradient copied into its slice, and the
sum of those tensors: per step of an LSTM's reverse scan, four zero fills of the whole
gate matrix and three additions of it. When the summed tensors are zeros of one size and
dtype, each read only by the sum and by one ``narrow`` that a ``copy_`` alone writes, and
the slices are disjoint along one dim, the sum equals the first zero tensor with every
copy made into it: the other copies are redirected there, and the additions and the
other zero tensors become dead code.
"""
from __future__ import annotations


def _name(node):
    return getattr(node.target, "name", None) if node.op == "call_function" else None


def _is_sum(node) -> bool:
    return _name(node) == "add" and len(node.args) == 2 and not node.kwargs


def _padded_slice(node):
    """``(narrow node, dim, start, stop)`` when ``node`` is a zeros read by one narrow, which one
    copy_ writes and nothing else reads, and by one other node; else None."""
    if _name(node) != "zeros" or node.args or len(node.users) != 2:
        return None
    narrows = [u for u in node.users if _name(u) == "narrow" and u.args[0] is node]
    if len(narrows) != 1:
        return None
    narrow = narrows[0]
    _, dim, start, length = narrow.args
    if not all(type(v) is int for v in (dim, start, length)) or len(narrow.users) != 1:
        return None
    copy = next(iter(narrow.users))
    if _name(copy) != "copy_" or copy.args[0] is not narrow or copy.users or copy.kwargs:
        return None
    return narrow, dim, start, start + length


def _leaves(root) -> list | None:
    """The nodes an add tree at ``root`` sums (its inner adds read by their parent alone)."""
    leaves, stack = [], [root]
    while stack:
        node = stack.pop()
        for arg in node.args:
            if hasattr(arg, "op") and _is_sum(arg) and len(arg.users) == 1:
                stack.append(arg)
            else:
                leaves.append(arg)
    return leaves


def merge_padded_slices(graph) -> int:
    """Rewrite ``graph`` in place (see NOTE: [padded slice sums]); returns how many sums were merged."""
    order = {node: i for i, node in enumerate(graph.nodes)}
    merged = 0
    for root in list(graph.nodes):
        if root not in order or not _is_sum(root) or any(_is_sum(u) and len(root.users) == 1 for u in root.users):
            continue  # an inner add: its tree is merged from the root
        leaves = _leaves(root)
        slices = [_padded_slice(leaf) if hasattr(leaf, "op") else None for leaf in leaves]
        if len(leaves) < 2 or any(s is None for s in slices) or len(set(leaves)) != len(leaves):
            continue
        first = min(leaves, key=order.get)
        if any(leaf.kwargs != first.kwargs for leaf in leaves) or len({s[1] for s in slices}) != 1:
            continue
        spans = sorted((s[2], s[3]) for s in slices)
        if any(stop > start for (_, stop), (start, _) in zip(spans, spans[1:])):
            continue  # overlapping slices add up
        for leaf, (narrow, _, _, _) in zip(leaves, slices):
            if leaf is not first:
                narrow.update_arg(0, first)
        root.replace_all_uses_with(first)
        merged += 1
    if merged:
        graph.eliminate_dead_code()
    return merged
