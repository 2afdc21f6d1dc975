"""dl.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp of a Python function, built on
``autograd.grad`` (forward-mode products by the double-backward trick), as torch.autograd.functional.

Example:
    >>> dl.autograd.functional.jacobian(lambda x: x ** 2, dl.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""
from __future__ import annotations

from ..ops.core import api as ops
from ..tensor.tensor import Tensor
from .engine import grad as autograd_grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_OUTPUTS = "outputs of the user-provided function"
_STRATEGIES = ("forward-mode", "reverse-mode")

#: strict-mode messages of ``_check_requires_grad``, by what is checked.
_NO_GRAD_MESSAGES = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be computed in "
               "a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided function. "
                   "This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
                "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
                "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the input. This "
               "is not allowed in strict mode. You should ensure that your function is thrice differentiable and that "
               "the hessian depends on the inputs.",
}
#: strict-mode messages of ``_fill_in_zeros`` for a gradient that is None, by stage.
_UNUSED_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. "
                         "This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _as_tuple(value, arg_name: str, fn_name: str):
    """``(was a tuple, the tensors as a tuple)``; TypeError naming anything that is not a tensor."""
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, item in enumerate(values):
        if not isinstance(item, Tensor):
            where = f"the value at index {i} has type {type(item)}" if is_tuple else \
                f"the given {arg_name} has type {type(item)}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"{where}.")
    return is_tuple, values


def _unpack(result, was_tuple):
    """Undo ``_as_tuple``: ``was_tuple`` is one flag, or (outputs, inputs) flags for nested results."""
    if isinstance(was_tuple, tuple):
        outputs_tuple, inputs_tuple = was_tuple
        if not inputs_tuple:
            result = tuple(row[0] for row in result)
        return result if outputs_tuple else result[0]
    return result if was_tuple else result[0]


def _prepare(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh leaves to differentiate with respect to (views keeping the graph when ``create_graph``)."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
                 for x in inputs)


def _finish(values, create_graph: bool):
    if isinstance(values[0], Tensor):
        return values if create_graph else tuple(v.detach() for v in values)
    return tuple(_finish(v, create_graph) for v in values)


def _validate_v(v, other, other_is_tuple: bool) -> None:
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (v_item, reference) in enumerate(zip(v, other)):
        if v_item.shape != reference.shape:
            prefix = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {reference.shape} but got {v_item.shape}.")


def _check_requires_grad(values, kind: str, strict: bool) -> None:
    if not strict:
        return
    for i, value in enumerate(values):
        if value is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not value.requires_grad:
            raise RuntimeError(_NO_GRAD_MESSAGES[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None) -> tuple:
    """``autograd.grad`` over the outputs that require grad (all None when none does)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    kept = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return autograd_grad(tuple(o for o, _ in kept), inputs, tuple(g for _, g in kept), allow_unused=True,
                         create_graph=create_graph, retain_graph=retain_graph)


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    filled = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_UNUSED_MESSAGES[stage].format(i=i))
            g = ops.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        filled.append(g)
    return tuple(filled)


def _v_or_single_element(v, reference, reference_is_tuple, create_graph, fn_name, single_message):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, reference, reference_is_tuple)
        return v
    if len(reference) != 1 or reference[0].numel() != 1:
        raise RuntimeError(single_message)
    return None


_V_FOR_OUTPUT = "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
_V_FOR_INPUT = "The vector v can only be None if the input to the user-provided function is a single Tensor with a " \
               "single element."


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``.

    Example:
        >>> dl.autograd.functional.vjp(lambda x: x ** 2, dl.tensor([1.0, 2.0]), dl.ones(2))[1]
        tensor([2., 4.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_single_element(v, outputs, outputs_tuple, create_graph, "vjp", _V_FOR_OUTPUT)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(products, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``: the Jacobian-vector product, by differentiating a vjp with respect to its vector.

    Example:
        >>> dl.autograd.functional.jvp(lambda x: x ** 2, dl.tensor([1.0, 2.0]), dl.ones(2))[1]
        tensor([2., 4.])
    """
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _v_or_single_element(v, inputs, inputs_tuple, create_graph, "jvp", _V_FOR_INPUT)
        outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        dummy = tuple(ops.zeros_like(out).requires_grad_() for out in outputs)
        grad_inputs = _grad(outputs, inputs, dummy, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(_grad(grad_inputs, dummy, v, create_graph), outputs, strict, create_graph,
                                  "back_trick")
    return (_unpack(_finish(outputs, create_graph), outputs_tuple),
            _unpack(_finish(products, create_graph), outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: shape ``output.shape + input.shape`` per (output, input) pair
    (a tensor, or tuples over the outputs and/or inputs when they are tuples).

    One reverse pass per output element; ``vectorize=True`` gives the same result the same way (no
    batching). ``strategy="forward-mode"`` (with ``vectorize=True``, as torch) computes it column by
    column with ``jvp``.

    Example:
        >>> dl.autograd.functional.jacobian(lambda x, y: x * y, (dl.tensor([2.0]), dl.tensor([3.0])))
        (tensor([[3.]]), tensor([[2.]]))
    """
    if strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _forward_mode_jacobian(func, inputs, strict, vectorize)
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        rows = tuple(_reverse_mode_row(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
        return _unpack(_finish(rows, create_graph), (outputs_tuple, inputs_tuple))


def _reverse_mode_row(i, out, inputs, create_graph, strict) -> tuple:
    """d out / d input for every input: one backward per element of ``out``."""
    columns = tuple([] for _ in inputs)
    flat = out.reshape(-1)
    for element in range(out.numel()):
        grads = _grad((flat[element],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, x) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. This "
                                       "is not allowed in strict mode.")
                g = ops.zeros_like(x)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError("The jacobian of the user-provided function is independent of input {i}. This is "
                                   "not allowed in strict mode when create_graph=True.")  # torch's text, unformatted
            columns[j].append(g)
    return tuple(ops.stack(column, 0).reshape(tuple(out.shape) + tuple(x.shape)) if column
                 else ops.zeros(tuple(out.shape) + tuple(x.shape), dtype=x.dtype, device=x.device)
                 for column, x in zip(columns, inputs))


def _forward_mode_jacobian(func, inputs, strict, vectorize):
    """The Jacobian by ``jvp`` along each basis direction of each input (torch requires ``vectorize=True``
    here; the result is the same)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")  # sic: torch's message
    inputs = tuple(x.detach() for x in inputs)
    outputs_tuple, blocks = False, None
    for j, x in enumerate(inputs):
        for element in range(x.numel()):
            direction = tuple(ops.zeros_like(y) for y in inputs)
            direction[j].reshape(-1)[element] = 1.0
            outputs, products = jvp(func, inputs, direction)
            outputs_tuple = isinstance(outputs, tuple)
            products = products if outputs_tuple else (products,)
            outputs = outputs if outputs_tuple else (outputs,)
            blocks = blocks or [[[] for _ in inputs] for _ in products]
            for i, product in enumerate(products):
                blocks[i][j].append(product)
    rows = tuple(tuple(ops.stack(blocks[i][j], -1).reshape(tuple(out.shape) + tuple(x.shape))
                       for j, x in enumerate(inputs)) for i, out in enumerate(outputs))
    return _unpack(rows, (outputs_tuple, inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: shape ``input.shape + input.shape`` (tuples of tuples for tuple inputs).

    Example:
        >>> dl.autograd.functional.hessian(lambda x: (x ** 3).sum(), dl.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_function(*values):
        out = func(*values)
        out_tuple, outs = _as_tuple(out, _OUTPUTS, "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*values):
        if outer_jacobian_strategy == "forward-mode":
            values = tuple(v.requires_grad_(True) for v in values)
        jac = jacobian(scalar_function, values, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                      strategy=outer_jacobian_strategy)
    return _unpack(result, (inputs_tuple, inputs_tuple))


def _gradient_of_scalar(func, inputs, v, create_graph, strict, fn_name):
    """What vhp and hvp share, under enable_grad: inputs as leaves, v checked, ``func``'s single-element
    output and its gradient (with graph). Returns (inputs_tuple, inputs, v, outputs, gradient)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _v_or_single_element(v, inputs, inputs_tuple, create_graph, fn_name, _V_FOR_INPUT)
    outputs_tuple, outputs = _as_tuple(func(*inputs), _OUTPUTS, fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    gradient = _grad(outputs, inputs, create_graph=True)
    _check_requires_grad(gradient, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs, gradient


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar function.

    Example:
        >>> dl.autograd.functional.vhp(lambda x: (x ** 3).sum(), dl.tensor([1.0, 2.0]), dl.ones(2))[1]
        tensor([ 6., 12.])
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph, "double_back")
    return _finish(outputs, create_graph)[0], _unpack(_finish(products, create_graph), inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar function, by the double-backward trick.

    Example:
        >>> dl.autograd.functional.hvp(lambda x: (x ** 3).sum(), dl.tensor([1.0, 2.0]), dl.ones(2))[1]
        tensor([ 6., 12.])
    """
    with enable_grad():
        inputs_tuple, inputs, v, outputs, jac = _gradient_of_scalar(func, inputs, v, create_graph, strict, "hvp")
        dummy = tuple(ops.zeros_like(x).requires_grad_() for x in inputs)
        double_back = _grad(jac, inputs, dummy, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        products = _fill_in_zeros(_grad(double_back, dummy, v, create_graph), inputs, strict, create_graph,
                                  "double_back_trick")
    return _finish(outputs, create_graph)[0], _unpack(_finish(products, create_graph), inputs_tuple)
