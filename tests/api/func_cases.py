"""dl.func / dl.vmap cases written once against the torch API (``t`` is torch or dynamo_lite):
``fixtures/record_func.py`` records torch's answers, ``test_func.py`` checks ours."""
from __future__ import annotations

import numpy as np

_RNG = np.random.default_rng(3)
A = _RNG.normal(size=(4, 3)).round(3).tolist()
B = _RNG.normal(size=(3, 4)).round(3).tolist()
C3 = _RNG.normal(size=(3,)).round(3).tolist()
W = _RNG.normal(size=(2, 3)).round(3).tolist()


def _a(t):
    return t.tensor(A, dtype=t.float64)


def _b(t):
    return t.tensor(B, dtype=t.float64)


def vmap_basic(t):
    return t.vmap(t.dot)(_a(t), _a(t) * 2), t.func.vmap(lambda x: x.sin() * 2)(_a(t))


def vmap_in_dims(t):
    return (t.vmap(lambda x, y: x * y, in_dims=(0, 1))(_a(t), _b(t)),
            t.vmap(lambda x, y: x + y, in_dims=(0, None))(_a(t), t.tensor(C3, dtype=t.float64)),
            t.vmap(lambda x: x.sum(), in_dims=-1)(_a(t)))


def vmap_nested_in_dims(t):
    def f(pair, scale):
        x, y = pair
        return x * scale + y.sum()
    return t.vmap(f, in_dims=((0, 1), None))((_a(t), _b(t)), 3.0)


def vmap_out_dims(t):
    return (t.vmap(lambda x: x.outer(x), out_dims=1)(_a(t)),
            t.vmap(lambda x: (x * 2, x.sum()), out_dims=(1, 0))(_a(t)))


def vmap_dict_output_and_kwargs(t):
    result = t.vmap(lambda x, power=2: {"p": x ** power, "s": x.sum()})(_a(t), power=3)
    return result["p"], result["s"]


def vmap_nested(t):
    return t.vmap(t.vmap(lambda x, y: x * y))(_a(t), _b(t).T)


def vmap_of_grad(t):
    return t.vmap(t.func.grad(lambda x: (x.sin() * x).sum()))(_a(t))


def vmap_out_dims_none(t):
    return t.vmap(lambda x, w: (x @ w.T, w.sum()), in_dims=(0, None), out_dims=(0, None))(_a(t), t.tensor(W,
                                                                                               dtype=t.float64))


def grad_cases(t):
    F = t.func
    f = lambda x, y: (x.exp() * y).sum() + (x ** 2).sum()  # noqa: E731
    return (F.grad(f)(_a(t), _a(t) * 0.5), F.grad(f, argnums=1)(_a(t), _a(t) * 0.5),
            F.grad(f, argnums=(0, 1))(_a(t), _a(t) * 0.5))


def grad_and_value_aux(t):
    g, (value, aux) = t.func.grad_and_value(lambda x: ((x ** 3).sum(), x.mean()), has_aux=True)(_a(t))
    g2, aux2 = t.func.grad(lambda x: ((x ** 2).sum(), {"n": x.norm()}), has_aux=True)(_a(t))
    return g, value, aux, g2, aux2["n"]


def grad_of_grad(t):
    return t.func.grad(t.func.grad(lambda x: x.sin() * x ** 3))(t.tensor(0.7, dtype=t.float64))


def grad_dict_argument(t):
    params = {"w": t.tensor(W, dtype=t.float64), "b": t.tensor([0.5, -0.5], dtype=t.float64)}
    g = t.func.grad(lambda p, x: ((x @ p["w"].T + p["b"]) ** 2).sum())(params, _a(t))
    return g["w"], g["b"]


def grad_unused_argument(t):
    return t.func.grad(lambda x, y: (x * 2).sum(), argnums=1)(_a(t), _a(t))


def jacrev_cases(t):
    F = t.func
    f = lambda x, y: (x * y.sum(), (x ** 2).sum())  # noqa: E731
    return (F.jacrev(lambda x: x.sin() * x)(t.tensor(C3, dtype=t.float64)),
            F.jacrev(f)(t.tensor(C3, dtype=t.float64), _a(t)),
            F.jacrev(f, argnums=(0, 1))(t.tensor(C3, dtype=t.float64), _a(t)))


def functional_call_cases(t):
    t.manual_seed(0)
    model = t.nn.Sequential(t.nn.Linear(3, 2), t.nn.Tanh(), t.nn.Linear(2, 1)).double()
    params = {"0.weight": t.tensor(W, dtype=t.float64), "0.bias": t.tensor([0.1, 0.2], dtype=t.float64),
              "2.weight": t.tensor([[1.0, -1.0]], dtype=t.float64), "2.bias": t.tensor([0.3], dtype=t.float64)}
    out = t.func.functional_call(model, params, (_a(t),))
    split = t.func.functional_call(model, ({k: v for k, v in params.items() if k.startswith("0")},
                                           {k: v for k, v in params.items() if k.startswith("2")}), _a(t))
    grads = t.func.grad(lambda p, x: t.func.functional_call(model, p, (x,)).sum())(params, _a(t))
    return out, split, grads["0.weight"], grads["2.bias"]


VALUE_CASES = [
    vmap_basic, vmap_in_dims, vmap_nested_in_dims, vmap_out_dims, vmap_dict_output_and_kwargs, vmap_nested,
    vmap_of_grad, vmap_out_dims_none, grad_cases, grad_and_value_aux, grad_of_grad, grad_dict_argument,
    grad_unused_argument, jacrev_cases, functional_call_cases,
]


def _ones(t, *shape):
    return t.ones(*shape, dtype=t.float64)


#: name -> a call that raises; PREFIX_ONLY messages are compared up to the structure they print.
ERROR_CASES = {
    "vmap_sizes_differ": lambda t: t.vmap(lambda a, b: a + b)(_ones(t, 2, 3), _ones(t, 3, 3)),
    "vmap_in_dims_structure": lambda t: t.vmap(lambda a: a, in_dims=(0, 0))(_ones(t, 2, 3)),
    "vmap_in_dims_type": lambda t: t.vmap(lambda a: a, in_dims="x")(_ones(t, 2, 3)),
    "vmap_nothing_mapped": lambda t: t.vmap(lambda a: a, in_dims=(None,))(_ones(t, 2, 3)),
    "vmap_in_dim_out_of_range": lambda t: t.vmap(lambda a: a, in_dims=2)(_ones(t, 2, 3)),
    "vmap_zero_dim": lambda t: t.vmap(lambda a: a)(t.tensor(1.0)),
    "vmap_non_tensor_output": lambda t: t.vmap(lambda a: 3)(_ones(t, 2, 3)),
    "vmap_random_in_error_mode": lambda t: t.vmap(lambda a: a + t.rand(3, dtype=t.float64))(_ones(t, 2, 3)),
    "vmap_bad_randomness": lambda t: t.vmap(lambda a: a, randomness="bad")(_ones(t, 2, 3)),
    "vmap_out_dims_structure": lambda t: t.vmap(lambda a: a, out_dims=(0, 1))(_ones(t, 2, 3)),
    "vmap_non_tensor_input": lambda t: t.vmap(lambda a: a, in_dims=0)([1.0, 2.0]),
    "vmap_batched_out_dims_none": lambda t: t.vmap(lambda a: a.sum(), out_dims=None)(
        t.tensor([[1.0, 2.0], [3.0, 5.0]])),
    "grad_not_scalar": lambda t: t.func.grad(lambda a: a * 2)(_ones(t, 3)),
    "grad_not_tensor": lambda t: t.func.grad(lambda a: 2.0)(_ones(t, 3)),
    "grad_aux_not_pair": lambda t: t.func.grad(lambda a: a.sum(), has_aux=True)(_ones(t, 3)),
    "grad_argnum_out_of_range": lambda t: t.func.grad(lambda a: a.sum(), argnums=2)(_ones(t, 3)),
    "grad_argument_not_tensor": lambda t: t.func.grad(lambda a, b: a.sum(), argnums=1)(_ones(t, 3), 2.0),
    "grad_bad_argnums": lambda t: t.func.grad(lambda a: a.sum(), argnums=1.5)(_ones(t, 3)),
    "jacrev_non_tensor_output": lambda t: t.func.jacrev(lambda a: 3.0)(_ones(t, 2)),
    "functional_call_strict": lambda t: t.func.functional_call(
        t.nn.Linear(2, 2), {"weight": _ones(t, 2, 2), "bogus": _ones(t, 1)}, (_ones(t, 1, 2),), strict=True),
    "functional_call_repeated": lambda t: t.func.functional_call(
        t.nn.Linear(2, 2), ({"weight": _ones(t, 2, 2)}, {"weight": _ones(t, 2, 2)}), (_ones(t, 1, 2),)),
}
PREFIX_ONLY = {"vmap_in_dims_structure": "in_dims is not compatible with the structure of `inputs`.",
               "vmap_out_dims_structure": "out_dims is not compatible with the structure of `outputs`."}
