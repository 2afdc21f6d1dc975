"""Trace rules: user code is inlined, pure functions of constants are folded, the rest of
the standard library is called opaquely (never traced, never instrumented); namedtuple,
dataclass, functools.partial, itertools and enum have explicit handling."""
from __future__ import annotations

import collections
import dataclasses
import enum
import functools
import itertools
import math
import os

import dynamo_lite as dl
from dynamo_lite.frames.api import default_hook
from dynamo_lite.frames.tracing import trace_rules
from tests.frames.differential import assert_transparent

Pair = collections.namedtuple("Pair", ["a", "b"])


@dataclasses.dataclass
class Scaled:
    factor: float
    bias: float = 0.0

    def apply(self, x):
        return x * self.factor + self.bias


class Mode(enum.Enum):
    DOUBLE = 2
    TRIPLE = 3


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def _instrumented_files() -> list:
    return [fn.__code__.co_filename for fn in list(default_hook._installed)]


def test_rules_of_user_library_and_own_code():
    assert trace_rules.rule_for_function(t) == trace_rules.INLINE
    assert trace_rules.rule_for_function(collections.namedtuple) == trace_rules.OPAQUE
    assert trace_rules.rule_for_function(os.path.join) == trace_rules.OPAQUE
    assert trace_rules.rule_for_function(dl.nn.functional.relu) == trace_rules.INLINE


def test_namedtuple_made_in_the_frame_runs_the_library_eagerly(backend):
    def f(x):
        y = x + 1
        point = collections.namedtuple("Point", ["u", "v"])
        p = point(y, x * 2)
        return p.u + p.v, p._fields

    assert_transparent(f, lambda c: (t(c),), backend)
    assert not any(trace_rules.is_library_code(compile("", path, "exec")) for path in _instrumented_files())


def test_namedtuple_instances_are_traced(backend):
    def f(x, pair):
        q = Pair(pair.a * 2, b=x)
        return q.a + q.b, q._replace if False else q, pair._asdict()

    assert_transparent(f, lambda c: (t(c), Pair(t(c), 1.0)), backend, graphs=1, breaks=0)


def test_dataclass_instances_made_and_passed_in(backend):
    def f(x, given):
        made = Scaled(2.0, bias=1.0)
        return made.apply(x) + given.apply(x), made

    assert_transparent(f, lambda c: (t(c), Scaled(float(c + 1))), backend, graphs=1, breaks=0)


def test_functools_partial_argument_and_reduce(backend):
    def f(x, scale):
        total = functools.reduce(lambda a, b: a + b, [x, x * 2], x)
        return scale(total)

    assert_transparent(f, lambda c: (t(c), functools.partial(lambda v, k: v * k, k=c + 1)), backend,
                       graphs=1, breaks=0)


def test_itertools(backend):
    def f(x, xs):
        flat = list(itertools.chain.from_iterable([[x], xs]))
        grid = list(itertools.product(range(2), repeat=2))
        return sum(flat[1:], flat[0]), grid, list(itertools.accumulate([1, 2, 3], lambda a, b: a * b))

    assert_transparent(f, lambda c: (t(c), [t(c) + 1, t(c) * 2]), backend, graphs=1, breaks=0)


def test_enum_members_are_constants(backend):
    def f(x, mode):
        if mode is Mode.DOUBLE:
            return x * mode.value, mode.name
        return x - mode.value, mode.name

    assert_transparent(f, lambda c: (t(c), [Mode.DOUBLE, Mode.TRIPLE, Mode.DOUBLE][c]), backend)
    assert dl.stats().recompiles == 1  # one entry per member, guarded by identity


def test_pure_functions_of_constants_are_folded(backend):
    def f(x, n):
        return x * math.sqrt(n) + math.floor(2.5), os.path.basename("/a/b")

    assert_transparent(f, lambda c: (t(c), 4), backend, breaks=1)  # os.path: opaque, runs eagerly
