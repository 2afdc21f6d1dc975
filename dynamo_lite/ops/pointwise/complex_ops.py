"""Complex numbers: view_as_real/view_as_complex (views that reinterpret the elements), real, imag,
polar, complex and angle."""
from __future__ import annotations

import builtins
import math

import numpy as np

from ...tensor.dtype import COMPLEX_OF, REAL_OF, float32, float64
from ...tensor.meta import TensorMeta
from ..core import meta_rules as mr
from ..core.kernel_utils import quiet
from ..core.registry import register_op

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "polar", "complex", "angle"]

POINTWISE = ("pointwise",)


# -- views --------------------------------------------------------------------------------
# NOTE: [reinterpreting views] view_as_real sees each complex element as two reals: the same
# storage, sizes + (2,), strides doubled plus a unit stride, offset doubled (geometry is in
# elements of the view's own dtype). view_as_complex is the inverse and needs a last dim of
# size 2 with stride 1 and even strides/offset elsewhere. The view rule maps the geometry;
# the meta rule's dtype is the dtype of the view (see ``Tensor._view``).
def view_as_real_meta(input):
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    sizes, strides, offset = _as_real_geometry((input._sizes, input._strides, input._offset))
    return TensorMeta.from_geometry(sizes, strides, REAL_OF[input._dtype], input._device, offset)


def _as_real_geometry(geometry):
    sizes, strides, offset = geometry
    return tuple(sizes) + (2,), tuple(2 * s for s in strides) + (1,), 2 * offset


def view_as_complex_meta(input):
    if input._dtype not in COMPLEX_OF or input._dtype.itemsize < 4:
        raise RuntimeError(
            "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: "
            f"{mr.TYPE_NAMES[input._dtype]}"
        )
    if not input._sizes or input._sizes[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input._strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input._strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    sizes, strides, offset = _as_complex_geometry((input._sizes, input._strides, input._offset))
    return TensorMeta.from_geometry(sizes, strides, COMPLEX_OF[input._dtype], input._device, offset)


def _as_complex_geometry(geometry):
    sizes, strides, offset = geometry
    return tuple(sizes[:-1]), tuple(s // 2 for s in strides[:-1]), offset // 2


# -- pointwise ------------------------------------------------------------------------------
def _check_parts(input, other, *, polar_form: bool):
    for t in (input, other):
        if t._dtype not in (float32, float64) and not (t._dtype.is_floating_point and polar_form):
            raise RuntimeError(
                "Expected both inputs to be Half, Float or Double tensors but got "
                f"{mr.TYPE_NAMES[input._dtype]} and {mr.TYPE_NAMES[other._dtype]}"
            )
    if input._dtype is not other._dtype:
        raise RuntimeError(
            f"Expected object of scalar type {mr.TYPE_NAMES[input._dtype]} but got scalar type "
            f"{mr.TYPE_NAMES[other._dtype]} for second argument"
        )


def complex_meta(real, imag):
    _check_parts(real, imag, polar_form=False)
    return mr.pointwise_meta(real, imag, dtype=COMPLEX_OF[real._dtype])


def polar_meta(abs, angle):
    _check_parts(abs, angle, polar_form=True)
    return mr.pointwise_meta(abs, angle, dtype=COMPLEX_OF[abs._dtype])


def angle_meta(input):
    if input._dtype.is_complex:
        return mr.pointwise_meta(input, dtype=REAL_OF[input._dtype], compute_dtype=input._dtype)
    return mr.pointwise_meta(input, dtype=mr.float_dtype(input._dtype))


def complex_kernel(xp, real, imag, out):
    out.real[...] = real
    out.imag[...] = imag
    return out


def polar_kernel(xp, abs, angle, out):
    with quiet(xp):  # cos(inf) is NaN silently, as in torch
        out.real[...] = abs * xp.cos(angle)
        out.imag[...] = abs * xp.sin(angle)
    return out


def angle_kernel(xp, x, out):
    if x.dtype.kind == "c":
        out[...] = xp.angle(x)
        return out
    # A real number's angle: pi below zero, else 0; NaN stays NaN (as torch).
    with np.errstate(invalid="ignore"):
        out[...] = xp.where(x < 0, math.pi, xp.where(x != x, x, 0))
    return out


OPS = {
    "view_as_real": register_op("view_as_real", meta=view_as_real_meta, view=_as_real_geometry),
    "view_as_complex": register_op("view_as_complex", meta=view_as_complex_meta, view=_as_complex_geometry),
    "complex": register_op("complex", meta=complex_meta, kernel=complex_kernel, tags=POINTWISE),
    "polar": register_op("polar", meta=polar_meta, kernel=polar_kernel, tags=POINTWISE),
    "angle": register_op("angle", meta=angle_meta, kernel=angle_kernel, tags=POINTWISE),
}


# -- public functions ---------------------------------------------------------------------
def view_as_real(input):
    """A real view of a complex tensor: a last dim of size 2 holds (real, imaginary).

    Example:
        >>> dl.view_as_real(dl.tensor([1 + 2j])).tolist()
        [[1.0, 2.0]]
    """
    return OPS["view_as_real"](input)


def view_as_complex(input):
    """A complex view of a real tensor whose last dim (size 2, stride 1) holds (real, imaginary).

    Example:
        >>> dl.view_as_complex(dl.tensor([[1.0, 2.0]])).tolist()
        [(1+2j)]
    """
    return OPS["view_as_complex"](input)


def real(input):
    """The real part: a view for complex tensors, the tensor itself otherwise.

    Example:
        >>> dl.real(dl.tensor([1 + 2j])).tolist()
        [1.0]
    """
    if not input.dtype.is_complex:
        return input
    return OPS["view_as_real"](input).select(-1, 0)


def imag(input):
    """The imaginary part of a complex tensor, as a view.

    Example:
        >>> dl.imag(dl.tensor([1 + 2j])).tolist()
        [2.0]
    """
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return OPS["view_as_real"](input).select(-1, 1)


def polar(abs, angle):
    """The complex numbers ``abs * (cos(angle) + i sin(angle))``.

    Example:
        >>> dl.polar(dl.tensor([2.0]), dl.tensor([0.0])).tolist()
        [(2+0j)]
    """
    return OPS["polar"](abs, angle)


def complex(real, imag):
    """The complex numbers ``real + i imag`` from two float tensors of one dtype.

    Example:
        >>> dl.complex(dl.tensor([1.0]), dl.tensor([2.0])).tolist()
        [(1+2j)]
    """
    return OPS["complex"](real, imag)


def angle(input):
    """The argument (phase) of each element, in radians: pi for negative reals, 0 for others.

    Example:
        >>> dl.angle(dl.tensor([-1.0, 1.0])).tolist()
        [3.1415927410125732, 0.0]
    """
    return OPS["angle"](input)


def _write_part(part):
    """The setter of ``x.real``/``x.imag``: copy a tensor or number into that view of ``x``."""
    def setter(self, value):
        view = part(self)
        if isinstance(value, (bool, int, float, builtins.complex, np.number)):
            view.fill_(value)
        else:
            view.copy_(value)

    setter.__name__ = f"set_{part.__name__}"
    return setter


METHODS = {
    "real": property(real, _write_part(real)), "imag": property(imag, _write_part(imag)), "angle": angle,
}
