"""NumPy functions, ufuncs and ndarray methods on traced arrays, lowered onto tensor ops.

NOTE: [NumPy arrays in the graph] An ndarray computed from a traced tensor is a graph
value (``ndarrays.NDArrayVariable``). A NumPy call on such arrays is run twice while
tracing: once by NumPy itself on *stand-ins* (arrays of ones with the dtypes, ranks and,
when small, shapes of the real ones), which gives NumPy's answer for the result's dtype
(NEP 50 for Python scalars, float64 for integer division, int64 for integer sums ...),
whether it is a NumPy scalar or an array, and the error NumPy raises; and once as tensor
ops on the proxies, with the inputs cast to the dtypes NumPy computes in (a ufunc's loop
dtypes) and the result cast to NumPy's. Rank and shape of the two must agree, else the
call is a graph break. A call this table does not model, or with arguments it does not
model (``out=``, ``where=``, ``order=``, non-constant options), is a graph break: NumPy
runs it eagerly on the real arrays.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from ....ops.creation.factories import full_like
from ....ops.pointwise.comparison import where as tensor_where
from ....ops.shape.shape_ops import cat, stack
from ....tensor.dtype import from_numpy_dtype
from ....tensor.symint import SymInt
from ...errors import Unsupported

#: Stand-ins with more elements than this keep only their rank (their sizes become 1).
STAND_IN_LIMIT = 4096


class ArrayArgument:
    """A traced array among a call's arguments: its proxy and whether it is a NumPy scalar."""

    def __init__(self, proxy, scalar: bool):
        self.proxy, self.scalar = proxy, scalar

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.proxy.dtype.numpy)

    def exact_shape(self) -> bool:
        sizes = tuple(self.proxy.shape)
        return all(type(s) is int for s in sizes) and math.prod(sizes) <= STAND_IN_LIMIT

    def stand_in(self):
        sizes = tuple(self.proxy.shape)
        if not self.exact_shape():
            sizes = tuple(1 if type(s) is SymInt or s else 0 for s in sizes)
        value = np.ones(sizes, self.dtype)
        return value[()] if self.scalar else value


def _map(value, fn):
    if isinstance(value, ArrayArgument):
        return fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return value


def _arrays(value) -> list:
    found = []
    _map(value, lambda a: found.append(a) or a)
    return found


def describe(fn) -> str:
    module = getattr(fn, "__module__", None) or "numpy"
    module = "numpy" if module.startswith("numpy") and module.count(".") <= 1 and module != "numpy.linalg" \
        else module
    return f"{module}.{getattr(fn, '__name__', fn)}()"


def ask_numpy(fn, args, kwargs):
    """NumPy's own result on stand-ins (NOTE: [NumPy arrays in the graph]); what it raises,
    the eager run raises too (a graph break lets it)."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*_map(args, ArrayArgument.stand_in), **_map(kwargs, ArrayArgument.stand_in))
    except Exception as exc:
        unsupported = Unsupported(f"{describe(fn)} raises {type(exc).__name__}: {exc}")
        unsupported.user_error = True
        raise unsupported from None


def finish(fn, proxy, answer, arrays: list):
    """The graph result cast to NumPy's dtype, checked against NumPy's rank and shape:
    ``(proxy, is a NumPy scalar)``."""
    if not isinstance(answer, (np.ndarray, np.generic)):
        raise Unsupported(f"{describe(fn)} returning {type(answer).__name__} is not modelled in the graph")
    try:
        dtype = from_numpy_dtype(answer.dtype)
    except TypeError:
        raise Unsupported(f"{describe(fn)} gives a {answer.dtype} array, which tensors do not hold") from None
    if proxy.dtype != dtype:
        proxy = proxy.to(dtype)
    elif fn not in VIEW_FUNCTIONS and any(proxy is a.proxy for a in arrays):
        proxy = proxy.clone()  # NumPy made a new array; the lowering handed back its input
    sizes = tuple(proxy.shape)
    exact = all(a.exact_shape() for a in arrays)
    if len(sizes) != answer.ndim or (exact and sizes != answer.shape):
        raise Unsupported(f"{describe(fn)} on these arguments is not modelled in the graph (its shape differs)")
    return proxy, isinstance(answer, np.generic)


# -- ufuncs ------------------------------------------------------------------------------------
def _method(name):
    return lambda x, *rest: getattr(x, name)(*rest)


#: ufunc -> its lowering on proxies (and Python scalars, where ``TENSOR_OPERANDS`` does not list it).
UFUNCS = {
    np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul, np.true_divide: operator.truediv,
    np.floor_divide: operator.floordiv, np.remainder: operator.mod, np.power: operator.pow,
    np.matmul: operator.matmul, np.negative: operator.neg, np.positive: lambda x: x.clone(),
    np.absolute: abs, np.equal: operator.eq, np.not_equal: operator.ne, np.less: operator.lt,
    np.less_equal: operator.le, np.greater: operator.gt, np.greater_equal: operator.ge,
    np.bitwise_and: operator.and_, np.bitwise_or: operator.or_, np.bitwise_xor: operator.xor,
    np.invert: operator.invert, np.maximum: _method("maximum"), np.minimum: _method("minimum"),
    np.fmax: _method("fmax"), np.fmin: _method("fmin"), np.arctan2: _method("atan2"), np.hypot: _method("hypot"),
    np.fmod: _method("fmod"), np.copysign: _method("copysign"), np.logical_and: _method("logical_and"),
    np.logical_or: _method("logical_or"), np.logical_xor: _method("logical_xor"),
    np.logical_not: _method("logical_not"), np.sqrt: _method("sqrt"), np.exp: _method("exp"),
    np.expm1: _method("expm1"), np.log: _method("log"), np.log2: _method("log2"), np.log1p: _method("log1p"),
    np.sin: _method("sin"), np.cos: _method("cos"), np.tan: _method("tan"), np.tanh: _method("tanh"),
    np.sinh: _method("sinh"), np.cosh: _method("cosh"), np.floor: _method("floor"), np.ceil: _method("ceil"),
    np.trunc: _method("trunc"), np.rint: _method("round"), np.sign: _method("sign"), np.square: _method("square"),
    np.isnan: _method("isnan"), np.isinf: _method("isinf"), np.isfinite: _method("isfinite"),
    np.deg2rad: _method("deg2rad"), np.rad2deg: _method("rad2deg"),
}

#: ufuncs whose lowering takes tensors only: a Python scalar operand becomes a full tensor.
TENSOR_OPERANDS = frozenset({np.maximum, np.minimum, np.fmax, np.fmin, np.arctan2, np.hypot, np.fmod, np.copysign,
                             np.logical_and, np.logical_or, np.logical_xor})


def _scalar_type(value):
    """How ``ufunc.resolve_dtypes`` takes a non-array operand (a Python number is weak: NEP 50)."""
    if type(value) is bool:
        return np.dtype(bool)
    if type(value) in (int, float, complex):
        return type(value)
    if isinstance(value, np.generic):
        return value.dtype
    raise Unsupported(f"a NumPy ufunc on a {type(value).__name__} operand is not modelled in the graph")


#: Integer ufuncs whose second operand's values decide more than the result (NumPy gives 0 for a zero
#: divisor where a tensor op raises; a negative integer power raises in NumPy).
VALUE_DEPENDENT_INTEGER_OPERAND = frozenset({np.floor_divide, np.remainder, np.fmod, np.power})
COMPARISONS = frozenset({np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal})


def _check_value_independent(ufunc, args, loop) -> None:
    """Refuse (a graph break) the operands whose values would make the tensor ops differ from NumPy."""
    if ufunc in VALUE_DEPENDENT_INTEGER_OPERAND and loop[1].kind in "iub":
        divisor = args[1]
        if isinstance(divisor, ArrayArgument) or divisor == 0:
            raise Unsupported(f"{describe(ufunc)} of integers by an array or zero depends on its values "
                              "(data-dependent)")
    if ufunc in COMPARISONS:
        for arg, dtype in zip(args, loop):
            if type(arg) is int and dtype.kind in "iu":
                info = np.iinfo(dtype)
                if not info.min <= arg <= info.max:  # NumPy compares the exact values
                    raise Unsupported(f"{describe(ufunc)} with an int outside {dtype}'s range is not modelled "
                                      "in the graph")


def call_ufunc(ufunc, args: list, kwargs: dict, out=None):
    """``ufunc(*args)`` on proxies (``out``: the ArrayArgument written in place, ``a += b``)."""
    if kwargs or ufunc not in UFUNCS or len(args) != ufunc.nin or ufunc.nout != 1:
        raise Unsupported(f"{describe(ufunc)} with these arguments is not modelled in the graph")
    arrays = _arrays(args)
    answer = ask_numpy(ufunc, args, {} if out is None else {"out": out.stand_in()})
    if out is not None:
        answer = answer[()] if out.scalar else answer
    kinds = [a.dtype if isinstance(a, ArrayArgument) else _scalar_type(a) for a in args]
    loop = ufunc.resolve_dtypes(tuple(kinds) + (None,))
    _check_value_independent(ufunc, args, loop)
    reference = arrays[0].proxy
    operands = []
    for arg, dtype in zip(args, loop):
        if isinstance(arg, ArrayArgument):
            target = from_numpy_dtype(dtype)
            operands.append(arg.proxy if arg.proxy.dtype == target else arg.proxy.to(target))
        elif ufunc in TENSOR_OPERANDS:
            operands.append(full_like(reference, arg.item() if isinstance(arg, np.generic) else arg,
                                      dtype=from_numpy_dtype(dtype)))
        else:
            operands.append(arg.item() if isinstance(arg, np.generic) else arg)
    result = lowered(ufunc, lambda: UFUNCS[ufunc](*operands))
    if out is not None:  # NumPy checked the cast (same_kind) and the shape; copy_ casts as it does
        out.proxy.copy_(result)
        return out.proxy, out.scalar
    return finish(ufunc, result, answer, arrays)


# -- other functions -----------------------------------------------------------------------------
def _all_axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted((a % x.ndim if x.ndim else a) for a in axes))


_ROUNDING = ("sum", "prod")  # reductions whose result depends on the order of accumulation


def _accumulating_in(answer):
    """The tensor dtype a NumPy reduction computes in; float16 is refused (a graph break): NumPy
    accumulates it in float16 pairwise blocks, the tensor kernels differently, and the last bits differ."""
    if np.dtype(answer.dtype) == np.float16:
        raise Unsupported("a NumPy reduction in float16 is not modelled in the graph (it runs eagerly in NumPy)")
    return from_numpy_dtype(answer.dtype)


def _reduction(method, accepts_dtype=True):
    """A NumPy reduction (``np.sum(a, axis, dtype, keepdims)``) as tensor reductions, one axis at a time,
    computed in NumPy's result dtype."""
    def lower(answer, a, axis=None, dtype=None, *, keepdims=False):
        x = a.to(_accumulating_in(answer) if method in _ROUNDING else from_numpy_dtype(answer.dtype))
        if x.ndim == 0:
            return getattr(x, method)()
        for dim in reversed(_all_axes(x, axis)):
            x = getattr(x, method)(dim=dim, keepdim=bool(keepdims))
        return x
    if not accepts_dtype:
        return lambda answer, a, axis=None, *, keepdims=False: lower(answer, a, axis, None, keepdims=keepdims)
    return lower


def _mean(answer, a, axis=None, dtype=None, *, keepdims=False):
    x = a.to(_accumulating_in(answer))
    return x.mean() if x.ndim == 0 else x.mean(dim=_all_axes(x, axis), keepdim=bool(keepdims))


def _spread(method):
    def lower(answer, a, axis=None, dtype=None, *, ddof=0, keepdims=False):
        x = a.to(_accumulating_in(answer))
        if x.ndim == 0:
            x = x.reshape(1)
        return getattr(x, method)(dim=_all_axes(x, axis), correction=ddof, keepdim=bool(keepdims))
    return lower


def _arg_reduction(method):
    def lower(answer, a, axis=None, *, keepdims=False):
        if axis is None:
            picked = getattr(a.reshape(-1), method)(dim=0)
            return picked.reshape((1,) * a.ndim) if keepdims else picked
        return getattr(a, method)(dim=axis, keepdim=bool(keepdims))
    return lower


def _cumulative(method):
    def lower(answer, a, axis=None, *, dtype=None):
        x = a.to(_accumulating_in(answer))
        return getattr(x.reshape(-1), method)(0) if axis is None else getattr(x, method)(axis)
    return lower


def _reshape(answer, a, shape, order="C"):
    if order != "C":
        raise Unsupported(f"reshape with order={order!r} is not modelled in the graph")
    return a.reshape(shape)


def _transpose(answer, a, axes=None):
    return a.permute(tuple(reversed(range(a.ndim))) if axes is None else tuple(axes))


def _squeeze(answer, a, axis=None):
    if axis is None:
        return a.reshape(answer.shape) if all(type(s) is int for s in a.shape) else a.squeeze()
    for dim in reversed(_all_axes(a, axis)):
        a = a.squeeze(dim)
    return a


def _expand_dims(answer, a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    rank = a.ndim + len(axes)
    for dim in sorted(d % rank for d in axes):
        a = a.unsqueeze(dim)
    return a


def _ravel(answer, a, order="C"):
    if order != "C":
        raise Unsupported(f"ravel with order={order!r} is not modelled in the graph")
    return a.reshape(-1)


def _concatenate(answer, arrays, axis=0, *, dtype=None):
    dtype = from_numpy_dtype(answer.dtype)
    parts = [p.to(dtype) for p in arrays]
    if axis is None:
        return cat([p.reshape(-1) for p in parts], 0)
    return cat(parts, axis)


def _stack(answer, arrays, axis=0, *, dtype=None):
    dtype = from_numpy_dtype(answer.dtype)
    return stack([p.to(dtype) for p in arrays], axis)


def _operand(value, answer, reference):
    dtype = from_numpy_dtype(answer.dtype)
    if hasattr(value, "to"):
        return value.to(dtype)
    return full_like(reference, value.item() if isinstance(value, np.generic) else value, dtype=dtype)


def _where(answer, condition, x, y):
    reference = next(v for v in (condition, x, y) if hasattr(v, "to"))
    mask = condition.to(from_numpy_dtype(np.dtype(bool))) if hasattr(condition, "to") \
        else full_like(reference, bool(condition), dtype=from_numpy_dtype(np.dtype(bool)))
    return tensor_where(mask, _operand(x, answer, reference), _operand(y, answer, reference))


def _clip(answer, a, a_min=None, a_max=None):
    x = a.to(_accumulating_in(answer))
    bounds = [None if b is None else (_operand(b, answer, x) if hasattr(b, "to") else
                                      (b.item() if isinstance(b, np.generic) else b)) for b in (a_min, a_max)]
    return x.clamp(*bounds)


def _dot(answer, a, b):
    dtype = from_numpy_dtype(answer.dtype)
    if a.ndim > 2 or b.ndim > 2:
        raise Unsupported("numpy.dot() of arrays with more than two dimensions is not modelled in the graph")
    a, b = a.to(dtype), b.to(dtype)
    return a * b if a.ndim == 0 or b.ndim == 0 else a @ b


def _norm(answer, x, ord=None, axis=None, keepdims=False):
    if ord is not None or x.dtype.is_complex:
        raise Unsupported("numpy.linalg.norm() with ord= or of a complex array is not modelled in the graph")
    x = x.to(from_numpy_dtype(answer.dtype))
    squares = x * x
    if axis is None:
        total = squares.reshape(-1).sum(0)
        return total.sqrt().reshape((1,) * x.ndim) if keepdims else total.sqrt()
    for dim in reversed(_all_axes(x, axis)):
        squares = squares.sum(dim=dim, keepdim=bool(keepdims))
    return squares.sqrt()


def _round(answer, a, decimals=0):
    if decimals != 0:
        raise Unsupported("numpy.round() with decimals= is not modelled in the graph")
    return a.round() if a.dtype.is_floating_point else a.clone()


def _filled(value):
    def lower(answer, a, dtype=None):
        return full_like(a, value, dtype=from_numpy_dtype(answer.dtype))
    return lower


def _full_like(answer, a, fill_value, dtype=None):
    return full_like(a, fill_value.item() if isinstance(fill_value, np.generic) else fill_value,
                     dtype=from_numpy_dtype(answer.dtype))


def _copy(answer, a):
    return a.clone()


#: NumPy function -> lowering ``(NumPy's answer, *args, **kwargs) -> proxy``.
FUNCTIONS = {
    np.sum: _reduction("sum"), np.prod: _reduction("prod"), np.max: _reduction("amax", False),
    np.amax: _reduction("amax", False), np.min: _reduction("amin", False), np.amin: _reduction("amin", False),
    np.any: _reduction("any", False), np.all: _reduction("all", False), np.mean: _mean,
    np.std: _spread("std"), np.var: _spread("var"), np.argmax: _arg_reduction("argmax"),
    np.argmin: _arg_reduction("argmin"), np.cumsum: _cumulative("cumsum"), np.cumprod: _cumulative("cumprod"),
    np.reshape: _reshape, np.transpose: _transpose, np.squeeze: _squeeze, np.expand_dims: _expand_dims,
    np.ravel: _ravel, np.concatenate: _concatenate, np.stack: _stack, np.where: _where, np.clip: _clip,
    np.dot: _dot, np.linalg.norm: _norm, np.round: _round, np.around: _round, np.zeros_like: _filled(0),
    np.ones_like: _filled(1), np.full_like: _full_like, np.copy: _copy,
}

#: NumPy functions whose result is a view of their argument (every other one makes a new array).
VIEW_FUNCTIONS = frozenset({np.reshape, np.transpose, np.squeeze, np.expand_dims, np.ravel})

#: NumPy's array constructors (``np.asarray`` and friends): of constants, a new array like CREATION_FUNCTIONS.
ARRAY_CONSTRUCTORS = (np.asarray, np.array, np.asanyarray)

#: Pure NumPy functions making a new array from constants: made while tracing, copied in the graph on every call.
CREATION_FUNCTIONS = (np.zeros, np.ones, np.full, np.arange, np.linspace, np.eye, np.identity)

#: ndarray methods that are the NumPy function of the same behaviour with the array first.
METHODS = {
    "sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any, "all": np.all, "mean": np.mean,
    "std": np.std, "var": np.var, "argmax": np.argmax, "argmin": np.argmin, "cumsum": np.cumsum,
    "cumprod": np.cumprod, "squeeze": np.squeeze, "ravel": np.ravel, "clip": np.clip, "dot": np.dot,
    "round": np.round, "copy": np.copy,
}


def lowered(fn, thunk):
    """Run a lowering; whatever it cannot do (arguments it does not take, a tensor op refusing
    them) is a graph break, never an error of the program: NumPy runs the call eagerly."""
    try:
        return thunk()
    except Unsupported:
        raise
    except Exception as exc:
        raise Unsupported(f"{describe(fn)} with these arguments is not modelled in the graph "
                          f"({type(exc).__name__}: {exc})") from None


def call_function(fn, args: list, kwargs: dict):
    """``fn(*args, **kwargs)`` for a modelled NumPy function: ``(proxy, is a NumPy scalar)``."""
    if isinstance(fn, np.ufunc):
        return call_ufunc(fn, args, kwargs)
    lower = FUNCTIONS.get(fn)
    if lower is None:
        raise Unsupported(f"{describe(fn)} is not modelled in the graph (it runs eagerly in NumPy)")
    answer = ask_numpy(fn, args, kwargs)
    graph_args, graph_kwargs = _map(args, lambda a: a.proxy), _map(kwargs, lambda a: a.proxy)
    result = lowered(fn, lambda: lower(answer, *graph_args, **graph_kwargs))
    return finish(fn, result, answer, _arrays((args, kwargs)))


def is_modelled(value) -> bool:
    """Whether ``value`` is a NumPy callable the graph models (a ufunc or a ``FUNCTIONS`` key)."""
    try:
        return value in UFUNCS or value in FUNCTIONS
    except TypeError:
        return False
