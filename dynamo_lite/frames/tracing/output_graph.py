"""OutputGraph: the graph being captured, its inputs, constants and guards."""
from __future__ import annotations

import contextlib
import operator
import re

from ...graph import Graph
from ...ops.core.dispatch import TRACING
from ...tensor.meta import TensorMeta
from ...tensor.shape_env import ShapeEnv
from ...tensor.sym_expr import Expr
from ...tensor.symint import SymInt
from ...tensor.tensor import Tensor
from ...autograd.grad_mode import GRAD_MODE
from . import guards as G
from ..errors import Unsupported
from .guards import GuardSet
from .proxy import DataDependent, ProxyTensor
from .shape_log import shape_observer
from .shape_guards import ValueSource, guarded_key, symbolic_geometry
from .sym_nodes import SymbolicNodes
from .side_effects import SideEffects
from .variables.base import ConstantVariable
from .variables.tensor import TensorVariable


def _identifier(text: str) -> str:
    """A readable node name for a source: ``self._modules['0'].weight`` -> ``self_0_weight``."""
    text = re.sub(r"\._(modules|parameters|buffers)\[", "[", text)
    name = re.sub(r"\W+", "_", text).strip("_")
    return name if name and not name[0].isdigit() else f"v_{name}"


class OutputGraph:
    """Everything one translation produces besides bytecode.

    Holds the Graph under construction, the tensors read from the frame (placeholders,
    in order, with their sources), constants lifted into graph attributes, and the guards.
    """

    def __init__(self, dynamic_dims=None):
        self.graph = Graph()
        self.attributes: dict = {}
        self.guards = GuardSet()
        self.input_variables: list = []
        self.example_inputs: list = []
        self._by_tensor_id: dict = {}
        self._keepalive: list = []
        self.side_effects = SideEffects()
        self.objects: dict = {}  # id(mutable object) -> its variable, so mutations are shared
        self.identity_keys: dict = {}  # identity -> source of the keys hashed by identity (identity_keys.py)
        self._rebinds: list = []  # (proxy, previous node) for in-place ops, undone on rollback
        self._nodes: list = []  # every node in creation order (placeholders are not appended last)
        self.grad_enabled = GRAD_MODE.enabled  # the mode traced under (guarded, see convert.py)
        self.grad_mode_blocks: list = []  # modes of the dl.no_grad()-like blocks being traced
        # Symbolic sizes (NOTE: [symbolic inputs] in shape_guards.py): ``dynamic_dims(source,
        # tensor)`` names the dims of an input that get symbols.
        self.dynamic_dims = dynamic_dims
        self.shape_env = ShapeEnv()
        self.shape_env.observer = shape_observer  # the ``dynamic`` log
        self.symbolic_tensors: list = []  # (source, strides) of inputs with symbolic sizes
        self.sym_nodes = SymbolicNodes(self)

    def release(self) -> None:
        """Forget the frame's objects once the entry is built: the translation's objects refer
        to each other in cycles, which must not keep the user's tensors alive until a
        garbage collection."""
        for variable in self.input_variables:  # a closure of the translator may keep the variable
            if getattr(variable, "value", None) is not None:
                variable.value = None
        self.input_variables, self.example_inputs, self._by_tensor_id = [], [], {}
        self._keepalive, self.objects, self._rebinds = [], {}, []
        self.side_effects = SideEffects()

    def _created(self, node):
        self._nodes.append(node)
        if self.grad_mode_blocks:  # NOTE: [compiled graphs and autograd] in translate/autograd_graphs.py
            node.meta["grad_enabled"] = self.grad_mode_blocks[-1]
        return node

    # -- graph breaks -----------------------------------------------------------------------
    def checkpoint(self) -> tuple:
        return (len(self._nodes), self.side_effects.checkpoint(), len(self._rebinds), len(self.input_variables))

    def nodes_since(self, checkpoint: tuple) -> list:
        return self._nodes[checkpoint[0]:]

    @contextlib.contextmanager
    def speculate(self):
        """Try something that may turn out Unsupported (a getattr with a default ...):
        if it does, undo everything it recorded before the caller moves on."""
        checkpoint = self.checkpoint()
        try:
            yield
        except Unsupported:
            self.rollback(checkpoint)
            raise

    def rollback(self, checkpoint: tuple) -> None:
        """Undo everything recorded after ``checkpoint`` (the instruction that broke)."""
        n_nodes, n_effects, n_rebinds, n_inputs = checkpoint
        erased = self._nodes[n_nodes:]
        del self._nodes[n_nodes:]
        for node in reversed(erased):
            self.graph.erase_node(node)
        self.side_effects.rollback(n_effects)
        for proxy, node in reversed(self._rebinds[n_rebinds:]):
            proxy.node = node
        del self._rebinds[n_rebinds:]
        erased_ids = {id(node) for node in erased}
        self.sym_nodes.forget(erased_ids)
        self._by_tensor_id = {k: v for k, v in self._by_tensor_id.items() if id(v.proxy.node) not in erased_ids}
        del self.input_variables[n_inputs:]
        del self.example_inputs[n_inputs:]

    # -- ints entering the graph (NOTE: [symbolic int inputs]) -----------------------------
    def wrap_int(self, value: int, source):
        """A SymInt for the frame's int at ``source`` if the dynamic policy makes it symbolic, else None."""
        decide = getattr(self.dynamic_dims, "int_is_dynamic", None)
        if decide is None or not decide(source, value):
            return None
        env = self.shape_env
        symint = env.create_symbol(value, ValueSource(source))
        symbol = symint.expr.as_symbol()
        self.sym_nodes.ints.setdefault(symbol, (source, value))
        self.guards.add(source, G.TYPE_MATCH, int)
        # An int equal to a size read before it is most likely that size (``n = x.shape[1]``
        # across a break): unify them (guarded ``n == s0``), so the graph reads the size.
        twin = next((s for s in env.symbols if s != symbol and env.hints[s] == value and s not in env.replacements),
                    None)
        if twin is not None and symint == SymInt(Expr.symbol(twin), env):
            return SymInt(Expr.symbol(twin), env)
        return symint

    def int_input(self, source, value: int):
        """The placeholder of a symbolic int whose value a node needs."""
        node = self._created(self.graph.placeholder(_identifier(source.name())))
        self.example_inputs.append(value)
        self.input_variables.append(ConstantVariable(value, source))
        return node

    def float_input(self, source, example: Tensor) -> ProxyTensor:
        """The placeholder of a lifted float (NOTE: [lifted floats]): ``source`` loads it as a 0-dim tensor."""
        node = self._created(self.graph.placeholder(_identifier(source.name())))
        node.meta["python_type"] = type(example)
        self.example_inputs.append(example)
        proxy = ProxyTensor.create(node, TensorMeta.of(example))
        self.input_variables.append(TensorVariable(proxy, source))
        return proxy

    # -- tensors entering the graph ---------------------------------------------------
    def wrap_tensor(self, tensor: Tensor, source, *, is_input: bool):
        known = self._by_tensor_id.get(id(tensor))
        if known is not None:
            if source is not None and known.source is not None and source != known.source:
                self.guards.add(source, G.ID_MATCH_SOURCE, known.source)
            return known
        meta = TensorMeta.of(tensor)
        if is_input and source is not None:
            node = self._created(self.graph.placeholder(_identifier(source.name())))
            key = G.tensor_key(tensor)
            dims = self.dynamic_dims(source, tensor) if self.dynamic_dims is not None else ()
            geometry = symbolic_geometry(tensor, source, dims, self.shape_env) if dims else None
            if geometry is not None:
                sizes, strides = geometry
                meta = TensorMeta.from_geometry(sizes, strides, meta._dtype, meta._device, meta._offset)
                key = guarded_key(key, sizes, strides)
                self.symbolic_tensors.append((source, strides))
                self.sym_nodes.note_input(node, sizes)
            self.guards.add(source, G.TENSOR_MATCH, key)
            self.example_inputs.append(tensor)
            variable = TensorVariable(ProxyTensor.create(node, meta), source)
            self.input_variables.append(variable)
        else:
            name = self._attribute_name(source.name() if source is not None else "constant")
            self.attributes[name] = tensor
            node = self._created(self.graph.get_attr(name))
            if source is not None:
                self.guards.add(source, G.ID_MATCH, tensor)
                # The graph bakes the constant's dtype and geometry in, and a Parameter keeps
                # its identity when its data is swapped (``.double()``, ``p.data = t``).
                self.guards.add(source, G.TENSOR_MATCH, G.tensor_key(tensor))
            variable = TensorVariable(ProxyTensor.create(node, meta), source)
        if source is not None and self.grad_enabled:  # NOTE: [compiled graphs and autograd]
            self.guards.add(source, G.REQUIRES_GRAD, tensor._requires_grad)
        node.meta["python_type"] = type(tensor)
        variable.value = tensor
        self._by_tensor_id[id(tensor)] = variable
        self._keepalive.append(tensor)
        return variable

    def _attribute_name(self, text: str) -> str:
        base = _identifier(text)
        name, n = base, 1
        while name in self.attributes:
            name, n = f"{base}_{n}", n + 1
        return name

    # -- recording ops ------------------------------------------------------------------
    @contextlib.contextmanager
    def tracing(self, description: str):
        """Run library code with every op recorded here (see ops/core/dispatch.py NOTE)."""
        previous = TRACING.tracer
        TRACING.tracer = self
        try:
            yield
        except DataDependent as exc:
            raise Unsupported(f"{description}() needs the value of a traced tensor (data-dependent)",
                              hint=exc.hint) from None
        except Unsupported:
            raise
        except Exception as exc:
            # The same call raises in eager mode: let the eager run raise it for real.
            unsupported = Unsupported(f"{description} raised {type(exc).__name__}: {exc}")
            unsupported.user_error = True
            raise unsupported from exc
        finally:
            TRACING.tracer = previous

    def record(self, op, args, kwargs):
        """Called by ops/core/dispatch.py for every op while tracing: add a node, return proxies."""
        node_args = self._to_nodes(args)
        node_kwargs = self._to_nodes(kwargs)
        meta = op.meta(*to_metas(args), **to_metas(kwargs))
        node = self._created(self.graph.call_function(op, tuple(node_args), dict(node_kwargs)))
        if "inplace" in op.tags:
            target = args[0]
            node.meta["val"] = meta
            # Later reads of the mutated tensor must depend on the mutation (keeps CSE
            # and reordering passes from moving them before it).
            self._rebinds.append((target, target.node))
            target.node = node
            return target
        return self._proxies_for(node, meta)

    def _proxies_for(self, node, meta):
        if isinstance(meta, TensorMeta):
            return ProxyTensor.create(node, meta)
        if isinstance(meta, (tuple, list)):
            node.meta["val"] = meta
            items = []
            for i, item in enumerate(meta):
                if isinstance(item, TensorMeta):
                    element = self._created(self.graph.call_function(operator.getitem, (node, i), {}))
                    items.append(ProxyTensor.create(element, item))
                else:
                    items.append(item)
            if hasattr(meta, "_fields"):
                return type(meta)(*items)
            return type(meta)(items)
        node.meta["val"] = meta
        return meta

    def _to_nodes(self, value):
        if isinstance(value, ProxyTensor):
            return value.node
        if type(value) is SymInt:
            return self.sym_nodes.node_for(value)
        if isinstance(value, Tensor):
            return self.wrap_tensor(value, None, is_input=False).proxy.node
        if isinstance(value, (tuple, list)):
            return type(value)(self._to_nodes(v) for v in value)
        if isinstance(value, dict):
            return {k: self._to_nodes(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(self._to_nodes(value.start), self._to_nodes(value.stop), self._to_nodes(value.step))
        return value


def to_metas(value):
    """``value`` with every Tensor inside (nested tuples, lists, dicts) replaced by its TensorMeta."""
    if isinstance(value, Tensor):
        return TensorMeta.of(value)
    if isinstance(value, (tuple, list)):
        return type(value)(to_metas(v) for v in value)
    if isinstance(value, dict):
        return {k: to_metas(v) for k, v in value.items()}
    return value
