"""Tensors and arrays crossing into NumPy and back in compiled code, and the frame's own arrays.

``Tensor.numpy()``/``np.asarray``/``np.array`` of a traced tensor, ``dl.from_numpy``/
``dl.as_tensor``/``dl.tensor`` of a traced array, and ndarray or NumPy scalar values the
frame receives (graph inputs sharing their memory). See NOTE: [NumPy arrays in the graph].
"""
from __future__ import annotations

import numpy as np

from ....ops.creation.factories import as_tensor, tensor as make_tensor
from ....tensor.interop import from_numpy
from ....tensor.tensor import Tensor
from ...errors import Unsupported
from .. import guards as G
from ..sources import Source
from . import numpy_calls
from .base import ConstantVariable, VariableTracker
from .classes import ClassVariable
from .ndarrays import NDArrayVariable, NumpyFunctionVariable, astype, call_numpy, constant_scalar, fold_constants
from .tensor import TensorVariable, TracedCallableVariable


# -- tensors to arrays and back -----------------------------------------------------------------
def _requires_grad(tx, tensor: TensorVariable) -> bool:
    """Whether autograd would record ``tensor`` (``.numpy()`` of it raises eagerly): an input or
    parameter that requires grad, or an op with grad on over one (as records_history judges)."""
    output = tx.output
    if not output.grad_enabled and not output.grad_mode_blocks:
        return False
    requires, examples = {}, iter(output.example_inputs)
    for node in output.graph.nodes:
        if node.op == "placeholder":
            value = next(examples, None)
            requires[node] = isinstance(value, Tensor) and value._requires_grad
        elif node.op == "get_attr":
            value = output.attributes.get(node.target)
            requires[node] = isinstance(value, Tensor) and value._requires_grad
        elif node.op in ("call_function", "call_method"):
            reads = any(requires.get(n, False) for n in node.all_input_nodes)
            mode = node.meta.get("grad_enabled", output.grad_enabled)
            detached = getattr(node.target, "name", None) == "detach"
            requires[node] = reads and not detached and (mode or "inplace" in getattr(node.target, "tags", ()))
        if node is tensor.proxy.node:
            break
    return requires.get(tensor.proxy.node, True)


def tensor_to_ndarray(tx, tensor: TensorVariable, copy: bool = False) -> NDArrayVariable:
    """``tensor.numpy()`` (shares memory) or ``np.array(tensor)`` (``copy``)."""
    if tensor.proxy.device.type != "cpu":
        raise Unsupported("numpy() of a tensor that is not on the CPU (it raises eagerly)")
    if tensor.proxy.dtype.numpy is None or tensor.proxy.dtype.name == "bfloat16":
        raise Unsupported("numpy() of a bfloat16 tensor (it raises eagerly)")
    if _requires_grad(tx, tensor):
        unsupported = Unsupported("numpy() of a tensor that requires grad (it raises eagerly)")
        unsupported.user_error = True
        raise unsupported
    if not copy:
        return NDArrayVariable(tensor)
    with tx.output.tracing("numpy.array"):
        return NDArrayVariable(TensorVariable(tensor.proxy.clone()))


def _asarray(tx, data, dtype=None, *, copy: bool):
    if isinstance(data, TensorVariable):
        array = tensor_to_ndarray(tx, data, copy=copy)
    elif isinstance(data, NDArrayVariable) and not data.scalar:
        array = data if not copy else call_numpy(tx, np.copy, [data], {})
    else:
        return None
    if dtype is not None and not (dtype.is_python_constant() and dtype.as_python_constant() is None):
        return astype(tx, array, [dtype], {"copy": ConstantVariable(copy)})
    return array


class ArrayConstructorVariable(NumpyFunctionVariable):
    """``np.asarray``/``np.array`` (and ``np.asanyarray``): of a tensor or an array they are graph values."""

    def call(self, tx, args, kwargs) -> VariableTracker:
        copy = self.fn is np.array
        if args and len(args) + len(kwargs) <= 2 and set(kwargs) <= {"dtype"}:
            dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
            made = _asarray(tx, args[0], dtype, copy=copy)
            if made is not None:
                return made
        if all(a.is_python_constant() for a in [*args, *kwargs.values()]):  # np.array([1, 2]): a new array
            return fold_constants(tx, self.fn, [a.as_python_constant() for a in args],
                         {k: v.as_python_constant() for k, v in kwargs.items()})
        raise Unsupported(f"{numpy_calls.describe(self.fn)} of {args[0].describe() if args else 'nothing'} "
                          "runs eagerly (only arrays and tensors computed in the graph are modelled)")


class FromNumpyVariable(VariableTracker):
    """``dl.from_numpy``/``dl.as_tensor``/``dl.tensor``: of an array in the graph, a tensor in the
    graph (a view of the array's tensor, or a copy for ``dl.tensor``); anything else as before."""

    def __init__(self, fn, otherwise: VariableTracker, copy: bool, source=None):
        self.fn, self.otherwise, self.copy, self.source = fn, otherwise, copy, source

    def python_type(self) -> type:
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs) -> VariableTracker:
        if not args or not isinstance(args[0], NDArrayVariable):
            return self.otherwise.call(tx, args, kwargs)
        array = args[0]
        if array.scalar or (kwargs and not self.copy):
            return self.otherwise.call(tx, args, kwargs)  # a NumPy scalar: TypeError eagerly, or a constant
        if self.copy:  # dl.tensor(a, dtype=...): the traced function copies the array's tensor
            return TracedCallableVariable(self.fn).call(tx, [array.tensor, *args[1:]], kwargs)
        with tx.output.tracing(getattr(self.fn, "__name__", "from_numpy")):
            return TensorVariable(array.proxy.view(tuple(array.proxy.shape)))


#: ndarray-making NumPy functions handled by ArrayConstructorVariable.
ARRAY_CONSTRUCTORS = numpy_calls.ARRAY_CONSTRUCTORS


class NumpyScalarClassVariable(ClassVariable):
    """``np.float32`` and friends: called on constants, an immutable NumPy scalar made while tracing."""

    def call(self, tx, args, kwargs) -> VariableTracker:
        if len(args) == 1 and not kwargs and args[0].is_python_constant() \
                and type(args[0].as_python_constant()) in (int, float, bool):
            try:
                return constant_scalar(tx, self.value(args[0].as_python_constant()))
            except (OverflowError, ValueError) as exc:
                unsupported = Unsupported(f"{self.value.__name__}() raises {type(exc).__name__}: {exc}")
                unsupported.user_error = True
                raise unsupported from None
        return super().call(tx, args, kwargs)


def numpy_variable(value, source):
    """The variable for a NumPy callable the graph models, or None (judged by identity, never by
    calling anything of an object that is not NumPy's)."""
    if any(value is c for c in ARRAY_CONSTRUCTORS):
        return ArrayConstructorVariable(value, source)
    if isinstance(value, type) and value in _SCALAR_TYPES:
        return NumpyScalarClassVariable(value, source)
    if any(value is f for f in numpy_calls.CREATION_FUNCTIONS):
        return NumpyFunctionVariable(value, source)
    if not (getattr(type(value), "__module__", None) or "").startswith("numpy"):
        return None
    return NumpyFunctionVariable(value, source) if numpy_calls.is_modelled(value) else None


#: dl functions making a tensor of an array -> whether they copy it.
TO_TENSOR = ((from_numpy, False), (as_tensor, False), (make_tensor, True))


def to_tensor_variable(value, otherwise: VariableTracker, source):
    """``otherwise`` (the usual variable of a dl function), or a FromNumpyVariable for the
    functions making a tensor of an array."""
    for fn, copy in TO_TENSOR:
        if value is fn:
            return FromNumpyVariable(value, otherwise, copy, source)
    return otherwise


# -- arrays the frame receives ----------------------------------------------------------------
def array_tensor(value) -> Tensor:
    """The graph input of a frame's array (its memory) or NumPy scalar (a 0-d copy)."""
    return from_numpy(value if isinstance(value, np.ndarray) else np.asarray(value))


class ArrayTensorSource(Source):
    """Loads a frame's array or NumPy scalar and passes it to the graph as ``array_tensor(value)``."""

    def __init__(self, base: Source):
        self.base = base

    def expr(self) -> str:
        return f"__dl_array_tensor({self.base.expr()})"

    def name(self) -> str:
        return self.base.name()

    def constants(self) -> dict:
        return {"__dl_array_tensor": array_tensor, **self.base.constants()}

    def reconstruct(self, cg) -> None:
        cg.call_const(array_tensor, lambda: self.base.reconstruct(cg), 1)


def wrap_array_input(tx, value, source):
    """A frame's ndarray (or NumPy scalar) as an array in the graph, or None when tensors cannot
    hold it (its dtype, negative strides): the frame's arrays are graph inputs sharing memory
    (NOTE: [NumPy arrays in the graph])."""
    if source is None or type(value) is not np.ndarray and not (
            isinstance(value, np.generic) and type(value) in _SCALAR_TYPES):
        return None
    if isinstance(value, np.ndarray) and (value.dtype not in _ARRAY_DTYPES or any(s < 0 for s in value.strides)
                                          or value.strides and 0 in value.strides):
        return None
    known = tx.output.objects.get(id(value))
    if known is not None and isinstance(known[1], NDArrayVariable):
        tx.output.guards.add(source, G.ID_MATCH_SOURCE, known[1].source)
        return known[1]
    tx.output.guards.add(source, G.TYPE_MATCH, type(value))
    tensor = tx.output.wrap_tensor(array_tensor(value), ArrayTensorSource(source), is_input=True)
    variable = NDArrayVariable(tensor, scalar=not isinstance(value, np.ndarray), source=source)
    tx.output.objects[id(value)] = (value, variable)
    return variable


_ARRAY_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                                 np.int64, np.uint8, np.bool_, np.complex64, np.complex128))
_SCALAR_TYPES = frozenset(d.type for d in _ARRAY_DTYPES)
