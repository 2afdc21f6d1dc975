"""Symbolic ints seen by Python code: each observation gives eager's answer, symbolic or specialized."""
from __future__ import annotations

import math

import pytest

import dynamo_lite as dl
from tests.helpers import assert_compiled, assert_equal_values

SIZES = [5, 6, 7, 5]
FIVE = 5  # a name, so ``n is FIVE`` compiles without a SyntaxWarning


@pytest.fixture(autouse=True)
def _fresh():
    dl.reset()
    yield
    dl.reset()


# name -> (observation of n = x.shape[0] and s = x.shape, whether it keeps n symbolic)
OBSERVATIONS = {
    "isinstance": (lambda n, s: isinstance(n, int), True),
    "isinstance_tuple": (lambda n, s: isinstance(n, (float, int)) and isinstance(s, tuple), True),
    "type": (lambda n, s: (type(n) is int, type(n).__name__, type(s).__name__), True),
    "is_none": (lambda n, s: (n is None, n is not None), True),
    "bool": (lambda n, s: (bool(n), not n), True),
    "int": (lambda n, s: int(n) * 2, True),
    "arithmetic": (lambda n, s: (n * 2 - 1, (n + 1) // 2, n % 3, -n, +n, 10 - n), True),
    "in_place": (lambda n, s: _in_place(n), True),
    "min_max_abs": (lambda n, s: (max(n, 6), min(s), abs(n - 100), sum(s), math.prod(s)), False),
    "compare": (lambda n, s: (n > 5, n == 6, n != 7, 3 < n), False),
    "shape": (lambda n, s: (s, s[1:], s + (2,), len(s), s.numel()), True),
    "str": (lambda n, s: (str(n), repr(n), f"{n}|{n:4d}|{n!r}", "%d %s" % (n, n)), False),
    "str_shape": (lambda n, s: (str(s), repr(s)), False),
    "hash": (lambda n, s: (hash(n), hash(s)), False),
    "dict_key": (lambda n, s: ({n: 1}.get(5, 0), {5: "a", 6: "b"}.get(n, "z"), len({n, 5, 6})), False),
    "identity": (lambda n, s: (n is FIVE, FIVE is n, n is not FIVE), False),
    "index": (lambda n, s: ([1, 2, 3, 4, 5, 6, 7, 8][n], (1, 2, 3, 4, 5, 6, 7, 8)[-n]), False),
    "slice_list": (lambda n, s: [1, 2, 3, 4, 5, 6, 7, 8][1:n], False),
    "range": (lambda n, s: list(range(n)), False),
    "int_methods": (lambda n, s: (n.bit_length(), n.to_bytes(2, "little"), n.conjugate(), n.real, n.numerator), False),
    "float": (lambda n, s: (n / 2, n == 5.0, n + 0.5, float(n), math.sqrt(n), n * 1.5), False),
    "bitwise": (lambda n, s: (n & 1, n << 1, n | 8, ~n, n ^ 3), False),
    "power": (lambda n, s: (n ** 2, pow(n, 2, 7), divmod(n, 2), round(n, -1)), False),
    "repeat": (lambda n, s: ([0] * n, "a" * n), False),
    "contains": (lambda n, s: (n in (5, 7), n in [6]), False),
    "sorted": (lambda n, s: sorted([n, 3, 9]), False),
    "eq_other_type": (lambda n, s: (n == "5", n.__class__.__name__), False),
}


def _in_place(n):
    m = n
    m += 3
    m *= 2
    m -= 1
    m //= 3
    return m


@pytest.mark.parametrize("name", list(OBSERVATIONS))
def test_observation_of_a_symbolic_int_gives_eager_answer(name):
    observe, stays_symbolic = OBSERVATIONS[name]

    def f(x):
        return x + 1, observe(x.shape[0], x.shape)

    compiled = dl.compile(f, dynamic=True)
    before = dl.stats()
    for size in SIZES:
        x = dl.ones(size, 3)
        expected, actual = f(x), compiled(x)
        assert_equal_values(actual, expected)
    assert_compiled(before, dl.stats())
    compiles = dl.stats().frames_compiled
    if stays_symbolic:
        assert compiles == 1, f"{name}: recompiled for a new size"
    else:
        assert compiles <= 3  # specialized or guarded: once per distinct answer at most


def test_observations_that_decide_only_guard_the_decision():
    def f(x):
        n = x.shape[0]
        return x * 2 if n > 4 else x - 1, max(n, 6) == n

    compiled = dl.compile(f, dynamic=True)
    for size in [5, 6, 7, 9, 3, 4]:
        x = dl.ones(size, 2)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 3  # {5}, {>= 6}, {<= 4}: no value specialized


def test_shape_concatenation_stays_symbolic():
    def f(x):
        b, t = x.shape
        return x.view(x.shape[:-1] + (t // 2, 2)), x.reshape(*x.shape[:-1], -1, 2), x.shape + (1,)

    compiled = dl.compile(f, dynamic=True)
    for size in [4, 6, 10]:
        x = dl.arange(size * 6, dtype=dl.float32).reshape(size, 6)
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 1 and dl.stats().fallbacks == ()


def test_static_shape_concatenation_compiles():
    def f(x):
        return x.view(x.shape + (1,))

    compiled = dl.compile(f, dynamic=False)
    x = dl.ones(2, 3)
    assert_equal_values(compiled(x), f(x))
    assert dl.stats().fallbacks == () and dl.stats().graph_count == 1


def _observe_after_break(observe):
    def f(x):
        n = x.shape[0]
        print("break")  # a graph break: the resume function receives x and the int n
        return x + n, observe(n, x.shape)

    return f


@pytest.mark.parametrize("name", list(OBSERVATIONS))
def test_observation_of_an_int_passed_to_a_resume_function_gives_eager_answer(name, capsys):
    observe, stays_symbolic = OBSERVATIONS[name]
    f = _observe_after_break(observe)
    compiled = dl.compile(f)  # automatic dynamic: static first, symbolic once a size changed
    before = dl.stats()
    for size in SIZES + [4, 2]:
        x = dl.ones(size, 3)
        expected = f(x)
        assert_equal_values(compiled(x), expected)
    assert capsys.readouterr().out == "break\n" * 2 * len(SIZES + [4, 2])
    assert_compiled(before, dl.stats(), expect_breaks=2)  # f compiled static, then symbolic: one break each
    if stays_symbolic:  # f and its resume function: static for 5, symbolic from 6 on
        assert dl.stats().frames_compiled == 4, [str(g) for g in dl.stats().guard_failures]


def test_resume_function_reads_the_int_from_the_size_it_equals(capsys):
    f = _observe_after_break(lambda n, s: (n * 2, n > 6))
    compiled = dl.compile(f)
    for size in [5, 6, 7, 12, 3]:
        x = dl.ones(size, 3)
        assert_equal_values(compiled(x), f(x))
    stats = dl.stats()
    assert stats.fallbacks == () and stats.frames_compiled == 5  # n > 6 splits the symbolic resume
    resume = [e for e in dl.frames.api.default_hook.cache_for(f).entries][0].report.resume_codes[0][0]
    entries = dl.frames.api.default_hook.cache_for(resume).entries
    guards = entries[0].report.guards
    assert "type(n) is int" in guards and "s1 == s0" in guards, guards  # n unified with x.size(0)
    gm = entries[0].report.graphs[0]
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["x"]


def test_int_argument_observed_like_an_int_after_it_became_symbolic():
    def f(x, n, xs):
        if isinstance(n, int) and n < 3:
            n = n - len(xs)
        return x * n, n, {n: 1}.get(0, 2), type(n).__name__

    compiled = dl.compile(f)
    for n in [1, 2, 4, 2, 5, 7]:
        x, xs = dl.ones(2), [1, 2]
        assert_equal_values(compiled(x, n, xs), f(x, n, xs))
    assert dl.stats().fallbacks == ()
