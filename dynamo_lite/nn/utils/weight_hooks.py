"""nn.utils.weight_norm / spectral_norm as forward pre-hooks (the older API), and the norms both APIs share.

The hook recomputes ``module.<name>`` (a plain tensor attribute) before each forward from
``<name>_g``/``<name>_v`` (weight norm) or ``<name>_orig`` and the singular-vector buffers
``<name>_u``/``<name>_v`` (spectral norm). ``nn.utils.parametrizations`` is the newer form.
"""
from __future__ import annotations

import warnings

from ...ops.core import api as ops
from ...autograd.grad_mode import no_grad
from ...linalg import vector_norm

from .. import functional as F
from ..parameter import Parameter

#: Layers whose output channels are dim 1 of the weight (spectral norm's default dim).
TRANSPOSED_CONVOLUTIONS = frozenset({"ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"})


def default_spectral_dim(module) -> int:
    return 1 if TRANSPOSED_CONVOLUTIONS & {cls.__name__ for cls in type(module).__mro__} else 0


def norm_except_dim(v, dim: int):
    """The 2-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``: over all, a 0-d tensor)."""
    if dim == -1:
        return vector_norm(v)
    dim = dim % v.dim()
    others = tuple(d for d in range(v.dim()) if d != dim)
    return vector_norm(v, 2, others, keepdim=True) if others else v.abs()


def weight_from_norm(v, g, dim: int):
    """``v`` rescaled so that its norm over all dims but ``dim`` is ``g``."""
    return v * (g / norm_except_dim(v, dim))


def reshape_weight_to_matrix(weight, dim: int):
    """``weight`` as a matrix whose rows run along ``dim``."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.dim()) if d != dim))
    return weight.flatten(1)


class WeightNorm:
    """The pre-hook of ``weight_norm``: ``module.<name> = g * v / ||v||`` before each forward."""

    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        return weight_from_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Split ``module.<name>`` into magnitude ``<name>_g`` and direction ``<name>_v`` parameters, recombined
    by a forward pre-hook (deprecated in favour of ``nn.utils.parametrizations.weight_norm``).

    Example:
        >>> layer = dl.nn.utils.weight_norm(dl.nn.Linear(4, 3))
        >>> layer.weight_g.shape
        dl.Size([3, 1])
    """
    warnings.warn("`dynamo_lite.nn.utils.weight_norm` is deprecated in favor of "
                  "`dynamo_lite.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    hook = WeightNorm(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, hook.dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, hook.compute_weight(module))
    module.register_forward_pre_hook(hook)
    return module


def _remove_hook(module, kind: type, name: str, what: str):
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module, name: str = "weight"):
    """Undo ``weight_norm``: ``<name>`` is a parameter again, holding the recombined weight."""
    return _remove_hook(module, WeightNorm, name, "weight_norm")


class SpectralNorm:
    """The pre-hook of ``spectral_norm``: ``module.<name> = <name>_orig / sigma`` (power iteration in training)."""

    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def compute_weight(self, module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        weight_mat = reshape_weight_to_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(weight_mat.T @ u, dim=0, eps=self.eps))
                    u.copy_(F.normalize(weight_mat @ v, dim=0, eps=self.eps))
            u, v = u.clone(), v.clone()
        return weight / ops.dot(u, weight_mat @ v)

    def remove(self, module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """Divide ``module.<name>`` by its spectral norm before each forward (``<name>_orig`` is the parameter).

    Example:
        >>> layer = dl.nn.utils.spectral_norm(dl.nn.Linear(4, 3))
        >>> sorted(layer.state_dict())
        ['bias', 'weight_orig', 'weight_u', 'weight_v']
    """
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    hook = SpectralNorm(name, n_power_iterations, default_spectral_dim(module) if dim is None else dim, eps)
    weight = module._parameters[name]
    with no_grad():
        rows, cols = reshape_weight_to_matrix(weight, hook.dim).shape
        u = F.normalize(ops.empty(rows, dtype=weight.dtype, device=weight.device).normal_(0, 1), dim=0, eps=eps)
        v = F.normalize(ops.empty(cols, dtype=weight.dtype, device=weight.device).normal_(0, 1), dim=0, eps=eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(hook)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo ``spectral_norm``: ``<name>`` is a parameter again, holding the normalized weight."""
    return _remove_hook(module, SpectralNorm, name, "spectral_norm")
