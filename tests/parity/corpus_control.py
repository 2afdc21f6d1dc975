"""Control flow on constants, shapes and loop counters: TorchDynamo's test_functions.py cases of this kind
(``make_test``, expected_frame_count 1) are one graph each; a branch on a tensor's value breaks (2 graphs,
test_misc.py's data-dependent cases)."""
from __future__ import annotations

import dynamo_lite as dl

from tests.parity.harness import Case, cases_of, tensors, with_values


def p_if_constant(x):
    flag = True
    if flag:
        return x + 1
    return x - 1


def p_if_shape(x):
    if x.shape[0] > 2:
        return x * 2
    return x


def p_if_ndim(x):
    return x.sum(-1) if x.ndim == 2 else x


def p_if_dtype(x):
    if x.dtype == dl.float32:
        x = x * 3
    return x


def p_for_range(x):
    for i in range(4):
        x = x + i
    return x


def p_for_range_step(x):
    total = x
    for i in range(10, 0, -3):
        total = total * 0.5 + i
    return total


def p_while_counter(x):
    i = 0
    while i < 3:
        x = x.sin()
        i += 1
    return x


def p_break_continue(x):
    for i in range(6):
        if i == 1:
            continue
        if i == 4:
            break
        x = x + i
    return x


def p_nested_loops(x):
    for i in range(2):
        for j in range(3):
            x = x + i * j
    return x


def p_enumerate_list(x):
    for i, w in enumerate([0.5, 1.5, 2.5]):
        x = x * w + i
    return x


def p_zip_lists(x):
    for a, b in zip([1, 2, 3], [4.0, 5.0, 6.0]):
        x = x + a * b
    return x


def p_reversed_range(x):
    out = []
    for i in reversed(range(3)):
        out.append(x * i)
    return out


def p_ternary(x):
    scale = 2 if x.shape[-1] == 4 else 3
    return x * scale


def p_early_return(x):
    if x.numel() > 100:
        return x
    y = x.relu()
    return y + 1


def p_try_no_raise(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return y


def p_try_finally(x):
    try:
        y = x + 1
    finally:
        y = y * 2
    return y


def p_with_no_grad(x):
    with dl.no_grad():
        y = x * 2
    return y + 1


def p_loop_over_tensor_rows(x):
    acc = dl.zeros(x.shape[1])
    for row in x:
        acc = acc + row
    return acc


def p_assert_shape(x):
    assert x.dim() == 2, "wants a matrix"
    return x.t()


def p_and_or_constants(x):
    a, b = 3, 0
    if a and not b:
        x = x + 1
    return x if (b or a) else x - 1


def p_chained_compare(x):
    n = x.shape[0]
    if 0 < n <= 8:
        return x * n
    return x


def p_for_else(x):
    for i in range(3):
        if i == 5:
            break
    else:
        x = x + 100
    return x


def p_match_statement(x):
    match x.ndim:
        case 1:
            return x + 1
        case 2:
            return x.sum(0)
        case _:
            return x


def p_int_argument_branch(x, n):
    if n > 2:
        return x * n
    return x


def p_string_argument(x, mode):
    if mode == "sum":
        return x.sum()
    return x.mean()


def p_data_dependent_branch(x):
    y = x.abs() * 2  # the same branch every call: one resume function compiled
    if y.sum() > 0:
        return y + 1
    return y - 1


CASES = (cases_of({k: v for k, v in globals().items() if k not in (
    "p_int_argument_branch", "p_string_argument", "p_data_dependent_branch")}, tensors((4, 4)))
    + [Case("int_argument_branch", p_int_argument_branch, with_values(3)),
       Case("string_argument", p_string_argument, with_values("sum")),
       # test_misc.py's data-dependent control flow: one graph up to the condition, one resumed after it
       Case("data_dependent_branch", p_data_dependent_branch, tensors((4, 4)), dynamo=2)])
