"""``out=``: write an op's result into a caller's tensor, resizing an empty one, as torch does."""
from __future__ import annotations

import warnings

from ...tensor.autograd_fields import GRAD_MODE
from ...tensor.tensor import Tensor
from .meta_rules import TYPE_NAMES


def check_out_autograd(name: str, out, *inputs) -> None:
    """torch refuses ``out=`` when grad mode is on and an input or ``out`` requires grad."""
    if GRAD_MODE.enabled and any(isinstance(t, Tensor) and t.requires_grad for t in (out, *inputs)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")


def write_out(out, result: Tensor) -> Tensor:
    """Copy ``result`` into ``out`` (same Python object) and return ``out``.

    An ``out`` without elements is resized silently; one of another shape is resized with
    torch's deprecation warning; a result type that cannot be cast to ``out``'s dtype
    (float into an integer tensor, complex into a real one) raises RuntimeError.
    """
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if result.dtype._category > out.dtype._category:
        raise RuntimeError(f"result type {TYPE_NAMES[result.dtype]} can't be cast to the desired output "
                           f"type {TYPE_NAMES[out.dtype]}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                f"which does not match the required output shape {list(result.shape)}. This behavior is "
                "deprecated, and in a future release outputs will not be resized unless they have zero "
                "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                "elements with t.resize_(0).", UserWarning, stacklevel=3)
        out._set_data(result.to(out.dtype).clone())
        return out
    return out.copy_(result)
