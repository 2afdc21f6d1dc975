"""TENSOR_METHODS: every Tensor method and operator, gathered from the op modules' METHODS tables.

Each ops module (``pointwise``, ``views``, ``reductions`` ...) declares the methods it
provides in a ``METHODS`` dict (name -> ``function(self, ...)``, or a ``property``);
this module merges them into one table, the single place the compiler looks up which
tensor methods exist, and ``install_tensor_methods`` puts them on ``Tensor``.
"""
from __future__ import annotations

from importlib import import_module

from ..tensor.tensor import Tensor

# The op modules (under dynamo_lite.ops) whose METHODS make up the Tensor API.
METHOD_MODULES = (
    "pointwise", "unary", "comparison", "reductions", "normalization", "linalg", "shape_ops",
    "conv", "nn_ops",
    "views", "indexing", "factories", "conversions",
    "complex_ops", "tensor_functions",
    "math_ops", "contractions", "rearrange", "sorting", "scattering", "selection", "random_ops",
    "adaptive_pool", "conv_transpose", "embedding_bags", "resample",
    "order_stats", "differences", "matrix_solve", "special_ops",
    "port_pointwise", "gamma_functions", "port_reductions",
    "port_shapes", "port_linalg",
)


def collect_methods(modules) -> tuple[dict, list]:
    """Merge the modules' METHODS; return the table and any ``(name, first, second)`` clashes."""
    table: dict = {}
    owner: dict = {}
    clashes = []
    for module in modules:
        for name, fn in module.METHODS.items():
            if name in table and table[name] is not fn:
                clashes.append((name, owner[name], module.__name__))
            table[name] = fn
            owner[name] = module.__name__
    return table, clashes


TENSOR_METHODS, METHOD_CLASHES = collect_methods(
    import_module(f"{__package__}.{name}") for name in METHOD_MODULES
)


def install_tensor_methods(cls=Tensor) -> None:
    """Set every entry of TENSOR_METHODS on ``cls`` (the Tensor class by default)."""
    for name, fn in TENSOR_METHODS.items():
        setattr(cls, name, fn)
