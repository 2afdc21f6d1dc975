"""Closures, calls and builtins: TorchDynamo's test_functions.py cases of these kinds (``make_test``,
expected_frame_count 1: the callee is inlined, the builtin folded or traced) are one graph each."""
from __future__ import annotations

import functools
import math
import operator

import dynamo_lite as dl

from tests.parity.harness import Case, cases_of, tensors

_SCALE = 3.0


def _helper(x, k=2):
    return x * k


def _kw_only(x, *, shift):
    return x + shift


def _star(*parts):
    return sum(parts)


def _kwargs(x, **options):
    return x * options.get("scale", 1) + options.get("bias", 0)


def _decorate(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 1
    return wrapper


@_decorate
def _decorated(x):
    return x * 2


def _recursive(x, n):
    return x if n == 0 else _recursive(x * 2, n - 1)


def p_call_helper(x):
    return _helper(x) + _helper(x, k=5)


def p_default_argument(x):
    return _helper(x)


def p_keyword_only(x):
    return _kw_only(x, shift=4)


def p_star_args(x):
    return _star(x, x * 2, x * 3)


def p_star_call(x):
    parts = [x, x + 1]
    return _star(*parts)


def p_kwargs_call(x):
    return _kwargs(x, scale=2, bias=1)


def p_double_star_call(x):
    options = {"scale": 3}
    return _kwargs(x, **options)


def p_closure_read(x):
    k = 4

    def inner(y):
        return y * k
    return inner(x)


def p_closure_over_tensor(x):
    y = x + 1

    def inner():
        return y * 2
    return inner()


def p_nonlocal_write(x):
    count = 0

    def bump(t):
        nonlocal count
        count += 1
        return t + count
    x = bump(x)
    x = bump(x)
    return x, count


def p_lambda(x):
    f = lambda t: t.relu() * 2  # noqa: E731
    return f(x)


def p_lambda_default(x):
    fs = [lambda t, i=i: t * i for i in range(3)]
    return [f(x) for f in fs]


def p_closure_in_comprehension(x):
    fs = [lambda t: t * i for i in range(3)]  # late binding: every lambda sees i == 2
    return [f(x) for f in fs]


def p_partial(x):
    f = functools.partial(_helper, k=7)
    return f(x)


def p_global_partial(x):
    return _GLOBAL_PARTIAL(x)


_GLOBAL_PARTIAL = functools.partial(_kw_only, shift=2.5)


def p_decorated(x):
    return _decorated(x)


def p_recursion(x):
    return _recursive(x, 3)


def p_global_constant(x):
    return x * _SCALE


def p_nested_def_returns_fn(x):
    def make(k):
        def f(t):
            return t + k
        return f
    return make(3)(x)


def p_len_builtin(x):
    return x * len([1, 2, 3])


def p_isinstance(x):
    return x + 1 if isinstance(x, dl.Tensor) else x


def p_getattr_const(x):
    return getattr(x, "T") + 0


def p_hasattr(x):
    return x * 2 if hasattr(x, "shape") else x


def p_min_max_ints(x):
    n = max(x.shape[0], 2) + min(3, x.shape[1])
    return x * n


def p_abs_round(x):
    return x * abs(-2) + round(2.6)


def p_sum_of_list(x):
    return sum([x, x * 2, x * 3])


def p_math_functions(x):
    return x * math.sqrt(16) + math.pi + math.floor(2.5)


def p_operator_module(x):
    return operator.add(x, operator.mul(x, 3))


def p_int_float_of_size(x):
    return x * float(x.shape[0]) + int(x.size(1))


def p_divmod(x):
    q, r = divmod(x.shape[0] * 3, 5)
    return x * q + r


def p_all_any_constants(x):
    return x * 2 if all([True, 1]) and not any([0, False]) else x


def p_map_filter(x):
    values = list(map(lambda v: v * 2, filter(lambda v: v % 2, range(6))))
    return x * sum(values)


def p_str_format(x):
    key = "w{}".format(x.shape[0])
    return x * len(f"{key}-{x.dim()}")


def p_type_is(x):
    return x * 2 if type(x) is dl.Tensor else x


def p_callable_builtin(x):
    return x + 1 if callable(_helper) else x


def p_tensor_methods_chain(x):
    return x.t().contiguous().view(-1).softmax(0).reshape(4, 4)


def p_inplace_on_intermediate(x):
    y = x.clone()
    y.mul_(2).add_(1)
    return y


def p_mutate_argument(x):
    x.add_(1)
    return x


def p_return_none(x):
    x.mul_(0.5)


def p_sorted_ints(x):
    order = sorted([3, 1, 2], reverse=True)
    return x * order[0] + order[-1]


def p_print_between_ops(x):
    y = x * 2
    print("between")
    return y + 1


CASES = (cases_of({k: v for k, v in globals().items() if k != "p_print_between_ops"}, tensors((4, 4)))
         # a print is a graph break in TorchDynamo too (its default reorderable-logging list is empty): 2 graphs
         + [Case("print_between_ops", p_print_between_ops, tensors((4, 4)), dynamo=2)])
