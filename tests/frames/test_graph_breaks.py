"""Graph breaks: compile around unsupported code; side effects replayed like eager."""
from __future__ import annotations

import sys
import traceback

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from tests.helpers import assert_equal_values, assert_same

LOG: list = []
TOTAL = 0


def _no_new_compiles(compiled, *args):
    before = dl.stats().frames_compiled
    compiled(*args)
    assert dl.stats().frames_compiled == before, "the second call compiled again"


def test_print_in_the_middle_gives_two_graphs_and_one_break(capsys, backend):
    def f(x):
        y = x * 2 + 1
        print("between graphs", y.shape)
        return (y - 3).relu()

    x = dl.randn(4, 3)
    expected = f(x)
    eager_out = capsys.readouterr().out
    report = dl.explain(f)(x)
    assert capsys.readouterr().out == eager_out
    assert report.graph_count == 2
    assert report.graph_break_count == 1
    reason = report.break_reasons[0]
    assert "print" in reason.reason and "print(" in reason.source_line and reason.hint

    compiled = dl.compile(f, backend=backend)
    assert_equal_values(compiled(x), expected)
    assert capsys.readouterr().out == eager_out
    _no_new_compiles(compiled, x)
    assert capsys.readouterr().out == eager_out


def test_branch_on_tensor_value_runs_both_branches_and_compiles_each_once(backend):
    def f(x):
        y = x * 2
        if y.sum() > 0:
            z = y + 10
        else:
            z = y - 10
        return z * 3

    compiled = dl.compile(f, backend=backend)
    pos, neg = dl.ones(3), -dl.ones(3)
    for x in (pos, neg, pos, neg):
        assert_equal_values(compiled(x), f(x))
    assert dl.stats().frames_compiled == 3  # the frame and one resume function per target
    assert dl.stats().graph_count == 3


def test_while_loop_on_tensor_value(backend):
    def f(x):
        while x.sum() < 10:
            x = x * 2
        return x

    # One break per loop test on a tensor; 3.11 compiles the test twice (before the loop
    # and at its bottom), 3.12+ once at the top, which the resumed loop reaches once more.
    assert_same(f, dl.ones(2), backend=backend, expect_breaks=2 if sys.version_info < (3, 12) else 3)


@pytest.mark.parametrize("method", ["item", "tolist", "numpy"])
def test_data_access_stays_in_the_graph(method, backend):
    """The number (NOTE: [scalars read from tensors]) or array (NOTE: [NumPy arrays in the graph])
    is a graph value, rebuilt from the graph's output when the code returns it."""
    def f(x):
        y = x.sum() * 2
        value = getattr(y, method)()
        return y + 1, value

    compiled = dl.compile(f, backend=backend)
    x = dl.arange(4.0)
    out, value = compiled(x)
    expected_out, expected_value = f(x)
    assert_equal_values(out, expected_out)
    np.testing.assert_allclose(np.asarray(value), np.asarray(expected_value))
    assert type(value) is type(expected_value)
    assert dl.stats().graph_count == 1 and dl.stats().graph_breaks == 0


def test_unknown_library_call_and_disabled_function(backend):
    @dl.disable
    def opaque(t):
        LOG.append("opaque")
        return t * 5

    def f(x):
        a = x + 1
        b = opaque(a)
        c = np.float32(3.0) + float(len(LOG))
        return b - a, c

    LOG.clear()
    expected = f(dl.ones(2))
    compiled = dl.compile(f, backend=backend)
    LOG.clear()
    actual = compiled(dl.ones(2))
    assert_equal_values(actual[0], expected[0])
    assert actual[1] == expected[1] and type(actual[1]) is type(expected[1])
    assert LOG == ["opaque"]
    report = dl.explain(f)(dl.ones(2))
    assert any("dl.disable" in r.reason for r in report.break_reasons)
    assert report.graph_count >= 2


def helper_with_print(t):
    t = t * 2
    print("inside helper")
    return t + 1


def test_break_inside_an_inlined_function_compiles_the_callee(capsys, backend):
    def f(x):
        return helper_with_print(x + 1) * 3

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(3)
    expected = f(x)
    capsys.readouterr()
    assert_equal_values(compiled(x), expected)
    assert "inside helper" in capsys.readouterr().out
    assert dl.stats().graph_count >= 3  # before the call, inside helper (2 pieces), after
    _no_new_compiles(compiled, x)


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        h = self.lin(x)
        LOG.append(h.shape[0])
        print("forward ran")
        return h.relu()


def test_break_inside_module_forward(capsys, backend):
    dl.manual_seed(0)
    model = nn.Sequential(Noisy(), nn.Linear(3, 2))
    x = dl.randn(2, 3)
    LOG.clear()
    expected = model(x)
    compiled = dl.compile(model, backend=backend)
    assert_equal_values(compiled(x), expected)
    assert LOG == [2, 2]
    _no_new_compiles(compiled, x)


class Holder:
    def __init__(self):
        self.count = 0
        self.items = []


def test_side_effects_match_eager(backend):
    def f(x, items, table, holder, module):
        global TOTAL
        y = x * 2
        items.append(y)
        items.extend([1, 2])
        items.insert(0, "first")
        popped = items.pop()
        table["y"] = y
        table["n"] = len(items)
        holder.count = holder.count + 1
        holder.last = y
        module.cached = y
        TOTAL = TOTAL + 1
        return y + 1, popped

    def run(fn):
        global TOTAL
        TOTAL = 0
        items, table, holder, module = [0], {"a": 1}, Holder(), nn.Identity()
        out = fn(dl.ones(2), items, table, holder, module)
        return out, items, table, holder, module, TOTAL

    eager = run(f)
    compiled = run(dl.compile(f, backend=backend))
    assert_equal_values(compiled[0], eager[0])
    assert_equal_values(compiled[1], eager[1])
    assert_equal_values(compiled[2], eager[2])
    assert compiled[3].count == 1 and compiled[5] == eager[5] == 1
    # the tensor stored in every container is one object, the one the graph produced
    items, table, holder, module = compiled[1], compiled[2], compiled[3], compiled[4]
    assert items[2] is table["y"] is holder.last is module.cached
    assert dl.stats().fallbacks == ()


def test_side_effects_before_a_break_happen_before_the_eager_code(capsys, backend):
    def f(x, items):
        items.append("before")
        print(list(items))
        items.append("after")
        return x + 1

    items = []
    dl.compile(f, backend=backend)(dl.ones(1), items)
    assert capsys.readouterr().out.strip() == "['before']"
    assert items == ["before", "after"]


def test_inplace_on_input_and_views_with_a_break(backend):
    def f(x):
        x.mul_(2)
        print("mutated")
        x.add_(1)
        return x.sum()

    base_eager, base_compiled = dl.ones(4), dl.ones(4)
    view = base_compiled[1:]
    expected = f(base_eager)
    actual = dl.compile(f, backend=backend)(base_compiled)
    assert_equal_values(actual, expected)
    assert_equal_values(base_compiled, base_eager)
    np.testing.assert_allclose(np.asarray(view), [3.0, 3.0, 3.0])


def _break_in_no_grad_block(x):
    with dl.no_grad():
        y = x * 2
        print("in block")
        z = y + 1
    return z


BREAKS_AROUND_NO_GRAD = 2  # the print, and leaving the block inside the resume function


def test_break_inside_with_no_grad_block(capsys, backend):
    f = _break_in_no_grad_block
    with dl.no_grad():  # the block does not change the grad mode: the frame resumes inside it
        # The frame compiles around the break; leaving the block in the resume function is
        # a break of its own (the block's __exit__ runs as it is, never instrumented).
        assert_same(f, dl.ones(3), backend=backend, expect_breaks=BREAKS_AROUND_NO_GRAD)
    assert dl.stats().graph_count == 2


def test_break_inside_a_block_that_changes_the_grad_mode_resumes_inside_it(capsys, backend):
    w = dl.ones(3, requires_grad=True)
    out = dl.compile(_break_in_no_grad_block, backend=backend)(w)
    assert not out.requires_grad and out.tolist() == [3.0, 3.0, 3.0]
    assert dl.is_grad_enabled()
    # The resume function enters the block again (see NoOpExitVariable): graphs on both sides.
    assert dl.stats().graph_count == 2 and not dl.stats().fallbacks


def test_try_except_around_tensor_code_matches_eager(backend):
    def f(x):
        y = x * 2
        try:
            z = y.reshape(5)
        except RuntimeError as exc:
            return y, str(exc)
        return z, "ok"

    # reshape(5) raises inside the try: it runs at a break, its exception goes to a resume
    # function at the except clause, which compiles (str(exc) is computed when it runs:
    # no second break, and no guard on the message).
    assert_same(f, dl.ones(4), backend=backend, expect_breaks=1)
    assert_same(f, dl.ones(5), backend=backend)


def test_fullgraph_reports_the_first_break_with_location_and_hint(backend):
    def f(x):
        y = x + 1
        if y.sum() > 0:
            return y
        return -y

    with pytest.raises(dl.Unsupported) as info:
        dl.compile(f, backend=backend, fullgraph=True)(dl.ones(2))
    err = info.value
    assert err.filename == __file__ and err.lineno == f.__code__.co_firstlineno + 2
    assert "dl.where" in err.hint


def test_recompile_limit_warns_and_runs_eagerly(caplog, backend):
    def f(x, n):
        return x * n

    compiled = dl.compile(f, backend=backend, dynamic=False)  # dynamic=None: n would become symbolic
    limit = dl.config.cache_size_limit
    with caplog.at_level("WARNING", logger="dynamo_lite"):
        for n in range(limit + 3):
            assert_equal_values(compiled(dl.ones(1), n), f(dl.ones(1), n))
    text = caplog.text
    assert "cache size limit" in text and f"= {limit}" in text and "n: expected" in text and "f" in text
    assert dl.stats().frames_compiled == limit


def test_exceptions_in_compiled_and_resumed_regions_propagate_with_user_lines(backend):
    def f(x, fail_early):
        if fail_early:
            raise ValueError("early failure")
        y = x + 1
        print("resume point")
        return y @ dl.ones(7, 2)  # a shape error after the break

    compiled = dl.compile(f, backend=backend)
    for fail_early in (True, False):
        with pytest.raises(Exception) as eager_info:
            f(dl.ones(3), fail_early)
        with pytest.raises(type(eager_info.value)) as compiled_info:
            compiled(dl.ones(3), fail_early)
        assert str(compiled_info.value) == str(eager_info.value)

        def user_lines(exc):
            return [fr.lineno for fr in traceback.extract_tb(exc.__traceback__) if fr.filename == __file__]

        # the innermost line of this file in the traceback is the user's failing line
        assert user_lines(compiled_info.value)[-1] == user_lines(eager_info.value)[-1]


def test_debug_output_includes_resume_functions(capsys, backend):
    def f(x):
        y = x * 2
        print("break")
        return y + 1

    dl.compile(f, backend=backend, debug=True)(dl.ones(2))
    err = capsys.readouterr().err
    assert "resume function __resume_at_" in err
    assert err.count("---- bytecode diff ----") >= 2


def test_recursion_with_tensors(backend):
    def fact_like(x, n):
        if n == 0:
            return x
        return fact_like(x + n, n - 1)

    assert_same(fact_like, dl.ones(2), 5, backend=backend)
    # n changed since the first compile: it is symbolic, and every frame of the recursion
    # deeper than the inlining limit reuses the one entry compiled for n >= 9 (one break).
    assert_same(fact_like, dl.ones(2), 40, backend=backend, expect_breaks=1)


def test_breaks_inside_a_loop_and_methods_of_library_objects(capsys):
    def f(x):
        y = x.relu()
        for i in range(3):
            if y[i] > 0.5:  # a data-dependent branch inside a loop: the loop runs eagerly
                y = y + i
            print(i, end="")
        total = x.numpy().sum()  # a NumPy method on the array: in the graph
        return y * 2, float(total)  # float() of a NumPy scalar needs its value: a break

    x = dl.from_numpy(np.array([0.2, 0.9, -1.0, 3.0], dtype=np.float32))
    # The break in the loop counts once (not once per iteration: NOTE: [graph breaks in
    # loops]); the code after the loop compiles in a resume function of its own, up to float().
    compiled = assert_same(f, x, expect_breaks=2)
    assert capsys.readouterr().out == "012" * 4
    assert dl.stats().fallbacks == ()
    _no_new_compiles(compiled, x)


def _reads_then_prints(items):
    t = items[0] + 1  # a new graph input, created while the call is being inlined
    print("inside")
    return t


def test_a_break_undoes_the_inputs_and_nodes_of_the_failed_call(capsys):
    def f(x, items):
        y = x * 2
        z = _reads_then_prints(items)
        return y + z

    x, items = dl.ones(3), [dl.arange(3.0)]
    compiled = assert_same(f, x, items, expect_breaks=1)  # the print in the callee, counted once
    assert dl.stats().fallbacks == ()
    _no_new_compiles(compiled, x, items)


def test_graph_breaks_log_names_the_user_stack(caplog):
    def f(x):
        return _reads_then_prints([x]) * 2

    with caplog.at_level("INFO", logger="dynamo_lite.graph_breaks"):
        dl.compile(f, backend="eager")(dl.ones(2))
    records = [r.getMessage() for r in caplog.records if r.name == "dynamo_lite.graph_breaks"]
    first = next(m for m in records if "graph break in" in m and "f" in m.split(":")[0])
    assert "print() has a side effect" in first
    assert f"called from f at {__file__}" in first


def test_explain_compiles_callees_instrumented_earlier_and_leaves_stats_alone(capsys):
    def f(x):
        return helper_with_print(x + 1) * 3

    x = dl.randn(3)
    dl.compile(f, backend="eager")(x)  # the break inside instruments helper_with_print
    before = dl.stats()
    report = dl.explain(f)(x)
    assert dl.stats() == before
    assert report.graph_count == 4  # f up to the call, the helper's two halves, f after it
    assert report.graph_break_count == 1  # the print, once: f's and the helper's frames both meet it
    assert_equal_values(report.result, f(x))
