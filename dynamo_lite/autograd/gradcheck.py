"""gradcheck: compare autograd's Jacobian with central finite differences (float64)."""
from __future__ import annotations

import numpy as np

from ..tensor.interop import from_numpy
from ..tensor.tensor import Tensor
from .engine import grad as autograd_grad


class GradcheckError(RuntimeError):
    """The analytical and numerical Jacobians differ."""


def _outputs(fn, inputs) -> list:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if isinstance(o, Tensor) and o._dtype.is_floating_point]


def _numerical(fn, inputs, diff_inputs, eps) -> list:
    """jacobians[i][j]: (input i numel, output j numel) by central differences.

    Runs with gradients enabled: ``fn`` may itself differentiate (gradgradcheck).
    """
    outs = _outputs(fn, inputs)
    jac = [[np.zeros((t.numel(), o.numel())) for o in outs] for t in diff_inputs]
    for i, t in enumerate(diff_inputs):
        arr = t._array()
        for k, idx in enumerate(np.ndindex(*arr.shape)):
            orig = arr[idx].copy()
            arr[idx] = orig + eps
            plus = [o.detach().numpy().reshape(-1).copy() for o in _outputs(fn, inputs)]
            arr[idx] = orig - eps
            minus = [o.detach().numpy().reshape(-1).copy() for o in _outputs(fn, inputs)]
            arr[idx] = orig
            for j in range(len(outs)):
                jac[i][j][k] = (plus[j] - minus[j]) / (2 * eps)
    return jac


def _analytical(fn, inputs, diff_inputs) -> list:
    outs = _outputs(fn, inputs)
    jac = [[np.zeros((t.numel(), o.numel())) for o in outs] for t in diff_inputs]
    for j, out in enumerate(outs):
        if not out._requires_grad:
            continue
        flat = np.zeros(out.numel())
        for k in range(out.numel()):
            flat[:] = 0
            flat[k] = 1
            seed = from_numpy(flat.reshape(out._sizes).astype(out._dtype.numpy))
            grads = autograd_grad([out], diff_inputs, [seed], retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                if g is not None:
                    jac[i][j][:, k] = np.asarray(g.detach().numpy(), dtype=np.float64).reshape(-1)
    return jac


def _differentiable(inputs) -> tuple:
    """``inputs`` as a tuple, and the floating tensors among them that require grad."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    return inputs, [t for t in inputs if isinstance(t, Tensor) and t._requires_grad]


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, **_ignored) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences.

    Every floating tensor input with ``requires_grad`` is checked against every floating
    output; use float64 inputs (finite differences in float32 are too coarse).

    Args:
        func: a function of ``inputs`` returning a tensor or a tuple of tensors.
        inputs: a tensor or tuple of arguments.
        eps: the finite-difference step.
        atol, rtol: the tolerance of the comparison.
        raise_exception: raise GradcheckError on a mismatch (else return False).

    Example:
        >>> x = dl.randn(3, dtype=dl.float64, requires_grad=True)
        >>> dl.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
        True
    """
    inputs, diff_inputs = _differentiable(inputs)
    if not diff_inputs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the them have requires_grad=True.")
    numerical = _numerical(func, inputs, diff_inputs, eps)
    analytical = _analytical(func, inputs, diff_inputs)
    for i in range(len(diff_inputs)):
        for j in range(len(numerical[i])):
            n, a = numerical[i][j], analytical[i][j]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {j} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True, **_ignored) -> bool:
    """gradcheck of the gradients of ``func`` (second derivatives, through ``create_graph``).

    Example:
        >>> x = dl.randn(3, dtype=dl.float64, requires_grad=True)
        >>> dl.autograd.gradgradcheck(lambda t: (t * t).sin(), (x,))
        True
    """
    inputs, _ = _differentiable(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = [from_numpy(rng.standard_normal(o._sizes).astype(o._dtype.numpy))
                        for o in outs]
        for g in grad_outputs:
            g.requires_grad = True
    n_inputs = len(inputs)

    def first_derivative(*args):
        values, seeds = args[:n_inputs], args[n_inputs:]
        _, differentiable = _differentiable(values)
        out = [o for o in _outputs(func, values) if o._requires_grad]
        return autograd_grad(out, differentiable, list(seeds)[:len(out)], create_graph=True, allow_unused=True,
                             materialize_grads=True)

    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
