"""ShapeProp: fill every node's meta["val"] by running the ops' meta rules on TensorMetas."""
from __future__ import annotations

import operator
from typing import Any

from ..ops.core.registry import REGISTRY, Op
from ..tensor.meta import TensorMeta
from ..tensor.symint import SIZE_FUNCTIONS
from ..tensor.tensor import Tensor
from .interpreter import Interpreter
from .node import Node, map_aggregate


def to_meta(value: Any) -> Any:
    """Tensors (also inside containers) become TensorMetas; everything else stays."""
    return map_aggregate(value, lambda v: TensorMeta.of(v) if isinstance(v, Tensor) else v)


def _has_tensor_meta(value) -> bool:
    found = []
    map_aggregate(value, lambda v: found.append(v) if isinstance(v, TensorMeta) else None)
    return bool(found)


class ShapeProp(Interpreter):
    """Propagate TensorMetas through a graph without touching any data.

    Registry Ops run their meta rule; ``operator.getitem`` indexes tuple-valued metas;
    Tensor methods use the registry op of the same name; other callables run only when
    no TensorMeta is among their arguments. A node ShapeProp cannot infer keeps a
    ``meta["val"]`` someone set before, otherwise it raises.

    Example:
        >>> ShapeProp(gm).propagate(dl.randn(2, 3), TensorMeta((3,), dl.float32))
        >>> gm.graph.output_node.args[0].meta["val"]
        TensorMeta(shape=[2, 3], dtype=float32, strides=[3, 1], device=cpu)
    """

    def __init__(self, module):
        super().__init__(module, garbage_collect_values=True)
        self._node: Node | None = None

    def propagate(self, *args) -> Any:
        """Fill ``meta["val"]`` from example inputs (Tensors or TensorMetas); returns the output meta."""
        return self.run(*(to_meta(a) for a in args))

    def run_node(self, node: Node) -> Any:
        self._node = node
        value = super().run_node(node)
        if node.op != "output":
            node.meta["val"] = value
        return value

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        return to_meta(super().get_attr(target, args, kwargs))

    def call_function(self, target, args: tuple, kwargs: dict) -> Any:
        if isinstance(target, Op):
            return target.meta(*args, **kwargs)
        if target is operator.getitem and isinstance(args[0], (tuple, list)):
            return args[0][args[1]]
        if target in SIZE_FUNCTIONS:  # sizes of symbolic graphs: ints (or SymInts) from metas
            return target(*args, **kwargs)
        graph_meta = getattr(target, "graph_meta", None)  # a callable with a meta rule (graph/scan.py)
        if graph_meta is not None:
            return graph_meta(*args, **kwargs)
        return self._python_call(target, args, kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        op = REGISTRY.get(target)
        if op is not None and isinstance(args[0], TensorMeta):
            return op.meta(*args, **kwargs)
        return self._python_call(lambda obj, *a, **k: getattr(obj, target)(*a, **k), args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        return self._known_or_fail(f"call_module {target!r}")

    def _python_call(self, fn, args: tuple, kwargs: dict) -> Any:
        if _has_tensor_meta((args, kwargs)):
            return self._known_or_fail(f"{self._node.op} {self._node.name}")
        return fn(*args, **kwargs)

    def _known_or_fail(self, what: str) -> Any:
        if "val" in self._node.meta:
            return self._node.meta["val"]
        raise RuntimeError(
            f"ShapeProp cannot infer the output of {what}: it has no meta rule; "
            f"set node.meta['val'] on {self._node.name} before propagating"
        )
