"""dl.autograd.functional cases written once against the torch API (``t`` is torch or dynamo_lite):
``fixtures/record_functional.py`` records torch's answers, ``test_autograd_functional.py`` checks ours."""
from __future__ import annotations

import numpy as np

_RNG = np.random.default_rng(11)
X = _RNG.normal(size=(3,)).round(3).tolist()
Y = _RNG.normal(size=(2, 3)).round(3).tolist()
V3 = _RNG.normal(size=(3,)).round(3).tolist()
V23 = _RNG.normal(size=(2, 3)).round(3).tolist()


def _x(t):
    return t.tensor(X, dtype=t.float64)


def _y(t):
    return t.tensor(Y, dtype=t.float64)


def _pow_exp(x):
    return x ** 3 * x.exp().sin()


def _pair(x, y):
    return (y * x).sum(0) + x.tanh(), (y ** 2).sum()


def _scalar(x, y):
    return (x.sin() * y).sum() + (x ** 2).sum() * (y ** 2).mean()


def jacobian_single(t):
    return t.autograd.functional.jacobian(_pow_exp, _x(t))


def jacobian_tuple_in_out(t):
    return t.autograd.functional.jacobian(_pair, (_x(t), _y(t)))


def jacobian_forward_mode(t):
    return t.autograd.functional.jacobian(_pair, (_x(t), _y(t)), strategy="forward-mode", vectorize=True)


def jacobian_vectorize(t):
    return t.autograd.functional.jacobian(lambda x: x.cumsum(0) ** 2, _x(t), vectorize=True)


def jacobian_unused_input(t):
    return t.autograd.functional.jacobian(lambda x, y: x * 2, (_x(t), _y(t)))


def jacobian_create_graph(t):
    x = _x(t).requires_grad_()
    jac = t.autograd.functional.jacobian(_pow_exp, x, create_graph=True)
    return jac, t.autograd.grad(jac.sum(), x)


def hessian_single(t):
    return t.autograd.functional.hessian(lambda x: (x ** 3 * x.cos()).sum(), _x(t))


def hessian_tuple(t):
    return t.autograd.functional.hessian(_scalar, (_x(t), _y(t)))


def hessian_forward_outer(t):
    return t.autograd.functional.hessian(_scalar, (_x(t), _y(t)), outer_jacobian_strategy="forward-mode", vectorize=True)


def vjp_cases(t):
    F = t.autograd.functional
    return (F.vjp(_pow_exp, _x(t), t.tensor(V3, dtype=t.float64)),
            F.vjp(_pair, (_x(t), _y(t)), (t.tensor(V3, dtype=t.float64), t.tensor(2.0, dtype=t.float64))),
            F.vjp(lambda x: (x ** 2).sum(), _x(t)))


def jvp_cases(t):
    F = t.autograd.functional
    return (F.jvp(_pow_exp, _x(t), t.tensor(V3, dtype=t.float64)),
            F.jvp(_pair, (_x(t), _y(t)), (t.tensor(V3, dtype=t.float64), t.tensor(V23, dtype=t.float64))))


def hvp_vhp_cases(t):
    F = t.autograd.functional
    v = (t.tensor(V3, dtype=t.float64), t.tensor(V23, dtype=t.float64))
    return F.hvp(_scalar, (_x(t), _y(t)), v), F.vhp(_scalar, (_x(t), _y(t)), v), \
        F.hvp(lambda x: (x ** 4).sum(), _x(t), t.tensor(V3, dtype=t.float64))


def vjp_create_graph(t):
    x = _x(t).requires_grad_()
    _, product = t.autograd.functional.vjp(_pow_exp, x, t.tensor(V3, dtype=t.float64), create_graph=True)
    return product, t.autograd.grad(product.sum(), x)


def hvp_create_graph(t):
    x = _x(t).requires_grad_()
    _, product = t.autograd.functional.hvp(lambda z: (z ** 4).sum(), x, t.tensor(V3, dtype=t.float64),
                                           create_graph=True)
    return product, t.autograd.grad(product.sum(), x)


VALUE_CASES = [
    jacobian_single, jacobian_tuple_in_out, jacobian_forward_mode, jacobian_vectorize, jacobian_unused_input,
    jacobian_create_graph, hessian_single, hessian_tuple, hessian_forward_outer, vjp_cases, jvp_cases, hvp_vhp_cases,
    vjp_create_graph, hvp_create_graph,
]


def _ones(t):
    return t.ones(3, dtype=t.float64)


ERROR_CASES = {
    "inputs_not_tensor": lambda t: t.autograd.functional.jacobian(lambda x: x, [1.0]),
    "inputs_tuple_not_tensor": lambda t: t.autograd.functional.vjp(lambda x, y: x, (_ones(t), 2.0), _ones(t)),
    "outputs_not_tensor": lambda t: t.autograd.functional.jacobian(lambda x: 3, _ones(t)),
    "strict_unused": lambda t: t.autograd.functional.jacobian(lambda x, y: x * 2, (_ones(t), _ones(t)), strict=True),
    "strict_output_no_grad": lambda t: t.autograd.functional.vjp(lambda x: _ones(t), _ones(t), _ones(t), strict=True),
    "strict_vectorize": lambda t: t.autograd.functional.jacobian(lambda x: x, _ones(t), strict=True, vectorize=True),
    "strict_linear_hessian": lambda t: t.autograd.functional.hessian(lambda x: x.sum(), _ones(t), strict=True),
    "v_missing_for_vector_output": lambda t: t.autograd.functional.vjp(lambda x: x * 2, _ones(t)),
    "v_missing_for_vector_input": lambda t: t.autograd.functional.jvp(lambda x: x.sum(), _ones(t)),
    "v_wrong_size": lambda t: t.autograd.functional.vjp(lambda x: x * 2, _ones(t), t.ones(2, dtype=t.float64)),
    "v_tuple_wrong_size": lambda t: t.autograd.functional.jvp(lambda x, y: x * y, (_ones(t), _ones(t)),
                                                              (_ones(t), t.ones(2, dtype=t.float64))),
    "v_wrong_length": lambda t: t.autograd.functional.hvp(lambda x, y: (x * y).sum(), (_ones(t), _ones(t)),
                                                          (_ones(t),)),
    "hessian_vector_output": lambda t: t.autograd.functional.hessian(lambda x: x ** 2, _ones(t)),
    "hessian_tuple_output": lambda t: t.autograd.functional.hessian(lambda x: (x.sum(), x.sum()), _ones(t)),
    "vhp_vector_output": lambda t: t.autograd.functional.vhp(lambda x: x ** 2, _ones(t), _ones(t)),
    "bad_strategy": lambda t: t.autograd.functional.jacobian(lambda x: x, _ones(t), strategy="sideways"),
    "forward_mode_not_vectorized": lambda t: t.autograd.functional.jacobian(lambda x: x, _ones(t),
                                                                            strategy="forward-mode"),
    "forward_mode_create_graph": lambda t: t.autograd.functional.jacobian(lambda x: x, _ones(t), create_graph=True,
                                                                          strategy="forward-mode"),
}
