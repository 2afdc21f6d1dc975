"""FunctionBuilder: the source text and globals of one generated NumPy function.

The generated function is straight-line Python: a signature check, one statement per
scheduled node (a kernel call writing into a preallocated array), fused groups as block
loops (``fused.py``), and the outputs wrapped as Tensors. Arrays are referred to by
local names the builder hands out; a value's array is defined where it is first needed.

NOTE: [one function for all sizes] Every number that depends on the inputs' geometry
(a view's sizes and strides, an output's allocation, a fused group's window over its
iteration space) is written through ``FunctionBuilder.per_shape``: a literal in the
function of a static graph, a local unpacked with the pool set in the function of a
graph with symbolic sizes. Pool sets are made per concrete shape (``ShapePlan``), so
that one function, compiled once, runs every size: a new size costs an analysis of the
graph for it (metas, geometry, buffer and block plans), no code generation.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np

from dynamo_lite.graph.node import Node, format_arg
from dynamo_lite.graph.namespace import sanitize

from . import runtime

_LITERALS = (bool, int, str, type(None))
# View ops whose NumPy method gives the exact geometry of the view rule.
_METHOD_VIEWS = {
    "transpose": lambda node: f".swapaxes({node.args[1]}, {node.args[2]})",
    "permute": lambda node: f".transpose({tuple(node.args[1])})",
    "alias": lambda node: "",
    "detach": lambda node: "",
}


@dataclass
class FunctionBuilder:
    """Accumulates the body, the globals and the pool-set layout of one function.

    Attributes:
        shape: the ShapePlan of the inputs the function is generated for.
        symbolic: whether geometry is read per shape (NOTE: [one function for all sizes]).
        lines: body lines (without the function's own indentation).
        preamble: module-level lines before ``forward`` (the functions of blocked groups).
        globals: name -> object the code refers to.
        pool_entries: ``(local name, builder(pool_memory) -> object)`` of one pool set,
            unpacked into locals at the start of each call.
    """

    shape: object
    symbolic: bool = False
    lines: list = field(default_factory=list)
    preamble: list = field(default_factory=list)
    globals: dict = field(default_factory=dict)
    pool_entries: list = field(default_factory=list)
    indent: int = 1
    _names: set = field(default_factory=set)
    _bound: dict = field(default_factory=dict)
    _arrays: dict = field(default_factory=dict)
    _tensors: dict = field(default_factory=dict)
    _root_memory: dict = field(default_factory=dict)

    @property
    def values(self) -> dict:
        """node -> Value (see ``values.py``) for the shape the function is generated for."""
        return self.shape.values

    # -- names and globals ---------------------------------------------------------------
    def fresh_name(self, base: str) -> str:
        base = sanitize(base) or "v"
        name, i = base, 1
        while name in self._names:
            name = f"{base}_{i}"
            i += 1
        self._names.add(name)
        return name

    def bind(self, obj, base: str) -> str:
        """A global name for ``obj`` (the same object always gets the same name)."""
        key = id(obj)
        if key not in self._bound:
            name = self.fresh_name(f"_{base}")
            self.globals[name] = obj
            self._bound[key] = (name, obj)  # keep obj alive so its id stays unique
        return self._bound[key][0]

    def ufunc(self, name: str) -> str:
        return self.bind(getattr(np, name), f"np_{name}")

    def const(self, value, dtype) -> str:
        """A global 0-d array of ``dtype`` holding ``value`` (cheaper for ufuncs than a scalar)."""
        key = ("const", type(value), value, np.dtype(dtype).str)
        if key not in self._bound:
            array = np.array(value, dtype=dtype)
            array.flags.writeable = False
            name = self.fresh_name(f"_c_{np.dtype(dtype).name}")
            self.globals[name] = array
            self._bound[key] = (name, array)
        return self._bound[key][0]

    def emit(self, text: str) -> None:
        self.lines.append("    " * (self.indent - 1) + text)

    def comment(self, node) -> None:
        """``# name = op(args)``: which graph node the next statements compute."""
        args = [format_arg(a, node_prefix="") for a in node.args]
        args += [f"{k}={format_arg(v, node_prefix='')}" for k, v in node.kwargs.items()]
        target = getattr(node.target, "name", getattr(node.target, "__name__", str(node.target)))
        text = " ".join(f"# {node.name} = {target}({', '.join(args)})".split())  # an array's repr spans lines
        self.emit(text if len(text) <= 100 else text[:97] + "...")

    @contextlib.contextmanager
    def redirect(self, lines: list, indent: int):
        """Emit into ``lines`` at ``indent`` (a nested function's body) for the block."""
        saved = self.lines, self.indent
        self.lines, self.indent = lines, indent
        try:
            yield
        finally:
            self.lines, self.indent = saved

    def pool_entry(self, base: str, build) -> str:
        """A local name bound, per pool set, to ``build(pool_memory)``.

        ``build`` must find what it needs through ``pool_memory.shape`` (values by key,
        group plans by group), never through objects of this analysis: it also builds
        the pool sets of other shapes (NOTE: [one function for all sizes])."""
        name = self.fresh_name(base)
        self.pool_entries.append((name, build))
        return name

    def per_shape(self, base: str, describe) -> str:
        """Source for ``describe(shape_plan)``, a constant that depends on the inputs' geometry
        (NOTE: [one function for all sizes])."""
        if not self.symbolic:
            return self.literal(describe(self.shape))
        return self.pool_entry(base, lambda mem: describe(mem.shape))

    def geometry(self, base: str, value, describe) -> str:
        """``per_shape`` of ``describe(v)``, ``v`` being ``value`` in the shape's analysis."""
        return self.per_shape(base, lambda shape, key=value.key: describe(shape.by_key[key]))

    # -- expressions -----------------------------------------------------------------------
    def literal(self, value) -> str:
        """Source for a constant argument: literals where exact, else a bound global."""
        if isinstance(value, _LITERALS):
            return repr(value)
        if isinstance(value, float):
            return repr(value) if math.isfinite(value) else self.bind(value, "float")
        if isinstance(value, tuple) and not hasattr(value, "_fields"):
            inner = ", ".join(self.literal(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self.literal(v) for v in value) + "]"
        if isinstance(value, slice):
            return f"slice({self.literal(value.start)}, {self.literal(value.stop)}, {self.literal(value.step)})"
        return self.bind(value, _base_name(value))

    def argument(self, value) -> str:
        """Source for a kernel argument: tensors as arrays, containers mapped, constants."""
        if isinstance(value, Node):
            v = self.values[value]
            return self.object_of(v) if v.kind in ("object", "size") else self.array_of(v)
        if isinstance(value, (tuple, list)) and any(isinstance(v, Node) for v in _flatten(value)):
            inner = ", ".join(self.argument(v) for v in value)
            if isinstance(value, list):
                return f"[{inner}]"
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, dict) and any(isinstance(v, Node) for v in value.values()):
            return "{" + ", ".join(f"{self.literal(k)}: {self.argument(v)}" for k, v in value.items()) + "}"
        return self.literal(value)

    def object_of(self, value) -> str:
        """The name of an input or attribute: a placeholder's parameter, an attribute's global."""
        if value.kind in ("input", "size") or (value.kind == "object" and value.node.op == "placeholder"):
            return value.node.name
        return self.bind(value.obj, value.node.name)

    # -- arrays and tensors of values -------------------------------------------------------
    def array_of(self, value) -> str:
        """A local name (or short expression) holding ``value``'s array, defining it if needed."""
        name = self._arrays.get(value)
        if name is not None:
            return name
        root = value.root
        if root.kind == "buffer":
            name = self.pool_entry(f"{value.name}_a", lambda mem, key=value.key: mem.array(mem.shape.by_key[key]))
        elif value is root and value.kind in ("input", "param"):
            name = self.fresh_name(f"{value.name}_a")
            self.emit(f"{name} = {self.object_of(value)}._array()")
        elif value.kind == "alias":
            return self.array_of(value.base)
        elif value.kind == "view":
            name = self._view_array(value)
        else:
            raise AssertionError(f"{value.name}: array requested before it was allocated")
        self._arrays[value] = name
        return name

    def _view_array(self, value) -> str:
        method = _METHOD_VIEWS.get(value.node.target.name)
        if method is not None:
            expr = self.array_of(value.base) + method(value.node)
            if len(value.readers) == 1 and not _is_output_read(value):
                return expr  # folded into its one reader's call, e.g. np.matmul(x, w.swapaxes(0, 1))
        else:
            dtype = self.bind(value.dtype.numpy, f"dt_{value.dtype.name}")
            sizes = self.geometry(f"{value.name}_sizes", value, lambda v: v.sizes)
            offset = self.geometry(f"{value.name}_offset", value, lambda v: v.offset * v.dtype.itemsize)
            strides = self.geometry(f"{value.name}_strides", value, lambda v: v.byte_strides)
            expr = f"{self.bind(runtime.window, 'window')}({self.root_memory(value.root)}, {sizes}, {dtype}, {offset}, {strides})"
        name = self.fresh_name(f"{value.name}_a")
        self.emit(f"{name} = {expr}")
        return name

    def root_memory(self, root) -> str:
        """An expression for the flat uint8 memory of an input, attribute or fresh root."""
        name = self._root_memory.get(root)
        if name is None:
            name = self.fresh_name(f"{root.name}_mem")
            self.emit(f"{name} = {self.tensor_of(root)}._storage.data")
            self._root_memory[root] = name
        return name

    def allocate_fresh(self, value) -> str:
        """Emit a new tensor for a fresh root; returns its array's name."""
        tensor = self.fresh_name(f"{value.name}_t")
        array = self.fresh_name(f"{value.name}_a")
        dtype = self.bind(value.dtype, f"dl_{value.dtype.name}")
        geometry = self._star(self.geometry(f"{value.name}_geometry", value,
                                            lambda v: (v.nbytes, v.sizes, v.strides, v.byte_strides)))
        self.emit(f"{tensor}, {array} = {self.bind(runtime.fresh_tensor, 'fresh_tensor')}({geometry}, {dtype})")
        self._tensors[value] = tensor
        self._arrays[value] = array
        return array

    def tensor_of(self, value) -> str:
        """A Tensor for ``value`` (outputs, version bumps): the very object eager would give."""
        name = self._tensors.get(value)
        if name is not None:
            return name
        if value.kind in ("input", "param", "object"):
            return self.object_of(value)
        if value.kind == "alias":
            return self.tensor_of(value.base)
        if value.kind != "view":
            raise AssertionError(f"{value.name}: no tensor for a {value.kind} value")
        name = self.fresh_name(f"{value.name}_t")
        root = self.tensor_of(value.root)
        dtype = "" if value.dtype is value.root.dtype else f", {self.bind(value.dtype, f'dl_{value.dtype.name}')}"
        geometry = self._star(self.geometry(f"{value.name}_view", value, lambda v: (v.sizes, v.strides, v.offset)))
        self.emit(f"{name} = {root}._view({geometry}{dtype})")
        self._tensors[value] = name
        return name

    @staticmethod
    def _star(source: str) -> str:
        """Call arguments from a tuple's source: its items written out, or ``*name``."""
        return source[1:-1] if source.startswith("(") else f"*{source}"

    def output(self, structure) -> str:
        """Source for the returned structure (tuples/lists/dicts of output nodes and constants)."""
        if isinstance(structure, Node):
            value = self.values[structure]
            return self.object_of(value) if value.kind in ("object", "size") else self.tensor_of(value)
        if isinstance(structure, tuple) and not hasattr(structure, "_fields"):
            inner = ", ".join(self.output(v) for v in structure)
            return f"({inner},)" if len(structure) == 1 else f"({inner})"
        if isinstance(structure, list):
            return "[" + ", ".join(self.output(v) for v in structure) + "]"
        if isinstance(structure, dict):
            return "{" + ", ".join(f"{self.literal(k)}: {self.output(v)}" for k, v in structure.items()) + "}"
        return self.literal(structure)


def _is_output_read(value) -> bool:
    return any(r.op == "output" for r in value.readers)


def _flatten(value):
    for v in value:
        if isinstance(v, (tuple, list)):
            yield from _flatten(v)
        else:
            yield v


def _base_name(value) -> str:
    name = getattr(value, "name", None) or getattr(value, "__name__", None)
    if isinstance(name, str) and name.isidentifier():
        return name
    return type(value).__name__.lower().lstrip("_") or "constant"
