"""backend="auto" on CPU: numpy first, native built in the background once hot, the fastest kept; failures stay off native."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest

import dynamo_lite as dl
from dynamo_lite.backends.per_shape import PerShapeCompiled
from dynamo_lite.graph.passes.sizes import is_symbolic
from dynamo_lite.backends.registry import AUTO, backend_name_of
from dynamo_lite.backends.tiered import Tier, TieredFunction
from tests.backends.native_cases import needs_compiler
from tests.helpers import assert_equal_values
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def model(x, w):
    return dl.softmax((x * w).tanh(), -1).sum(-1)


def graph_of(fn, *args):
    """The one graph ``fn`` compiles to (captured through explain)."""
    graphs = dl.explain(fn)(*args).graphs
    assert len(graphs) == 1
    return graphs[0]


@pytest.fixture
def tier_at_once(monkeypatch):
    monkeypatch.setattr(AUTO, "tier_up_seconds", 0.0)


@needs_compiler
def test_auto_switches_to_native_once_built(tier_at_once, tmp_path, monkeypatch):
    monkeypatch.setenv("DYNAMO_LITE_CACHE_DIR", str(tmp_path))  # a cold cache: a real build
    x, w = dl.randn(32, 48), dl.randn(48)
    function = AUTO(graph_of(model, x, w), [x, w])
    assert isinstance(function, TieredFunction)
    assert_equal_values(function(x, w)[0], model(x, w), **TOLERANCE)  # whichever tier runs
    assert function.wait(timeout=120) and function.build_error is None
    assert "native kernel dl_row" in function.upper.source
    for _ in range(12):  # every call while measuring runs one candidate, each one right
        assert_equal_values(function(x, w)[0], model(x, w), **TOLERANCE)
    assert function.decided and set(function.choice.medians()) <= {"native", "numpy", "eager"}
    assert "native" in function.choice.medians() and function.backend_name == function.choice.winner


def test_a_cold_graph_stays_on_numpy(monkeypatch):
    monkeypatch.setattr(AUTO, "tier_up_seconds", 3600.0)
    x, w = dl.randn(4, 8), dl.randn(8)
    function = AUTO(graph_of(model, x, w), [x, w])
    for _ in range(3):
        function(x, w)
    assert function.backend_name == "numpy" and not function.wait(timeout=0)


def test_missing_compiler_stays_on_numpy_and_says_why_once(tier_at_once, monkeypatch, caplog):
    monkeypatch.setenv("CC", "/nonexistent/dynamo-lite-cc")
    x, w = dl.randn(4, 8), dl.randn(8)
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        first = AUTO(graph_of(model, x, w), [x, w])
        second = AUTO(graph_of(lambda x, w: x * w + 1, x, w), [x, w])
    for function in (first, second):
        assert function.backend_name == "numpy" and "/nonexistent/dynamo-lite-cc" in function.build_error
        assert "native" not in function.candidates
    assert_equal_values(first(x, w)[0], model(x, w), rtol=0, atol=0)
    messages = [r.getMessage() for r in caplog.records if "stays on numpy" in r.getMessage()]
    assert len(messages) == 1 and "/nonexistent/dynamo-lite-cc" in messages[0]


def test_failed_build_stays_on_numpy(caplog):
    def broken(gm, example_inputs):
        raise RuntimeError("cc: internal error")

    tier = Tier("native", broken, lambda: None)
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        function = TieredFunction(lambda x: x + 1, "numpy", tier, lambda inputs: broken(None, []), 0.0, "g")
        assert function.wait(timeout=30)
    assert function(1) == 2 and function.backend_name == "numpy" and function.decided
    assert "cc: internal error" in function.build_error and list(function.candidates) == ["numpy"]
    assert any("native build failed" in r.getMessage() for r in caplog.records)


@needs_compiler
def test_explain_names_the_backend_that_runs_each_graph(tier_at_once):
    x, w = dl.randn(8, 16), dl.randn(16)
    report = dl.explain(model, backend="auto")(x, w)
    (gm, function, name), = report.compiled.values()
    assert name == "auto" and isinstance(function, TieredFunction)
    assert function.wait(timeout=120)
    for _ in range(12):
        function(x, w)
    chosen = function.choice.winner
    assert function.decided and report.backend_of(gm) == backend_name_of(function, name) == chosen
    text = str(report)
    assert f"Graph 0 (4 ops, backend {chosen})" in text
    assert "measured: native " in text and f"-> {chosen}" in text
    numpy_report = dl.explain(model, backend="numpy")(x, w)
    assert "backend numpy" in str(numpy_report)


def test_suite_without_a_compiler_in_a_subprocess():
    # What a machine without a C compiler sees: native tests skip with the reason, auto and
    # "native" compile with numpy, everything passes.
    tests = ["tests/backends/test_native_rows.py", "tests/backends/test_native_backend.py",
             "tests/backends/test_registry.py", "tests/backends/test_native_tiering.py::test_a_cold_graph_stays_on_numpy"]
    env = dict(os.environ, CC="/nonexistent/dynamo-lite-cc", PYTHONPATH=ROOT)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *tests],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "SKIPPED" in result.stdout  # returncode 0: nothing failed
    assert "native: no C compiler found (looked for CC='/nonexistent/dynamo-lite-cc')" in result.stdout


@needs_compiler
def test_a_graph_with_symbolic_sizes_tiers_up_whole(tier_at_once):
    # The native tier takes the symbolic graph as it is (one library, specialized per
    # signature inside), not one synchronous build per shape on the caller's thread.
    made = []

    def auto(gm, example_inputs):
        made.append((is_symbolic(gm.graph), AUTO(gm, example_inputs)))
        return made[-1][1]

    auto.symbolic_shapes = True

    def f(x, w):
        return dl.softmax((x * w).reshape(x.shape[0] * 2, -1), -1) * x.shape[0]

    compiled = dl.compile(f, backend=auto, dynamic=True)
    x, w = dl.randn(6, 24), dl.randn(24)
    assert_equal_values(compiled(x, w), f(x, w), **TOLERANCE)
    (symbolic, function), = made
    assert symbolic and function.wait(timeout=120) and function.upper is not None
    assert not isinstance(function.upper, PerShapeCompiled)
    for n in (3, 17):
        x = dl.randn(n, 24)
        assert_equal_values(compiled(x, w), f(x, w), **TOLERANCE)
    assert len(made) == 1
