"""TensorVariable (a graph value) and TracedCallableVariable (library code run on proxies)."""
from __future__ import annotations

from ...errors import Unsupported
from .base import VariableTracker
from .tensor_attributes import is_custom_attribute, read_attribute, store_attribute
from .tensor_autograd import BREAKING_METHODS, autograd_attribute, call_autograd_method, store_grad


#: Tensor methods whose positional scalar may be a 0-dim tensor of the tensor's dtype.
SCALAR_OPERAND_METHODS = frozenset({"add", "add_", "sub", "sub_", "mul", "mul_", "div", "div_", "lerp", "lerp_"})


class TensorVariable(VariableTracker):
    """A tensor in the graph: a ProxyTensor whose node produces it."""

    #: The real tensor a variable read from the frame stands for (None: computed in the graph).
    value = None

    def __init__(self, proxy, source=None):
        self.proxy = proxy
        self.source = source

    @property
    def node(self):
        return self.proxy.node

    @property
    def rebuilt_once(self) -> bool:
        return self.source is not None  # a graph output is the same object on every load

    def python_type(self) -> type:
        return self.proxy.node.meta.get("python_type", type(self.proxy).__mro__[1])

    def as_python_constant(self):
        raise Unsupported("a tensor is not a Python constant")

    def as_traceable(self):
        return self.proxy

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in BREAKING_METHODS:  # broken at the call, which then runs eagerly
            return BreakingMethodVariable(self, name, None)
        autograd = autograd_attribute(self, tx, name)  # NOTE: [autograd attributes in compiled frames]
        if autograd is not None:
            return autograd
        if is_custom_attribute(self.python_type(), name):  # NOTE: [custom tensor attributes]
            return read_attribute(tx, self, name)
        with tx.output.tracing(f"Tensor.{name}"):
            value = getattr(self.proxy, name)
        if callable(value) and hasattr(value, "__self__"):
            return TensorMethodVariable(self, name, value)
        return tx.wrap_traced(value)

    def store_attribute(self, tx, name: str, value) -> None:
        if name in ("real", "imag"):  # ``x.real = v`` writes into the part's view: copy_ (fill_ for a number)
            part = self.var_getattr(tx, name)
            writer = "copy_" if isinstance(value, TensorVariable) else "fill_"
            part.var_getattr(tx, writer).call(tx, [value], {})
            return
        if is_custom_attribute(self.python_type(), name):  # NOTE: [custom tensor attributes]
            store_attribute(tx, self, name, value)
            return
        store_grad(self, tx, name, value)

    def unpack(self, tx) -> list:
        if not self.proxy.ndim:
            raise Unsupported("iteration over a 0-d tensor")
        return TracedCallableVariable(lambda t: list(t), "iter(Tensor)").call(tx, [self], {}).items

    def truth(self, tx) -> bool:
        raise Unsupported(
            "a Python branch on a tensor value (data-dependent control flow)",
            hint="use dl.where(...) instead of an if on a tensor value",
        )

    def reconstruct(self, cg) -> None:
        if self.source is not None:  # the very object the frame received (identity kept)
            self.source.reconstruct(cg)
        else:
            cg.load_graph_value(self)

    def __repr__(self) -> str:
        return f"TensorVariable({self.proxy.node.name})"


class TracedCallableVariable(VariableTracker):
    """A dynamo_lite library callable (op, ``dl.*``, tensor method, ``nn.functional``).

    Called with proxies in place of tensors while the output graph records every op;
    see NOTE: [tracing through library code] in ops/core/dispatch.py.
    """

    def __init__(self, fn, description: str | None = None, source=None):
        self.fn = fn
        self.description = description or getattr(fn, "__qualname__", repr(fn))
        self.source = source

    def python_type(self) -> type:
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs) -> VariableTracker:
        holder = next((a for a in (*args, *kwargs.values()) if getattr(a, "consumes_calls", False)), None)
        if holder is not None:  # dl.stack(outputs) after a scanned loop (NOTE: [loops traced once])
            return holder.consume_call(tx, self.fn, args, kwargs)
        values = [a.as_traceable() for a in args]
        kw = {k: v.as_traceable() for k, v in kwargs.items()}
        with tx.output.tracing(self.description):
            result = self.fn(*values, **kw)
        return tx.wrap_traced(result)

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            self.source.reconstruct(cg)
        else:
            cg.load_const(self.fn)

    def __repr__(self) -> str:
        return f"TracedCallableVariable({self.description})"


class TensorMethodVariable(TracedCallableVariable):
    """A tensor's bound method (``x.relu``); rebuilt in bytecode as ``x`` + LOAD_ATTR."""

    def __init__(self, tensor: TensorVariable, name: str, bound):
        super().__init__(bound, f"Tensor.{name}")
        self.tensor, self.name = tensor, name

    def call(self, tx, args, kwargs) -> VariableTracker:
        if self.name == "numpy" and not args and not kwargs:  # NOTE: [NumPy arrays in the graph]
            return tx.tensor_to_ndarray(self.tensor)
        if self.name in ("item", "tolist") and not args and not kwargs:  # NOTE: [scalars read from tensors]
            return tx.tensor_scalars(self.tensor, self.name)
        if self.name == "unbind":  # along a symbolic size: kept whole (NOTE: [loops traced once])
            unbound = tx.symbolic_unbind(self.tensor, args, kwargs)
            if unbound is not None:
                return unbound
        if self.name in SCALAR_OPERAND_METHODS:  # a lifted float enters as a tensor (NOTE: [lifted floats])
            args = [a.tensor_operand(tx, self.tensor) if hasattr(a, "tensor_operand") else a for a in args]
        return super().call(tx, args, kwargs)

    def reconstruct(self, cg) -> None:
        cg.reconstruct(self.tensor)
        cg.load_attr(self.name)

    def children(self) -> list:
        return [self.tensor]


class BreakingMethodVariable(TensorMethodVariable):
    """A tensor method that only eager code may run (``loss.backward()``): calling it breaks
    the graph at the call, which runs eagerly between the graphs before and after it
    (see NOTE: [autograd attributes in compiled frames])."""

    def call(self, tx, args, kwargs) -> VariableTracker:
        return call_autograd_method(self.tensor, tx, self.name, args, kwargs)
