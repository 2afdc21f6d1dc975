"""Objects read from the frame: nn.Modules, Python modules, classes, user objects."""
from __future__ import annotations

import inspect
import types

from ....nn.hooks import HOOK_TABLES
from ....nn.module import Module
from ...errors import Unsupported, UserError
from .. import trace_rules
from ..guards import CONSTANT_MATCH, DICT_KEYS, LENGTH_MATCH
from ..side_effects import DELETED
from ..sources import AttrSource, ItemSource, KeyPresentSource
from .base import ConstantVariable, ValueVariable, VariableTracker
from .containers import TupleVariable
from .contexts import enter_user_context
from .functions import UserMethodVariable
from .iterators import IteratorVariable
from .user_iteration import iterate_user_object
from . import user_protocols


def _static_attr(obj, name):
    """Look ``name`` up without running descriptors; raises the AttributeError of eager
    Python (as a UserError) when absent and the class has no ``__getattr__``."""
    try:
        return inspect.getattr_static(obj, name)
    except AttributeError:
        raise _missing_attribute(obj, name) from None


def _missing_attribute(obj, name: str) -> Exception:
    """What reading the absent attribute ``name`` does: the user's ``__getattr__`` runs
    (eagerly: Unsupported), or Python's AttributeError is raised."""
    if inspect.getattr_static(type(obj), "__getattr__", None) is not None:
        return Unsupported(f"{type(obj).__name__}.{name} is computed by a __getattr__")
    return UserError(AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'"))


class ObjectVariable(ValueVariable):
    """A Python object with a source, read attribute by attribute (each read guarded)."""

    def as_traceable(self):
        return self.value

    def var_getattr(self, tx, name: str) -> VariableTracker:
        own = inspect.getattr_static(type(self.value), "__getattribute__", None)
        if isinstance(own, types.FunctionType):
            raise Unsupported(f"reading .{name} of a {type(self.value).__qualname__}, whose class defines its "
                              "own __getattribute__ (run eagerly)")
        stored = self.stored_attribute(tx, name)
        if stored is DELETED:  # deleted in the frame: now absent, as if never set
            raise _missing_attribute(self.value, name)
        if stored is not None:
            return stored
        source = self.attribute_source(name)
        try:
            static = _static_attr(self.value, name)
        except UserError:
            self.guard_absent(tx, name)  # getattr(obj, name, default) / hasattr: set later, recompile
            raise
        if _from_instance_dict(self.value, name, static):
            # Python binds nothing read from the instance: a function stays a function, and an
            # object whose type has __get__ (functools.partial on 3.13) is returned as it is.
            return tx.wrap(static, source)
        self.guard_not_shadowed(tx, name, static)
        if isinstance(getattr(static, "__wrapped__", None), types.FunctionType) and \
                getattr(static, "_dynamo_lite_config", None) is not None:
            static = static.__wrapped__  # a method compiled with dl.compile (dl.jit.script_method): inline it
        if isinstance(static, types.FunctionType):
            # A plain function found on the class: a method to inline with self bound.
            return UserMethodVariable(static, self, source if self.source is not None else None)
        if isinstance(static, staticmethod):
            return tx.wrap(static.__func__, None)
        if isinstance(static, classmethod):
            return UserMethodVariable(static.__func__, tx.wrap(type(self.value), None))
        if isinstance(static, property):
            if static.fget is None:
                raise Unsupported(f"property {name!r} has no getter")
            return UserMethodVariable(static.fget, self).call(tx, [], {})
        if hasattr(static, "__get__") and not isinstance(static, (types.BuiltinFunctionType, type)) and not _is_plain_data(static):
            return OpaqueAttributeVariable(self, name)
        return tx.wrap(getattr(self.value, name), source)

    def store_attribute(self, tx, name: str, value) -> None:
        """``obj.name = value``: through a property's setter (inlined), else recorded."""
        cls = type(self.value)
        static = inspect.getattr_static(cls, name, None)
        if isinstance(static, property):
            if not isinstance(static.fset, types.FunctionType) or value is DELETED:
                raise Unsupported(f"assignment to property {name!r} without a Python setter")
            UserMethodVariable(static.fset, self).call(tx, [value], {})
            return
        if hasattr(type(static), "__set__") or hasattr(type(static), "__delete__"):
            raise Unsupported(f"assignment to {cls.__name__}.{name}, a descriptor the compiler does not model")
        if cls.__setattr__ is not object.__setattr__ or (value is DELETED and cls.__delattr__ is not object.__delattr__):
            raise Unsupported(f"assignment to an attribute of {cls.__name__}, which has a custom __setattr__")
        self.record_store(tx, name, value)

    def call(self, tx, args, kwargs) -> VariableTracker:
        """``obj(...)`` of an object whose class defines ``__call__`` in Python (a hook object
        such as weight_norm's, a user functor): the method is inlined."""
        own = inspect.getattr_static(type(self.value), "__call__", None)
        if isinstance(own, types.FunctionType) and trace_rules.rule_for_function(own) == trace_rules.INLINE:
            return UserMethodVariable(own, self).call(tx, args, kwargs)
        return super().call(tx, args, kwargs)

    def guard_not_shadowed(self, tx, name: str, static) -> None:
        """``static`` (a class attribute that is no data descriptor) was read for ``obj.name``:
        guard that the instance ``__dict__`` still lacks ``name`` (``obj.forward = ...``
        set later shadows the class's and must recompile)."""
        namespace = getattr(self.value, "__dict__", None)
        if self.source is None or not isinstance(namespace, dict) or hasattr(type(static), "__set__") \
                or hasattr(type(static), "__delete__") or isinstance(self.value, type):
            return
        tx.output.guards.add(KeyPresentSource(AttrSource(self.source, "__dict__"), name), CONSTANT_MATCH, False)

    def guard_absent(self, tx, name: str) -> None:
        """``obj.name`` was found missing: guard that its instance ``__dict__`` still lacks it
        (the class is guarded by the object's type; its attributes are not re-read)."""
        namespace = getattr(self.value, "__dict__", None)
        if self.source is not None and isinstance(namespace, dict) and not isinstance(self.value, type):
            tx.output.guards.add(KeyPresentSource(AttrSource(self.source, "__dict__"), name), CONSTANT_MATCH, False)

    # -- where attributes live: side effects for objects from outside the frame ------------
    def stored_attribute(self, tx, name: str):
        return tx.output.side_effects.attribute(self.value, name)

    def attribute_source(self, name: str):
        return AttrSource(self.source, name) if self.source is not None else None

    def record_store(self, tx, name: str, value) -> None:
        tx.output.side_effects.store_attribute(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({type(self.value).__name__})"


class OpaqueAttributeVariable(VariableTracker):
    """An attribute the translator does not model (a C method, a custom descriptor).

    Loading it is free; using it (calling it, computing with it) is a graph break at
    that later instruction, where the transformed code rebuilds it as ``obj.name``.
    """

    def __init__(self, obj, name: str):
        self.obj, self.name = obj, name

    def call(self, tx, args, kwargs):
        raise Unsupported(f"calling {type(self.obj.value).__name__}.{self.name}, which the compiler does not model")

    def reconstruct(self, cg) -> None:
        cg.reconstruct(self.obj)
        cg.load_attr(self.name)

    def children(self) -> list:
        return [self.obj]


def _from_instance_dict(obj, name: str, static) -> bool:
    """Whether ``obj.name`` is the value stored in ``obj.__dict__`` (no data descriptor of the
    class takes precedence: ``getattr_static`` returns the class's then)."""
    namespace = getattr(obj, "__dict__", None)
    return isinstance(namespace, dict) and name in namespace and namespace[name] is static


def _is_plain_data(value) -> bool:
    return isinstance(value, (int, float, str, bool, type(None), tuple))


class UserObjectVariable(ObjectVariable):
    """An instance of a user class (or any object the translator does not model).

    Never a constant: its state can change, so nothing is folded over it at trace time
    (``repr(obj)`` of an object the frame mutates is computed when the code runs).
    """

    def is_python_constant(self) -> bool:
        return False

    def as_python_constant(self):
        raise Unsupported(f"an instance of {type(self.value).__qualname__} is not a constant")

    def enter_with(self, tx) -> tuple:
        return enter_user_context(tx, self)

    def iterate(self, tx) -> IteratorVariable:
        return iterate_user_object(tx, self)  # the class's __iter__ (and __next__) inlined

    # len(obj), bool(obj), k in obj: the class's Python methods inlined (user_protocols.py)
    def length(self, tx) -> int:
        return user_protocols.length(tx, self)

    def truth(self, tx) -> bool:
        return user_protocols.truth(tx, self)

    def contains(self, tx, item) -> bool:
        return user_protocols.contains(tx, self, item)


class NNModuleVariable(ObjectVariable):
    """A ``dl.nn.Module``: parameters/buffers become graph constants, submodules variables.

    Every attribute read is guarded by identity, so replacing a layer or a parameter
    recompiles; calling the module inlines its ``forward``.
    """

    def var_getattr(self, tx, name: str) -> VariableTracker:
        stored = tx.output.side_effects.attribute(self.value, name)
        if stored is not None:
            return stored
        module = self.value
        if name in MODULE_TRAVERSALS and self.source is not None:
            if getattr(type(module), name) is getattr(Module, name):  # not overridden
                return ModuleTraversalVariable(self, name)
        if name in module.__dict__ or _on_class(type(module), name):
            # normal lookup finds it: Module.__getattr__ (the member tables) never runs
            return super().var_getattr(tx, name)
        source = AttrSource(self.source, name) if self.source is not None else None
        for table in ("_parameters", "_buffers", "_modules"):
            entries = module.__dict__.get(table)
            if entries is not None and name in entries:
                return tx.wrap(entries[name], source)
        return super().var_getattr(tx, name)

    def store_attribute(self, tx, name: str, value) -> None:
        # Module.__setattr__ (registration of parameters and submodules) runs when the
        # transformed code replays the store; reads in the frame see the stored value.
        if value is DELETED:
            raise Unsupported(f"del of module attribute {name!r}")
        tx.output.side_effects.store_attribute(self, name, value)

    def call(self, tx, args, kwargs) -> VariableTracker:
        cls = type(self.value)

        if cls.__call__ is Module.__call__:
            # See NOTE: [module hooks and the compiler]: without hooks, inline forward.
            if self._has_hooks(tx):
                self._refuse_backward_hooks(tx)
                return UserMethodVariable(Module._call_impl, self).call(tx, args, kwargs)
            return self.var_getattr(tx, "forward").call(tx, args, kwargs)
        return UserMethodVariable(cls.__call__, self).call(tx, args, kwargs)

    def _refuse_backward_hooks(self, tx) -> None:
        """A call of a module with backward hooks runs eagerly: the hooks read the identity autograd
        node eager builds around the call, which a graph does not hold."""
        module = self.value.__dict__
        if module.get("_backward_hooks") or module.get("_backward_pre_hooks"):
            raise Unsupported(f"{type(self.value).__name__} has full backward hooks (register_full_backward_hook): "
                              "its call runs eagerly, so the hooks see the gradients of eager autograd",
                              hint="remove the hook while compiling, or call the module under dl.no_grad()")

    def _has_hooks(self, tx) -> bool:
        """Whether the module has forward hooks; the hook tables' keys are guarded."""

        tables = {name: self.value.__dict__.get(name) for name in HOOK_TABLES}
        if self.source is not None:
            for name, table in tables.items():
                if table is not None:
                    tx.output.guards.add(AttrSource(self.source, name), DICT_KEYS, tuple(table))
        return any(tables.values())

    def unpack(self, tx) -> list:
        module = self.value
        modules = module.__dict__.get("_modules", {})
        parameters = list(module.__dict__.get("_parameters", {}).values())
        if hasattr(module, "__iter__") and (modules or _iterates_over(module, parameters)):  # ParameterList
            self.length(tx)  # guards the length
            return [tx.wrap(m, ItemSource(self.source, i) if self.source is not None else None)
                    for i, m in enumerate(module)]
        raise Unsupported(f"iterating over {type(module).__name__}")

    def length(self, tx) -> int:
        if self.source is not None:
            tx.output.guards.add(self.source, LENGTH_MATCH, len(self.value))
        return len(self.value)

    def getitem(self, tx, key: VariableTracker) -> VariableTracker:
        index = key.as_python_constant()
        result = self.value[index]
        if isinstance(index, slice):
            return tx.wrap(result, None) if self.source is None else NNModuleVariable(result, None)
        source = ItemSource(self.source, index) if self.source is not None else None
        return tx.wrap(result, source)


def _on_class(cls, name: str) -> bool:
    """Whether ``cls`` or a base defines ``name`` (no descriptor run)."""
    return any(name in klass.__dict__ for klass in cls.__mro__)


def _iterates_over(module, members: list) -> bool:
    """True when iterating ``module`` yields exactly ``members``, in order (ParameterList)."""
    items = list(module)
    return bool(members) and len(items) == len(members) and all(a is b for a, b in zip(items, members))


#: Module methods that walk the module tree: evaluated while tracing, every module and
#: table they visit guarded, so a changed tree recompiles.
MODULE_TRAVERSALS = {
    "modules": ("named_modules", False), "named_modules": ("named_modules", True),
    "children": ("named_children", False), "named_children": ("named_children", True),
    "parameters": ("named_parameters", False), "named_parameters": ("named_parameters", True),
    "buffers": ("named_buffers", False), "named_buffers": ("named_buffers", True),
}


class ModuleTraversalVariable(VariableTracker):
    """``module.parameters``, ``module.modules`` ... of a guarded module, before the call."""

    def __init__(self, module: NNModuleVariable, name: str):
        self.module, self.name = module, name

    def call(self, tx, args, kwargs) -> VariableTracker:
        named, keep_names = MODULE_TRAVERSALS[self.name]
        values = [a.as_python_constant() for a in args]
        kw = {k: v.as_python_constant() for k, v in kwargs.items()}
        root = self.module.value
        self._guard_tree(tx, root, self.module.source)
        items = []
        for qualified, value in getattr(root, named)(*values, **kw):
            path = qualified[len(kw.get("prefix", "")):].lstrip(".") if kw.get("prefix") else qualified
            variable = tx.wrap(value, _member_source(self.module.source, root, path))
            items.append(TupleVariable([ConstantVariable(qualified), variable]) if keep_names else variable)
        return IteratorVariable(items)

    @staticmethod
    def _guard_tree(tx, module, source) -> None:
        pending = [(module, source)]
        while pending:
            current, current_source = pending.pop()
            for table in ("_modules", "_parameters", "_buffers"):
                tx.output.guards.add(AttrSource(current_source, table), DICT_KEYS, tuple(current.__dict__[table]))
            for name, child in current.__dict__["_modules"].items():
                if child is not None:
                    pending.append((child, ItemSource(AttrSource(current_source, "_modules"), name)))


def _member_source(source, root, path: str):
    """The source of the module/parameter/buffer at dotted ``path`` below ``root``."""
    if not path:
        return source
    *modules, last = path.split(".")
    owner = root
    for name in modules:
        source = ItemSource(AttrSource(source, "_modules"), name)
        owner = owner.__dict__["_modules"][name]
    for table in ("_modules", "_parameters", "_buffers"):
        if last in owner.__dict__[table]:
            return ItemSource(AttrSource(source, table), last)
    raise Unsupported(f"cannot locate {path!r} in the module tree")


class PythonModuleVariable(ObjectVariable):
    """An imported Python module (``math``, ``dl``, ``F``): attribute reads are guarded."""

    def var_getattr(self, tx, name: str) -> VariableTracker:
        try:
            value = getattr(self.value, name)
        except AttributeError:
            raise Unsupported(f"module {self.value.__name__!r} has no attribute {name!r}") from None
        return tx.wrap(value, AttrSource(self.source, name) if self.source is not None else None)


class NoOpContextVariable(VariableTracker):
    """A grad-mode block (``with dl.no_grad():`` and friends): no bytecode of its own; the
    graph's nodes inside it carry its mode (NOTE: [compiled graphs and autograd])."""

    def __init__(self, value):
        self.value = value

    def python_type(self) -> type:
        return type(self.value)

    def mode(self, tx) -> bool:
        """The grad mode inside the block."""
        current = tx.output.grad_mode_blocks[-1] if tx.output.grad_mode_blocks else tx.output.grad_enabled
        return self.value.target_mode(current)

    def enter_with(self, tx) -> tuple:
        if "_before" in self.value.__dict__:  # dl.set_grad_enabled(...) made by eager code: it set the mode
            raise Unsupported("a with block over a dl.set_grad_enabled(...) object made before the compiled "
                              "code (its __exit__ restores the mode from before that call)")
        exit_fn = self.var_getattr(tx, "__exit__")
        tx.output.grad_mode_blocks.append(self.mode(tx))
        return exit_fn, ConstantVariable(None)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in ("__exit__", "__enter__"):
            changes_mode = self.mode(tx) != tx.output.grad_enabled
            return NoOpExitVariable(getattr(self.value, name), changes_mode)
        if name == "clone":  # a decorated function (@dl.no_grad()) enters a fresh copy per call
            return GradModeCloneVariable(self)
        raise Unsupported(f"attribute {name!r} of {type(self.value).__name__}")

    def reconstruct(self, cg) -> None:
        cg.load_const(self.value)


class GradModeCloneVariable(VariableTracker):
    """``block.clone`` of a grad-mode block: calling it gives an equal block."""

    def __init__(self, block: NoOpContextVariable):
        self.block = block

    def call(self, tx, args, kwargs) -> VariableTracker:
        if args or kwargs:
            raise Unsupported("clone() of a grad-mode block takes no arguments")
        return NoOpContextVariable(self.block.value.clone())


class NoOpExitVariable(VariableTracker):
    """The ``__exit__`` pushed by BEFORE_WITH for a grad-mode block.

    At a graph break inside a block that changes the grad mode, the compiled code enters
    a fresh copy of the block right before the resume function, which continues inside
    the original ``with`` and calls this ``__exit__`` when it leaves (``reenter``).
    """

    rebuilt_once = False  # entered where the resume function is called, not earlier

    def __init__(self, bound, changes_mode: bool = False):
        self.bound = bound
        self.changes_mode = changes_mode

    def call(self, tx, args, kwargs) -> VariableTracker:
        if tx.output.grad_mode_blocks:
            tx.output.grad_mode_blocks.pop()
        return ConstantVariable(None)

    def reconstruct(self, cg) -> None:
        if self.changes_mode:
            cg.call_const(reenter, lambda: cg.load_const(self.bound.__self__), 1)
        else:
            cg.load_const(self.bound)  # a resume function inside the block calls it on exit


def reenter(block):
    """Enter a fresh copy of the grad-mode ``block``; its ``__exit__`` (the value a
    ``with`` statement keeps on the stack) restores the mode when the block ends."""
    entered = block.clone()
    entered.__enter__()
    return entered.__exit__
