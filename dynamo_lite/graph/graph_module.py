"""GraphModule: a Graph plus its attributes, compiled once to real Python source."""
from __future__ import annotations

import copy
import itertools
import linecache
import types
import weakref
from typing import Any

from .codegen import GeneratedCode, generate_code
from .graph import Graph
from .printing import node_value

_COMPILE_IDS = itertools.count()


class _SourceLoader:
    """A ``__loader__`` for generated code, so tracebacks find lines even after
    ``linecache.clearcache()`` (``linecache`` asks it via ``get_source``)."""

    def __init__(self, source: str):
        self.source = source

    def get_source(self, module_name: str) -> str:
        return self.source


class GraphModule:
    """A Graph, the objects its ``get_attr``/``call_module`` nodes name, and compiled code.

    Calling the module runs the generated ``forward`` directly: attributes and targets
    are bound as globals when the code is compiled, so a call costs what the
    straight-line code costs. After editing ``gm.graph`` call :meth:`recompile`.

    Args:
        root: where attributes come from: a dict keyed by qualified name
            (``{"linear.weight": w}``), an object whose attributes are looked up along
            each dotted target, or None.
        graph: the Graph to compile; it is not copied.
        class_name: name shown in printouts and tracebacks.

    Example:
        >>> gm = GraphModule({"w": w}, g)
        >>> gm(x)
        >>> print(gm.code)
        def forward(x):
            # w: attribute 'w'
            matmul = ops_matmul(x, w);  del x
            return matmul
    """

    def __new__(cls, *args, **kwargs):
        # NOTE: [one class per GraphModule] each instance gets its own subclass so that
        # ``__call__`` can be the compiled function itself (a staticmethod): calling the
        # module then costs one call of ``forward``, not a Python-level trampoline.
        if not cls.__dict__.get("_per_instance", False):
            cls = type(cls.__name__, (cls,), {"_per_instance": True, "__module__": cls.__module__})
        return object.__new__(cls)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule"):
        self.class_name = class_name
        if root is None:
            self._attributes: dict[str, Any] = {}
        elif isinstance(root, dict):
            self._attributes = dict(root)
        else:
            self._attributes = {}
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    self._attributes[node.target] = _getattr_path(root, node.target.split("."), node.target)
        self._generated: GeneratedCode | None = None
        self.attribute_version = 0  # bumped by set_attribute / delete_attribute (callers cache attribute lookups)
        self.graph = graph  # compiles

    # -- graph and code ----------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, graph: Graph) -> None:
        self._graph = graph
        graph.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The generated source of ``forward``."""
        return self._generated.source

    @property
    def code_globals(self) -> dict:
        """The globals the generated code refers to (name -> object), for inspection."""
        return dict(self._generated.globals)

    def recompile(self) -> str:
        """Regenerate and compile ``forward`` from the (edited) graph; returns the source."""
        generated = generate_code(self._graph, self.get_attribute)
        compile_id = next(_COMPILE_IDS)
        # Not "<...>": linecache treats such names as unloadable pseudo-files.
        filename = f"<{self.class_name}_{compile_id}>.py"
        namespace = dict(generated.globals)
        namespace["__name__"] = f"dynamo_lite.generated.{self.class_name}_{compile_id}"
        namespace["__loader__"] = _SourceLoader(generated.source)
        exec(compile(generated.source, filename, "exec"), namespace)
        forward = namespace["forward"]
        forward.__qualname__ = f"{self.class_name}.forward"
        linecache.cache[filename] = (len(generated.source), None, generated.source.splitlines(True), filename)
        weakref.finalize(forward, linecache.cache.pop, filename, None)
        self._generated = generated
        self._globals = namespace
        self.forward = forward
        type(self).__call__ = staticmethod(forward)  # NOTE: [one class per GraphModule]
        return generated.source

    def __call__(self, *args, **kwargs):  # replaced per instance by recompile()
        return self.forward(*args, **kwargs)

    def print_readable(self, print_output: bool = True) -> str:
        """The generated code with every value's dtype/shape as a comment (printed and returned)."""
        text = generate_code(self._graph, self.get_attribute, annotate=node_value).source
        text = f"# {self.class_name}\n{text}"
        if print_output:
            print(text)
        return text

    # -- attributes --------------------------------------------------------------------
    @property
    def attributes(self) -> types.MappingProxyType:
        """Read-only view of qualified name -> object; change it with :meth:`set_attribute`."""
        return types.MappingProxyType(self._attributes)

    def get_attribute(self, qualname: str) -> Any:
        """The object under ``qualname``: an exact key, else a key prefix then attributes."""
        if qualname in self._attributes:
            return self._attributes[qualname]
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in self._attributes:
                return _getattr_path(self._attributes[prefix], parts[cut:], qualname)
        raise AttributeError(f"{self.class_name} has no attribute {qualname!r}")

    def has_attribute(self, qualname: str) -> bool:
        try:
            self.get_attribute(qualname)
        except AttributeError:
            return False
        return True

    def set_attribute(self, qualname: str, value: Any) -> None:
        """Add or replace an attribute; compiled code sees the new object immediately."""
        self._attributes[qualname] = value
        self.attribute_version += 1
        for bound_name, names in self._generated.attribute_globals.items():
            if bound_name == qualname or bound_name.startswith(qualname + "."):
                resolved = self.get_attribute(bound_name)
                for name in names:
                    self._globals[name] = resolved

    def delete_attribute(self, qualname: str) -> None:
        if self._used_by_graph(qualname):
            raise RuntimeError(f"attribute {qualname!r} is still used by the graph")
        del self._attributes[qualname]
        self.attribute_version += 1

    def delete_unused_attributes(self) -> list:
        """Drop attributes no get_attr/call_module node refers to; returns their names."""
        unused = [q for q in self._attributes if not self._used_by_graph(q)]
        for qualname in unused:
            del self._attributes[qualname]
        return unused

    def _used_by_graph(self, qualname: str) -> bool:
        for node in self._graph.nodes:
            if node.op in ("get_attr", "call_module"):
                if node.target == qualname or node.target.startswith(qualname + "."):
                    return True
        return False

    # -- copying and printing ------------------------------------------------------------
    def __deepcopy__(self, memo) -> "GraphModule":
        attributes = copy.deepcopy(self._attributes, memo)
        return GraphModule(attributes, copy.deepcopy(self._graph, memo), self.class_name)

    def __repr__(self) -> str:
        return f"<{self.class_name}: {len(self._graph.nodes)} nodes, {len(self._attributes)} attributes>"


def _getattr_path(obj, parts: list, qualname: str):
    for part in parts:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(f"cannot resolve attribute {qualname!r}: no {part!r}") from None
    return obj
