"""``dl.nn`` modules constructed inside the compiled frame (``nn.ReLU()``, ``nn.Sequential(...)``).

NOTE: [modules made in forward] A module of ``dl.nn`` whose constructor makes no parameter
and no buffer (activations, dropout, pooling, flatten, containers of such modules) holds
only its constant settings. It is built while tracing from the constant arguments (the
random generator's state is put back, so tracing draws nothing), and that instance is what
the trace inlines ``forward`` over, its settings read as constants. Where the module leaves
the graph (returned, stored) the compiled code calls the constructor again with the same
arguments, so each call makes its own module, as eager does. A constructor that makes
parameters (``nn.Linear``) draws initial weights from the random generator when the code
runs: it breaks the graph instead.
"""
from __future__ import annotations

from ....nn.module import Module
from ....tensor.generator import default_generator
from ...errors import Unsupported, UserError
from .containers import ListVariable, TupleVariable
from .objects import NNModuleVariable


def _is_library_module(cls) -> bool:
    return cls.__module__.startswith("dynamo_lite.nn.")


class FrameModuleVariable(NNModuleVariable):
    """A module made in the frame (see NOTE: [modules made in forward]): traced over the
    instance built while tracing, rebuilt by its constructor where it escapes."""

    def __init__(self, value, args: list, kwargs: dict):
        super().__init__(value, None)
        self.args, self.kwargs = list(args), dict(kwargs)

    def is_python_constant(self) -> bool:
        return False  # a new module on every call: never baked into the compiled code

    def as_python_constant(self):
        raise Unsupported(f"nn.{type(self.value).__qualname__} made in the compiled function is not a constant")

    def children(self) -> list:
        return [*self.args, *self.kwargs.values()]

    def getitem(self, tx, key):
        return self._as_made(super().getitem(tx, key))

    def var_getattr(self, tx, name: str):
        return self._as_made(super().var_getattr(tx, name))

    def _as_made(self, result):
        """A submodule that was itself made in the frame and passed to this constructor: its own
        variable (so ``seq[0] is act`` holds and it is rebuilt once)."""
        value = getattr(result, "value", None)
        if not isinstance(value, Module) or isinstance(result, FrameModuleVariable):
            return result
        pending = [*self.args, *self.kwargs.values()]
        while pending:
            candidate = pending.pop()
            if isinstance(candidate, FrameModuleVariable):
                if candidate.value is value:
                    return candidate
                pending.extend([*candidate.args, *candidate.kwargs.values()])
            elif type(candidate) in (ListVariable, TupleVariable):  # a list of modules
                pending.extend(candidate.items)
        return result

    def reconstruct(self, cg) -> None:
        def emit_args():
            for arg in self.args:
                cg.reconstruct(arg)
            cg.build(tuple, len(self.args))
            for name, value in self.kwargs.items():
                cg.load_const(name)
                cg.reconstruct(value)
            cg.build(dict, len(self.kwargs))

        cg.call_const(_construct, lambda: (cg.load_const(type(self.value)), emit_args()), 3)


def _construct(cls, args: tuple, kwargs: dict):
    """``cls(*args, **kwargs)`` (rebuilds a module made in the frame)."""
    return cls(*args, **kwargs)


def _real(variable):
    """The value handed to the constructor while tracing: a constant, or a module made in the frame."""
    if isinstance(variable, FrameModuleVariable):
        return variable.value
    if type(variable) in (ListVariable, TupleVariable):  # nn.ModuleList([...]), nn.Sequential(*layers)
        return variable.container_type(_real(item) for item in variable.items)
    if variable.is_python_constant():
        return variable.as_python_constant()
    raise Unsupported(f"creating a module inside the compiled function from {variable.describe()}, which is not a "
                      "constant (it runs eagerly)")


def construct_module(tx, cls, args: list, kwargs: dict) -> FrameModuleVariable:
    """``cls(*args, **kwargs)`` for a ``dl.nn`` module class (see NOTE: [modules made in forward])."""
    if not _is_library_module(cls):
        raise Unsupported(f"creating an instance of the module class {cls.__qualname__} inside the compiled "
                          "function (its __init__ runs eagerly)")
    values = [_real(a) for a in args]
    keywords = {k: _real(v) for k, v in kwargs.items()}
    state = default_generator.get_state()
    try:
        module = cls(*values, **keywords)
    except Exception as exc:  # bad arguments: the eager call raises the same
        raise UserError(exc) from None
    finally:
        default_generator.set_state(state)
    if any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
        raise Unsupported(f"creating nn.{cls.__qualname__} inside the compiled function makes new parameters or "
                          "buffers (initial weights drawn from the random generator): it runs eagerly; create the "
                          "module in __init__, or use the functional form (F.linear) with your own weight")
    return FrameModuleVariable(module, args, kwargs)


def is_module_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, Module)
