"""A graph break inside a comprehension compiles a fixed number of times, whatever the
length of what it walks: 3.12+ inline comprehensions into the frame, and a break there
rewinds to the comprehension's start like a break in a for-loop (NOTE: [graph breaks in
loops]); 3.11 calls the comprehension's own function eagerly. Either way the partly built
list is never guarded by its length."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def _print_in_a_list_comprehension(x, xs):
    x = x + 1
    return [print(i) or x * i for i in xs]


def _code_before_and_after(x, xs):
    y = x * 2
    ys = [print(i) or y + i for i in xs]
    return y - 1, ys, len(ys)


def _comprehension_as_a_call_argument(x, xs):
    y = x + 1
    return dl.stack([print(i) or y * i for i in xs]).sum(0) - y


def _dict_and_set_comprehensions(x, xs):
    y = x * 3
    d = {i: print("k", i) or y + i for i in xs}
    s = {print("s") or i % 3 for i in xs}
    return y, d, sorted(s)


def _tuple_target_and_a_condition(x, xs):
    y = x - 1
    pairs = [(a, b) for a, b in enumerate(xs)]
    return [y * a + b for a, b in pairs if print(a) is None and a % 2 == 0]


def _nested_comprehensions(x, xs):
    y = x / 2
    rows = [[print(j) or y + i * j for j in range(3)] for i in xs]
    return y, rows


def _tensor_item_in_a_comprehension(x, xs):
    y = x * 1
    totals = [float(v.sum()) for v in xs]  # data-dependent: a break at float()
    return y * sum(totals)


def _walked_value_kept_after(x, xs):
    i, y = "before", x + 1
    ys = [print(i) or y * i for i in xs]
    return ys, i


INTS = lambda n: (lambda c: (t(c), list(range(n))))  # noqa: E731
# (The same items at every call: floats read with .item() are specialized.)
TENSORS = lambda n: (lambda c: (t(c), [t(0) + j for j in range(n)]))  # noqa: E731

PROGRAMS = [
    (_print_in_a_list_comprehension, INTS),
    (_code_before_and_after, INTS),
    (_comprehension_as_a_call_argument, INTS),
    (_dict_and_set_comprehensions, INTS),
    (_tuple_target_and_a_condition, INTS),
    (_nested_comprehensions, INTS),
    (_tensor_item_in_a_comprehension, TENSORS),
    (_walked_value_kept_after, INTS),
]


def _compile_counts(program, make_args, backend) -> tuple:
    dl.reset()
    assert_transparent(program, make_args, backend)
    stats = dl.stats()
    assert not stats.fallbacks, stats
    return stats.frames_compiled, stats.graph_count, stats.graph_breaks, stats.cache_misses, stats.recompiles


@pytest.mark.parametrize("program, make_args", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_compile_counts_do_not_grow_with_the_length(program, make_args, backend):
    counts = {n: _compile_counts(program, make_args(n), backend) for n in (4, 9, 20)}
    assert len(set(counts.values())) == 1, counts
    frames, graphs, breaks, _, recompiles = counts[4]
    assert graphs >= 1 and breaks >= 1 and recompiles == 0, counts


def test_a_long_comprehension_does_not_hit_the_cache_limit(backend):
    """The example of the report: one call over a list longer than the cache limit."""
    dl.reset()
    assert_transparent(_print_in_a_list_comprehension, INTS(3 * dl.config.cache_size_limit), backend, calls=2)
    stats = dl.stats()
    assert stats.recompiles == 0 and not stats.guard_failures and not stats.fallbacks, stats


@pytest.mark.parametrize("program", [_code_before_and_after, _comprehension_as_a_call_argument],
                         ids=lambda f: f.__name__)
def test_the_code_after_the_comprehension_compiles(program, backend):
    report = dl.explain(program, backend=backend)(t(0), list(range(5)))
    # One graph before the comprehension, one after it (on 3.12+ in the comprehension's
    # exit resume function; on 3.11 in the resume function after its eager call).
    assert report.graph_count == 2, str(report)


def _nested_with_an_unbound_saved_variable(x, zs):  # (the comprehension fuzzer's seed 122)
    y = x + 1
    h = lambda t: t  # noqa: E731
    r0 = [[(print("b", end=""), v * 2 if not isinstance(v, int) else x * v)[1] + w for v in tuple(zs)]
          for w in (1, 2)]
    r1 = {i: (None, v * 2 if not isinstance(v, int) else x * v)[1] for i, v in enumerate(zs)}
    y = y + x
    return r0, r1, h(y)


def test_resuming_inside_a_comprehension_instruments_its_cleanup_handler(monkeypatch, caplog):
    """Where a break cannot rewind to the comprehension's start (forced here), the code
    resumes inside it, with an exception route to its cleanup handler; a loop variable
    the comprehension saved while unbound is a NULL there, and the resume functions
    instrument (3.13 logged a traceback: a negative stack depth) and compile."""
    import dynamo_lite.frames.translate.convert as convert

    monkeypatch.setattr(convert, "loop_entry", lambda *args: None)
    dl.reset()
    with caplog.at_level("WARNING", logger="dynamo_lite"):
        assert_transparent(_nested_with_an_unbound_saved_variable, lambda c: (t(c), [t(c), t(c) * 3]), "eager")
    assert not [r for r in caplog.records if r.name == "dynamo_lite"], caplog.text
    assert not dl.stats().fallbacks, dl.stats()
