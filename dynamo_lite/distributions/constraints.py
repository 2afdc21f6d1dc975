"""Constraints on distribution parameters and values: each one checks a tensor elementwise (per event).

Example:
    >>> from dynamo_lite.distributions import constraints
    >>> constraints.positive.check(dl.tensor([1.0, -1.0])).tolist()
    [True, False]
"""
from __future__ import annotations

import numpy as np

from ..ops.core import api as ops
from ..tensor.dtype import bool_

__all__ = [
    "Constraint", "IndependentConstraint", "boolean", "dependent", "dependent_property", "greater_than", "independent",
    "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky", "nonnegative_integer", "one_hot",
    "positive", "positive_definite", "real", "real_vector", "simplex", "unit_interval",
]


class Constraint:
    """A region of values; ``check(value)`` is a bool tensor of the batch shape (the event dims reduced).

    Attributes:
        is_discrete: the region holds integers only.
        event_dim: how many rightmost dims one checked value spans.
    """

    is_discrete = False
    event_dim = 0

    def check(self, value):
        raise NotImplementedError

    def __repr__(self) -> str:
        return type(self).__name__.lstrip("_") + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (never checked)."""

    def __init__(self, *, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, *, is_discrete=False, event_dim=0):
        return _Dependent(is_discrete=is_discrete, event_dim=event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint) -> bool:
    """True for ``dependent`` (whose parameters are not validated)."""
    return isinstance(constraint, _Dependent)


class dependent_property(property):
    """A property whose constraint depends on the instance (like ``Uniform.support``); usable bare
    (``@dependent_property``) or with arguments (``@dependent_property(is_discrete=True)``)."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        super().__init__(fn)
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def __call__(self, fn):
        return dependent_property(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False exactly for NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & value.sum(-1).eq(1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & _Interval.check(self, value)

    def __repr__(self) -> str:
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerGreaterThan(_GreaterThan):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self) -> str:
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class IndependentConstraint(Constraint):
    """``base_constraint`` over ``reinterpreted_batch_ndims`` more rightmost dims (all must hold)."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        if result.dim() < self.reinterpreted_batch_ndims:
            expected = self.base_constraint.event_dim + self.reinterpreted_batch_ndims
            raise ValueError(f"Expected value.dim() >= {expected} but got {value.dim()}")
        kept = tuple(result.shape[:result.dim() - self.reinterpreted_batch_ndims])
        return result.reshape(kept + (-1,)).all(-1)

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        n = value.shape[-1]
        positive_diagonal = ((value * ops.eye(n, dtype=value.dtype)).sum(-1) > 0).all(-1)
        return lower & positive_diagonal


class _PositiveDefinite(Constraint):
    event_dim = 2

    def check(self, value):
        """Square, symmetric (to 1e-6) and with a Cholesky factor; read on the host (it branches on values)."""
        if value.dim() < 2 or value.shape[-1] != value.shape[-2]:
            return ops.zeros(tuple(value.shape[:-2]), dtype=bool_)
        symmetric = ops.isclose(value, value.mT, atol=1e-6).all(-2).all(-1)
        if not bool(symmetric.all()):
            return symmetric
        matrices = value.detach().to(device="cpu").numpy().astype(np.float64)
        flat = matrices.reshape((-1,) + matrices.shape[-2:])
        positive = np.array([_has_cholesky(m) for m in flat], dtype=bool).reshape(matrices.shape[:-2])
        return ops.tensor(positive, device=value.device)


def _has_cholesky(matrix) -> bool:
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


dependent = _Dependent()
real = _Real()
real_vector = IndependentConstraint(real, 1)
boolean = _Boolean()
one_hot = _OneHot()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
nonnegative_integer = _IntegerGreaterThan(0)
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
greater_than = _GreaterThan
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval
independent = IndependentConstraint
