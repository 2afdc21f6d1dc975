"""Symbolic sizes: the expression normal form, SymInt arithmetic, ShapeEnv decisions and guards."""
import operator

import pytest
from hypothesis import given, settings, strategies as st

from dynamo_lite.tensor import layout, views
from dynamo_lite.tensor.indexing import basic_index
from dynamo_lite.tensor.meta import TensorMeta
from dynamo_lite.tensor.shape_env import ShapeEnv
from dynamo_lite.tensor.sym_expr import Expr, Symbol
from dynamo_lite.tensor.symint import SymInt
from dynamo_lite.tensor.dtype import float32


def guards(env):
    return [str(g) for g in env.guards]


def test_normal_form_decides_polynomial_equality():
    s0, s1 = Expr.symbol(Symbol("s0")), Expr.symbol(Symbol("s1"))
    assert s0 * 64 == 64 * s0
    assert (s0 + 1) - 1 == s0
    assert (s0 + s1) * 2 == s1 * 2 + s0 * 2
    assert str((s0 * 64 + 64) // 64 - 1) == "s0"
    assert str((2 * s0 + 3) // 2) == "s0 + 1"
    assert str((s0 + 1) // 2) == "(s0 + 1)//2"
    assert str(s0 % 2) == "s0 % 2"
    assert (s0 * 4) % 2 == Expr.constant(0)
    assert str(s0 * s1 - 1) == "s0*s1 - 1"
    assert (s0 * s1) // s1 == s0
    assert str(2 * (s0 // 2)) == "2*(s0//2)" and str(s1 * (s0 % 3)) == "s1*(s0 % 3)"


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 50), st.integers(2, 50))
def test_code_evaluates_like_the_expression(a, b):
    s0, s1 = Symbol("s0"), Symbol("s1")
    e0, e1 = Expr.symbol(s0), Expr.symbol(s1)
    for expr in [2 * (e0 // 2), e1 * (e0 % 3) - e0 // e1, (e0 + 1) // 2 * e1, -(e0 // 3)]:
        assert eval(expr.code(), {}, {"s0": a, "s1": b}) == expr.evaluate({s0: a, s1: b}), str(expr)


def test_zero_division_is_raised_like_python():
    s0 = Expr.symbol(Symbol("s0"))
    with pytest.raises(ZeroDivisionError):
        s0 // 0
    with pytest.raises(ZeroDivisionError):
        s0 % 0


# Random expressions built the same way over Exprs and over ints must agree at every point.
_OPS = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod]


@st.composite
def programs(draw):
    steps = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(-5, 9)), max_size=8))
    values = draw(st.lists(st.integers(2, 40), min_size=2, max_size=2))
    return steps, values


@settings(max_examples=200, deadline=None)
@given(programs())
def test_expressions_evaluate_like_python_ints(program):
    steps, values = program
    symbols = [Symbol("s0"), Symbol("s1")]
    exprs = [Expr.symbol(s) for s in symbols]
    ints = list(values)
    for op_index, operand, constant in steps:
        op = _OPS[op_index]
        if op in (operator.floordiv, operator.mod):
            constant = constant if constant > 0 else 3  # symbolic divisors are checked below
        other_e = exprs[operand] if operand < len(exprs) and op not in (operator.floordiv, operator.mod) else Expr.constant(constant)
        other_i = ints[operand] if operand < len(exprs) and op not in (operator.floordiv, operator.mod) else constant
        exprs.append(op(exprs[-1], other_e))
        ints.append(op(ints[-1], other_i))
    env = dict(zip(symbols, values))
    for e, i in zip(exprs, ints):
        assert e.evaluate(env) == i, str(e)
        lo, hi = e.bounds({s: (v, v) for s, v in env.items()})
        assert lo <= i <= hi


def test_ranges_decide_without_guards():
    env = ShapeEnv()
    n = env.create_symbol(8, "x.size(0)")
    assert guards(env) == ["s0 >= 2"]
    assert bool(n != 1) and bool(n > 0) and not bool(n == 0)
    assert max(n, 1) is n
    assert guards(env) == ["s0 >= 2"]


def test_branch_records_the_relation_that_held():
    env = ShapeEnv()
    n = env.create_symbol(3, "x.size(0)")
    assert not bool(n > 4)
    assert guards(env) == ["s0 >= 2", "s0 <= 4"]
    assert bool(n <= 4)  # now implied by the range: nothing new
    assert bool(n < 10)
    assert guards(env) == ["s0 >= 2", "s0 <= 4"]


def test_equality_becomes_a_replacement():
    env = ShapeEnv()
    a = env.create_symbol(8, "x.size(0)")
    b = env.create_symbol(8, "y.size(0)")
    assert bool(a == b)
    assert guards(env) == ["s0 >= 2", "s1 >= 2", "s0 == s1"]
    assert b - a == 0
    assert repr(b * 2) == "2*s0"


def test_int_specializes():
    env = ShapeEnv()
    n = env.create_symbol(6, "x.size(0)")
    assert int(n) == 6 and operator.index(n) == 6 and range(n) == range(6)
    assert "s0 == 6" in guards(env)
    assert n + 1 == 7 and type(n + 1) is int


def test_same_source_same_symbol_and_sizes_below_two_are_rejected():
    env = ShapeEnv()
    assert repr(env.create_symbol(5, "x.size(0)")) == repr(env.create_symbol(5, "x.size(0)")) == "s0"
    with pytest.raises(ValueError):
        env.create_symbol(1, "y.size(0)")
    assert env.describe() == ["s0 = x.size(0) (example 5)"]


def test_meta_and_view_rules_compute_with_symbols():
    env = ShapeEnv()
    b, t = env.create_symbol(4, "x.size(0)"), env.create_symbol(6, "x.size(1)")
    meta = TensorMeta((b, t, 64), float32)
    assert [repr(s) for s in meta.stride()] == ["64*s1", "64", "1"]
    sizes, strides, _ = views.view((meta._sizes, meta._strides, 0), (b * t, 64))
    assert [repr(s) for s in sizes] == ["s0*s1", "64"] and strides == (64, 1)
    sizes, _, _ = views.view((meta._sizes, meta._strides, 0), (-1, 8, 8))
    assert repr(sizes[0]) == "s0*s1"
    assert guards(env) == ["s0 >= 2", "s1 >= 2"]
    assert layout.broadcast_shapes((b, 1, 64), (t, 64)) == (b, t, 64)


def test_view_that_must_divide_records_divisibility():
    env = ShapeEnv()
    n = env.create_symbol(6, "x.size(0)")
    sizes, _, _ = views.view(((n, 4), (4, 1), 0), (n // 2, -1))
    assert [repr(s) for s in sizes] == ["s0//2", "(4*s0)//(s0//2)"]
    s0 = env.symbols[0]
    admitted = [size for size in range(2, 30) if all(g.holds({s0: size}) for g in env.guards)]
    # Sound: every admitted size is one eager can view (a stricter guard only costs a recompile).
    assert 6 in admitted and all((4 * size) % (size // 2) == 0 for size in admitted)
    assert 7 not in admitted and 10 in admitted


def test_slicing_with_symbolic_stop_guards_the_bound():
    env = ShapeEnv()
    t = env.create_symbol(5, "idx.size(1)")
    sizes, strides, offset = basic_index(((16, 16), (16, 1), 0), (slice(None, t), slice(None, t)))
    assert [repr(s) for s in sizes] == ["s0", "s0"] and strides == (16, 1) and offset == 0
    assert guards(env) == ["s0 >= 2", "s0 <= 16"]


def test_symint_is_not_an_int_subclass():
    env = ShapeEnv()
    n = env.create_symbol(5, "x.size(0)")
    assert isinstance(n, SymInt) and not isinstance(n, int)
    assert repr(n) == "s0" and f"{n}" == str(n) == "5"  # text a program makes is concrete


def test_common_positive_factors_decide_without_guards():
    env = ShapeEnv()
    b, t = env.create_symbol(4, "x.size(0)"), env.create_symbol(6, "x.size(1)")
    assert bool(t < b * t) and bool(t != t * t) and bool(t <= t * t) and bool(64 * t < 64 * b * t)
    assert guards(env) == ["s0 >= 2", "s1 >= 2"]
    assert not bool(b * t == t)  # s0*s1 - s1 = s1*(s0 - 1) > 0
    assert guards(env) == ["s0 >= 2", "s1 >= 2"]
