"""Scan bodies on the numpy backend: each body compiled once as numpy code, called per step.

NOTE: [numpy scan bodies] The numpy backend generates code for registry ops only, so a graph
with a ``scan`` node runs node by node; what matters is the body, which runs once per step.
Each body is compiled by the same backend on its first step: the step index would be an
int input (a new plan per value), so the body is first rewritten to take each input it
reads only as its step's slice (``x[t]``, ``x[:, t]``) as that slice, which the runner
passes as a view; a body that still uses the step otherwise keeps running as Python. The
compiled function serves every step (the carries and slices have one geometry) and every
length. A sliced input that is a ``flip`` along the sliced dim made for this scan alone (the
reverse scan of a backward reads its inputs flipped) is replaced by the unflipped tensor,
read at row ``length - 1 - t``: no copy of it is made.
"""
from __future__ import annotations

from dynamo_lite.graph.graph_module import GraphModule
from dynamo_lite.graph.scan import ScanBody, is_scan
from dynamo_lite.tensor.layout import contiguous_strides

from .runtime import fresh_tensor
from .scan_rows import RecycledRows
from .scan_slices import merge_padded_slices


def _sliced_inputs(graph, n_carry: int):
    """``{closed index: (dim, [squeeze nodes], [size nodes])}`` for closed inputs read only as step
    slices (and sizes of their other dims), and whether the step is used by nothing else."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    step = placeholders[0]
    found, slice_users = {}, set()
    for i, ph in enumerate(placeholders[1 + n_carry:]):
        narrows = [u for u in ph.users if getattr(u.target, "name", None) == "narrow"]
        sizes = [u for u in ph.users if getattr(u.target, "__name__", None) == "sym_size"]
        dims = {u.args[1] for u in narrows}
        if not narrows or len(narrows) + len(sizes) != len(ph.users) or len(dims) != 1:
            continue
        dim = dims.pop()
        if any(u.args[0] is not ph or u.args[2] is not step or u.args[3] != 1 for u in narrows):
            continue
        squeezes = [s for u in narrows for s in u.users]
        if not all(getattr(u.target, "name", None) == "squeeze" and u.args[1] in ((dim,), dim) for u in squeezes):
            continue
        if any(u.args[1] == dim for u in sizes):
            continue
        found[i] = (dim, squeezes, sizes)
        slice_users.update(narrows)
    only_slices = all(user in slice_users for user in step.users)
    return found, only_slices


def without_step(body: ScanBody):
    """``(graph, {closed index: dim}, plan)``: the body taking slices in place of the sliced
    inputs and no step (``plan``: what each of its placeholders gets), or None."""
    graph = body.gm.graph.copy()
    merge_padded_slices(graph)  # NOTE: [padded slice sums]
    sliced, only_slices = _sliced_inputs(graph, body.n_carry)
    if not only_slices:
        return None
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    step, closed = placeholders[0], placeholders[1 + body.n_carry:]
    source = {ph: ("carry", k) for k, ph in enumerate(placeholders[1:1 + body.n_carry])}
    source.update((ph, ("closed", i)) for i, ph in enumerate(closed))
    for i, (dim, squeezes, sizes) in sliced.items():
        row = graph.placeholder(f"{closed[i].name}_step")
        row.meta = dict(squeezes[0].meta)
        source[row] = ("slice", i)
        for squeeze in squeezes:
            squeeze.replace_all_uses_with(row)
        for size in sizes:  # the same size, read from the slice (one dim fewer)
            k = size.args[1] if size.args[1] >= 0 else size.args[1] + len(closed[i].meta["val"]._sizes)
            size.update_arg(0, row)
            size.update_arg(1, k if k < dim else k - 1)
    graph.eliminate_dead_code()
    for ph in closed:  # sliced inputs now read as slices, and inputs nothing reads (the reverse
        if not ph.users:  # scan's length): a compiled body takes tensors only
            graph.erase_node(ph)
    if step.users:
        return None
    graph.erase_node(step)
    plan = tuple(source[ph] for ph in graph.nodes if ph.op == "placeholder")
    return graph, {i: dim for i, (dim, _, _) in sliced.items()}, plan


class NumpyScanRunner:
    """``run(t, *carries, *closed)`` of a scan body whose compiled numpy code takes the
    step's slices in place of the sliced inputs (see NOTE: [numpy scan bodies])."""

    take = staticmethod(lambda tensor, dim, row: step_copy(tensor, dim, row))  # a step's slice as passed

    def __init__(self, backend, graph, sliced: dict, plan: tuple, n_carry: int, reversed_inputs=frozenset()):
        self.backend, self.gm = backend, GraphModule({}, graph, "ScanBodyNumpy")
        self.sliced, self.plan, self.n_carry = sliced, plan, n_carry
        self.reversed = reversed_inputs  # closed indices read at row length - 1 - t
        self.function = None
        self.recycled = RecycledRows()  # NOTE: [recycled scan rows]

    def arguments(self, t, carries, closed, take=None) -> list:
        """What the compiled body gets at step ``t``: carries, closed inputs, and step slices
        (made by ``take``, by default the runner's)."""
        take = take or self.take
        args = []
        for kind, i in self.plan:
            if kind == "carry":
                args.append(carries[i])
            elif kind == "closed":
                args.append(closed[i])
            else:  # a copy at offset 0 on numpy: a view's offset changes every step, and the
                # compiled code is planned per input geometry (offset included)
                args.append(take(closed[i], self.sliced[i], self.row(closed, i, t)))
        return args

    def row(self, closed, i: int, t: int) -> int:
        """The row of sliced input ``i`` that step ``t`` reads."""
        return closed[i]._sizes[self.sliced[i]] - 1 - t if i in self.reversed else t

    def __call__(self, t, *values):
        args = self.arguments(t, values[:self.n_carry], values[self.n_carry:])
        if self.function is None:
            self.function = self.backend(self.gm, args)
        return self.function(*args)

    def loop(self, length, init, closed):
        """The whole scan, each step output copied into its row of the result as soon as it is
        made (while it is in cache), not stacked from a list after the loop; None for no steps."""
        length, n_carry = int(length), self.n_carry
        if length < 1:
            return None
        carries, rows, arrays = tuple(init), None, None
        for t in range(length):
            result = self(t, *carries, *closed)
            carries = tuple(result[:n_carry])
            outputs = result[n_carry:]
            if rows is None:
                rows, arrays = zip(*(self.recycled.rows(length, out) for out in outputs)) if outputs else ((), ())
            for array, out in zip(arrays, outputs):
                array[t] = out._array()
        return carries + tuple(rows)


def step_copy(tensor, dim: int, row: int):
    """A new contiguous CPU tensor holding ``tensor.select(dim, row)`` (one NumPy copy, no dispatch)."""
    rows = tensor._array()[(slice(None),) * dim + (row,)]
    sizes = tuple(rows.shape)
    strides = contiguous_strides(sizes)
    itemsize = tensor._dtype.itemsize
    copy, array = fresh_tensor(rows.size * itemsize, sizes, strides, tuple(s * itemsize for s in strides), tensor._dtype)
    array[...] = rows
    return copy


def compile_scan_bodies(gm, backend, runner=None) -> None:
    """Give every scan node of ``gm`` a body compiled by ``backend`` (in place; recompiles ``gm``),
    run per step by ``runner`` (a NumpyScanRunner class, by default that one)."""
    runner = runner or NumpyScanRunner
    changed = False
    for node in gm.graph.nodes:
        if not is_scan(node) or node.args[0].run is not node.args[0].gm:
            continue
        body = node.args[0]
        rewritten = without_step(body)
        if rewritten is None:
            continue
        graph, sliced, plan = rewritten
        reversed_inputs = unflip_sliced_inputs(node, sliced)
        made = runner(backend, graph, sliced, plan, body.n_carry, reversed_inputs)
        node.update_arg(0, body.with_runner(made, made.loop))
        changed = True
    if changed:
        gm.graph.eliminate_dead_code()
        gm.recompile()


def unflip_sliced_inputs(node, sliced: dict) -> frozenset:
    """Give the scan ``node`` the unflipped tensor of each sliced input that is a flip along its
    sliced dim read by this scan alone (see NOTE: [numpy scan bodies]); returns their indices."""
    closed, found = list(node.args[3]), set()
    for i, dim in sliced.items():
        source = closed[i]
        if (getattr(source, "op", None) != "call_function" or getattr(source.target, "name", None) != "flip"
                or len(source.args) != 2 or source.kwargs or len(source.users) != 1):
            continue
        dims = source.args[1] if isinstance(source.args[1], (tuple, list)) else (source.args[1],)
        meta = source.meta.get("val")
        if meta is None or [d % meta.ndim for d in dims] != [dim % meta.ndim]:
            continue
        closed[i] = source.args[0]
        found.add(i)
    if found:
        node.update_arg(3, tuple(closed))
    return frozenset(found)
