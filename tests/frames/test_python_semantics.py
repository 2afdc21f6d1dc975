"""Pure-Python functions (no tensors) behave identically compiled and eager."""
from __future__ import annotations

import functools

import pytest

import dynamo_lite as dl
from tests.helpers import assert_same as assert_same_with_tensors

# These programs do no tensor work: compiled frames, but no graph to expect.
assert_same = functools.partial(assert_same_with_tensors, expect_graphs=False)

SCALE = 3
COUNTER = {"calls": 0}


def test_arithmetic_and_branches_on_constants():
    def f(a, b):
        if a > b:
            return a * SCALE - b
        return (a + b) / 2, a // 3, a % 3, a ** 2, -a, ~a, not a

    for args in [(5, 2), (1, 7), (0, 0)]:
        assert_same(f, *args)


def test_defaults_kwonly_varargs_and_kwargs():
    def f(a, b=10, *rest, scale=2, **options):
        return (a + b) * scale, rest, sorted(options.items())

    compiled = dl.compile(f, backend="eager")
    assert compiled(1) == f(1)
    assert compiled(1, 2, 3, 4, scale=5, z=1, y=2) == f(1, 2, 3, 4, scale=5, z=1, y=2)


def test_closures_and_nested_functions():
    offset = 7

    def make_adder(k):
        def add(x):
            return x + k + offset
        return add

    def f(x):
        add3 = make_adder(3)
        square = lambda v: v * v  # noqa: E731
        return add3(x), square(x), [square(i) for i in range(x)]

    assert_same(f, 4)


def test_comprehensions_and_containers():
    def f(n):
        squares = [i * i for i in range(n) if i % 2 == 0]
        table = {str(i): i for i in range(n)}
        pairs = list(zip(range(n), reversed(range(n))))
        first, *middle, last = list(range(n))
        return squares, table, pairs, first, middle, last, (1, 2) + (3,), [0] * 3, 3 in squares

    assert_same(f, 6)


def test_fstrings_and_string_methods():
    def f(name, n):
        return f"{name!r}:{n:>4}|{n / 3:.2f}", "-".join([name.upper(), str(n)]), name.split("a")

    assert_same(f, "banana", 42)


def test_recursion_runs_correctly():
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)

    assert_same(fact, 6)
    # Deeper than the inlining limit: breaks, still correct. n changed since the first
    # compile, so it is symbolic: the recursion's deeper frames reuse that one entry.
    assert_same(fact, 30, expect_breaks=1)


def test_exceptions_raised_and_caught():
    def raises(x):
        if x > 2:
            raise ValueError(f"too big: {x}")
        return x

    def catches(x):
        try:
            return raises(x)
        except ValueError as exc:
            return str(exc)

    assert_same(raises, 1)
    assert_same(raises, 5, expect_fallback=True)  # the raise is all there is: runs eagerly
    assert_same(catches, 5)
    assert_same(catches, 1)


def test_builtin_errors_have_the_same_type_and_message():
    def f(items, key):
        return items[key]

    # The failing instruction breaks the graph and runs eagerly, raising there.
    assert_same(f, (1, 2, 3), 5, expect_breaks=1)
    assert_same(f, {"a": 1}, "b", expect_breaks=1)

    def g(x):
        return x + "a"

    assert_same(g, 3, expect_breaks=1)


def test_generators_run_eagerly():
    def gen(n):
        for i in range(n):
            yield i * 2

    compiled = dl.compile(gen, backend="eager")
    assert list(compiled(4)) == [0, 2, 4, 6]

    def uses_generator(n):
        return sum(gen(n))

    assert_same(uses_generator, 5)


class Base:
    factor = 2

    def value(self, x):
        return x * self.factor


class Child(Base):
    factor = 5

    def __init__(self, bias):
        self.bias = bias

    def value(self, x):
        return super().value(x) + self.bias

    @property
    def doubled_bias(self):
        return self.bias * 2

    @staticmethod
    def helper(x):
        return x - 1


def test_methods_super_class_attributes_and_properties():
    obj = Child(3)

    def f(o, x):
        return o.value(x), o.doubled_bias, o.helper(x), Child.factor, isinstance(o, Base)

    assert_same(f, obj, 4)
    compiled = dl.compile(f, backend="eager")
    compiled(obj, 4)
    obj.bias = 10  # an attribute read during tracing changed: must be seen
    assert compiled(obj, 4) == f(obj, 4)


def test_mutating_globals_and_arguments_matches_eager():
    def bump(n):
        COUNTER["calls"] += n
        return COUNTER["calls"]

    def append_to(items, v):
        items.append(v)
        return len(items)

    COUNTER["calls"] = 0
    compiled = dl.compile(bump, backend="eager")
    assert [compiled(2), compiled(3)] == [2, 5]
    assert COUNTER["calls"] == 5

    eager_list, compiled_list = [1], [1]
    assert append_to(eager_list, 2) == dl.compile(append_to, backend="eager")(compiled_list, 2)
    assert eager_list == compiled_list


def test_global_rebinding_is_seen():
    def f(x):
        return x * SCALE

    compiled = dl.compile(f, backend="eager")
    assert compiled(2) == 6
    global SCALE
    old = SCALE
    SCALE = 10
    try:
        assert compiled(2) == 20
    finally:
        SCALE = old


def test_second_call_hits_the_cache():
    def f(a, b):
        return [a + b for _ in range(3)]

    compiled = dl.compile(f, backend="eager")
    compiled(1, 2)
    before = dl.stats()
    compiled(1, 2)
    after = dl.stats()
    assert after.cache_hits == before.cache_hits + 1
    assert after.frames_compiled == before.frames_compiled


def test_returned_containers_are_fresh_objects():
    def f():
        return [1, 2], {"a": 1}

    compiled = dl.compile(f, backend="eager")
    first = compiled()
    first[0].append(3)
    assert compiled() == ([1, 2], {"a": 1})


def test_fullgraph_raises_unsupported_with_location():
    def f(x):
        print("side effect", x)
        return x

    compiled = dl.compile(f, backend="eager", fullgraph=True)
    with pytest.raises(dl.Unsupported) as info:
        compiled(1)
    assert info.value.filename == __file__
    assert "print" in info.value.reason


def test_nested_functions_with_defaults_and_keyword_only_arguments():
    def f(x):
        def scale(v, factor=3, *, shift=1):
            return v * factor + shift

        adders = [lambda v, k=k: v + k for k in range(3)]
        items = [1]
        items += [x]
        return scale(x), scale(x, 2, shift=0), [add(x) for add in adders], items

    compiled = assert_same(f, 5)
    assert dl.stats().fallbacks == ()
    assert compiled(6) == f(6)


def test_unpacking_star_calls_and_dict_merges():
    def g(a, b, *rest, **kw):
        return a, b, rest, kw

    def f(seq, opts):
        first, *others = seq
        return g(*seq, **opts), g(first, *others, z=1, **{"y": 2}), {**opts, "k": 3}

    assert_same(f, (1, 2, 3), {"x": 4})
    assert dl.stats().fallbacks == ()


def test_generator_expressions_are_inlined_and_side_effecting_generators_stay_lazy():
    log = []

    def noisy(n):
        for i in range(n):
            log.append(i)
            yield i

    def f(n):
        squares = tuple(i * i for i in range(n))
        it = noisy(n)
        first = next(it)
        log.append("after first")
        return squares, first, list(it)

    log.clear()
    expected = f(3)
    expected_log = list(log)
    log.clear()
    assert dl.compile(f, backend="eager")(3) == expected
    assert log == expected_log == [0, "after first", 1, 2]
