"""What the tracer must not inline (Cython functions, dynamo_lite's own compiler API) and breaks counted once."""
from __future__ import annotations

import contextlib
import io
import logging
import types

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same


def _frames_and_files(out) -> set:
    return {f.report.original_code.co_filename for f in out.frames if f.report.original_code is not None}


def test_numpy_cython_functions_carry_code_the_tracer_cannot_run():
    # The premise: numpy.random's functions are Cython functions whose __code__ names a .pyx line.
    assert type(np.random.default_rng).__name__ == "cython_function_or_method"
    assert np.random.rand.__func__.__code__.co_filename.endswith(".pyx")


def test_a_cython_method_is_a_quiet_graph_break(caplog):
    def f(x):
        return x * float(np.random.rand()) + 1

    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        out = dl.explain(f)(dl.ones(3))
    assert "internal compiler error" not in caplog.text
    assert out.graph_count == 1 and out.graph_break_count == 1
    assert "numpy.random.RandomState.rand" in out.break_reasons[0].reason
    assert not any("internal compiler error" in r.reason for r in out.break_reasons)


def test_a_cython_function_is_a_quiet_graph_break_and_equals_eager():
    def f(x):
        rng = np.random.default_rng(0)
        return x + float(rng.standard_normal())

    assert_same(f, dl.ones(3), expect_breaks=2)  # default_rng, then the Generator's method: each a break


def test_fullgraph_names_the_cython_call_not_a_compiler_bug():
    def f(x):
        return x * float(np.random.rand())

    with pytest.raises(dl.Unsupported, match="numpy.random.RandomState.rand") as info:
        dl.compile(f, fullgraph=True)(dl.ones(2))
    assert "bug" not in str(info.value)


class _LooksLikeAFunction:
    """A callable carrying a real code object that is not its behaviour (as a Cython function's is not)."""

    __code__ = (lambda self: 0.0).__code__

    def __call__(self, owner):
        return 2.0


def test_a_callable_with_a_borrowed_code_object_is_called_not_inlined():
    holder = types.SimpleNamespace()
    holder.scale = types.MethodType(_LooksLikeAFunction(), holder)

    def f(x):
        return x * holder.scale()

    compiled = dl.compile(f, backend="eager")
    assert compiled(dl.ones(2)).tolist() == [2.0, 2.0]  # inlining the borrowed code would give 0.0


RELU = dl.nn.ReLU()


def test_dl_compile_inside_a_compiled_function_runs_eagerly_once():
    def main(x):
        model = dl.compile(RELU)
        return model(x - 1) * 2

    out = dl.explain(main)(dl.ones(2))
    assert out.result.tolist() == [0.0, 0.0]
    api_file = dl.compile.__code__.co_filename
    assert api_file not in _frames_and_files(out)  # frames/api.py was never translated
    assert not any(r.filename == api_file for r in out.break_reasons)
    assert [r.lineno for r in out.break_reasons] == [main.__code__.co_firstlineno + 1]
    assert "compiler API" in out.break_reasons[0].reason


@pytest.mark.parametrize("call", ["explain", "disable", "reset"])
def test_the_compiler_api_is_never_traced(call):
    def helper(x):
        return x + 1

    def main(x):
        if call == "explain":
            dl.explain(helper)(x)
        elif call == "disable":
            dl.disable(helper)
        else:
            dl.reset()
        return x * 3

    out = dl.explain(main)(dl.ones(2))
    assert out.result.tolist() == [3.0, 3.0]
    frames_dir = dl.compile.__code__.co_filename.rsplit("/", 1)[0]
    assert not any(f.startswith(frames_dir) for f in _frames_and_files(out))
    # One break per call into the API: dl.explain(helper) and the runner it returns are two calls.
    assert out.graph_break_count == (2 if call == "explain" else 1)
    assert all("compiler API" in r.reason for r in out.break_reasons)


def _helper_that_prints(x):
    print("inside")
    return x + 1


def test_a_break_inside_a_callee_is_counted_once(tmp_path, capsys):
    def outer(x):
        y = x * 2
        return _helper_that_prints(y)

    out = dl.explain(outer)(dl.ones(2))
    assert out.graph_break_count == 1, [str(r) for r in out.break_reasons]
    listed = str(out).split("Graph 0")[0]
    assert listed.count("print() has a side effect") == 1, listed
    page = tmp_path / "r.html"
    out.to_html(page)
    text = page.read_text()
    assert "1 graph break(s)" in text and "Breaks in inlined callees" not in text
    assert "calls _helper_that_prints, which runs eagerly here" in text


def _middle(x):
    return _helper_that_prints(x - 1) * 3


@pytest.mark.parametrize("callee", [_helper_that_prints, _middle], ids=["callee", "callee_of_callee"])
def test_stats_count_a_break_inside_a_callee_once(callee):
    def outer(x):
        y = x * 2
        return callee(y)

    with contextlib.redirect_stdout(io.StringIO()):
        report = dl.explain(outer)(dl.ones(2))
        dl.reset()
        compiled = dl.compile(outer)
        compiled(dl.ones(2))
        compiled(dl.ones(2))
    assert report.graph_break_count == 1
    assert dl.stats().graph_breaks == report.graph_break_count, dl.stats()
