"""The tensor collectives: all_reduce, broadcast, all_gather, reduce_scatter, reduce, gather, scatter, barrier.

Each resolves its group (NOTE: [default process group]), turns its tensors into the arrays
the group works on (NOTE: [process group interface]: a contiguous CPU tensor is passed as
its own buffer, anything else through a staging copy written back on completion), starts
the collective and waits for it unless ``async_op=True`` (then the Work is returned).
Ranks are global ranks, as in torch. On a process outside ``group`` a collective does nothing.
"""
from __future__ import annotations

import numpy as np

from ..ops.core.api import from_numpy
from ..tensor.tensor import Tensor
from . import state
from .reduce_op import ReduceOp
from .work import Work


def _check_tensor(value, name: str) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type Tensor but got "
                        f"{type(value).__name__} instead.")
    if value._device.type != "cpu":
        raise RuntimeError(f"the {name} is on {value._device}: the MPI process group runs CPU tensors")


def _check_list(values, name: str) -> None:
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type List[Tensor] but got "
                        f"{type(values).__name__} instead.")
    for value in values:
        _check_tensor(value, name)


def _direct(tensor: Tensor, reduction: bool) -> bool:
    return tensor.is_contiguous() and not (reduction and tensor._dtype.name == "bfloat16")


def _array_of(tensor: Tensor, reduction: bool = False):
    """(array over the data, write-back or None): the tensor's own buffer when it can be."""
    if _direct(tensor, reduction):
        return tensor._array(), tensor._bump_version
    plain = tensor.detach()
    staging = (plain.float() if tensor._dtype.name == "bfloat16" else plain).contiguous().clone()

    def write_back():
        plain.copy_(staging)

    return staging._array(), write_back


def _write(tensor: Tensor, values) -> None:
    """Copy the NumPy array ``values`` (same number of elements) into ``tensor``."""
    if tensor.is_contiguous():
        np.copyto(tensor._array().reshape(-1), values.reshape(-1))
        tensor._bump_version()
    else:
        tensor.detach().copy_(from_numpy(np.ascontiguousarray(values).reshape(tensor.shape)))


def _finish(*steps):
    steps = [s for s in steps if s is not None]
    return lambda: [step() for step in steps]


def _average(array, size: int):
    if array.dtype.kind not in "fc":
        raise TypeError(f"ReduceOp.AVG needs a floating-point or complex tensor, got {array.dtype}")
    return lambda: np.divide(array, size, out=array)


def _reduce_parts(array, op: ReduceOp, group):
    """(the op the group runs, the step after it): AVG is a SUM then a division."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a ReduceOp, got {op!r}")
    if op is ReduceOp.AVG:
        return ReduceOp.SUM, _average(array, group.size())
    return op, None


def _run(work: Work, async_op: bool):
    if async_op:
        return work
    work.wait()
    return None


def _group_rank(group, global_rank: int, what: str) -> int:
    if global_rank not in group.ranks:
        raise ValueError(f"{what} rank {global_rank} is not part of group {group}")
    return group.ranks.index(global_rank)


def all_reduce(tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the group in place: every rank gets the result.

    Example:
        >>> t = dl.ones(3) * (dist.get_rank() + 1)
        >>> dist.all_reduce(t)          # on 2 ranks: tensor([3., 3., 3.])
    """
    _check_tensor(tensor, "tensor")
    g = state.resolve(group)
    if g is None:
        return None
    array, write_back = _array_of(tensor, reduction=True)
    base, after = _reduce_parts(array, op, g)
    work = g.allreduce(array, base)._then_finish(_finish(after, write_back))
    work._result = [tensor]
    return _run(work, async_op)


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """Copy ``tensor`` of global rank ``src`` into ``tensor`` on every rank of the group.

    Example:
        >>> dist.broadcast(t, src=0)
    """
    _check_tensor(tensor, "tensor")
    g = state.resolve(group)
    if g is None:
        return None
    root = group_src if group_src is not None else _group_rank(g, src, "src")
    array, write_back = _array_of(tensor)
    work = g.broadcast(array, root)._then_finish(write_back if g.rank() != root else None)
    work._result = [tensor]
    return _run(work, async_op)


def _check_same(tensors, reference, what: str) -> None:
    for t in tensors:
        if t._dtype != reference._dtype:
            raise ValueError(f"{what}: tensors must all have dtype {reference._dtype}, got {t._dtype}")
        if t.numel() != reference.numel():
            raise ValueError(f"{what}: tensors must all have {reference.numel()} elements, got {t.numel()}")


def all_gather(tensor_list, tensor, group=None, async_op: bool = False):
    """Every rank's ``tensor`` into ``tensor_list`` (one tensor per rank, in rank order).

    Example:
        >>> out = [dl.empty(3) for _ in range(dist.get_world_size())]
        >>> dist.all_gather(out, t)
    """
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    g = state.resolve(group)
    if g is None:
        return None
    if len(tensor_list) != g.size():
        raise ValueError(f"all_gather: tensor_list must hold {g.size()} tensors (the group's size), "
                         f"got {len(tensor_list)}")
    _check_same(tensor_list, tensor, "all_gather")
    array, _ = _array_of(tensor)
    output = np.empty((g.size(), array.size), array.dtype)

    def scatter_out():
        for t, row in zip(tensor_list, output):
            _write(t, row)

    work = g.allgather(output, array)._then_finish(scatter_out)
    work._result = list(tensor_list)
    return _run(work, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """Every rank's ``input_tensor`` concatenated (or stacked) into ``output_tensor`` in rank order.

    Example:
        >>> out = dl.empty(2 * dist.get_world_size())
        >>> dist.all_gather_into_tensor(out, dl.ones(2))
    """
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = state.resolve(group)
    if g is None:
        return None
    if output_tensor._dtype != input_tensor._dtype:
        raise RuntimeError("output tensor must have the same type as input tensor")
    if output_tensor.numel() != g.size() * input_tensor.numel():
        raise ValueError("output tensor size must be equal to world_size times input tensor size")
    array, _ = _array_of(input_tensor)
    output, write_back = _array_of(output_tensor)
    work = g.allgather(output, array)._then_finish(write_back)
    work._result = [output_tensor]
    return _run(work, async_op)


def reduce_scatter_tensor(output, input, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``input`` across ranks; rank i keeps block i (``output``, 1/size of it).

    Example:
        >>> out = dl.empty(2)
        >>> dist.reduce_scatter_tensor(out, dl.ones(2 * dist.get_world_size()))
    """
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = state.resolve(group)
    if g is None:
        return None
    if output._dtype != input._dtype:
        raise RuntimeError("input tensor must be the same type as the output tensor")
    if input.numel() != g.size() * output.numel():
        raise ValueError("input tensor must be the same size as output size times world size")
    send, _ = _array_of(input, reduction=True)
    receive, write_back = _array_of(output, reduction=True)
    base, after = _reduce_parts(receive, op, g)
    work = g.reduce_scatter(receive, send, base)._then_finish(_finish(after, write_back))
    work._result = [output]
    return _run(work, async_op)


def reduce_scatter(output, input_list, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce the ranks' ``input_list`` element-wise; rank i keeps the reduction of ``input_list[i]``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    g = state.resolve(group)
    if g is None:
        return None
    if len(input_list) != g.size():
        raise ValueError(f"reduce_scatter: input_list must hold {g.size()} tensors, got {len(input_list)}")
    _check_same(input_list, output, "reduce_scatter")
    send = np.concatenate([_array_of(t, reduction=True)[0].reshape(-1) for t in input_list])
    receive, write_back = _array_of(output, reduction=True)
    base, after = _reduce_parts(receive, op, g)
    work = g.reduce_scatter(receive, send, base)._then_finish(_finish(after, write_back))
    work._result = [output]
    return _run(work, async_op)


def reduce(tensor, dst: int = 0, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False, group_dst=None):
    """Reduce ``tensor`` across ranks into ``tensor`` of global rank ``dst`` (others keep theirs)."""
    _check_tensor(tensor, "tensor")
    g = state.resolve(group)
    if g is None:
        return None
    root = group_dst if group_dst is not None else _group_rank(g, dst, "dst")
    array, write_back = _array_of(tensor, reduction=True)
    base, after = _reduce_parts(array, op, g)
    mine = g.rank() == root
    work = g.reduce(array, root, base)._then_finish(_finish(after, write_back) if mine else None)
    work._result = [tensor]
    return _run(work, async_op)


def gather(tensor, gather_list=None, dst: int = 0, group=None, async_op: bool = False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` on global rank ``dst`` (given there only)."""
    _check_tensor(tensor, "tensor")
    g = state.resolve(group)
    if g is None:
        return None
    root = group_dst if group_dst is not None else _group_rank(g, dst, "dst")
    array, _ = _array_of(tensor)
    output, finish = None, None
    if g.rank() == root:
        _check_list(gather_list, "gather_list")
        if len(gather_list) != g.size():
            raise ValueError(f"gather: gather_list must hold {g.size()} tensors, got {len(gather_list)}")
        _check_same(gather_list, tensor, "gather")
        output = np.empty((g.size(), array.size), array.dtype)

        def finish():
            for t, row in zip(gather_list, output):
                _write(t, row)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination ranks.")
    work = g.gather(output, array, root)._then_finish(finish)
    work._result = list(gather_list or [])
    return _run(work, async_op)


def scatter(tensor, scatter_list=None, src: int = 0, group=None, async_op: bool = False, group_src=None):
    """``scatter_list[i]`` of global rank ``src`` into ``tensor`` of rank i."""
    _check_tensor(tensor, "tensor")
    g = state.resolve(group)
    if g is None:
        return None
    root = group_src if group_src is not None else _group_rank(g, src, "src")
    output, write_back = _array_of(tensor)
    send = None
    if g.rank() == root:
        _check_list(scatter_list, "scatter_list")
        if len(scatter_list) != g.size():
            raise ValueError(f"scatter: scatter_list must hold {g.size()} tensors, got {len(scatter_list)}")
        _check_same(scatter_list, tensor, "scatter")
        send = np.concatenate([_array_of(t)[0].reshape(-1) for t in scatter_list])
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    work = g.scatter(output, send, root)._then_finish(write_back)
    work._result = [tensor]
    return _run(work, async_op)


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Wait until every rank of the group reached the barrier."""
    g = state.resolve(group)
    if g is None:
        return None
    return _run(g.barrier(), async_op)
