"""The Distribution base class: shapes, argument and sample validation, expand, derived statistics.

NOTE: [distribution validation] As in torch, validation is on by default
(``Distribution.set_default_validate_args(False)`` or ``validate_args=False`` turn it off): a
parameter outside its constraint and a value outside the support raise ValueError with torch's
message. Checking reads tensor values, so in compiled code it is a graph break.
"""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor.layout import Size
from ..tensor.tensor import Tensor
from . import constraints
from .utils import as_shape, lazy_values, parameter_values

__all__ = ["Distribution", "ExponentialFamily"]


class Distribution:
    """A batch of probability distributions, each over events of ``event_shape``.

    Example:
        >>> d = dl.distributions.Normal(dl.zeros(3), 1.0)
        >>> tuple(d.sample((2,)).shape), tuple(d.batch_shape)
        ((2, 3), (3,))
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True
    #: parameter name -> the Constraint its values satisfy.
    arg_constraints: dict = {}
    #: the parameters derived on demand from others (NOTE: [lazy parameters]).
    lazy_parameters: tuple = ()
    #: tensor attributes besides the parameters that hold one value per batch element (``expand`` expands them).
    _expanded_attributes: tuple = ()
    support = None

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Switch validation on or off for distributions built afterwards without ``validate_args``."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = tuple(batch_shape), tuple(event_shape)  # NOTE: [shapes as tuples]
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._validate_parameters()

    def _validate_parameters(self) -> None:
        values = parameter_values(self)  # a lazy parameter not derived yet is not checked (NOTE: [lazy parameters])
        for param, constraint in self.arg_constraints.items():
            if constraints.is_dependent(constraint) or param not in values:
                continue
            value = values[param]
            if not bool(constraint.check(value).all()):
                raise ValueError(f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                                 f"but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> Size:
        return Size(self._batch_shape)

    @property
    def event_shape(self) -> Size:
        return Size(self._event_shape)

    def expand(self, batch_shape, _instance=None):
        """A view of this distribution with a larger ``batch_shape`` (parameters expanded, not copied).

        Example:
            >>> tuple(dl.distributions.Normal(0.0, 1.0).expand((4,)).batch_shape)
            (4,)
        """
        batch_shape = as_shape(batch_shape)
        new = _instance if _instance is not None else type(self).__new__(type(self))
        expanded = {}

        def expand(name, value):
            if not isinstance(value, Tensor) or not (name in self.arg_constraints or name in self._expanded_attributes):
                return value
            if id(value) not in expanded:  # one view per tensor: Categorical's _param stays its probs
                expanded[id(value)] = value.expand(batch_shape + tuple(value.shape[len(self._batch_shape):]))
            return expanded[id(value)]

        new.__dict__.update({name: expand(name, value) for name, value in self.__dict__.items() if name != "_lazy"})
        new._lazy = {name: expand(name, value) for name, value in lazy_values(self).items()}
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """Draws of shape ``sample_shape + batch_shape + event_shape``, detached from autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """Reparameterized draws: gradients flow back to the parameters."""
        raise NotImplementedError

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> tuple:
        return as_shape(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value) -> None:
        """torch's checks of a ``log_prob`` argument: a tensor, broadcastable, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_start:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.shape} vs "
                             f"{Size(self._event_shape)}.")
        actual, expected = value.shape, self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual} vs "
                                 f"{Size(expected)}.")
        support = self.support
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be "
                             f"within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}: {_short(value)}" for name, value in parameter_values(self).items())
        return f"{type(self).__name__}({shown})"


def _short(value) -> str:
    """A parameter in a repr: its value when it has one element, else its shape."""
    if value.numel() != 1:
        return repr(value.shape)
    return f"{value.item()}" if value.dim() == 0 else f"{value}"


class ExponentialFamily(Distribution):
    """The distributions of exponential families (Normal, Bernoulli): a KL between two different
    ones is refused, as torch does."""
