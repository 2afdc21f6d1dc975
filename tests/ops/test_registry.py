"""Every registry op: declared completely, exercised by a sample, and its meta rule equals eager.

Each op has an entry in SAMPLES: a call of the public API that dispatches it. The call
runs under a spy that records every dispatched op with its arguments and result; for
each call of the op under test, the meta rule (run on TensorMetas, as the tracer runs
it) must give exactly the output's shape, dtype, strides and device, and a kernel must
return arrays shaped like the outputs it was given.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.ops import REGISTRY
from dynamo_lite.ops.core.dispatch import TRACING, dispatch
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.tensor import Tensor, from_array

from .nn_layer_samples import NN_LAYER_SAMPLES
from .oracle import laid_out

RNG = np.random.default_rng(0)
F32 = RNG.standard_normal((3, 4)).astype(np.float32)


def f32(*shape, layout="contiguous"):
    return laid_out(RNG.standard_normal(shape).astype(np.float32), layout)


def i64(*shape, low=0, high=3):
    return from_array(RNG.integers(low, high, shape).astype(np.int64))


def mask(*shape):
    return from_array(RNG.integers(0, 2, shape).astype(bool))


X = from_array(F32.copy())
XT = laid_out(F32, "transposed")
CL = f32(2, 3, 4, 5, layout="channels_last")
IMG = f32(2, 3, 8, 8)
INT = from_array(np.arange(12, dtype=np.int64).reshape(3, 4) - 5)


def fresh(t):
    return from_array(np.array(t.numpy(), copy=True))


def _grads_of(fn, *args, **kwargs):
    """The gradients of ``fn(*args).sum()`` for its tensor arguments (runs its backward ops)."""
    tensors = [a.requires_grad_() for a in args if isinstance(a, Tensor)]
    return dl.autograd.grad(fn(*args, **kwargs).sum(), tensors)


# op name -> a call of the public API that dispatches the op (possibly several times).
SAMPLES = {
    # binary arithmetic, with broadcasting, promotion and non-contiguous operands
    "add": lambda: (XT + X, X + 1, dl.add(INT, XT, alpha=2), CL + CL, CL + 1.5),
    "sub": lambda: (XT - X[0], 1 - INT, dl.sub(X, XT, alpha=0.5)),
    "mul": lambda: (XT * X, INT * 2.5, CL * f32(2, 3, 4, 5)),
    "div": lambda: (XT / 3, INT / INT.abs().clamp(min=1), dl.div(INT, 2, rounding_mode="floor"),
                    dl.div(XT, 2, rounding_mode="trunc")),
    "floor_divide": lambda: (XT // 0.7, INT // 3),
    "remainder": lambda: (XT % 0.7, INT % 4, 7 % INT.abs().clamp(min=1)),
    "pow": lambda: (XT.abs() ** 0.5, 2 ** INT.abs(), INT ** 2),
    # unary
    **{name: (lambda name=name: (getattr(dl, name)(XT), getattr(dl, name)(CL)))
       for name in ("neg", "abs", "sign", "square", "exp", "log", "log1p", "log2", "expm1", "sqrt",
                    "rsqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "sigmoid", "erf", "reciprocal", "floor",
                    "ceil", "round", "trunc", "relu", "silu", "isnan", "isinf", "isfinite")},
    "gelu": lambda: (dl.gelu(XT), dl.gelu(CL, approximate="tanh")),
    # comparisons, logical, bitwise, selection
    **{name: (lambda name=name: (getattr(dl, name)(XT, X), getattr(dl, name)(INT, 0.5)))
       for name in ("eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
                    "minimum", "maximum")},
    "logical_not": lambda: dl.logical_not(XT),
    "bitwise_and": lambda: (INT & 3, mask(3, 4) & mask(4)),
    "bitwise_or": lambda: (INT | 3, mask(3, 4) | mask(4)),
    "bitwise_xor": lambda: (INT ^ 3, mask(3, 4) ^ True),
    "bitwise_not": lambda: (~INT, ~mask(3)),
    "where": lambda: (dl.where(XT > 0, XT, 0.0), dl.where(mask(3, 1), INT, XT)),
    "clamp": lambda: (XT.clamp(-0.5, 0.5), INT.clamp(min=X[0])),
    # reductions
    "sum": lambda: (XT.sum(), XT.sum(0), INT.sum(-1, keepdim=True), CL.sum((1, 2))),
    "mean": lambda: (XT.mean(), CL.mean((2, 3), keepdim=True)),
    "prod": lambda: (XT.prod(), INT.prod(1)),
    "amax": lambda: (XT.amax(), CL.amax(1, keepdim=True)),
    "amin": lambda: (XT.amin(0),),
    "max": lambda: XT.max(),
    "min": lambda: XT.min(),
    "max_dim": lambda: (XT.max(0), CL.max(1, keepdim=True)),
    "min_dim": lambda: (XT.min(1),),
    "argmax": lambda: (XT.argmax(), XT.argmax(1, keepdim=True)),
    "argmin": lambda: (XT.argmin(0),),
    "var": lambda: (XT.var(), XT.var(0, correction=0)),
    "std": lambda: (XT.std(1, keepdim=True),),
    "var_mean": lambda: dl.var_mean(XT, 1),
    "all": lambda: (XT.all(), INT.all(0)),
    "any": lambda: (XT.any(1),),
    "logsumexp": lambda: (dl.logsumexp(XT, 0), dl.logsumexp(CL, (1, 2), keepdim=True)),
    "softmax": lambda: (XT.softmax(0), CL.softmax(1)),
    "log_softmax": lambda: (XT.log_softmax(-1), INT.log_softmax(0, dtype=dl.float64)),
    "cumsum": lambda: (XT.cumsum(0), INT.cumsum(1)),
    "cumprod": lambda: (XT.cumprod(1),),
    # matrix products
    "matmul": lambda: (XT @ X.t(), X[:, 0] @ XT, f32(2, 3, 4) @ f32(4, 5), f32(4) @ f32(2, 4, 5)),
    "mm": lambda: dl.mm(XT, X.t()),
    "bmm": lambda: dl.bmm(f32(2, 3, 4), f32(2, 4, 5)),
    "addmm": lambda: dl.addmm(f32(3), XT, X.t(), beta=0.5, alpha=2),
    "linear": lambda: (dl.linear(f32(2, 3, 4), XT), dl.linear(X, f32(5, 4), f32(5))),
    # rearranging ops
    "cat": lambda: (dl.cat([X, XT.t().t()]), dl.cat([CL, CL], 1)),
    "stack": lambda: dl.stack([XT, X], dim=1),
    "flip": lambda: (XT.flip(0), CL.flip(1, 3)),
    "tril": lambda: dl.tril(XT, 1),
    "triu": lambda: dl.triu(CL),
    "gather": lambda: dl.gather(XT, 1, i64(3, 2)),
    "index_select": lambda: dl.index_select(XT, 0, i64(5)),
    "masked_fill": lambda: (XT.masked_fill(XT > 0, 0.0), dl.masked_fill(X[0], mask(3, 4), 1.0)),
    "masked_fill_": lambda: fresh(XT).masked_fill_(mask(4), 2.0),
    "one_hot": lambda: dl.ops.shape_ops.one_hot(i64(2, 3), 4),
    "repeat": lambda: XT.repeat(2, 1, 3),
    "constant_pad_nd": lambda: (dl.constant_pad_nd(XT, (1, 2)), dl.constant_pad_nd(CL, (1, 1, 0, 2), 3.0)),
    # images and nn
    "conv2d": lambda: (dl.conv2d(IMG, f32(4, 3, 3, 3), f32(4), padding=1),
                       dl.conv2d(f32(2, 4, 8, 8, layout="channels_last"), f32(6, 2, 3, 3), stride=2, groups=2)),
    "max_pool2d": lambda: (dl.max_pool2d(IMG, 2), dl.max_pool2d(CL, 3, 1, 1)),
    "max_pool2d_with_indices": lambda: dl.max_pool2d(IMG, 3, 2, 1, return_indices=True),
    "avg_pool2d": lambda: (dl.avg_pool2d(IMG, 2), dl.avg_pool2d(CL, 3, 2, 1, ceil_mode=True)),
    # the adjoints that conv2d's and the pools' derivative formulas call
    "conv2d_input_backward": lambda: _grads_of(dl.conv2d, f32(2, 4, 9, 9), f32(6, 2, 3, 3), stride=2, padding=1,
                                               groups=2),
    "conv2d_weight_backward": lambda: _grads_of(dl.conv2d, f32(2, 4, 8, 8, layout="channels_last"), f32(4, 2, 3, 3),
                                                groups=2),  # without groups: im2col and matmul
    "avg_pool2d_backward": lambda: _grads_of(dl.avg_pool2d, f32(2, 3, 7, 7), 3, 2, 1, ceil_mode=True),
    "max_pool2d_backward": lambda: (_grads_of(dl.max_pool2d, f32(2, 3, 7, 7), 3, 2, 1, ceil_mode=True),
                                    _grads_of(dl.max_pool2d, f32(2, 3, 8, 8, layout="channels_last"), 2)),
    "max_pool2d_with_indices_backward": lambda: _grads_of(lambda x: dl.max_pool2d(x, 3, 2, 1, return_indices=True)[0],
                                                          f32(2, 3, 7, 7)),
    "layer_norm": lambda: (dl.layer_norm(XT, (4,)), dl.layer_norm(CL, (5,), f32(5), f32(5))),
    "embedding": lambda: dl.embedding(f32(5, 3), i64(2, 4)),
    "dropout": lambda: (dl.dropout(XT, 0.5), dl.dropout(CL, 0.2)),
    "dropout_": lambda: dl.dropout(fresh(XT), 0.5, inplace=True),
    # views, indexing, factories and conversions
    "view": lambda: (X.view(12), CL.view(2, 3, 20) if CL.is_contiguous() else X.view(2, 6)),
    "transpose": lambda: X.transpose(0, 1),
    "permute": lambda: CL.permute(0, 2, 3, 1),
    "expand": lambda: f32(3, 1).expand(3, 4),
    "squeeze": lambda: f32(3, 1).squeeze(),
    "unsqueeze": lambda: XT.unsqueeze(1),
    "slice": lambda: dl.ops.views.slice_dim(XT, 1, 0, 4, 2),
    "narrow": lambda: XT.narrow(1, 1, 2),
    "select": lambda: XT.select(0, 1),
    "as_strided": lambda: X.as_strided((2, 2), (1, 2), 1),
    "unfold": lambda: XT.unfold(1, 2, 1),
    "alias": lambda: f32(3).t(),
    "detach": lambda: XT.detach(),
    "index_basic": lambda: (XT[0, 1:], CL[:, ::2, None, ..., 1]),
    "index": lambda: (XT[i64(2)], XT[XT > 0]),
    "index_put_": lambda: fresh(XT).__setitem__(i64(2), 1.0),
    "clone": lambda: (XT.clone(), CL.clone()),
    "_to_copy": lambda: (XT.to(dl.float64), INT.float()),
    "copy_": lambda: fresh(XT).copy_(INT),
    "fill_": lambda: fresh(XT).fill_(2.0),
    "zero_": lambda: fresh(XT).zero_(),
    "tensor": lambda: dl.tensor([[1, 2], [3, 4]]),
    "empty": lambda: dl.empty(2, 3),
    "zeros": lambda: dl.zeros(2, 3, dtype=dl.int32),
    "ones": lambda: dl.ones((2, 3)),
    "full": lambda: dl.full((2, 3), 1.5),
    "empty_strided": lambda: dl.empty_strided((2, 3), (1, 2)),
    "arange": lambda: (dl.arange(5), dl.arange(0, 1, 0.25)),
    "linspace": lambda: dl.linspace(0, 1, 5),
    "eye": lambda: dl.eye(3, 4),
    "empty_like": lambda: dl.empty_like(CL),
    "zeros_like": lambda: dl.zeros_like(XT),
    "ones_like": lambda: dl.ones_like(CL),
    "full_like": lambda: dl.full_like(XT, 7),
    "rand": lambda: dl.rand(2, 3),
    "randn": lambda: dl.randn(2, 3, dtype=dl.float64),
    "randint": lambda: dl.randint(0, 5, (3,)),
    "randperm": lambda: dl.randperm(5),
    "rand_like": lambda: dl.rand_like(CL),
    "randn_like": lambda: dl.randn_like(XT),
    "randint_like": lambda: dl.randint_like(XT, 5),
}

# Tensor functions ported from torch's API (ops/pointwise/math_ops.py, contractions.py, rearrange.py ...).
SAMPLES.update({
    "lerp": lambda: (dl.lerp(XT, X, 0.3), dl.lerp(CL, f32(5), f32(2, 3, 4, 5))),
    "lerp_": lambda: fresh(XT).lerp_(X, 0.5),
    "hypot": lambda: (dl.hypot(XT, X), dl.hypot(CL, f32(5))),
    "hypot_": lambda: fresh(XT).hypot_(X),
    "atan2": lambda: (dl.atan2(XT, X), dl.atan2(INT, INT)),
    "atan2_": lambda: fresh(XT).atan2_(X),
    "fmod": lambda: (dl.fmod(XT, 0.7), dl.fmod(INT, 3), dl.fmod(CL, CL)),
    "fmod_": lambda: fresh(XT).fmod_(0.5),
    "frac": lambda: (dl.frac(XT), dl.frac(CL)),
    "frac_": lambda: fresh(XT).frac_(),
    "erfinv": lambda: (dl.erfinv(XT.clamp(-0.9, 0.9)), dl.erfinv(INT)),
    "erfinv_": lambda: fresh(XT).clamp(-0.9, 0.9).erfinv_(),
    "nan_to_num": lambda: (dl.nan_to_num(XT / 0), dl.nan_to_num(INT), dl.nan_to_num(CL, nan=1.0, posinf=2.0)),
    "nan_to_num_": lambda: (fresh(XT) / 0).nan_to_num_(),
    "addcmul": lambda: (dl.addcmul(XT, X, f32(4), value=0.5), dl.addcmul(INT, INT, INT)),
    "addcmul_": lambda: fresh(XT).addcmul_(X, X),
    "addcdiv": lambda: (dl.addcdiv(XT, X, f32(4).abs() + 1), dl.addcdiv(CL, CL, CL.abs() + 1, value=2)),
    "addcdiv_": lambda: fresh(XT).addcdiv_(X, X.abs() + 1),
    "isclose": lambda: (dl.isclose(XT, X), dl.isclose(INT, INT, rtol=0.1)),
    "einsum": lambda: (dl.einsum("ij,jk->ik", XT, X.t()), dl.einsum("ii->i", XT[:, :3]), dl.einsum("ij->", INT),
                       dl.einsum("b...,b->...", CL, f32(2))),
    "diag": lambda: (dl.diag(XT, 1), dl.diag(X[0], -1)),
    "baddbmm": lambda: dl.baddbmm(f32(3, 1), f32(2, 3, 4), f32(2, 4, 5), beta=0.5),
    "roll": lambda: (dl.roll(XT, 2), dl.roll(CL, (1, 2), (1, 3))),
    "repeat_interleave": lambda: (XT.repeat_interleave(2, 0), dl.repeat_interleave(INT, i64(4), 1), dl.repeat_interleave(X, 3)),
    "sort": lambda: (XT.sort(0), CL.sort(1, descending=True), INT.sort()),
    "topk": lambda: (XT.topk(2), CL.topk(1, dim=1, largest=False)),
    "searchsorted": lambda: (dl.searchsorted(X[0].sort().values, XT), dl.searchsorted(X.sort().values, XT.t()[:3], right=True)),
    "scatter": lambda: (dl.scatter(XT, 1, i64(3, 2, high=4), X), dl.scatter(XT, 0, i64(2, 4), value=1.0)),
    "scatter_": lambda: fresh(XT).scatter_(1, i64(3, 2, high=4), X),
    "scatter_add": lambda: dl.scatter_add(XT, 0, i64(2, 4), X),
    "scatter_add_": lambda: fresh(XT).scatter_add_(0, i64(2, 4), X),
    "scatter_reduce": lambda: (dl.scatter_reduce(XT, 0, i64(2, 4), X, "mean"),
                               dl.scatter_reduce(INT, 1, i64(3, 3, high=4), INT, "amax", include_self=False)),
    "scatter_reduce_": lambda: fresh(XT).scatter_reduce_(0, i64(2, 4), X, "prod"),
    "index_fill": lambda: (XT.index_fill(1, i64(2, high=4), -1.0), CL.index_fill(1, i64(1), 0.5)),
    "index_fill_": lambda: fresh(XT).index_fill_(0, i64(2), 2.0),
    "nonzero": lambda: (dl.nonzero(XT > 0), dl.nonzero(CL)),
    "masked_select": lambda: dl.masked_select(XT, mask(4)),
    "unique": lambda: (dl.unique(INT, return_inverse=True, return_counts=True), dl.unique(i64(4, 2), dim=0)),
    "unique_consecutive": lambda: (dl.unique_consecutive(INT, return_inverse=True, return_counts=True),
                                   dl.unique_consecutive(i64(4, 2), dim=0)),
    "bincount": lambda: (dl.bincount(i64(7, high=5)), dl.bincount(i64(4), f32(4), minlength=5)),
    "multinomial": lambda: (dl.multinomial(XT.abs(), 2), dl.multinomial(X[0].abs(), 6, replacement=True)),
    "bernoulli": lambda: (dl.bernoulli(XT.abs().clamp(max=1)), dl.bernoulli(CL, 0.5)),
    "uniform_": lambda: fresh(XT).uniform_(-1, 1),
    "normal_": lambda: fresh(XT).normal_(2, 3),
    "exponential_": lambda: fresh(XT).exponential_(),
    "bernoulli_": lambda: (fresh(XT).bernoulli_(0.2), fresh(XT).bernoulli_(X.abs().clamp(max=1))),
    "random_": lambda: (fresh(XT).random_(10), fresh(INT).random_(-3, 3)),
    "view_as_real": lambda: (dl.view_as_real(dl.view_as_complex(f32(3, 2))), dl.view_as_complex(f32(3, 2)).real),
    "view_as_complex": lambda: (dl.view_as_complex(f32(3, 2)), dl.view_as_complex(f32(5, 2)[1:].view(4, 2))),
    "complex": lambda: (dl.complex(XT, X), dl.complex(CL, f32(5))),
    "polar": lambda: (dl.polar(XT.abs(), X), dl.polar(CL, CL)),
    "angle": lambda: (dl.angle(XT), dl.angle(INT), dl.angle(dl.view_as_complex(f32(3, 2)))),
})
SAMPLES.update(NN_LAYER_SAMPLES)

# In-place variants: run on a fresh copy of a non-contiguous tensor.
INPLACE_ARGS = {
    "add_": (1.5,), "sub_": (X,), "mul_": (2,), "div_": (3,), "floor_divide_": (2,), "remainder_": (0.5,),
    "pow_": (2,), "clamp_": (-0.1, 0.1), "bitwise_and_": (3,), "bitwise_or_": (3,), "bitwise_xor_": (3,),
    "bitwise_not_": (),
}


def _inplace_sample(name):
    args = INPLACE_ARGS.get(name, ())
    if name.startswith("bitwise"):
        return lambda: getattr(fresh(INT), name)(*args)
    return lambda: getattr(fresh(XT).abs(), name)(*args)


for _name, _op in REGISTRY.items():
    if "inplace" in _op.tags and _name not in SAMPLES and hasattr(Tensor, _name):
        SAMPLES.setdefault(_name, _inplace_sample(_name))


class Spy:
    """A tracer stand-in that runs each op eagerly and records (op, args, kwargs, result)."""

    def __init__(self):
        self.calls = []

    def record(self, op, args, kwargs):
        previous, TRACING.tracer = TRACING.tracer, None
        try:
            result = dispatch(op, args, kwargs)
        finally:
            TRACING.tracer = previous
        self.calls.append((op, args, kwargs, result))
        return result


def run_recorded(sample):
    spy = Spy()
    previous, TRACING.tracer = TRACING.tracer, spy
    try:
        sample()
    finally:
        TRACING.tracer = previous
    return spy.calls


def _as_meta(value):
    if isinstance(value, Tensor):
        return TensorMeta.of(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_as_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: _as_meta(v) for k, v in value.items()}
    return value


def _flatten(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


def test_every_op_is_declared_completely():
    incomplete = [
        name for name, op in REGISTRY.items()
        if not callable(op.meta) or (op.kernel is None) == (op.view is None)
    ]
    assert not incomplete, f"ops without a meta rule or with neither/both kernel and view: {incomplete}"


def test_every_op_has_a_sample():
    missing = sorted(set(REGISTRY) - set(SAMPLES))
    assert not missing, f"ops with no entry in SAMPLES (add a public call that dispatches them): {missing}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_meta_rule_matches_eager(name, monkeypatch):
    op = REGISTRY.get(name)
    assert op is not None, f"SAMPLES names {name!r}, which is not a registry op"
    if op.kernel is not None:
        monkeypatch.setattr(op, "kernel", _checked_kernel(op.kernel))
    calls = [c for c in run_recorded(SAMPLES[name]) if c[0] is op]
    assert calls, f"the sample for {name!r} never dispatched it"
    for _, args, kwargs, result in calls:
        meta = op.meta(*_as_meta(args), **_as_meta(kwargs))
        expected, actual = _flatten(meta), _flatten(result)
        assert len(expected) == len(actual)
        for m, out in zip(expected, actual):
            if not isinstance(m, TensorMeta):
                continue
            assert isinstance(out, Tensor)
            assert TensorMeta.of(out) == m, f"{name}: meta {m} but eager gave {TensorMeta.of(out)}"
            assert out.storage_offset() == m.storage_offset(), f"{name}: storage offset differs"


def _checked_kernel(kernel):
    """Wrap a kernel so that each result it returns must match the ``out`` it was given."""

    def checked(xp, *args, out, **kwargs):
        result = kernel(xp, *args, out=out, **kwargs)
        for got, want in zip(_flatten(result), _flatten(out)):
            if want is None:
                continue
            assert got is want or (np.shape(got) == want.shape and got.dtype == want.dtype), (
                f"kernel returned {np.shape(got)}/{getattr(got, 'dtype', None)} for out {want.shape}/{want.dtype}"
            )
        return result

    return checked


def test_ops_are_package_attributes():
    for name, op in REGISTRY.items():
        assert getattr(dl.ops, name) is op
        assert dl.ops.get_op(name) is op
    with pytest.raises(AttributeError):
        dl.ops.no_such_op


# The porting ops (ops/reductions/order_stats.py, matrix_solve.py, special_ops.py).
SAMPLES.update({
    "kthvalue": lambda: (dl.kthvalue(XT, 2), XT.median(0, keepdim=True), dl.median(CL), dl.kthvalue(INT, 1, 0)),
    "linalg_inv": lambda: (dl.linalg.inv(XT[:3, :3] + dl.eye(3) * 4), dl.linalg.inv(f32(2, 3, 3) + dl.eye(3) * 4)),
    "linalg_solve": lambda: (dl.linalg.solve(XT[:3, :3] + dl.eye(3) * 4, X[:3]), dl.linalg.solve(f32(2, 3, 3) + dl.eye(3) * 4,
                                                                                                  f32(3))),
    "erfc": lambda: (dl.erfc(XT), dl.erfc(CL), dl.erfc(INT)),
})

# dl.linalg.cholesky (ops/linalg/cholesky_factor.py): a symmetric positive-definite input.
SAMPLES.update({
    "linalg_cholesky": lambda: (dl.linalg.cholesky(XT[:3, :3] @ XT[:3, :3].mT + dl.eye(3) * 4),
                                dl.linalg.cholesky(f32(2, 3, 3) @ f32(2, 3, 3).mT + dl.eye(3) * 4, upper=True)),
})

# The group-1 porting ops (ops/pointwise/float_functions.py, gamma_functions.py, port_reductions.py).
SAMPLES.update({
    "logaddexp": lambda: (dl.logaddexp(XT, XT.abs()), dl.logaddexp(CL, f32(5)), dl.logaddexp(INT, XT.T)),
    "logaddexp2": lambda: (dl.logaddexp2(XT, XT.abs()), dl.logaddexp2(CL, CL)),
    "copysign": lambda: (dl.copysign(XT, -XT.T.T), dl.copysign(CL, -1.0), dl.copysign(INT, INT - 2)),
    "heaviside": lambda: (dl.heaviside(XT, f32(1)), dl.heaviside(INT, INT[:1])),
    "fmax": lambda: (dl.fmax(XT, f32(3)), dl.fmax(CL, CL * 0.5), dl.fmax(INT, INT.T.T)),
    "fmin": lambda: (dl.fmin(XT, f32(3)), dl.fmin(INT, XT.T)),
    "nextafter": lambda: (dl.nextafter(XT, XT * 2), dl.nextafter(CL, f32(5))),
    "signbit": lambda: (dl.signbit(XT), dl.signbit(CL), dl.signbit(INT)),
    "frexp": lambda: (dl.frexp(XT), dl.frexp(CL)),
    "lgamma": lambda: (dl.lgamma(XT), dl.lgamma(CL), dl.lgamma(INT)),
    "digamma": lambda: (dl.digamma(XT), dl.digamma(CL), dl.digamma(INT)),
    "polygamma": lambda: (dl.polygamma(1, XT), dl.polygamma(2, CL), dl.polygamma(0, INT)),
    "i0": lambda: (dl.i0(XT), dl.i0(CL), dl.i0(INT)),
    "i1": lambda: (dl.ops.i1(XT), dl.ops.i1(INT)),  # only i0's derivative calls it
    "cummax": lambda: (dl.cummax(XT, 0), dl.cummax(CL, 1), dl.cummax(INT, -1)),
    "cummin": lambda: (dl.cummin(XT, 1), dl.cummin(INT, 0)),
    "logcumsumexp": lambda: (dl.logcumsumexp(XT, 0), dl.logcumsumexp(CL, 3)),
    "histc": lambda: (dl.histc(XT, bins=4), dl.histc(CL, bins=3, min=-1, max=1)),
    "isin": lambda: (dl.isin(INT, INT[0]), dl.isin(XT, 0.5), dl.isin(INT, 3, invert=True)),
})
SAMPLES.update({
    "copysign_": lambda: (fresh(XT).copysign_(-1.0), fresh(CL).copysign_(f32(5))),
    "heaviside_": lambda: fresh(XT).heaviside_(f32(1)),
    "nextafter_": lambda: fresh(XT).nextafter_(fresh(XT) * 2),
})

# The matrix decompositions (ops/linalg/matrix_decompositions.py).
SAMPLES.update({
    "linalg_svd": lambda: (dl.linalg.svd(XT[:3, :4]), dl.linalg.svd(f32(2, 4, 3), full_matrices=False)),
    "linalg_eigh": lambda: (dl.linalg.eigh(XT[:3, :3] + XT[:3, :3].T), dl.linalg.eigvalsh(f32(2, 3, 3), UPLO="U")),
    "linalg_qr": lambda: (dl.linalg.qr(XT[:4, :3]), dl.linalg.qr(f32(2, 3, 4), mode="complete")),
    "linalg_slogdet": lambda: (dl.linalg.slogdet(XT[:3, :3]), dl.linalg.slogdet(f32(2, 3, 3))),
    "linalg_det": lambda: (dl.linalg.det(XT[:3, :3]), dl.det(f32(2, 3, 3))),
})

# The group-2 porting ops (ops/shape/splits.py).
SAMPLES.update({
    "diagonal": lambda: (dl.diagonal(XT), dl.diagonal(CL, 1, 3, 1), XT.diagonal(-1), dl.diagonal(INT, 9)),
    "triangle_indices": lambda: (dl.tril_indices(4, 3), dl.triu_indices(3, 5, -1), dl.tril_indices(0, 3)),
    "combination_indices": lambda: (dl.combinations(f32(4)), dl.combinations(f32(3), 3, True), dl.combinations(f32(2), 3)),
})

# dl.fft (ops/spectral.py): strided and channels-last inputs, every direction.
SAMPLES.update({
    "fft_c2c": lambda: (dl.fft.fft(XT), dl.fft.ifftn(CL, dim=(1, 3), norm="ortho")),
    "fft_r2c": lambda: (dl.fft.rfft(XT), dl.fft.rfftn(CL, s=(3, 6), norm="forward")),
    "fft_c2r": lambda: (dl.fft.irfft(dl.fft.rfft(XT)), dl.fft.irfft2(dl.fft.rfft2(CL), s=(4, 5))),
})

# The group-3 porting ops (ops/linalg/products.py).
SAMPLES.update({
    "matrix_exp": lambda: (dl.matrix_exp(XT[:3, :3]), dl.matrix_exp(f32(2, 4, 4) * 3), dl.linalg.matrix_exp(f32(1, 1))),
})
