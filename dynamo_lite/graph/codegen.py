"""Python source generation for a Graph: one line per node, globals for targets and constants."""
from __future__ import annotations

import builtins
import keyword
import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ..ops.core.registry import Op
from ..tensor.dtype import dtype as DType
from .namespace import Namespace, sanitize
from .node import Node

_BINARY = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.and_: "&", operator.or_: "|", operator.xor: "^", operator.lshift: "<<",
    operator.rshift: ">>", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}

_DOTTED_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
# Constants that ``repr`` turns into source evaluating to an equal value of the same type.
_LITERAL_TYPES = (bool, int, str, bytes, type(None))


@dataclass
class GeneratedCode:
    """The source of ``forward`` and the globals it must run with.

    Attributes:
        source: the text of ``def forward(...)``.
        globals: global name -> object (targets, attributes, non-literal constants).
        attribute_globals: attribute qualified name -> the global names bound to it.
    """

    source: str
    globals: dict = field(default_factory=dict)
    attribute_globals: dict = field(default_factory=dict)


def generate_code(graph, resolve_attribute: Callable[[str], Any],
                  annotate: Callable[[Node], str] | None = None) -> GeneratedCode:
    """Generate ``def forward(<placeholders>):`` for ``graph``.

    Args:
        graph: the Graph to translate.
        resolve_attribute: qualified name -> object, for get_attr and call_module nodes
            (they are bound once, as globals, when the code is generated).
        annotate: if given, ``annotate(node)`` is appended to the node's line as a comment.

    Example:
        >>> print(generate_code(g, attrs.__getitem__).source)
        def forward(x, y):
            add = ops_add(x, y);  del x, y
            return add
    """
    return _CodeGen(graph, resolve_attribute, annotate).run()


class _CodeGen:
    def __init__(self, graph, resolve_attribute, annotate):
        self.graph = graph
        self.resolve = resolve_attribute
        self.annotate = annotate
        # Globals live beside the function's locals, so they must avoid every node name.
        self.namespace = Namespace()
        for name in ("__name__", "__loader__", "__builtins__"):
            self.namespace.reserve(name)
        for node in graph.nodes:
            self.namespace.reserve(node.name)
        self.out = GeneratedCode("")
        self._bound: dict[Any, str] = {}

    # -- globals -----------------------------------------------------------------------
    def bind(self, key, value, base: str) -> str:
        """A global name for ``value``; the same key always gets the same name."""
        name = self._bound.get(key)
        if name is None:
            name = self._bound[key] = self.namespace.create_name(base)
            self.out.globals[name] = value
        return name

    def bind_attribute(self, qualname: str, base: str, name: str | None = None) -> str:
        if name is None:
            name = self.bind(("attr", base, qualname), self.resolve(qualname), base)
        else:
            self.out.globals[name] = self.resolve(qualname)
        bound = self.out.attribute_globals.setdefault(qualname, [])
        if name not in bound:
            bound.append(name)
        return name

    def callable_name(self, target) -> str:
        name = getattr(target, "__name__", None)
        if isinstance(name, str) and getattr(builtins, name, None) is target:
            return name  # a real builtin: node names never shadow builtins
        if isinstance(target, Op):
            base = f"ops_{target.name}"
        else:
            base = name if isinstance(name, str) else type(target).__name__
        return self.bind(("id", id(target)), target, base)

    # -- expressions -------------------------------------------------------------------
    def expr(self, value) -> str:
        """Source for an argument value: node names, literals, or globals for other objects."""
        if isinstance(value, Node):
            return value.name
        if isinstance(value, _LITERAL_TYPES):
            return repr(value)
        if isinstance(value, float):
            return repr(value) if math.isfinite(value) else f"float('{value!r}')"
        if isinstance(value, complex) and math.isfinite(abs(value)):
            return repr(value)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            make = self.bind(("id", id(type(value))), type(value), type(value).__name__)
            return f"{make}({', '.join(self.expr(v) for v in value)})"
        if isinstance(value, tuple):
            inner = ", ".join(self.expr(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.expr(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self.expr(k)}: {self.expr(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({self.expr(value.start)}, {self.expr(value.stop)}, {self.expr(value.step)})"
        if value is Ellipsis:
            return "..."
        return self.bind(("id", id(value)), value, _constant_base_name(value))

    def operand(self, value) -> str:
        """An operand of an infix operator, parenthesized unless it is atomic."""
        text = self.expr(value)
        atomic = isinstance(value, Node) or (isinstance(value, (int, float)) and text[0] != "-" and "(" not in text)
        return text if atomic else f"({text})"

    def index(self, value) -> str:
        """Subscript source: ``x[:, 0]`` rather than ``x[(slice(None, None, None), 0)]``."""
        if isinstance(value, tuple) and value and not hasattr(value, "_fields"):
            return ", ".join(self.index_item(v) for v in value) + ("," if len(value) == 1 else "")
        return self.index_item(value)

    def index_item(self, value) -> str:
        if isinstance(value, slice):
            parts = ["" if p is None else self.expr(p) for p in (value.start, value.stop, value.step)]
            return ":".join(parts[:2]) + (f":{parts[2]}" if parts[2] else "")
        return self.expr(value)

    def call_args(self, args, kwargs) -> str:
        parts = [self.expr(a) for a in args]
        if all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in kwargs):
            parts += [f"{k}={self.expr(v)}" for k, v in kwargs.items()]
        elif kwargs:
            parts.append(f"**{self.expr(dict(kwargs))}")
        return ", ".join(parts)

    def call_function(self, node: Node) -> str:
        target, args, kwargs = node.target, node.args, node.kwargs
        if not kwargs:
            if target is operator.getitem and len(args) == 2:
                return f"{self.operand(args[0])}[{self.index(args[1])}]"
            if target in _BINARY and len(args) == 2:
                return f"{self.operand(args[0])} {_BINARY[target]} {self.operand(args[1])}"
            if target in _UNARY and len(args) == 1:
                return f"{_UNARY[target]}{self.operand(args[0])}"
        return f"{self.callable_name(target)}({self.call_args(args, kwargs)})"

    def call_method(self, node: Node) -> str:
        receiver, *rest = node.args
        rest_src = self.call_args(rest, node.kwargs)
        if node.target.isidentifier():
            return f"{self.operand(receiver)}.{node.target}({rest_src})"
        return f"getattr({self.expr(receiver)}, {node.target!r})({rest_src})"

    def call_module(self, node: Node) -> str:
        module = self.bind_attribute(node.target, "module_" + sanitize(node.target))
        return f"{module}({self.call_args(node.args, node.kwargs)})"

    # -- statements --------------------------------------------------------------------
    def run(self) -> GeneratedCode:
        nodes = list(self.graph.nodes)
        last_use = _last_uses(nodes)
        params, header, body = [], [], []
        expression_of = {"call_function": self.call_function, "call_method": self.call_method,
                         "call_module": self.call_module}
        for node in nodes:
            note = f"  # {self.annotate(node)}" if self.annotate else ""
            if node.op == "placeholder":
                params.append(node.name)
                if self.annotate:
                    header.append(f"# {node.name}: {self.annotate(node)}")
                continue
            if node.op == "get_attr":
                # Bound once as a global named like the node: no per-call lookup.
                self.bind_attribute(node.target, node.name, name=node.name)
                extra = f", {self.annotate(node)}" if self.annotate else ""
                header.append(f"# {node.name}: attribute {node.target!r}{extra}")
                continue
            if node.op == "output":
                body.append(f"return {self.expr(node.args[0])}")
                continue
            expression = expression_of[node.op](node)
            line = f"{node.name} = {expression}" if node.users else expression
            dead = [n.name for n in last_use.get(node, ()) if n.op != "get_attr"]
            if dead:
                line += f";  del {', '.join(dead)}"  # free intermediates as early as eager would
            body.append(line + note)
        if not body or not body[-1].startswith("return"):
            body.append("return None")
        lines = [f"def forward({', '.join(params)}):"] + ["    " + line for line in header + body]
        self.out.source = "\n".join(lines) + "\n"
        return self.out


def _constant_base_name(value) -> str:
    """A readable global name for a constant: ``float32``, ``contiguous_format``, ``generator``."""
    if isinstance(value, DType):
        return value.name
    type_name = type(value).__name__.lower().lstrip("_") or "constant"
    if hasattr(value, "shape"):  # tensors and arrays: their repr is long and slow
        return f"{type_name}_constant"
    text = repr(value)
    if _DOTTED_NAME.match(text):  # e.g. "dl.contiguous_format"
        return text.rsplit(".", 1)[-1]
    return type_name


def _last_uses(nodes: list) -> dict:
    """node -> the values whose last reader it is (values read by output are never freed)."""
    last_reader: dict[Node, Node] = {}
    for node in nodes:
        for arg in node._input_nodes:
            last_reader[arg] = node
    freed: dict[Node, list] = {}
    for value in nodes:  # in definition order, so ``del`` lists read naturally
        reader = last_reader.get(value)
        if reader is not None and reader.op != "output":
            freed.setdefault(reader, []).append(value)
    return freed
