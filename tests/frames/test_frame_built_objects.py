"""Objects a compiled function builds or asks about in the frame (the families TorchDynamo's
function tests exercise): namedtuple classes, itertools builders, dict.fromkeys, any()/all()
over parameters, id() of an argument, super() in a classmethod, lru_cache'd helpers,
setattr(), dl.device. Each compiles into one graph with no break and behaves like eager."""
from __future__ import annotations

import collections
import functools
import itertools

import pytest

import dynamo_lite as dl
import dynamo_lite.nn as nn
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def one_graph(fn, backend, make_args=lambda c: (t(c),)):
    return assert_transparent(fn, make_args, backend, graphs=1, breaks=0)


def test_namedtuple_class_made_in_the_frame(backend):
    def f(x):
        Point = collections.namedtuple("Point", "a b")
        p = Point(x, 2)
        q = p._replace(b=3)
        return p.a * p.b + q.b, q.b

    one_graph(f, backend)


def test_combinations_and_permutations(backend):
    def f(x):
        items = [x, x + 1, x + 2]
        pairs = sum(a * b for a, b in itertools.combinations(items, 2))
        orders = [a - b for a, b in itertools.permutations(items[:2])]
        return pairs, orders, len(list(itertools.combinations_with_replacement(range(3), 2)))

    one_graph(f, backend)


def test_islice_of_a_list(backend):
    def f(x):
        return sum(itertools.islice([x, x + 1, x + 2, x + 3], 1, None, 2))

    one_graph(f, backend)


def test_zip_longest(backend):
    def f(x):
        return [a + (0 if b is None else b) for a, b in itertools.zip_longest([x, x * 2], [5])], \
            list(itertools.zip_longest("ab", [1], fillvalue="-"))

    one_graph(f, backend)


def test_dict_fromkeys(backend):
    def f(x):
        d = dict.fromkeys(["a", "b"], 0)
        d["a"] += 2
        return x + d["a"] + len(d), d

    one_graph(f, backend)


MODEL = nn.Linear(3, 3)


@pytest.mark.parametrize("frozen", [False, True])
def test_any_requires_grad_over_parameters(backend, frozen):
    def f(x):
        if any(p.requires_grad for p in MODEL.parameters()):
            return x * 2
        return x - 1

    for p in MODEL.parameters():
        p.requires_grad_(not frozen)
    try:
        one_graph(f, backend)
    finally:
        for p in MODEL.parameters():
            p.requires_grad_(True)


def test_all_stops_at_the_first_false(backend):
    def f(x, flags):
        return x + 1 if all(flag > 0 for flag in flags) else x - 1

    one_graph(f, backend, lambda c: (t(c), [1, 0, 2] if c else [1, 2]))


def test_id_of_an_argument_is_a_guarded_constant(backend):
    a, b = [1], [2]

    def f(x, obj):
        return x + (1 if id(obj) == id(a) else 2)

    one_graph(f, backend, lambda c: (t(c), a if c % 2 else b))


class Base:
    scale = 2

    @classmethod
    def build(cls, x):
        return x * cls.scale

    @staticmethod
    def shift(x):
        return x + 1


class Derived(Base):
    scale = 3

    @classmethod
    def build(cls, x):
        return super().build(x) + super().shift(x)


def test_super_in_a_classmethod(backend):
    def f(x):
        return Derived.build(x)

    one_graph(f, backend)


@functools.lru_cache(maxsize=None)
def _table(n):
    return [i * i for i in range(n)]


def test_lru_cache_function_is_inlined(backend):
    def f(x):
        return x * sum(_table(4))

    one_graph(f, backend)


def test_device_made_in_the_frame(backend):
    def f(x):
        return x.to(dl.device("cpu")) + 1, dl.device("cpu")

    one_graph(f, backend)


def test_deque_made_in_the_frame(backend):
    def f(x):
        d = collections.deque([x, x + 1], maxlen=3)
        d.append(x * 2)
        d.appendleft(x - 1)  # full: drops from the right
        first = d.popleft()
        d.extend([x * 3, x * 4])  # drops from the left
        d.rotate(1)
        return first + d[-1] + len(d), d, d.maxlen, [v.sum() for v in d]

    one_graph(f, backend)


def test_deque_pop_from_empty_raises_like_eager(backend):
    def f(x):
        d = collections.deque()
        d.append(x)
        d.pop()
        try:
            d.pop()
        except IndexError as error:
            return x + 1, str(error)
        return x, ""

    one_graph(f, backend)
