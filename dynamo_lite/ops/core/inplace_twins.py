"""In-place twins (``name_``) of out-of-place Tensor methods that torch has in place: the result written into ``self``.

NOTE: [in-place twins] For a value op, ``x.name_(*args)`` computes ``x.name(*args)`` and writes
it into ``x`` with ``copy_`` after torch's in-place checks (the result's dtype must cast to
``x``'s, its shape must be ``x``'s): the same values, autograd through ``copy_`` (a leaf that
requires grad refuses, a non-leaf's history continues through the op), the version counter
bumped, one node per op in a compiled graph. For a view op (``t_``, ``transpose_``,
``squeeze_`` ...), ``x`` takes the view's sizes, strides and offset over its own storage (and,
when autograd recorded the view, its history). tests/ops/test_inplace_twins.py checks against
torch's list of in-place methods that every out-of-place method with a twin there has it.
"""
from __future__ import annotations

from .meta_rules import check_inplace

__all__: list = []  # Tensor methods only: no dl.* function

#: Out-of-place methods whose result ``name_`` writes into ``self``.
VALUE_TWINS = (
    "addbmm", "addmm", "addmv", "addr", "baddbmm", "cumprod", "cumsum", "erfc", "polygamma", "tril", "triu",
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not",
)
#: View methods whose geometry ``name_`` gives ``self``.
VIEW_TWINS = ("t", "transpose", "swapaxes", "swapdims", "squeeze", "unsqueeze", "as_strided")

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."


def value_twin(name: str):
    """``self.name_(*args, **kwargs)``: ``self.name(...)`` written into ``self`` (NOTE: [in-place twins])."""

    def method(self, *args, **kwargs):
        result = getattr(self, name)(*args, **kwargs)
        check_inplace(self, result.dtype, tuple(result.shape))
        return self.copy_(result)

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``: ``self.{name}(...)`` written into ``self``; returns ``self``."
    return method


def view_twin(name: str):
    """``self.name_(*args, **kwargs)``: ``self`` takes the geometry of ``self.name(...)`` (NOTE: [in-place twins])."""

    def method(self, *args, **kwargs):
        view = getattr(self, name)(*args, **kwargs)
        recorded = view.grad_fn is not None
        if recorded and self.is_leaf:
            raise RuntimeError(LEAF_MESSAGE)
        self._set_data(view)
        if recorded:  # self's history continues through the view op, as torch rebases it
            self._grad_fn, self._autograd = view._grad_fn, view._autograd
        return self

    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``: ``self`` becomes ``self.{name}(...)`` (same storage); returns ``self``."
    return method


METHODS = {**{name + "_": value_twin(name) for name in VALUE_TWINS},
           **{name + "_": view_twin(name) for name in VIEW_TWINS}}
