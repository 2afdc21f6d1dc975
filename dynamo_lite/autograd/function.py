"""User-defined differentiable functions: ``dl.autograd.Function`` with forward/backward."""
from __future__ import annotations

from ..ops.core.registry import REGISTRY
from ..tensor.meta import TensorMeta
from ..tensor.rebinds import tensor_rebound
from ..tensor.tensor import Tensor
from .grad_mode import GRAD_MODE, no_grad
from .node import Node, SavedTensor, gradient_edge
from .recording import history
from .op_node import reduce_to


class FunctionCtx:
    """What ``forward`` leaves for ``backward``: saved tensors and flags."""

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors for backward; backward checks they were not modified in place since."""
        self._to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare the input tensors that forward modified in place."""
        self._dirty = set(map(id, tensors))

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient."""
        self._non_differentiable = set(map(id, tensors))

    def set_materialize_grads(self, value: bool) -> None:
        """Whether missing output gradients reach backward as zeros (True) or None."""
        self.materialize_grads = value


class BackwardFunction(FunctionCtx, Node):
    """The ``grad_fn`` of a Function's outputs: the ``ctx`` of forward and backward."""

    _function = None

    def __init__(self, edges, input_metas, needs_input_grad):
        Node.__init__(self, edges)
        self.input_metas = input_metas
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self.output_metas = []
        self._to_save = ()
        self._saved = None
        self._dirty = set()
        self._non_differentiable = set()

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved tensors "
                "after they have already been freed). Saved intermediate values of the graph are freed "
                "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
                "backward through the graph a second time or if you need to access saved tensors after "
                "calling backward."
            )
        return tuple(s if not isinstance(s, SavedTensor) else s.unpack(self) for s in self._saved)

    def release(self) -> None:
        super().release()
        if self._saved:
            self._saved = None

    def apply(self, grad_outputs: list) -> list:
        grads = []
        for g, meta in zip(grad_outputs, self.output_metas):
            if g is None and self.materialize_grads and meta is not None:
                g = REGISTRY["zeros"](size=meta._sizes, dtype=meta._dtype, device=meta._device)
            grads.append(g)
        result = self._function.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) < len(self.input_metas):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {len(self.input_metas)}, got {len(result)})"
            )
        out = []
        for g, meta, (node, _) in zip(result, self.input_metas, self.next_functions):
            out.append(reduce_to(g, meta) if node is not None and meta is not None and g is not None else None)
        return out


class FunctionMeta(type):
    """Gives each Function subclass its own backward node class, named ``<Name>Backward``."""

    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls._backward_cls = type(f"{name}Backward", (BackwardFunction,), {"_function": cls})


class Function(metaclass=FunctionMeta):
    """A differentiable operation with a hand-written backward.

    Subclasses define ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)`` as
    static methods (or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``)
    and are called through ``apply``. Forward runs without recording history.

    Example:
        >>> class Square(dl.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * grad
        >>> Square.apply(dl.tensor([3.0], requires_grad=True))
        tensor([9.], grad_fn=<SquareBackward>)
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args, **kwargs):
        record = GRAD_MODE.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args)
        tensors = [history(a) if isinstance(a, Tensor) else None for a in args]
        edges = [gradient_edge(t) if t is not None and t._requires_grad else (None, 0) for t in tensors]
        metas = [TensorMeta.of(t) if t is not None else None for t in tensors]
        ctx = cls._backward_cls(edges, metas, tuple(node is not None for node, _ in edges))
        with no_grad():
            if cls.setup_context is Function.setup_context:
                output = cls.forward(ctx, *args, **kwargs)
            else:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
        multi = isinstance(output, tuple)
        outputs = list(output) if multi else [output]
        inputs_by_id = {id(a): a for a in args if isinstance(a, Tensor)}
        for i, out in enumerate(outputs):
            if isinstance(out, Tensor) and id(out) in inputs_by_id and id(out) not in ctx._dirty:
                outputs[i] = out = out._plain_alias()  # an input returned as is becomes a new output
            if not record or not isinstance(out, Tensor) or id(out) in ctx._non_differentiable \
                    or not (out._dtype.is_floating_point or out._dtype.is_complex):
                ctx.output_metas.append(None)
                continue
            ctx.output_metas.append(TensorMeta.of(out))
            if not out._requires_grad and id(out) in inputs_by_id:
                tensor_rebound()  # a dirty input now requires grad: compiled guards trust version tags for it
            out._requires_grad = True
            out._grad_fn = ctx
            out._meta().output_nr = i
        ctx._saved = tuple(
            SavedTensor(t, is_output=any(t is o for o in outputs)) if isinstance(t, Tensor) else t
            for t in ctx._to_save
        )
        return tuple(outputs) if multi else outputs[0]
