"""wrap(): turn a Python value read from a source into a variable, installing its guards."""
from __future__ import annotations

import collections
import enum
import functools
import types

from ....nn.module import Module
from ....optim.optimizer import Optimizer
from ....optim.tracked import TrackedDict, TrackedList, TrackedState
from ....ops.core.registry import Op
from ....tensor.device import device as Device
from ....tensor.dtype import dtype as DType
from ....tensor.layout import Size, _MemoryFormat
from ....tensor.symint import SymBool, SymInt
from ....tensor.tensor import Tensor
from ....autograd.grad_mode import is_grad_enabled, set_grad_enabled
from ...runtime.wrappers import CompiledModule
from .. import guards as G
from .. import trace_rules
from ...errors import Unsupported, UserError
from ..proxy import ProxyTensor
from ..sources import AttrSource, ItemSource, IteratorStateSource, KeyPresentSource, LocalSource, iterator_state
from .base import CONSTANT_TYPES, ConstantVariable, VariableTracker
from .builtins import BuiltinVariable, PureFunctionVariable, is_builtin, is_pure_library_function
from .containers import ListVariable, TupleVariable
from .named_tuples import NamedTupleVariable
from .dicts import MISSING, DictVariable
from .exceptions import CaughtExceptionVariable
from .sets import SetVariable
from .iterators import ContainerIteratorVariable, LazyIteratorVariable, iterate
from .functions import ClosureFunctionVariable, PartialVariable, UserFunctionVariable, UserMethodVariable
from .library import OpaqueCallableVariable
from .lifted_float import lift
from .array_conversions import numpy_variable, to_tensor_variable, wrap_array_input
from .unbacked_scalars import lift_resumed_float
from .classes import ClassVariable
from .contexts import ContextManagerFunctionVariable, is_contextmanager_function
from .objects import NNModuleVariable, NoOpContextVariable, PythonModuleVariable, UserObjectVariable
from .tensor import TensorVariable, TracedCallableVariable
from .tensor_keyed import TensorKeyedDictVariable

#: Library modules whose functions run directly on proxy tensors (their ops get recorded).
TRACEABLE_MODULE_PREFIXES = ("dynamo_lite.ops", "dynamo_lite.tensor", "dynamo_lite.nn.functional")

#: Where the grad-mode context managers live, and the autograd package (run eagerly).
GRAD_MODE_MODULE = "dynamo_lite.autograd.grad_mode"
AUTOGRAD_PACKAGE = "dynamo_lite.autograd"

#: Library functions with effects outside the graph: calling one breaks the graph.
SIDE_EFFECT_FUNCTIONS = {"manual_seed", "set_default_dtype", "from_numpy", "from_dlpack", "seed",
                         "set_printoptions", "get_rng_state", "set_rng_state"}

CONSTANT_LIKE = (DType, Device, _MemoryFormat, Size, enum.Enum)


class DisabledFunctionVariable(VariableTracker):
    """A function the user marked with ``dl.disable`` or one with effects outside the graph."""

    def __init__(self, fn, reason: str, source=None):
        self.fn, self.reason, self.source = fn, reason, source

    def as_python_constant(self):
        return self.fn

    def call(self, tx, args, kwargs):
        raise Unsupported(self.reason)


class TraceTimeValueVariable(DisabledFunctionVariable):
    """A function whose call in compiled code is a constant (``trace_rules.TRACE_TIME_VALUES``)."""

    def __init__(self, fn, source=None):
        super().__init__(fn, f"{fn.__qualname__}() takes no arguments in compiled code", source)

    def call(self, tx, args, kwargs):
        if args or kwargs:
            raise Unsupported(self.reason)
        value = trace_rules.TRACE_TIME_VALUES[trace_rules.trace_time_value_key(self.fn)]
        return ConstantVariable(self.fn() if value is trace_rules.ASK_AT_TRACE_TIME else value)


def _guard(tx, source, kind, expected) -> None:
    if source is not None:
        tx.output.guards.add(source, kind, expected)


def is_traceable_library_function(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module.startswith(TRACEABLE_MODULE_PREFIXES)


def wrap(tx, value, source) -> VariableTracker:
    """The variable for ``value`` read from ``source`` (None: no guard, e.g. a default).

    Tensors reached from the frame's arguments become graph inputs (guarded on dtype,
    device, shape and strides); tensors reached through attributes or globals (module
    parameters and buffers) become graph constants, guarded by identity.
    """
    if isinstance(value, ProxyTensor):
        raise Unsupported("a traced tensor escaped into Python state")
    if isinstance(value, Tensor):
        return tx.output.wrap_tensor(value, source, is_input=_is_frame_input(source))
    if type(value) is int and isinstance(source, LocalSource):
        symbolic = tx.output.wrap_int(value, source)  # NOTE: [symbolic int inputs]
        if symbolic is not None:
            return ConstantVariable(symbolic, source)
    if type(value) is float and source is not None:
        lifted = lift(tx, value, source) or lift_resumed_float(tx, value, source)  # NOTE: [lifted floats]
        if lifted is not None:
            return lifted
    if type(value) in CONSTANT_TYPES or isinstance(value, CONSTANT_LIKE) or value is None:
        _guard(tx, source, G.ID_MATCH if isinstance(value, DType) else G.CONSTANT_MATCH, value)
        return ConstantVariable(value, source)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        _guard(tx, source, G.TYPE_MATCH, type(value))
        items = [wrap(tx, v, ItemSource(source, i) if source else None) for i, v in enumerate(value)]
        return NamedTupleVariable(items, type(value), source)
    known = tx.output.objects.get(id(value)) if isinstance(value, (list, dict)) else None
    if known is not None:
        return known[1]
    if type(value) in LIST_TYPES and source is not None:
        _guard(tx, source, G.TYPE_MATCH, type(value))

        def realize():
            _guard(tx, source, G.LENGTH_MATCH, len(value))
            return [wrap(tx, v, ItemSource(source, i)) for i, v in enumerate(value)]

        return _remember(tx, value, ListVariable((), source, realize=realize, python_class=type(value)))
    if type(value) in LIST_TYPES or isinstance(value, tuple):
        _guard(tx, source, G.TYPE_MATCH, type(value))
        _guard(tx, source, G.LENGTH_MATCH, len(value))
        items = [wrap(tx, v, ItemSource(source, i) if source else None) for i, v in enumerate(value)]
        if type(value) in LIST_TYPES:
            return _remember(tx, value, ListVariable(items, source, python_class=type(value)))
        if type(value) is not tuple and all(i.is_python_constant() for i in items):
            return ConstantVariable(value, source)  # a tuple subclass of constants keeps its type
        return TupleVariable(items, source)
    if type(value) in (set, frozenset) and all(type(v) in CONSTANT_TYPES for v in value):
        _guard(tx, source, G.CONSTANT_MATCH, type(value)(value))  # a copy: the contents when traced
        return _remember(tx, value, SetVariable(value, source, type(value)))
    if type(value) in DICT_TYPES:
        if not all(isinstance(k, (str, int)) for k in value):
            raise Unsupported("a dict with non-constant keys")
        _guard(tx, source, G.TYPE_MATCH, type(value))
        if source is None:
            items = {k: wrap(tx, v, None) for k, v in value.items()}
            return _remember(tx, value, DictVariable(items, dict_type=type(value)))
        return _remember(tx, value, _dict_read_key_by_key(tx, value, source))
    if type(value) in STATE_TYPES and source is not None and TensorKeyedDictVariable.accepts(value):
        _guard(tx, source, G.TYPE_MATCH, type(value))  # NOTE: [tensor-keyed state]
        _guard(tx, AttrSource(source, "default_factory"), G.ID_MATCH, value.default_factory)
        return _remember(tx, value, TensorKeyedDictVariable(value, source))
    if type(value) in _LIVE_ITERATOR_TYPES and source is not None:
        return _wrap_live_iterator(tx, value, source)
    array = wrap_array_input(tx, value, source)  # NOTE: [NumPy arrays in the graph]
    if array is not None:
        return array
    if isinstance(value, BaseException) and source is not None:  # NOTE: [breaks inside try/except]
        _guard(tx, source, G.TYPE_MATCH, type(value))
        return CaughtExceptionVariable(value, source)
    return _wrap_object(tx, value, source)


_LIVE_ITERATOR_TYPES = (type(iter([])), enumerate)

#: Containers read like the builtin ones; an optimizer's count their edits (NOTE: [optimizer edit count]).
LIST_TYPES = (list, TrackedList)
DICT_TYPES = (dict, TrackedDict)
STATE_TYPES = (collections.defaultdict, TrackedState)


def _wrap_live_iterator(tx, value, source) -> VariableTracker:
    """A list iterator or ``enumerate`` a graph break passed to a resume function: the
    same live iterator over the same list (see IteratorVariable.live_across_breaks)."""
    _guard(tx, source, G.TYPE_MATCH, type(value))
    walked, position = iterator_state(value)
    inner = wrap(tx, walked, IteratorStateSource(source, 0))
    start = wrap(tx, position, IteratorStateSource(source, 1)).as_python_constant()
    if type(value) is enumerate:
        return LazyIteratorVariable("enumerate", [iterate(tx, inner)], start=start)
    iterator = ContainerIteratorVariable(inner)
    iterator.index = start
    return iterator


def _dict_read_key_by_key(tx, value: dict, source) -> DictVariable:
    """The variable of a dict from ``source``, guarded on the keys the trace reads (NOTE:
    [dicts read key by key])."""

    def read_key(key):
        present = key in value
        _guard(tx, KeyPresentSource(source, key), G.CONSTANT_MATCH, present)
        return wrap(tx, value[key], ItemSource(source, key)) if present else MISSING

    def realize(read: dict) -> dict:
        _guard(tx, source, G.DICT_KEYS, tuple(value))
        return {k: read[k] if k in read else wrap(tx, v, ItemSource(source, k)) for k, v in value.items()}

    return DictVariable({}, source, dict_type=type(value), read_key=read_key, realize=realize)


def _remember(tx, value, variable):
    """One variable per mutable object, so a mutation through one name is seen by all."""
    tx.output.objects[id(value)] = (value, variable)
    return variable


def _wrap_object(tx, value, source) -> VariableTracker:
    variable = _object_variable(tx, value, source)
    if isinstance(variable, UserObjectVariable):
        _guard(tx, source, G.TYPE_MATCH, type(value))
        if isinstance(value, Optimizer):  # the root its containers' edit count vouches for
            _guard(tx, source, G.ID_MATCH, value)
    elif _is_bound_builtin_method(value) and source is not None:
        # ``xs.append`` is a new object at each read: guard what it is bound to, and its name.
        owner = value.__self__
        _guard(tx, AttrSource(source, "__self__"), G.ID_MATCH if isinstance(owner, type) else G.TYPE_MATCH,
               owner if isinstance(owner, type) else type(owner))
        _guard(tx, AttrSource(source, "__name__"), G.CONSTANT_MATCH, value.__name__)
    elif isinstance(variable, ClosureFunctionVariable):
        _guard(tx, source, G.TYPE_MATCH, types.FunctionType)
        _guard(tx, AttrSource(source, "__code__"), G.ID_MATCH, value.__code__)
    elif not isinstance(value, types.MethodType):
        _guard(tx, source, G.ID_MATCH, value)
    return variable


def _is_bound_builtin_method(value) -> bool:
    """A C method bound to an object (``xs.append``), not a module's function (``len``)."""
    return isinstance(value, types.BuiltinMethodType) and value.__self__ is not None \
        and not isinstance(value.__self__, types.ModuleType)


_NAMED_KINDS = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                types.BuiltinMethodType, types.WrapperDescriptorType, types.MethodWrapperType,
                types.MethodDescriptorType)


def _object_variable(tx, value, source) -> VariableTracker:
    modelled = numpy_variable(value, source)  # NOTE: [NumPy arrays in the graph]
    if modelled is not None:
        return modelled
    if not isinstance(value, _NAMED_KINDS):
        # An instance: classified by its type only, never by reading its attributes
        # (which could run a user __getattr__ that eager never runs).
        return _instance_variable(tx, value, source)
    # Something dl.compile returned, called from compiled code: trace what it wraps.
    if isinstance(value, CompiledModule):
        return wrap(tx, value._orig_mod, AttrSource(source, "_orig_mod") if source else None)
    if callable(value) and hasattr(value, "_dynamo_lite_config") and hasattr(value, "__wrapped__"):
        return wrap(tx, value.__wrapped__, AttrSource(source, "__wrapped__") if source else None)

    if isinstance(value, Module):
        return NNModuleVariable(value, source)
    if isinstance(value, types.ModuleType):
        return PythonModuleVariable(value, source)
    if isinstance(value, Op):
        return TracedCallableVariable(value, f"dl.ops.{value.name}", source)
    if any(value is t for t in BUILTIN_TYPES) or (is_builtin(value) and not isinstance(value, type)):
        return BuiltinVariable(value, source)
    if is_pure_library_function(value):
        return PureFunctionVariable(value, source)
    if callable(value) and tx.hook is not None and tx.hook.is_disabled(value):
        return DisabledFunctionVariable(value, f"call to {getattr(value, '__qualname__', value)}, marked with dl.disable", source)
    if is_contextmanager_function(value):
        return ContextManagerFunctionVariable(value, source)
    if isinstance(value, types.FunctionType):
        if trace_rules.trace_time_value_key(value) is not None:
            return TraceTimeValueVariable(value, source)
        if value is is_grad_enabled:
            return GradModeQueryVariable(value, source)
        if getattr(value, "__module__", "").startswith(AUTOGRAD_PACKAGE):
            return DisabledFunctionVariable(value, f"{value.__qualname__}() works on autograd state, which runs eagerly",
                                            source)
        if is_traceable_library_function(value):
            if value.__name__ in SIDE_EFFECT_FUNCTIONS:
                return to_tensor_variable(value, DisabledFunctionVariable(
                    value, f"dl.{value.__name__}() changes state outside the graph", source), source)
            return to_tensor_variable(value, TracedCallableVariable(
                value, f"{value.__module__}.{value.__qualname__}", source), source)
        if trace_rules.rule_for_function(value) == trace_rules.OPAQUE:
            return OpaqueCallableVariable(value, source)
        if source is not None and any(id(cell) in tx.output.objects for cell in value.__closure__ or ()):
            return ClosureFunctionVariable(value, source)
        return UserFunctionVariable(value, source)
    if isinstance(value, types.MethodType):
        if source is not None:
            _guard(tx, AttrSource(source, "__func__"), G.ID_MATCH, value.__func__)
        if value.__name__ == "__exit__" and type(value.__self__).__module__ == GRAD_MODE_MODULE:
            # A grad-mode block entered before a resume function (NoOpExitVariable.reconstruct):
            # leaving it is a break, so the code after it runs with the mode it restores.
            return DisabledFunctionVariable(value, "leaving a grad-mode block entered before a graph break", source)
        if trace_rules.rule_for_function(value.__func__) == trace_rules.OPAQUE:
            return OpaqueCallableVariable(value, source)  # a library object's method (a file's __exit__ ...)
        self_var = wrap(tx, value.__self__, None if source is None else AttrSource(source, "__self__"))
        return UserMethodVariable(value.__func__, self_var, None)
    if isinstance(value, type):
        if value.__module__ == GRAD_MODE_MODULE:
            return GradModeClassVariable(value, source)
        return ClassVariable(value, source)
    if callable(value):
        return OpaqueCallableVariable(value, source)
    return UserObjectVariable(value, source)


def _instance_variable(tx, value, source) -> VariableTracker:
    kind = type(value)
    if isinstance(value, functools._lru_cache_wrapper) and isinstance(value.__wrapped__, types.FunctionType) \
            and trace_rules.rule_for_function(value.__wrapped__) == trace_rules.INLINE:
        # @functools.lru_cache over user code: the function is inlined (what it returns is what
        # the cache would return for a pure function; the cache itself is not consulted)
        return wrap(tx, value.__wrapped__, AttrSource(source, "__wrapped__") if source is not None else None)
    if isinstance(value, CompiledModule):
        return wrap(tx, value._orig_mod, AttrSource(source, "_orig_mod") if source else None)
    if isinstance(value, Module):
        return NNModuleVariable(value, source)
    if isinstance(value, Op):
        return TracedCallableVariable(value, f"dl.ops.{value.name}", source)
    if kind.__module__ == GRAD_MODE_MODULE:
        return NoOpContextVariable(value)
    if isinstance(value, functools.partial):
        return PartialVariable(wrap(tx, value.func, AttrSource(source, "func") if source else None),
                               [wrap(tx, a, ItemSource(AttrSource(source, "args"), i) if source else None)
                                for i, a in enumerate(value.args)],
                               {k: wrap(tx, v, ItemSource(AttrSource(source, "keywords"), k) if source else None)
                                for k, v in value.keywords.items()}, source)
    if callable(value) and is_traceable_library_function(kind):
        return TracedCallableVariable(value, kind.__qualname__, source)
    if trace_rules.is_compiled_function(value):
        return OpaqueCallableVariable(value, source)
    return UserObjectVariable(value, source)


#: Builtin types that behave like functions to the translator.
BUILTIN_TYPES = (range, zip, enumerate, map, filter, reversed, set, frozenset, tuple, list, dict, int, float, bool, str, type, slice, super)


def _is_frame_input(source) -> bool:
    """Tensors reached from the frame's own arguments are graph inputs; others constants."""
    while isinstance(source, (ItemSource, AttrSource)):
        if isinstance(source, AttrSource):
            return False
        source = source.base
    return isinstance(source, LocalSource)


class GradModeClassVariable(ClassVariable):
    """``dl.no_grad``, ``dl.enable_grad``, ``dl.inference_mode``: their instances are blocks
    whose ops the graph records with the block's grad mode (NOTE: [compiled graphs and autograd])."""

    def call(self, tx, args, kwargs):
        if kwargs or len(args) > 1 or (args and not isinstance(args[0], ConstantVariable)):
            raise Unsupported(f"dl.{self.value.__name__}(...) with a mode that is not a constant")
        if self.value is set_grad_enabled:
            return _set_grad_enabled_block(tx, args)
        return NoOpContextVariable(self.value(*(a.value for a in args)))


def _set_grad_enabled_block(tx, args) -> VariableTracker:
    """``with dl.set_grad_enabled(mode):`` is a block like ``no_grad()``'s. The call alone
    changes the mode at once (``__exit__`` restores the one before it), so the block object
    is made without running its constructor, and a call outside a with statement (which
    changes the mode for the code after it) runs eagerly."""
    mode = args[0].value if args else True
    following = tx.instructions[tx.pc].opname if tx.pc < len(tx.instructions) else None
    if following != "BEFORE_WITH":
        raise Unsupported("dl.set_grad_enabled(...) outside a with statement changes the grad mode "
                          "for the code after it")
    if not isinstance(mode, bool):
        raise UserError(TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}"))
    block = object.__new__(set_grad_enabled)
    block.mode = mode  # target_mode() and clone() read only this
    return NoOpContextVariable(block)


def wrap_constant_result(value) -> VariableTracker:
    """A variable for a value computed from constants (no source, no guard)."""
    if isinstance(value, tuple) and not hasattr(value, "_fields") and type(value) is tuple:
        return TupleVariable([wrap_constant_result(v) for v in value])
    if type(value) is list:
        return ListVariable([wrap_constant_result(v) for v in value])
    if type(value) in (set, frozenset) and all(type(v) in CONSTANT_TYPES for v in value):
        return SetVariable(value, None, type(value))
    if type(value) is dict:
        return DictVariable({k: wrap_constant_result(v) for k, v in value.items()})
    if isinstance(value, Tensor):
        raise Unsupported("a constant computation produced a tensor")
    if isinstance(value, type):
        return ClassVariable(value, None)
    if type(value) is SymBool:  # a comparison of sizes is decided (and guarded) when made
        return ConstantVariable(bool(value))
    return ConstantVariable(value)


def wrap_traced_result(tx, value) -> VariableTracker:
    """A variable for what library code returned while tracing."""
    if isinstance(value, ProxyTensor):
        return TensorVariable(value)
    if isinstance(value, Tensor):
        raise Unsupported("a library call returned a concrete tensor while tracing (not capturable)")
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return NamedTupleVariable([wrap_traced_result(tx, v) for v in value], type(value))
    if type(value) in CONSTANT_TYPES or isinstance(value, CONSTANT_LIKE) or value is None or type(value) is SymInt:
        return ConstantVariable(value)
    if type(value) is SymBool:
        return ConstantVariable(bool(value))
    if isinstance(value, (tuple, list)):
        items = [wrap_traced_result(tx, v) for v in value]
        return ListVariable(items) if isinstance(value, list) else TupleVariable(items)
    if isinstance(value, dict):
        return DictVariable({k: wrap_traced_result(tx, v) for k, v in value.items()})
    if callable(value) and hasattr(value, "__self__") and isinstance(value.__self__, ProxyTensor):
        return TracedCallableVariable(value)
    raise Unsupported(f"library call returned an unsupported value of type {type(value).__name__}")


class GradModeQueryVariable(VariableTracker):
    """``dl.is_grad_enabled()``: the grad mode where it is called in the traced code (the mode the
    frame was entered with is guarded; ``no_grad``/``set_grad_enabled`` blocks are tracked)."""

    def __init__(self, value, source=None):
        self.value, self.source = value, source

    def python_type(self) -> type:
        return types.FunctionType

    def reconstruct(self, cg) -> None:
        cg.load_const(self.value)

    def call(self, tx, args, kwargs) -> VariableTracker:
        if args or kwargs:
            raise Unsupported("dl.is_grad_enabled() with arguments")
        output = tx.output
        return ConstantVariable(output.grad_mode_blocks[-1] if output.grad_mode_blocks else output.grad_enabled)
