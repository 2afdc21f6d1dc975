"""Derivatives of the porting ops: kthvalue (so median/nanmedian along a dim: the picked element) and erfc."""
from __future__ import annotations

import math

from .helpers import OPS, scatter_add
from .table import derivative


@derivative("kthvalue", saves=("result",))
def kthvalue_backward(grads, input, k, dim=-1, keepdim=False, nan_rule=None, result=None):
    grad, indices = grads[0], result[1]
    if not input.ndim:
        return grad
    if not keepdim:
        grad, indices = OPS["unsqueeze"](grad, dim), OPS["unsqueeze"](indices, dim)
    return scatter_add(input._sizes, dim, indices, grad, grad)


@derivative("erfc", saves=("input",))
def erfc_backward(grad, input):
    return OPS["mul"](grad, OPS["mul"](OPS["exp"](OPS["neg"](OPS["mul"](input, input))), -2 / math.sqrt(math.pi)))
