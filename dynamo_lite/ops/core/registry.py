"""The op registry: every op declared once with its meta rule and its array kernel."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .dispatch import dispatch


@dataclass(eq=False)
class Op:
    """One tensor operation: ``dl.ops.add`` etc. Calling it runs the op eagerly.

    Attributes:
        name: registry name (also the name generated code uses).
        meta: ``meta(*args, **kwargs)`` with TensorMetas in place of tensors; returns the
            output TensorMeta (or a tuple of them) or, for ops that return no tensor, a
            Python value. Raises the error eager would raise for bad input.
        kernel: ``kernel(xp, *args, out=..., **kwargs)`` with arrays in place of tensors;
            returns the result array(s). ``out`` holds arrays preallocated from the meta
            rule, which the kernel may write into directly.
        view: for view ops, ``view(geometry, *args, **kwargs)`` mapping the input's
            ``(sizes, strides, offset)`` to the output's; no kernel is needed.
        tags: ``pointwise`` (elementwise with broadcasting), ``reduction``, ``view``,
            ``inplace`` (mutates argument 0), ``random``, ``normalization`` (softmax-like:
            input-shaped output computed with reductions along a dim), ``scan`` (cumsum),
            ``matmul``, ``window`` (conv/pooling) ... used by passes and backends.
    """

    name: str
    meta: Callable
    kernel: Callable | None = None
    view: Callable | None = None
    tags: frozenset = field(default_factory=frozenset)
    doc: str = ""

    def __call__(self, *args, **kwargs):
        return dispatch(self, args, kwargs)

    @property
    def __name__(self) -> str:
        return self.name

    @property
    def is_pure(self) -> bool:
        return not (self.tags & {"inplace", "random"})

    def __repr__(self) -> str:
        return f"dl.ops.{self.name}"


class OpRegistry(dict):
    """name -> Op. Module-level because ops are declarations, like functions in a module."""

    def register(self, name, *, meta, kernel=None, view=None, tags=(), doc=""):
        if name in self:
            raise ValueError(f"op {name!r} is already registered")
        if (kernel is None) == (view is None):
            raise ValueError(f"op {name!r} needs exactly one of kernel= or view=")
        tags = frozenset(tags) | ({"view"} if view is not None else frozenset())
        op = Op(name, meta, kernel, view, tags, doc)
        self[name] = op
        return op


REGISTRY = OpRegistry()
register_op = REGISTRY.register


def get_op(name: str) -> Op:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} in the registry") from None


def register_table(table: dict, tags, inplace_variant) -> dict:
    """Register ``{name: (meta, kernel, has_inplace)}``: each op with ``tags``, plus an in-place
    ``name_`` (tagged ``inplace``, meta ``inplace_variant(meta)``) where ``has_inplace``.

    Returns name -> Op for all of them.
    """
    ops = {}
    for name, (meta, kernel, has_inplace) in table.items():
        ops[name] = register_op(name, meta=meta, kernel=kernel, tags=tags)
        if has_inplace:
            ops[name + "_"] = register_op(name + "_", meta=inplace_variant(meta), kernel=kernel, tags=("inplace",))
    return ops
