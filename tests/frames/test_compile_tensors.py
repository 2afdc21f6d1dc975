"""Compiling tensor programs: one graph per zoo workload, caching, guards, recompiles."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from benchmarks.models import WORKLOADS
from dynamo_lite import nn
from dynamo_lite.frames.translate.debug import LINE_LIMIT, bytecode_diff
from tests.helpers import assert_equal_values, assert_same, run_in_threads


def _workload(name):
    w = WORKLOADS[name]
    return w, w.make(), w.make_inputs()


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_zoo_workload_compiles_to_one_graph_and_matches_eager(name, backend):
    w, model, inputs = _workload(name)
    expected = model(*inputs)
    report = dl.explain(model)(*inputs)
    assert report.graph_count == 1, str(report)
    assert report.graph_break_count == 0, str(report)
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    actual = compiled(*inputs)
    assert_equal_values(actual, expected, rtol=w.rtol, atol=w.atol)
    before = dl.stats()
    compiled(*inputs)
    after = dl.stats()
    assert after.cache_hits == before.cache_hits + 1
    assert after.frames_compiled == before.frames_compiled == 1
    assert after.recompiles == 0


def _mlp(x):
    return (x @ x.t()).relu().sum(dim=1)


def test_recompiles_on_dtype_change_with_worded_reason(backend):
    compiled = dl.compile(_mlp, backend=backend)
    compiled(dl.randn(4, 3))
    compiled(dl.randn(4, 3, dtype=dl.float64))
    stats = dl.stats()
    assert stats.recompiles == 1
    assert "x.dtype: expected float32, got float64" in str(stats.guard_failures[-1])


def test_recompiles_on_shape_change_with_worded_reason(backend):
    compiled = dl.compile(_mlp, backend=backend)
    compiled(dl.randn(64, 3))
    compiled(dl.randn(32, 3))
    assert "x.shape[0]: expected 64, got 32" in str(dl.stats().guard_failures[-1])


def test_recompiles_on_stride_layout_change(backend):
    def f(x):
        return x.relu() * 2

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(2, 3, 4, 5)
    compiled(x)
    y = x.contiguous(memory_format=dl.channels_last)
    out = compiled(y)
    assert dl.stats().recompiles == 1
    assert "stride" in str(dl.stats().guard_failures[-1])
    assert_equal_values(out, f(y))
    assert out.stride() == f(y).stride()


def test_recompiles_on_constant_argument_change(backend):
    def f(x, scale):
        return x * scale

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(3)
    assert_equal_values(compiled(x, 2.0), f(x, 2.0))
    assert_equal_values(compiled(x, 3.0), f(x, 3.0))
    assert "scale: expected 2.0, got 3.0" in str(dl.stats().guard_failures[-1])


def test_recompiles_when_a_layer_is_replaced(backend):
    dl.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(2, 4)
    compiled(x)
    model[0] = nn.Linear(4, 4)
    assert_equal_values(compiled(x), model(x))
    assert dl.stats().recompiles == 1


def test_parameter_updates_in_place_are_seen_without_recompiling(backend):
    dl.manual_seed(0)
    model = nn.Linear(3, 2)
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(5, 3)
    compiled(x)
    with dl.no_grad():  # in place on a parameter that requires grad, as optimizers do
        model.weight.mul_(2.0)
    assert_equal_values(compiled(x), model(x))
    assert dl.stats().recompiles == 0


def test_user_shape_error_raises_the_eager_exception(backend):
    def f(a, b):
        return a @ b

    assert_same(f, dl.randn(2, 3), dl.randn(4, 5), backend=backend, expect_breaks=1, expect_graphs=False)


def test_tensor_and_python_values_returned_in_containers(backend):
    def f(x, n):
        y = x + 1
        return {"y": y, "shape": x.shape, "n": n * 2, "pair": (y, y.sum())}, [x]

    x = dl.randn(3, 2)
    out = dl.compile(f, backend=backend)(x, 4)
    assert out[1][0] is x  # an input returned is the very same object
    assert out[0]["y"] is out[0]["pair"][0]
    assert_equal_values(out, f(x, 4))


def test_inplace_op_on_input_updates_it_and_its_views(backend):
    def f(x):
        x.add_(1)
        return x * 2

    base = dl.zeros(4)
    view = base[1:3]
    expected_base = dl.zeros(4)
    f(expected_base)
    out = dl.compile(f, backend=backend)(base)
    assert_equal_values(base, expected_base)
    assert_equal_values(out, expected_base * 2)
    np.testing.assert_allclose(np.asarray(view), [1.0, 1.0])


def test_control_flow_on_shapes_and_isinstance_is_static(backend):
    def f(x, flag=True):
        if x.shape[0] > 2 and isinstance(x, dl.Tensor):
            x = x * 2
        for i in range(x.ndim):
            x = x + i
        return x.relu() if flag else x

    assert_same(f, dl.randn(3, 2), backend=backend)
    assert_same(f, dl.randn(1, 2), backend=backend)


def test_data_dependent_branch_falls_back_to_eager(backend):
    def f(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    x = dl.ones(3)
    assert_same(f, x, backend=backend, expect_breaks=1)
    assert_same(f, -x, backend=backend)


def test_compiled_function_from_several_threads(backend):
    def f(x):
        return (x * 2 + 1).sum(dim=0)

    compiled = dl.compile(f, backend=backend)
    inputs = [dl.randn(8, 4) for _ in range(8)]
    expected = [f(x) for x in inputs]
    results = run_in_threads(compiled, [(x,) for x in inputs], repeats=20)
    for actual, exp in zip(results, expected):
        assert_equal_values(actual, exp)
    assert dl.stats().frames_compiled == 1


def test_debug_mode_prints_bytecode_diff_graph_and_guards(capsys, backend):
    def f(x):
        return (x + 1).relu()

    dl.compile(f, backend=backend, debug=True)(dl.randn(3))
    err = capsys.readouterr().err
    assert "bytecode diff" in err and "LOAD_CONST" in err
    assert "relu" in err
    assert "x: Tensor dtype=float32" in err


def test_debug_bytecode_diff_cuts_a_huge_constant():
    """A transformed frame can load a module's globals dict as a constant (rebuilding a nested
    function at a break): the diff shows its start, not thousands of characters."""
    source = "table = " + repr({f"key{i}": i for i in range(300)})
    original, transformed = compile(source, "<huge>", "exec"), compile(source + "\nextra = 1", "<huge>", "exec")
    lines = bytecode_diff(original, transformed).splitlines()
    assert any("LOAD_CONST" in line and "key0" in line for line in lines)
    assert max(map(len, lines)) <= LINE_LIMIT


def test_explain_reports_reason_file_and_line():
    def f(x):
        y = x * 2
        if y.item() > 0:  # a branch on a tensor's value
            y = y + 1
        return y

    report = dl.explain(f)(dl.ones(1))
    assert report.graph_break_count >= 1
    reason = report.break_reasons[0]
    assert reason.filename == __file__
    assert "item" in reason.source_line
    assert "Graph break count" in str(report)


def test_namedtuple_results_are_built_inside_the_graph(backend):
    import collections

    Output = collections.namedtuple("Output", ["logits", "loss"], defaults=[None])

    def f(x):
        out = Output(x * 2)
        return Output(out.logits.relu(), loss=out.logits.sum())

    x = dl.randn(3)
    result = dl.compile(f, backend=backend, fullgraph=True)(x)
    assert type(result) is Output
    assert_equal_values(result, f(x))


def test_function_returning_none_after_inplace_work_is_compiled():
    def f(x):
        x.mul_(2)
        return None

    x, expected = dl.ones(3), dl.ones(3)
    f(expected)
    assert dl.compile(f, backend="eager", fullgraph=True)(x) is None
    assert_equal_values(x, expected)
    assert dl.stats().fallbacks == ()


def test_an_eager_fallback_is_guarded_and_other_inputs_still_compile():
    def f(x):
        return (x @ x).relu()

    compiled = dl.compile(f, backend="eager", fullgraph=True)
    bad = dl.randn(2, 3)
    with pytest.raises(RuntimeError) as compiled_error:  # the user's error, not dl.Unsupported
        compiled(bad)
    with pytest.raises(RuntimeError) as eager_error:
        f(bad)
    assert str(compiled_error.value) == str(eager_error.value)
    good = dl.randn(3, 3)
    assert_equal_values(compiled(good), f(good))
    stats = dl.stats()
    assert stats.frames_compiled == 1 and len(stats.fallbacks) == 1
    assert "x.shape[0]: expected 2, got 3" in str(stats.guard_failures[-1])
