"""dl.func.grad, grad_and_value and jacrev: gradients and Jacobians as functions, built on autograd.

NOTE: [func transforms on autograd] The argument(s) named by ``argnums`` (tensors or nested
tuples/lists/dicts of them) are replaced by fresh leaves that require grad, ``func`` runs with
grad enabled, and ``autograd.grad`` differentiates it. The graph is kept (``create_graph``) only
when an argument already required grad, which is what composing transforms (``grad(grad(f))``)
produces; otherwise the results are detached. Inputs ``func`` does not use get zero gradients.
"""
from __future__ import annotations

import functools

from ..autograd.engine import grad as autograd_grad
from ..autograd.functional import jacobian
from ..autograd.grad_mode import enable_grad
from ..ops.core import api as ops
from ..tensor.tensor import Tensor
from .vmap import _leaves, _rebuild

__all__ = ["grad", "grad_and_value", "jacrev"]


def _own_module(transformed):
    """``transformed`` attributed to this module (functools.wraps copied the user's), so that compiled
    code runs it eagerly as trace_rules.EAGER_MODULES says for dl.func."""
    transformed.__module__ = __name__
    return transformed


def _argnums_tuple(argnums, count: int) -> tuple:
    if not (isinstance(argnums, int) or (isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums))):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    for argnum in (argnums,) if isinstance(argnums, int) else argnums:
        if not -count <= argnum < count:
            raise RuntimeError(f"Got argnum={argnum}, but only {count} positional inputs")
    return (argnums,) if isinstance(argnums, int) else argnums


def _fresh_leaves(value):
    """``value`` with each tensor replaced by a leaf to differentiate; whether the graph must be kept."""
    leaves = _leaves(value)
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
    keep_graph = any(leaf.requires_grad for leaf in leaves)
    fresh = [leaf.view_as(leaf) if leaf.requires_grad else leaf.detach().requires_grad_() for leaf in leaves]
    return _rebuild(value, iter(fresh)), fresh, keep_graph


def _prepared(args, argnums):
    """The arguments with the differentiated ones replaced, their leaves per argnum, and whether to keep the graph."""
    args = list(args)
    leaves, keep_graph = [], False
    for argnum in argnums:
        args[argnum], fresh, keep = _fresh_leaves(args[argnum])
        leaves.append(fresh)
        keep_graph = keep_graph or keep
    return args, leaves, keep_graph


def _split_aux(output, has_aux: bool):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return output


def _detach_tree(value, keep_graph: bool):
    if keep_graph:
        return value
    return _rebuild(value, iter(leaf.detach() if isinstance(leaf, Tensor) else leaf for leaf in _leaves(value)))


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient of func, func's value)`` (``(gradient, (value, aux))`` with ``has_aux``);
    the gradient has the structure of the ``argnums`` argument(s).

    Example:
        >>> g, value = dl.func.grad_and_value(lambda x: (x ** 2).sum())(dl.tensor([1.0, 2.0]))
        >>> g.tolist(), value.item()
        ([2.0, 4.0], 5.0)
    """

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        argnums_tuple = _argnums_tuple(argnums, len(args))
        with enable_grad():
            args, leaves, keep_graph = _prepared(args, argnums_tuple)
            output, aux = _split_aux(func(*args, **kwargs), has_aux)
            if not isinstance(output, Tensor):
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                                   f"with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat = [leaf for group in leaves for leaf in group]
            grads = autograd_grad(output, flat, create_graph=keep_graph, allow_unused=True) if output.requires_grad \
                else (None,) * len(flat)
        grads = iter(g if g is not None else ops.zeros_like(leaf) for g, leaf in zip(grads, flat))
        per_arg = tuple(_rebuild(args[argnum], grads) for argnum in argnums_tuple)
        gradient = _detach_tree(per_arg[0] if isinstance(argnums, int) else per_arg, keep_graph)
        value = _detach_tree(output, keep_graph)
        return (gradient, (value, _detach_tree(aux, keep_graph))) if has_aux else (gradient, value)

    return _own_module(transformed)


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of the scalar ``func`` with respect to argument(s) ``argnums``
    (NOTE: [func transforms on autograd]); ``(gradient, aux)`` with ``has_aux``.

    Example:
        >>> dl.func.grad(lambda x: (x ** 3).sum())(dl.tensor([1.0, 2.0])).tolist()
        [3.0, 12.0]
    """

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        gradient, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (gradient, value[1]) if has_aux else gradient

    return _own_module(transformed)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """A function returning the Jacobian of ``func`` with respect to argument(s) ``argnums``, by reverse mode:
    shape ``output.shape + input.shape`` (nested as the outputs, then as ``argnums``).

    Example:
        >>> dl.func.jacrev(lambda x: x ** 2)(dl.tensor([1.0, 2.0])).tolist()
        [[2.0, 0.0], [0.0, 4.0]]
    """

    @functools.wraps(func)
    def transformed(*args, **kwargs):
        argnums_tuple = _argnums_tuple(argnums, len(args))
        aux_box = []

        def of_selected(*selected):
            full = list(args)
            for argnum, value in zip(argnums_tuple, selected):
                full[argnum] = value
            output, aux = _split_aux(func(*full, **kwargs), has_aux)
            aux_box.append(aux)
            for leaf in _leaves(output):
                if not isinstance(leaf, Tensor):
                    raise RuntimeError(f"vjp(f, *primals): expected f(*primals) to return only tensors, got "
                                       f"unsupported type {type(leaf)}")
            return tuple(_leaves(output)), output

        selected = tuple(args[argnum] for argnum in argnums_tuple)
        with enable_grad():
            _, example = of_selected(*selected)
        jac = jacobian(lambda *s: of_selected(*s)[0], selected, create_graph=any(s.requires_grad for s in selected))
        rows = iter(row if isinstance(argnums, tuple) else row[0] for row in jac)
        result = _rebuild(example, rows)
        return (result, aux_box[0]) if has_aux else result

    return _own_module(transformed)
