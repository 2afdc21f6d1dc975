"""A graph break inside a for-loop compiles a fixed number of times, whatever the number
of iterations: the loop runs in one resume function, and the code after the loop
compiles in another (NOTE: [graph breaks in loops])."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def _print_in_the_body(x, xs):
    y = x * 2
    for i, v in enumerate(xs):
        y = y + v
        print("step", i)
        last = v
    return y * 3 + last, i


def _dict_items(x, d):
    y = x + 1
    for key, v in d.items():
        print(key)
        y = y * v
    return y.sum() + len(d)


def _nested_loops(x, xs):
    y = x - 1
    for v in xs:
        for w in (v, v * 2):
            if w.sum() > 4:  # a data-dependent branch in the inner loop
                y = y + w
    return y / 2


def _break_and_else(x, xs):
    y = x * 1
    for v in xs:
        print("v")
        if len(xs) > 3 and v is xs[3]:
            break
        y = y + v
    else:
        y = y - 100
    return y + 1


def _tensor_item_in_the_loop(x, xs):
    total = x.sum() * 0
    for v in xs:
        total = total + float(v.sum())  # data-dependent: a break at float()
    return x * total


def _closure_in_the_loop(x, xs):
    scale = len(xs)
    y = x + 0
    for v in xs:
        print("c")
        y = y + v * scale
    return (lambda u: u * scale)(y)


def _loop_inside_try(x, xs):
    y = x + 2
    try:
        for v in xs:
            print("t")
            y = y + v
    except KeyError:
        y = y * 0
    return y - 1


PROGRAMS = [
    (_print_in_the_body, lambda n: (lambda c: (t(c), [t(c) * j for j in range(n)]))),
    (_dict_items, lambda n: (lambda c: (t(c), {f"k{j}": t(c) + j for j in range(n)}))),
    (_nested_loops, lambda n: (lambda c: (t(c), [t(c) + j for j in range(n)]))),
    (_break_and_else, lambda n: (lambda c: (t(c), [t(c) + j for j in range(n)]))),
    (_tensor_item_in_the_loop, lambda n: (lambda c: (t(c), [t(c) + j for j in range(n)]))),
    (_closure_in_the_loop, lambda n: (lambda c: (t(c), [t(c) + j for j in range(n)]))),
    (_loop_inside_try, lambda n: (lambda c: (t(c), [t(c) + j for j in range(n)]))),
]


def _compile_counts(program, make_args, backend) -> tuple:
    dl.reset()
    assert_transparent(program, make_args, backend)
    stats = dl.stats()
    return stats.frames_compiled, stats.graph_count, stats.graph_breaks, stats.cache_misses


@pytest.mark.parametrize("program, make_args", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_compile_counts_do_not_grow_with_the_iterations(program, make_args, backend):
    counts = {n: _compile_counts(program, make_args(n), backend) for n in (4, 7, 12)}
    assert len(set(counts.values())) == 1, counts
    frames, graphs, breaks, _ = counts[4]
    assert graphs >= 1 and breaks >= 1, counts


# (Not _break_and_else: 3.12+ copy the code after a loop into its break paths, which then
# run eagerly inside the loop's resume function.)
@pytest.mark.parametrize("program", [_print_in_the_body, _closure_in_the_loop],
                         ids=lambda f: f.__name__)
def test_the_code_after_the_loop_compiles(program, backend):
    assert_transparent(program, lambda c: (t(c), [t(c) + j for j in range(4)]), backend)
    report = dl.explain(program, backend=backend)(t(0), [t(0) + j for j in range(4)])
    # One graph before the loop, one after it (in the loop's exit resume function).
    assert report.graph_count == 2, str(report)


def test_a_dict_resized_in_its_loop_after_a_break_raises_like_eager(backend):
    def f(x, d):
        y = x + 1
        for key in d:
            print(key)
            d[key + "!"] = y
        return y

    assert_transparent(f, lambda c: (t(c), {"a": 1}), backend)
