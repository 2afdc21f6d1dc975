"""nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations (see parametrize).

Example:
    >>> layer = dl.nn.utils.parametrizations.weight_norm(dl.nn.Linear(4, 3))
    >>> layer.parametrizations.weight.original0.shape, layer.parametrizations.weight.original1.shape
    (dl.Size([3, 1]), dl.Size([3, 4]))
"""
from __future__ import annotations

from ...ops.core import api as ops
from ...tensor.tensor import Tensor
from ...autograd.grad_mode import no_grad

from .. import functional as F
from ..module import Module
from . import parametrize
from .weight_hooks import default_spectral_dim, norm_except_dim, reshape_weight_to_matrix, weight_from_norm


class _WeightNorm(Module):
    """Weight = direction ``original1`` scaled to magnitude ``original0`` (norms taken over all dims but ``dim``)."""

    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_from_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, self.dim), weight


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize ``module.<name>`` as magnitude ``original0`` (``g``) times direction ``original1`` (``v``).

    Args:
        module: the module.
        name: the weight's name.
        dim: the dim kept by the norm (one magnitude per slice along it); None: one magnitude for all.

    Example:
        >>> layer = weight_norm(dl.nn.Linear(4, 3))
        >>> layer.weight.shape
        dl.Size([3, 4])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    """Weight divided by its largest singular value, estimated by power iteration (buffers ``_u``, ``_v``)."""

    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = reshape_weight_to_matrix(weight, self.dim)
            rows, cols = weight_mat.shape
            u = ops.empty(rows, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            v = ops.empty(cols, dtype=weight.dtype, device=weight.device).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        """Refine the singular vectors in place (no gradient flows through them)."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(weight_mat @ self._v, dim=0, eps=self.eps))
                self._v.copy_(F.normalize(weight_mat.T @ self._u, dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = reshape_weight_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = ops.dot(u, weight_mat @ v)
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """Reparametrize ``module.<name>`` as itself divided by its spectral norm (power iteration in training).

    Args:
        module: the module.
        name: the weight's name.
        n_power_iterations: power-iteration steps per forward in training mode.
        eps: added to norms when normalizing the singular vectors.
        dim: the output-channel dim (1 for transposed convolutions, else 0, by default).

    Example:
        >>> layer = spectral_norm(dl.nn.Linear(4, 3))
        >>> layer.parametrizations.weight.original.shape
        dl.Size([3, 4])
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = default_spectral_dim(module)
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
