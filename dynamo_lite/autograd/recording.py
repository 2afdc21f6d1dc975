"""Recording history: run an op whose inputs require grad and attach its ``grad_fn``.

NOTE: [in-place and views] An in-place op replaces its target's history: the target's
new ``grad_fn`` is the op's node, whose first edge is the target's old history (inputs
the formula saves are snapshotted before the kernel overwrites them). When the target
is a view of another tensor (its ``_view_base``), the write changes the base too, so the
base's history becomes a CopySlices node: backward routes the gradient of the written
window through the op's formula and the rest of the base's gradient to its old history.
The view's own history becomes "a window of the new base" (ViewOfBase). Every other view
of that base notices the rewrite through the storage version counter the next time it is
used (``history``). A saved tensor remembers the storage version it was saved at; backward
checks it (``SavedTensor.unpack`` in node.py).
"""
from __future__ import annotations

from ..ops.core.dispatch import dispatch
from ..ops.core.registry import REGISTRY
from ..tensor.meta import TensorMeta
from ..tensor.rebinds import tensor_rebound
from ..tensor.tensor import Tensor
from .derivatives.table import DECOMPOSE, NO_GRADIENT, derivative_rule
from .grad_mode import GRAD_MODE
from .node import SavedTensor, gradient_edge
from .op_node import CopySlices, ViewOfBase, node_class

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
NO_GRAD_VIEW_MODIFIED = (
    "A view was created in no_grad mode and its base or another view of its base has been modified inplace "
    "with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
    "clarify your code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
)
VIEW_OF_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


def record(op, args, kwargs):
    """Run ``op`` (some tensor argument requires grad) and record its backward node."""
    if not GRAD_MODE.enabled:
        result = dispatch(op, args, kwargs, record_grad=False)
        if "view" in op.tags and getattr(result, "_view_base", None) is not None:
            meta = result._meta()  # a view of a tensor requiring grad, taken under no_grad
            meta.view_version, meta.no_grad_view = result._storage.version, True
        return result
    inplace = "inplace" in op.tags
    target = args[0] if inplace else None
    if inplace:
        _check_inplace_target(target)
    kind, formula = derivative_rule(op.name, inplace)
    if kind == DECOMPOSE:
        return formula(*args, **kwargs)
    if kind == NO_GRADIENT:
        return dispatch(op, args, kwargs, record_grad=False)
    slots = tensor_slots(args, kwargs)
    edges = [gradient_edge(t) if history(t)._requires_grad else (None, 0) for _, t in slots]
    saved_args, saved_kwargs = _save_inputs(formula, args, kwargs, target)
    result = dispatch(op, args, kwargs, record_grad=False)
    multi_output = isinstance(result, (tuple, list))
    outputs = result if multi_output else (result,)
    differentiable = [isinstance(o, Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex) for o in outputs]
    if not any(differentiable):
        return result
    node = node_class(op.name)(
        formula, edges, [(key, TensorMeta.of(t)) for key, t in slots], saved_args, saved_kwargs,
        [TensorMeta.of(o) if d else None for o, d in zip(outputs, differentiable)], multi_output,
    )
    if inplace:
        _rewrite_history(target, node)
    else:
        for nr, (out, is_diff) in enumerate(zip(outputs, differentiable)):
            if is_diff:
                set_history(out, node, nr)
    if "result" in formula.saves:
        node.saved_result = [SavedTensor(o, is_output=d) if isinstance(o, Tensor) else o
                             for o, d in zip(outputs, differentiable)]
    return result


def history(tensor: Tensor) -> Tensor:
    """``tensor`` with an up-to-date ``grad_fn``: a view whose base was written in place since
    its history was recorded gets "a window of the base" as its new history."""
    base = getattr(tensor, "_view_base", None)
    if base is None or not base._requires_grad or base._grad_fn is None:
        return tensor
    meta = tensor._autograd
    # Only views autograd recorded follow their base: one taken under no_grad (or before
    # anything required grad) stays out of the graph, as in torch.
    if meta is None or meta.view_version is None or meta.view_version == tensor._storage.version:
        return tensor
    if meta.no_grad_view:
        raise RuntimeError(NO_GRAD_VIEW_MODIFIED)
    node = ViewOfBase(gradient_edge(base), base, tensor)
    set_history(tensor, node, 0)
    return tensor


def set_history(tensor: Tensor, node, output_nr: int) -> None:
    tensor._requires_grad = True
    tensor._grad_fn = node
    meta = tensor._meta()
    meta.output_nr = output_nr
    meta.view_version = tensor._storage.version


def _check_inplace_target(target: Tensor) -> None:
    if target._requires_grad and target._grad_fn is None:
        raise RuntimeError(LEAF_INPLACE)
    base = getattr(target, "_view_base", None)
    if base is not None and base._requires_grad and base._grad_fn is None:
        raise RuntimeError(VIEW_OF_LEAF_INPLACE)


def _rewrite_history(target: Tensor, node) -> None:
    """After ``node``'s in-place op wrote ``target``: point the histories at the new values."""
    base = getattr(target, "_view_base", None)
    if not target._requires_grad or (base is not None and not base._requires_grad):
        tensor_rebound()  # the write makes it require grad (tensor/rebinds.py)
    if base is None:
        set_history(target, node, 0)
        return
    base_edge = gradient_edge(base) if base._requires_grad else (None, 0)
    copy_slices = CopySlices(base_edge, base, target, node)
    set_history(base, copy_slices, 0)
    set_history(target, ViewOfBase((copy_slices, 0), base, target), 0)


def tensor_slots(args, kwargs):
    """``[(key, tensor)]`` for every tensor argument: key ``i``, ``(i, j)`` in a list, or a keyword."""
    slots = []
    for i, arg in enumerate(args):
        if isinstance(arg, Tensor):
            slots.append((i, arg))
        elif isinstance(arg, (tuple, list)):
            slots.extend(((i, j), t) for j, t in enumerate(arg) if isinstance(t, Tensor))
    for name, arg in kwargs.items():
        if isinstance(arg, Tensor):
            slots.append((name, arg))
    return slots


def _save_inputs(formula, args, kwargs, inplace_target):
    """The op's arguments as the formula will see them: saved tensors or TensorMetas.

    (Plain functions, no closures: a recursive closure is a reference cycle that would keep
    the arguments alive until the garbage collector runs.)
    """
    params = formula.params
    keep = _kept(formula, args, kwargs) if formula.only_for else formula.saves
    n_params = len(params)
    saved = []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):  # the common case inline; _save handles the rest
            if (params[i] if i < n_params else None) not in keep:
                saved.append(TensorMeta.of(a))
            else:
                saved.append(SavedTensor(_snapshot(a) if a is inplace_target else a))
        elif isinstance(a, (tuple, list)):
            saved.append(_save(keep, params[i] if i < n_params else None, a, inplace_target))
        else:
            saved.append(a)
    saved_kwargs = {k: _save(keep, k, v, inplace_target) for k, v in kwargs.items()} if kwargs else {}
    return tuple(saved), saved_kwargs


def _kept(formula, args, kwargs) -> set:
    """The argument names ``is_saved`` says yes to (for a formula with ``only_for``)."""
    params = formula.params
    keep = set(formula.saves)
    for name, partner in formula.only_for.items():
        keep.discard(name)
        if name not in params and name not in kwargs:
            continue
        at = params.index(partner) if partner in params else len(args)
        value = kwargs.get(partner, args[at] if at < len(args) else None)
        if isinstance(value, Tensor) and value._requires_grad:
            keep.add(name)
    return keep


def is_saved(formula, name, by_name) -> bool:
    partner = formula.only_for.get(name)
    if partner is None:
        return name in formula.saves
    value = by_name.get(partner)
    return isinstance(value, Tensor) and value._requires_grad


def _save(keep, name, value, inplace_target):
    if isinstance(value, (tuple, list)):
        return type(value)(_save(keep, name, v, inplace_target) for v in value)
    if not isinstance(value, Tensor):
        return value
    if name not in keep:
        return TensorMeta.of(value)
    if value is inplace_target:
        return SavedTensor(_snapshot(value))
    return SavedTensor(value)


def _snapshot(target: Tensor) -> Tensor:
    """A copy of an in-place op's target before the write, carrying its history."""
    copy = dispatch(REGISTRY["clone"], (target._plain_alias(),), {}, record_grad=False)
    copy._requires_grad = target._requires_grad
    if target._grad_fn is not None:
        copy._grad_fn = target._grad_fn
        copy._meta().output_nr = target.output_nr
    return copy
