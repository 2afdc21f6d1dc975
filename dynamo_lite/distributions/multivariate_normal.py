"""MultivariateNormal: a Gaussian over vectors given a covariance, precision or lower Cholesky factor."""
from __future__ import annotations

import math

from .. import linalg
from ..ops.core import api as ops
from ..ops.linalg.matrix_solve import OPS as SOLVE_OPS
from ..tensor.layout import Size, broadcast_shapes
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, lazy_values, standard_normal

__all__ = ["MultivariateNormal"]

_MATRIX_ARGUMENTS = ("covariance_matrix", "precision_matrix", "scale_tril")


class MultivariateNormal(Distribution):
    """The normal distribution over vectors of length ``loc.shape[-1]``: exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (its lower Cholesky factor) is given.

    Example:
        >>> d = dl.distributions.MultivariateNormal(dl.zeros(2), scale_tril=dl.eye(2))
        >>> round(d.log_prob(dl.zeros(2)).item(), 4)
        -1.8379
    """

    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, value) for name, value in zip(_MATRIX_ARGUMENTS, (covariance_matrix, precision_matrix,
                                                                        scale_tril)) if value is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, "
                             "with optional leading batch dimensions" if name == "scale_tril" else
                             f"{name} must be at least two-dimensional, with optional leading batch dimensions")
        batch_shape = tuple(broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        lazy_values(self)[name] = matrix.expand(batch_shape + (-1, -1))
        self.loc = loc.expand(batch_shape + (-1,))
        Distribution.__init__(self, batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(matrix))

    def _matrix_shape(self) -> tuple:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return (lower @ lower.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        lower = self._unbroadcasted_scale_tril
        return linalg.inv(lower @ lower.mT).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        shape = self._batch_shape + self._event_shape
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        noise = standard_normal(shape, self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ noise.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self):
        lower = self._unbroadcasted_scale_tril
        n = lower.shape[-1]
        diagonal = (lower * ops.eye(n, dtype=lower.dtype, device=lower.device)).sum(-1)
        return diagonal.log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        whitened = SOLVE_OPS["linalg_solve"](self._unbroadcasted_scale_tril, diff.unsqueeze(-1)).squeeze(-1)
        mahalanobis = whitened.pow(2).sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + mahalanobis) - self._half_log_det()

    def entropy(self):
        entropy = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return entropy if len(self._batch_shape) == 0 else entropy.expand(self._batch_shape)
