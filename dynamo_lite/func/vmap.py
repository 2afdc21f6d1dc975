"""dl.vmap: map a function over a dimension of its tensor arguments.

NOTE: [vmap per slice] dynamo_lite runs ``func`` once per index of the mapped dimension (on
``select``-ed views) and stacks the results along ``out_dims``: the values equal a batched
run's, with one call per slice. ``randomness`` is honoured by watching dynamo_lite's generator:
"error" raises torch's RuntimeError when the first slice drew random numbers, "same" replays
the generator state for every slice, "different" lets each slice draw its own. An output with
``out_dims=None`` must be the same for every slice (torch raises for an output that depends on
the mapped inputs; here one that happens to be equal across slices is accepted). dl.func runs
eagerly in compiled code (a graph break: the generator watch needs real draws).
"""
from __future__ import annotations

import functools

from ..ops.core import api as ops
from ..tensor.generator import default_generator
from ..tensor.tensor import Tensor

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")
_LEAF = object()  # the structure of a non-container value


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _structure(value):
    """A value's container structure, for messages and checks: nested tuples/lists/dicts of ``*``."""
    if isinstance(value, (tuple, list)):
        return type(value)(_structure(v) for v in value)
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    return "*"


def _broadcast_dims(dims, value, prefix: str, what: str):
    """``dims`` spread over ``value``'s structure: a list of ``(leaf, dim)`` pairs in order."""
    if dims is None or isinstance(dims, int):
        return [(leaf, dims) for leaf in _leaves(value)]
    if isinstance(dims, (tuple, list)) and isinstance(value, (tuple, list)) and len(dims) == len(value):
        return [pair for d, v in zip(dims, value) for pair in _broadcast_dims(d, v, prefix, what)]
    if isinstance(dims, dict) and isinstance(value, dict) and dims.keys() == value.keys():
        return [pair for k in value for pair in _broadcast_dims(dims[k], value[k], prefix, what)]
    raise ValueError(f"{prefix}{what}_dims is not compatible with the structure of `{what}puts`. {what}_dims has "
                     f"structure {_structure(dims)} but {what}puts has structure {_structure(value)}.")


def _leaves(value) -> list:
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def _rebuild(value, leaves):
    """``value``'s structure with its leaves taken in order from the iterator ``leaves``."""
    if isinstance(value, (tuple, list)):
        return type(value)(_rebuild(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _rebuild(v, leaves) for k, v in value.items()}
    return next(leaves)


def _mapped_leaves(func, in_dims, args) -> tuple:
    """``(batch size, [(leaf, normalized dim or None)])`` for the positional arguments."""
    prefix = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not (in_dims is None or isinstance(in_dims, (int, tuple))):
        raise ValueError(f"{prefix}expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")
    dims = (in_dims,) * len(args) if not isinstance(in_dims, tuple) else in_dims
    pairs = _broadcast_dims(dims, args, prefix, "in")
    normalized, sizes = [], []
    for leaf, dim in pairs:
        if dim is None:
            normalized.append((leaf, None))
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"{prefix}Got in_dim={dim} for an input but the input is of type {type(leaf)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        ndim = leaf.dim()
        if not -ndim <= dim < ndim:
            raise ValueError(f"{prefix}Got in_dim={dim} for some input, but that input is a Tensor of dimensionality "
                             f"{ndim} so expected in_dim to satisfy -{ndim} <= in_dim < {ndim}.")
        normalized.append((leaf, dim % ndim))
        sizes.append(leaf.shape[dim])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], normalized


def _slice_args(args, pairs, index):
    leaves = iter(leaf if dim is None else leaf.select(dim, index) for leaf, dim in pairs)
    return _rebuild(args, leaves)


def _stack_outputs(func, results, out_dims):
    """The slices' outputs joined: each output leaf stacked along its out_dim (None: one shared value)."""
    name = _name(func)
    first = results[0]
    pairs = _broadcast_dims(out_dims, first, f"vmap({name}, ..., out_dims={out_dims})(<inputs>): ", "out")
    per_slice = [_leaves(result) for result in results]
    joined = []
    for position, (leaf, dim) in enumerate(pairs):
        values = [leaves[position] for leaves in per_slice]
        if dim is None:
            if isinstance(leaf, Tensor) and not all(ops.equal(leaf, v) for v in values[1:]):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None")
            joined.append(leaf)
            continue
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(leaf)}. Did you "
                             "mean to set out_dims= to None for output?")
        joined.append(ops.stack(values, dim))
    return _rebuild(first, iter(joined))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its arguments, results stacked along ``out_dims``
    (NOTE: [vmap per slice]).

    Args:
        func: the function of one slice.
        in_dims: the mapped dim of each positional argument: an int for all, or a tuple with one
            entry per argument (None: not mapped; nested tuples for nested arguments).
        out_dims: where the mapped dim goes in each output (int, or a tuple per output).
        randomness: "error" (random draws inside raise), "same" or "different".
        chunk_size: accepted for compatibility (slices always run one at a time).

    Example:
        >>> dl.vmap(dl.dot)(dl.ones(3, 2), dl.ones(3, 2)).tolist()
        [2.0, 2.0, 2.0]
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")

    @functools.wraps(func)
    def mapped(*args, **kwargs):
        batch_size, pairs = _mapped_leaves(func, in_dims, args)
        start = default_generator.get_state()
        results = []
        for index in range(batch_size):
            if randomness == "same":
                default_generator.set_state(start)
            results.append(func(*_slice_args(args, pairs, index), **kwargs))
            if index == 0 and randomness == "error" and not ops.equal(default_generator.get_state(), start):
                raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use "
                                   "the 'same' or 'different' randomness flags on vmap or perform the randomness "
                                   "operation out of vmap")
        return _stack_outputs(func, results, out_dims)

    mapped.__module__ = __name__  # functools.wraps copied func's; trace rules read it (NOTE: [vmap per slice])
    return mapped
