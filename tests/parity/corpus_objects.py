"""User classes, generators, NumPy, ``item()``, custom autograd.Functions and changing shapes.

TorchDynamo's counts for these kinds: user objects, generators (inlined) and NumPy calls on traced
tensors (traced as tensor ops) are one graph in test_functions.py/test_misc.py (``make_test``,
expected_frame_count 1); ``item()``/``tolist()`` without ``capture_scalar_outputs`` break once
(2 graphs); a custom ``autograd.Function`` is one graph (test_autograd_function.py); a size that
changes between calls recompiles once and the second graph is dynamic (2 graphs over 3 calls,
automatic dynamic shapes)."""
from __future__ import annotations

import dataclasses

import numpy as np

import dynamo_lite as dl

from tests.parity.harness import Case, cases_of, tensors


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k

    def __call__(self, x):
        return self.apply(x) + 1

    @property
    def double(self):
        return self.k * 2


class Vec:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return Vec(self.t + other.t)


@dataclasses.dataclass
class Config:
    scale: float = 2.0
    shift: int = 1


_SCALER = Scaler(3)
_CONFIG = Config()


def p_global_object_method(x):
    return _SCALER.apply(x)


def p_callable_object(x):
    return _SCALER(x)


def p_object_property(x):
    return x * _SCALER.double


def p_object_created_in_frame(x):
    s = Scaler(5)
    return s.apply(x)


def p_operator_overload(x):
    return (Vec(x) + Vec(x * 2)).t


def p_dataclass_global(x):
    return x * _CONFIG.scale + _CONFIG.shift


def p_dataclass_in_frame(x):
    c = Config(scale=4.0)
    return x * c.scale


def _gen(x):
    for i in range(3):
        yield x * i


def _gen_from(x):
    yield from _gen(x)
    yield x


def p_generator_expression_sum(x):
    return sum(x * i for i in range(3))


def p_generator_list(x):
    return list(_gen(x))


def p_generator_loop(x):
    total = x
    for t in _gen(x):
        total = total + t
    return total


def p_yield_from(x):
    return list(_gen_from(x))


def p_next_on_generator(x):
    g = _gen(x + 1)
    next(g)
    return next(g)


def p_iter_next_list(x):
    it = iter([x, x * 2])
    return next(it) + next(it)


def p_numpy_constant(x):
    return x * np.float32(2.0) + float(np.pi)


def p_numpy_on_tensor(x):
    a = x.numpy()
    return dl.from_numpy(np.tanh(a) * 2)


def p_numpy_reduction(x):
    return np.sum(x.numpy() ** 2, axis=0)


def p_numpy_ndarray_method(x):
    return x.numpy().clip(-0.5, 0.5).mean(axis=1)


def p_numpy_iinfo(x):
    return x * float(np.finfo(np.float32).eps) + np.iinfo(np.int8).max


def p_tensor_attributes(x):
    return x * x.dim() + x.numel() + x.element_size()


def p_item_then_ops(x):
    s = x.sum().item()
    return x * s


def p_tolist(x):
    values = x[0].tolist()
    return x + len(values)


class Square(dl.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad


class ScaleBy(dl.autograd.Function):
    @staticmethod
    def forward(x, k):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.k = inputs[1]

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


def p_custom_function(x):
    return Square.apply(x + 1).sum()


def p_custom_function_setup_context(x):
    return ScaleBy.apply(x, 3.0) + 1


def p_custom_function_no_grad(x):
    with dl.no_grad():
        return Square.apply(x)


def p_custom_function_backward(x):
    w = x.detach().requires_grad_(True)
    loss = Square.apply(w * 2).sum()
    loss.backward()
    return w.grad


def p_dynamic_size(x):
    return (x * 2).sum(0)


def _sized(call):
    dl.manual_seed(call)
    return (dl.randn(3 + call, 4),)


CASES = (cases_of({k: v for k, v in globals().items() if k not in (
    "p_item_then_ops", "p_tolist", "p_dynamic_size", "p_custom_function_backward")}, tensors((4, 4)))
    + [Case("item_then_ops", p_item_then_ops, tensors((4, 4)), dynamo=2),
       Case("tolist", p_tolist, tensors((4, 4)), dynamo=2),
       # TorchDynamo: loss.backward() inside the compiled function is a graph break (2 graphs)
       Case("custom_function_backward", p_custom_function_backward, tensors((4, 4)), dynamo=2),
       Case("dynamic_size", p_dynamic_size, _sized, dynamo=2, calls=3)])
