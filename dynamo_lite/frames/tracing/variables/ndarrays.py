"""NDArrayVariable: a NumPy array (or NumPy scalar) that is a graph value, and NumPy callables on it.

See NOTE: [NumPy arrays in the graph] in numpy_calls.py for how calls are lowered. An
array holds the tensor variable it is the memory of: ``x.numpy()`` and ``np.asarray(x)``
hold ``x`` itself (they share memory eagerly), so writes through the array (``a += 1``,
``a[0] = 3``, a view's ``row -= 1``) are in-place ops on ``x`` in the graph. Leaving the
graph (returned, stored, passed to code the compiler runs eagerly) an array is rebuilt as
``tensor.numpy()`` of its graph output (or of the frame's own tensor, so it still shares
its memory) and a NumPy scalar as that array's ``[()]``. ``dl.from_numpy``/``dl.as_tensor``
of an array are views of its tensor, ``dl.tensor`` a copy.
"""
from __future__ import annotations

import operator

import numpy as np

from ....tensor.interop import from_numpy
from ....tensor.tensor import Tensor
from ...errors import Unsupported
from . import numpy_calls, unbacked_scalars
from .base import ConstantVariable, VariableTracker
from .containers import BaseListVariable
from .tensor import TensorVariable

#: Python operators on arrays -> the ufunc NumPy calls for them (in-place ones write the left array).
OPERATOR_UFUNCS = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply, operator.truediv: np.true_divide,
    operator.floordiv: np.floor_divide, operator.mod: np.remainder, operator.pow: np.power,
    operator.matmul: np.matmul, operator.and_: np.bitwise_and, operator.or_: np.bitwise_or,
    operator.xor: np.bitwise_xor, operator.lt: np.less, operator.le: np.less_equal, operator.gt: np.greater,
    operator.ge: np.greater_equal, operator.eq: np.equal, operator.ne: np.not_equal,
}
INPLACE_UFUNCS = {
    operator.iadd: np.add, operator.isub: np.subtract, operator.imul: np.multiply, operator.itruediv: np.true_divide,
    operator.ifloordiv: np.floor_divide, operator.imod: np.remainder, operator.ipow: np.power,
    operator.iand: np.bitwise_and, operator.ior: np.bitwise_or, operator.ixor: np.bitwise_xor,
}
#: In-place operator -> its binary twin.
OPERATOR_TWINS = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
                  operator.itruediv: operator.truediv, operator.ifloordiv: operator.floordiv,
                  operator.imod: operator.mod, operator.ipow: operator.pow, operator.iand: operator.and_,
                  operator.ior: operator.or_, operator.ixor: operator.xor}
UNARY_UFUNCS = {operator.neg: np.negative, operator.pos: np.positive, operator.invert: np.invert}


def as_ndarray(tensor: Tensor) -> np.ndarray:
    """An array leaving the graph: the memory of its tensor (the graph checked autograd allows it)."""
    return tensor.numpy(force=True)


def as_numpy_scalar(tensor: Tensor):
    """A NumPy scalar leaving the graph (``np.float32(...)``, not a 0-d array)."""
    return tensor.numpy(force=True)[()]


class NDArrayVariable(VariableTracker):
    """A NumPy array whose values the graph computes; ``scalar``: a NumPy scalar (0-d)."""

    def __init__(self, tensor: TensorVariable, scalar: bool = False, source=None):
        self.tensor, self.scalar, self.source = tensor, scalar, source

    @property
    def proxy(self):
        return self.tensor.proxy

    def python_type(self) -> type:
        return np.dtype(self.proxy.dtype.numpy).type if self.scalar else np.ndarray

    def argument(self) -> numpy_calls.ArrayArgument:
        return numpy_calls.ArrayArgument(self.proxy, self.scalar)

    def describe(self) -> str:
        kind = "scalar" if self.scalar else "array"
        return f"the NumPy {kind} {self.source.name()}" if self.source is not None else f"a NumPy {kind}"

    # -- attributes and methods --------------------------------------------------------------
    def var_getattr(self, tx, name: str) -> VariableTracker:
        reader = ATTRIBUTES.get(name)
        if reader is not None:
            return reader(tx, self)
        if name in numpy_calls.METHODS or name in OWN_METHODS:
            return NDArrayMethodVariable(self, name)
        raise Unsupported(f"attribute {name!r} of a NumPy array is not modelled in the graph")

    def truth(self, tx) -> bool:
        raise Unsupported("a Python branch on the value of a NumPy array computed in the graph (data-dependent)")

    def unpack(self, tx) -> list:
        if self.scalar or not self.proxy.ndim:
            raise Unsupported("iteration over a 0-d NumPy array")
        return [self.getitem(tx, ConstantVariable(i)) for i in range(int(self.proxy.shape[0]))]

    def length(self, tx) -> int:
        if self.scalar or not self.proxy.ndim:
            raise Unsupported("len() of a 0-d NumPy array")
        return int(self.proxy.shape[0])

    # -- indexing -------------------------------------------------------------------------------
    def getitem(self, tx, key) -> VariableTracker:
        index = _index(key)
        integer_only = isinstance(index, int) or (
            isinstance(index, tuple) and all(isinstance(i, int) for i in index))
        with tx.output.tracing("ndarray.__getitem__"):
            proxy = self.proxy[index]
            scalar = integer_only and proxy.ndim == 0
            if scalar:  # a NumPy scalar is a copy: a later write into the array must not show in it
                proxy = proxy.clone()
        return NDArrayVariable(TensorVariable(proxy), scalar=scalar)

    def store_item(self, tx, key, value) -> None:
        index = _index(key)
        if isinstance(value, NDArrayVariable):
            operand = value.proxy
        elif value.is_python_constant() and type(value.as_python_constant()) in (int, float, bool):
            operand = value.as_python_constant()
        else:
            raise Unsupported(f"assigning {value.describe()} into a NumPy array is not modelled in the graph")
        with tx.output.tracing("ndarray.__setitem__"):
            self.proxy[index] = operand  # the value is cast to the array's dtype, as NumPy does

    # -- leaving the graph --------------------------------------------------------------------
    def reconstruct(self, cg) -> None:
        if self.source is not None:  # the frame's own array (the graph wrote into its memory)
            self.source.reconstruct(cg)
            return
        cg.call_const(as_numpy_scalar if self.scalar else as_ndarray, lambda: cg.reconstruct(self.tensor), 1)

    def children(self) -> list:
        return [] if self.source is not None else [self.tensor]

    def __repr__(self) -> str:
        return f"NDArrayVariable({self.proxy.node.name}{', scalar' if self.scalar else ''})"


def _index(key):
    """A subscript NumPy and tensors read alike: ints, slices, None, Ellipsis (and tuples of them)."""
    value = key.as_python_constant() if not isinstance(key, NDArrayVariable) else None
    parts = value if isinstance(value, tuple) else (value,)
    if isinstance(key, NDArrayVariable) or not all(
            p is None or p is Ellipsis or isinstance(p, (int, slice)) and type(p) is not bool for p in parts):
        raise Unsupported("indexing a NumPy array with an array or a list (advanced indexing) is not modelled "
                          "in the graph")
    return value


def wrap_result(tx, result) -> NDArrayVariable:
    proxy, scalar = result
    return NDArrayVariable(TensorVariable(proxy), scalar)


def _argument(variable):
    """A call argument as numpy_calls takes it: arrays as ArrayArguments, constants as values."""
    if isinstance(variable, NDArrayVariable):
        return variable.argument()
    if isinstance(variable, BaseListVariable) and not variable.is_python_constant():
        items = [_argument(v) for v in variable.items]
        return items if variable.python_type() is list else tuple(items)
    if isinstance(variable, TensorVariable):
        raise Unsupported("a NumPy function called on a dl tensor (not an array) is not modelled in the graph")
    if variable.is_python_constant():
        return variable.as_python_constant()
    raise Unsupported(f"a NumPy function called on {variable.describe()} is not modelled in the graph")


def call_numpy(tx, fn, args: list, kwargs: dict) -> VariableTracker:
    """A modelled NumPy callable on variables: a graph op when an array is among its
    arguments, folded when every argument is a constant and it gives a NumPy scalar."""
    if isinstance(fn, np.ufunc):  # a ufunc reads a tensor through its __array__: Tensor.numpy()
        args = [tx.tensor_to_ndarray(a) if isinstance(a, TensorVariable) else a for a in args]
    values = [_argument(a) for a in args]
    keywords = {k: _argument(v) for k, v in kwargs.items()}
    if not numpy_calls._arrays((values, keywords)):
        return fold_constants(tx, fn, values, keywords)
    with tx.output.tracing(numpy_calls.describe(fn)):
        return wrap_result(tx, numpy_calls.call_function(fn, values, keywords))


def fold_constants(tx, fn, values, keywords) -> VariableTracker:
    try:
        result = fn(*values, **keywords)
    except Exception as exc:
        unsupported = Unsupported(f"{numpy_calls.describe(fn)} raises {type(exc).__name__}: {exc}")
        unsupported.user_error = True
        raise unsupported from None
    if isinstance(result, np.generic):
        return constant_scalar(tx, result)
    creates = any(fn is f for f in numpy_calls.CREATION_FUNCTIONS + numpy_calls.ARRAY_CONSTRUCTORS)
    if type(result) is np.ndarray and creates and result.nbytes <= CONSTANT_ARRAY_BYTES:
        return _fresh_constant_array(tx, result)
    raise Unsupported(f"{numpy_calls.describe(fn)} of constants makes a new array (it runs eagerly)")


def constant_scalar(tx, value: np.generic) -> VariableTracker:
    """A NumPy scalar made from constants while tracing (``np.float32(0.5)``, ``np.sqrt(2.0)``):
    a graph constant, so operators and ufuncs on it follow NumPy's rules like any other."""
    try:
        held = tx.output.wrap_tensor(from_numpy(np.asarray(value)), None, is_input=False)
    except (TypeError, ValueError):
        return ConstantVariable(value)  # a dtype tensors do not hold (a str_, a datetime64 ...)
    return NDArrayVariable(held, scalar=True)


#: Largest array a NumPy creation call of constants (``np.zeros(3)``, ``np.arange(n)``) becomes in the graph.
CONSTANT_ARRAY_BYTES = 1 << 16


def _fresh_constant_array(tx, value: np.ndarray) -> NDArrayVariable:
    """A new array on every call (eager code makes one each time): a copy of the values made
    while tracing, which the graph holds as a constant."""
    try:
        constant = from_numpy(np.ascontiguousarray(value).copy())
    except (TypeError, ValueError):
        raise Unsupported(f"a NumPy array of {value.dtype}, which tensors do not hold") from None
    held = tx.output.wrap_tensor(constant, None, is_input=False)
    with tx.output.tracing("numpy array constant"):
        return NDArrayVariable(TensorVariable(held.proxy.clone()))


# -- operators (called from the translator before its other rules) ------------------------------
def binary(tx, op, left, right):
    """``left <op> right`` when an array is an operand, else None."""
    if not (isinstance(left, NDArrayVariable) or isinstance(right, NDArrayVariable)):
        return None
    if isinstance(left, NDArrayVariable) and left.scalar and op in INPLACE_UFUNCS:
        op = OPERATOR_TWINS[op]  # a NumPy scalar is immutable: ``s += v`` rebinds s to ``s + v``
    if isinstance(left, TensorVariable) and right.scalar:
        # A tensor's operator takes a NumPy scalar as the Python number of its kind.
        number = unbacked_scalars.UnbackedScalarVariable(right.proxy, _number_kind(right.proxy.dtype))
        return unbacked_scalars.binary(tx, op, left, number)
    if isinstance(left, TensorVariable) or isinstance(right, TensorVariable):
        if op in INPLACE_UFUNCS or op not in OPERATOR_UFUNCS:
            raise Unsupported("this operator between a dl tensor and a NumPy array is not modelled in the graph")
        # A tensor's operator declines an ndarray: NumPy's reflected operator runs the ufunc on
        # the tensor's __array__ (its memory, as Tensor.numpy()).
        left, right = [tx.tensor_to_ndarray(v) if isinstance(v, TensorVariable) else v for v in (left, right)]
    in_place = INPLACE_UFUNCS.get(op)
    if in_place is not None and isinstance(left, NDArrayVariable) and not left.scalar:
        with tx.output.tracing(f"ndarray {op.__name__}"):
            numpy_calls.call_ufunc(in_place, [left.argument(), _argument(right)], {}, out=left.argument())
        return left
    ufunc = OPERATOR_UFUNCS.get(op) or in_place
    if ufunc is None:
        raise Unsupported(f"the operator {op.__name__} on a NumPy array is not modelled in the graph")
    with tx.output.tracing(f"ndarray {op.__name__}"):
        return wrap_result(tx, numpy_calls.call_ufunc(ufunc, [_argument(left), _argument(right)], {}))


def _number_kind(dtype) -> type:
    """The Python number a NumPy scalar of ``dtype`` acts as (complex ones are not modelled)."""
    if dtype.is_complex:
        raise Unsupported("a dl tensor with a complex NumPy scalar is not modelled in the graph")
    return bool if dtype.name == "bool" else float if dtype.is_floating_point else int


def unary(tx, op, value):
    """``-a``, ``+a``, ``~a`` of an array, else None."""
    if not isinstance(value, NDArrayVariable) or op not in UNARY_UFUNCS:
        return None
    with tx.output.tracing(f"ndarray {op.__name__}"):
        return wrap_result(tx, numpy_calls.call_ufunc(UNARY_UFUNCS[op], [value.argument()], {}))


# -- attributes ---------------------------------------------------------------------------------
def _shape(tx, array):
    return tx.wrap_constant(tuple(array.proxy.shape))


def _transposed(tx, array):
    with tx.output.tracing("ndarray.T"):
        return wrap_result(tx, numpy_calls.call_function(np.transpose, [array.argument()], {}))


ATTRIBUTES = {
    "shape": _shape,
    "ndim": lambda tx, a: ConstantVariable(a.proxy.ndim),
    "size": lambda tx, a: tx.wrap_constant(a.proxy.numel()),
    "dtype": lambda tx, a: ConstantVariable(np.dtype(a.proxy.dtype.numpy)),
    "itemsize": lambda tx, a: ConstantVariable(np.dtype(a.proxy.dtype.numpy).itemsize),
    "T": _transposed,
}


def _reshape_method(tx, array, args, kwargs):
    shape = args[0] if len(args) == 1 else tx.build_tuple(list(args))
    return call_numpy(tx, np.reshape, [array, shape], kwargs)


def _transpose_method(tx, array, args, kwargs):
    axes = args[0] if len(args) == 1 else (tx.build_tuple(list(args)) if args else None)
    return call_numpy(tx, np.transpose, [array] + ([axes] if axes is not None else []), kwargs)


def _flatten(tx, array, args, kwargs):
    if args or kwargs:
        raise Unsupported("ndarray.flatten() with an order is not modelled in the graph")
    flat = call_numpy(tx, np.ravel, [array], {})
    return call_numpy(tx, np.copy, [flat], {})  # flatten always copies


def astype(tx, array, args, kwargs):
    options = {k: v.as_python_constant() for k, v in kwargs.items()}
    if len(args) != 1 or set(options) - {"copy"} or not args[0].is_python_constant():
        raise Unsupported("ndarray.astype() with options other than copy= is not modelled in the graph")
    dtype = np.dtype(args[0].as_python_constant())
    if dtype == np.dtype(array.proxy.dtype.numpy) and options.get("copy", True) is False:
        return array
    with tx.output.tracing("ndarray.astype"):
        try:
            target = numpy_calls.from_numpy_dtype(dtype)
        except TypeError:
            raise Unsupported(f"ndarray.astype({dtype}) gives an array tensors do not hold") from None
        proxy = array.proxy.clone() if target == array.proxy.dtype else array.proxy.to(target)
    return NDArrayVariable(TensorVariable(proxy), array.scalar)


def _scalars(name):
    """``a.item()``/``a.tolist()``: Python numbers only the running graph knows (NOTE: [scalars read from tensors])."""
    def handler(tx, array, args, kwargs):
        if args or kwargs:
            raise Unsupported(f"ndarray.{name}() with arguments is not modelled in the graph")
        return tx.tensor_scalars(array.tensor, name)
    return handler


#: ndarray methods with their own handling ``(tx, array, args, kwargs)``.
OWN_METHODS = {"reshape": _reshape_method, "transpose": _transpose_method, "flatten": _flatten,
               "astype": astype, "item": _scalars("item"), "tolist": _scalars("tolist")}


class NDArrayMethodVariable(VariableTracker):
    """A bound method of an array (``a.sum``)."""

    def __init__(self, array: NDArrayVariable, name: str):
        self.array, self.name = array, name

    def describe(self) -> str:
        return f"ndarray.{self.name}"

    def call(self, tx, args, kwargs) -> VariableTracker:
        own = OWN_METHODS.get(self.name)
        if own is not None:
            return own(tx, self.array, args, kwargs)
        return call_numpy(tx, numpy_calls.METHODS[self.name], [self.array, *args], kwargs)

    def reconstruct(self, cg) -> None:
        cg.reconstruct(self.array)
        cg.load_attr(self.name)

    def children(self) -> list:
        return [self.array]


class NumpyFunctionVariable(VariableTracker):
    """A NumPy function or ufunc the graph models (NOTE: [NumPy arrays in the graph])."""

    def __init__(self, fn, source=None):
        self.fn, self.source = fn, source

    def python_type(self) -> type:
        return type(self.fn)

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs) -> VariableTracker:
        return call_numpy(tx, self.fn, args, kwargs)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        raise Unsupported(f"attribute {name!r} of {numpy_calls.describe(self.fn)}")
