"""TENSOR_METHODS: every Tensor method and operator, gathered from the op modules' METHODS tables.

Each ops module (``pointwise``, ``views``, ``reductions`` ...) declares the methods it
provides in a ``METHODS`` dict (name -> ``function(self, ...)``, or a ``property``);
this module merges them into one table, the single place the compiler looks up which
tensor methods exist, and ``install_tensor_methods`` puts them on ``Tensor``.
"""
from __future__ import annotations

from importlib import import_module

from ...tensor.tensor import Tensor

# The op modules (under dynamo_lite.ops, by subpackage) whose METHODS make up the Tensor API.
METHOD_MODULES = (
    "pointwise.pointwise", "pointwise.unary", "pointwise.comparison", "reductions.reductions",
    "reductions.normalization", "linalg.linalg", "shape.shape_ops", "nn.conv", "nn.nn_ops",
    "shape.views", "shape.indexing", "creation.factories", "creation.conversions",
    "pointwise.complex_ops", "creation.tensor_functions",
    "pointwise.math_ops", "linalg.contractions", "shape.rearrange", "reductions.sorting", "shape.scattering",
    "shape.selection", "random.sampling",
    "nn.adaptive_pool", "nn.conv_transpose", "nn.embedding_bags", "nn.resample",
    "reductions.order_stats", "shape.differences", "linalg.matrix_solve", "pointwise.special_ops",
    "pointwise.float_functions", "pointwise.gamma_functions", "reductions.scans_and_stats",
    "shape.diagonals", "shape.splits", "shape.index_functions", "creation.buffers", "linalg.products", "core.inplace_twins",
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
    import_module(f"..{name}", __package__) for name in METHOD_MODULES
)


def install_tensor_methods(cls=Tensor) -> None:
    """Set every entry of TENSOR_METHODS on ``cls`` (the Tensor class by default)."""
    for name, fn in TENSOR_METHODS.items():
        setattr(cls, name, fn)
