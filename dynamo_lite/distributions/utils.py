"""Helpers shared by the distributions: broadcasting parameters, probabilities <-> logits, lazy properties."""
from __future__ import annotations

from numbers import Number

from ..ops.core import api as ops
from ..tensor.dtype import get_default_dtype
from ..tensor.layout import broadcast_shapes
from ..tensor.tensor import Tensor
from ..tensor.type_info import finfo

class lazy_property(property):
    """A parameter derived from another (``probs`` from ``logits``), computed on first read and
    kept in the instance's ``_lazy`` dict; assigning it stores it there too.

    NOTE: [lazy parameters] A plain property with a getter and a setter written in Python,
    rather than ``functools.cached_property``, because the compiler inlines such properties
    (a cached_property is a descriptor it does not model: a graph break on every read), and
    the values live in a dict under constant keys, which it traces too (``setattr`` with a
    computed name it does not). ``parameter_values`` lists the values that exist yet.
    """

    def __init__(self, compute):
        name = compute.__name__

        def read(instance):
            cache = lazy_values(instance)
            if name not in cache:
                cache[name] = compute(instance)
            return cache[name]

        def write(instance, value):
            lazy_values(instance)[name] = value

        super().__init__(read, write, doc=compute.__doc__)

    def __set_name__(self, owner, name):
        owner.lazy_parameters = tuple(getattr(owner, "lazy_parameters", ())) + (name,)


def lazy_values(instance) -> dict:
    """The instance's computed lazy parameters by name (created empty on first use)."""
    cache = getattr(instance, "_lazy", None)
    if cache is None:
        cache = instance._lazy = {}
    return cache


def parameter_values(instance) -> dict:
    """The distribution's parameters that hold values, by name: a lazy one only once computed."""
    lazy = lazy_values(instance)
    found = {}
    for name in instance.arg_constraints:
        if name in type(instance).lazy_parameters:
            if name in lazy:
                found[name] = lazy[name]
        else:
            found[name] = getattr(instance, name)
    return found


def broadcast_all(*values):
    """Numbers become tensors (of the first tensor's dtype and device, else the default dtype); all are
    broadcast to one shape.

    Example:
        >>> [tuple(v.shape) for v in broadcast_all(dl.zeros(2), 1.0)]
        [(2,), (2,)]
    """
    for value in values:  # a loop, not all(...): the compiler traces it without a graph break
        if not isinstance(value, (Tensor, Number)):
                raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                             "implementing __torch_function__.")
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else get_default_dtype()
    device = like.device if like is not None else None
    tensors = [v if isinstance(v, Tensor) else ops.tensor(v, dtype=dtype, device=device) for v in values]
    shape = broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == tuple(shape) else t.expand(shape) for t in tensors)


def sum_rightmost(value, dims: int):
    """``value`` summed over its ``dims`` rightmost dims."""
    return value.reshape(tuple(value.shape[:value.dim() - dims]) + (-1,)).sum(-1) if dims > 0 else value


def clamp_probs(probs):
    """Probabilities kept ``eps`` away from 0 and 1 (so their logarithms stay finite)."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-probabilities (``is_binary``: the log-odds of a Bernoulli probability)."""
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (``is_binary``: sigmoid) or unnormalized log-probabilities (softmax)."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def as_shape(shape) -> tuple:
    """A sample or batch shape given as a Size, tuple, list or int, as a tuple.

    NOTE: [shapes as tuples] Distributions keep their shapes as plain tuples (the public
    ``batch_shape``/``event_shape`` return Sizes): the compiler traces tuple arithmetic, but
    building a Size inside a compiled region is a graph break.
    """
    return (shape,) if isinstance(shape, int) else tuple(shape)


def standard_normal(shape, like):
    """N(0, 1) draws of ``shape`` from dynamo_lite's generator, in ``like``'s dtype and device."""
    return ops.randn(shape, dtype=like.dtype, device=like.device)
