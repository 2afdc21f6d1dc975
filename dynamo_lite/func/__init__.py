"""dl.func: function transforms, as torch.func (vmap, grad, grad_and_value, jacrev, functional_call).

Example:
    >>> dl.func.vmap(dl.func.grad(lambda x: (x ** 2).sum()))(dl.ones(3, 2)).tolist()
    [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
"""
from .stateless import functional_call
from .transforms import grad, grad_and_value, jacrev
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "jacrev", "vmap"]
