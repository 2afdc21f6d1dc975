"""Independent: reinterprets batch dims of a distribution as event dims (log_prob sums over them)."""
from __future__ import annotations

from ..tensor.layout import Size
from . import constraints
from .distribution import Distribution
from .utils import as_shape, sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims moved into the event.

    Example:
        >>> d = dl.distributions.Independent(dl.distributions.Normal(dl.zeros(3), 1.0), 1)
        >>> tuple(d.batch_shape), tuple(d.event_shape)
        ((), (3,))
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        if reinterpreted_batch_ndims > len(base_distribution._batch_shape):
            raise ValueError("Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), "
                             f"actual {reinterpreted_batch_ndims} vs {len(base_distribution._batch_shape)}")
        shape = tuple(base_distribution._batch_shape) + tuple(base_distribution._event_shape)
        event_dim = reinterpreted_batch_ndims + len(base_distribution._event_shape)
        split = len(shape) - event_dim
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, reinterpreted_batch_ndims
        Distribution.__init__(self, shape[:split], shape[split:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = as_shape(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        moved = tuple(self._event_shape[:self.reinterpreted_batch_ndims])
        new.base_dist = self.base_dist.expand(tuple(batch_shape) + moved)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return False if self.reinterpreted_batch_ndims > 0 else self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        support = self.base_dist.support
        return constraints.independent(support, self.reinterpreted_batch_ndims) if self.reinterpreted_batch_ndims \
            else support

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
