"""The Tensor method table, the public dl.* namespace, and wrappers that trace without data."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.ops.core import api, methods
from dynamo_lite.ops.core.dispatch import TRACING
from dynamo_lite.ops.core.registry import Op
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.tensor import Tensor, from_array


def test_every_method_module_declares_its_api():
    for name in methods.METHOD_MODULES:
        module = importlib.import_module(f"dynamo_lite.ops.{name}")
        assert isinstance(module.METHODS, dict), name
        assert isinstance(module.__all__, (list, tuple)), name
        assert (module.__doc__ or "").strip(), f"{name} needs a one-line docstring"


def test_method_table_has_no_clashes_and_is_installed():
    assert not methods.METHOD_CLASHES, f"two modules define the same tensor method: {methods.METHOD_CLASHES}"
    for name, fn in methods.TENSOR_METHODS.items():
        assert Tensor.__dict__.get(name) is fn, f"Tensor.{name} is not the table's entry"


OPERATORS = [
    "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__", "__mul__", "__rmul__", "__imul__",
    "__truediv__", "__rtruediv__", "__itruediv__", "__floordiv__", "__rfloordiv__", "__ifloordiv__",
    "__mod__", "__rmod__", "__imod__", "__pow__", "__rpow__", "__ipow__", "__matmul__", "__rmatmul__",
    "__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__and__", "__rand__", "__iand__", "__or__", "__ror__", "__ior__", "__xor__", "__rxor__", "__ixor__",
]


@pytest.mark.parametrize("name", OPERATORS)
def test_operators_are_table_entries(name):
    assert name in methods.TENSOR_METHODS


def test_tensors_stay_hashable():
    x = dl.ones(2)
    assert {x: 1}[x] == 1


def test_public_namespace_reexports_every_module():
    for module in api.API_MODULES:
        for name in module.__all__:
            assert getattr(dl, name) is getattr(module, name), f"dl.{name} is not {module.__name__}.{name}"
    assert set(api.__all__) <= set(dir(dl))
    assert dl.ops.add is not dl.add and isinstance(dl.ops.add, Op)


METHOD_EQUIVALENTS = [
    ("add", (2.5,), {}), ("sub", (1,), {"alpha": 2}), ("mul", (3,), {}), ("div", (2,), {"rounding_mode": "floor"}),
    ("pow", (2,), {}), ("remainder", (1.5,), {}), ("exp", (), {}), ("tanh", (), {}), ("relu", (), {}),
    ("sigmoid", (), {}), ("abs", (), {}), ("sum", (0,), {"keepdim": True}), ("mean", ((0, 1),), {}),
    ("amax", (1,), {}), ("argmax", (1,), {}), ("var", (0,), {}), ("std", (), {"correction": 0}),
    ("softmax", (1,), {}), ("log_softmax", (0,), {}), ("cumsum", (1,), {}), ("clamp", (-0.5, 0.5), {}),
    ("eq", (0.5,), {}), ("gt", (0,), {}), ("logical_not", (), {}), ("tril", (), {}), ("flip", ((0,),), {}),
    ("gather", (1, dl.tensor([[0], [1], [0]])), {}), ("index_select", (0, dl.tensor([2, 0])), {}),
    ("masked_fill", (dl.tensor([True, False, True, False]), 0.0), {}), ("all", (), {}), ("any", (1,), {}),
]


@pytest.mark.parametrize("name, args, kwargs", METHOD_EQUIVALENTS, ids=[m[0] for m in METHOD_EQUIVALENTS])
def test_methods_equal_functions(name, args, kwargs):
    x = from_array(np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32))
    method_result = getattr(x, name)(*args, **kwargs)
    function_result = getattr(dl, name)(x, *args, **kwargs)
    np.testing.assert_array_equal(np.asarray(method_result), np.asarray(function_result))


def test_max_min_overloads():
    x = dl.tensor([[1.0, 5.0], [7.0, 2.0]])
    assert x.max().item() == 7.0
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    result = x.min(dim=0, keepdim=True)
    assert result.values.shape == (1, 2) and "min(values=" in repr(result)
    assert x.max(dl.full((2, 2), 3.0)).tolist() == [[3.0, 5.0], [7.0, 3.0]]


def test_where_method_and_in_place_methods_return_self():
    x = dl.tensor([-1.0, 2.0])
    assert x.where(x > 0, 0.0).tolist() == [0.0, 2.0]
    for name, args in [("add_", (1,)), ("mul_", (2,)), ("clamp_", (0, 3)), ("relu_", ()), ("masked_fill_", (x > 5, 0.0))]:
        assert getattr(x, name)(*args) is x


# -- tracing: wrappers must only call ops and read geometry (see NOTE in ops/core/dispatch.py) ------------
class DataLess(Tensor):
    """A tensor with geometry but no data: any wrapper that reads values fails loudly."""

    __slots__ = ("_meta_device",)

    @classmethod
    def of(cls, meta):
        self = object.__new__(cls)
        self._storage = None
        self._sizes, self._strides, self._offset = meta._sizes, meta._strides, meta._offset
        self._dtype, self._meta_device, self._array_cache = meta._dtype, meta._device, None
        return self

    @property
    def _device(self):
        return self._meta_device

    def _array(self):
        raise AssertionError("a wrapper read tensor data while tracing")


class MetaTracer:
    """Records op names and answers each op with data-less outputs from its meta rule."""

    def __init__(self):
        self.ops = []

    def record(self, op, args, kwargs):
        self.ops.append(op.name)
        return _wrap(op.meta(*_metas(args), **_metas(kwargs)))


def _metas(value):
    if isinstance(value, Tensor):
        return TensorMeta.of(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_metas(v) for v in value)
    if isinstance(value, dict):
        return {k: _metas(v) for k, v in value.items()}
    return value


def _wrap(value):
    if isinstance(value, TensorMeta):
        return DataLess.of(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_wrap(v) for v in value)
    return value


def P(*shape, dtype=dl.float32, memory_format=None):
    meta = TensorMeta(shape, dtype)
    if memory_format is dl.channels_last:
        meta = TensorMeta(shape, dtype, dl.empty(shape).contiguous(memory_format=dl.channels_last).stride())
    return DataLess.of(meta)


TRACED_CALLS = {
    "arithmetic": lambda: (P(3, 4) + 1, 1 - P(3, 4), P(3, 4) / P(4), 2 ** P(3), P(3) // 2, P(3) % 2, -P(3)),
    "inplace": lambda: (P(3).add_(1), P(3).clamp_(0, 1)),
    "unary": lambda: (dl.gelu(P(3)), dl.erf(P(3)), P(3).sigmoid(), P(3).relu_(), dl.silu(P(2))),
    "comparison": lambda: (P(3) > 0, dl.where(P(3) > 0, P(3), 0.0), ~(P(3) > 1), P(2).clamp(max=1)),
    "reductions": lambda: (P(3, 4).sum(1), P(3, 4).max(1).values, dl.max(P(3, 4)), P(3, 4).var(0, False),
                           P(3, 4).argmax(), dl.logsumexp(P(3, 4), 1), P(3, 4).softmax(-1), P(2, 3).cumsum(0)),
    "linalg": lambda: (P(2, 3) @ P(3, 4), dl.linear(P(5, 3), P(4, 3), P(4)), dl.addmm(P(4), P(2, 3), P(3, 4), beta=2)),
    "shape": lambda: (dl.cat([P(2, 3), P(1, 3)]), dl.stack([P(2), P(2)], 1), P(3, 4).flip(0), dl.tril(P(3, 3)),
                      P(3, 4).masked_fill(P(4) > 0, 1.0), P(2, 3).repeat(2, 2), dl.constant_pad_nd(P(2, 2), (1, 1))),
    "images": lambda: (dl.conv2d(P(1, 3, 8, 8, memory_format=dl.channels_last), P(4, 3, 2, 2), padding="same"),
                       dl.max_pool2d(P(1, 3, 8, 8), 2), dl.avg_pool2d(P(1, 3, 8, 8), 3, 1, 1)),
    "nn": lambda: (dl.layer_norm(P(2, 5), 5), dl.embedding(P(10, 3), P(4, dtype=dl.int64)), dl.dropout(P(3), 0.1)),
}


@pytest.mark.parametrize("group", sorted(TRACED_CALLS))
def test_wrappers_trace_through_ops_without_data(group):
    tracer = MetaTracer()
    previous, TRACING.tracer = TRACING.tracer, tracer
    try:
        results = TRACED_CALLS[group]()
    finally:
        TRACING.tracer = previous
    assert tracer.ops, "nothing was recorded"
    for result in results:
        assert isinstance(result, DataLess) or isinstance(result, tuple)


def test_same_padding_conv_records_a_pad_and_a_conv():
    tracer = MetaTracer()
    previous, TRACING.tracer = TRACING.tracer, tracer
    try:
        out = dl.conv2d(P(1, 3, 8, 8), P(4, 3, 2, 2), padding="same")
    finally:
        TRACING.tracer = previous
    assert tracer.ops == ["constant_pad_nd", "conv2d"] and out.shape == (1, 4, 8, 8)


def test_module_lists_agree():
    """ops/__init__ imports, methods.METHOD_MODULES and api.API_MODULES name the same op modules."""
    prefix = "dynamo_lite.ops."
    api_names = {m.__name__[len(prefix):] for m in api.API_MODULES if m.__name__.startswith(prefix)}
    assert api_names == set(methods.METHOD_MODULES)
    for name in methods.METHOD_MODULES:
        assert getattr(dl.ops, name.rsplit(".", 1)[1]).__name__ == f"{prefix}{name}"
