"""Loops over a symbolic range compile once into a scan node (NOTE: [loops traced once])."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.graph.scan import is_scan
from tests.helpers import assert_compiled, assert_equal_values

from tests.frames.recurrent_models import LoopGRU, LoopLSTM

LENGTHS = [5, 9, 17, 33, 12, 7, 64]


def _lstm_inputs(T):
    return dl.randn(T, 3, 6), dl.randn(3, 8), dl.randn(3, 8)


def _gru_inputs(T):
    return dl.randn(2, T, 6), dl.randn(2, 10)


MODELS = {"lstm": (lambda: LoopLSTM(6, 8), _lstm_inputs), "gru": (lambda: LoopGRU(6, 10), _gru_inputs)}


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("backend", ["eager", "numpy"])
def test_sweep_of_lengths_compiles_two_frames(name, backend):
    make, inputs = MODELS[name]
    dl.manual_seed(0)
    model = make()
    compiled = dl.compile(model, backend=backend)
    before = dl.stats()
    with dl.no_grad():
        for T in LENGTHS:
            args = inputs(T)
            assert_equal_values(compiled(*args), model(*args), rtol=1e-4, atol=1e-5)
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
    assert after.graph_count - before.graph_count <= 2


@pytest.mark.parametrize("name", MODELS)
def test_one_graph_with_a_scan_serves_every_length(name):
    make, inputs = MODELS[name]
    model = make()
    counts = []
    for T in LENGTHS:
        out = dl.explain(model, dynamic=True)(*inputs(T))
        assert out.graph_count == 1 and out.graph_break_count == 0
        assert any(is_scan(n) for n in out.graphs[0].graph.nodes)
        counts.append(out.ops_per_graph)
    assert all(c == counts[0] for c in counts)


@pytest.mark.parametrize("name", MODELS)
def test_gradients_through_the_scan_equal_eager(name):
    make, inputs = MODELS[name]
    dl.manual_seed(1)
    model = make()
    compiled = dl.compile(model, backend="eager")
    before = dl.stats()
    for T in (5, 9, 13):
        args = inputs(T)
        expected = model(*args)
        loss = (expected[0] if isinstance(expected, tuple) else expected).square().sum()
        loss.backward()
        wanted = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        actual = compiled(*args)
        (actual[0] if isinstance(actual, tuple) else actual).square().sum().backward()
        for p, g in zip(model.parameters(), wanted):
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-4, atol=1e-5)
        model.zero_grad()
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2


def _branch_on_step(x, h):
    outs = []
    for t in range(x.size(0)):
        if t == 0:
            h = h * 2
        h = dl.tanh(x[t] + h)
        outs.append(h)
    return dl.stack(outs)


def _list_returned(x, h):
    outs = []
    for t in range(x.size(0)):
        h = dl.tanh(x[t] + h)
        outs.append(h)
    return outs


def _counter(x, h):
    n = 0
    for t in range(x.size(0)):
        h = dl.tanh(x[t] + h)
        n += 1
    return h, n


@pytest.mark.parametrize("fn", [_branch_on_step, _list_returned, _counter])
def test_loops_that_do_not_fit_are_unrolled_and_still_equal(fn, caplog):
    compiled = dl.compile(fn, backend="eager", dynamic=True)
    x, h = dl.randn(4, 3), dl.randn(3)
    before = dl.stats()
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.dynamic"):
        assert_equal_values(compiled(x, h), fn(x, h))
    assert_compiled(before, dl.stats())
    assert "unrolled" in caplog.text
    if fn is not _list_returned:  # that one is translated again without the scan: nothing left to list
        report = str(dl.explain(fn, dynamic=True)(x, h))
        assert "Loops unrolled (not scanned):" in report and "test_scan_loops.py" in report


def test_dynamic_log_says_the_loop_was_scanned(caplog):
    model = LoopLSTM(6, 8)
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.dynamic"):
        dl.compile(model, backend="eager", dynamic=True)(*_lstm_inputs(4))
    assert "scanned over s0 steps: 2 carries, 1 stacked outputs" in caplog.text


def test_reversed_scanned_list_and_len():
    def fn(x, h):
        outs = []
        for t in range(x.size(0)):
            h = h * 0.5 + x[t]
            outs += [h]
        return dl.stack(outs[::-1], 1), len(outs), outs[-1]

    before = dl.stats()
    compiled = dl.compile(fn, backend="eager", dynamic=True)
    for T in (3, 6):
        x, h = dl.randn(T, 4), dl.randn(4)
        assert_equal_values(compiled(x, h), fn(x, h))
    assert_compiled(before, dl.stats())
    assert dl.stats().frames_compiled - before.frames_compiled == 1


def test_symbolic_index_outside_a_loop_stays_symbolic():
    def fn(x):
        return x[x.size(0) - 1] * 2, x[:, x.size(1) // 2]

    compiled = dl.compile(fn, backend="eager", dynamic=True)
    before = dl.stats()
    for n in (3, 5, 8):
        x = dl.randn(n, n + 1)
        assert_equal_values(compiled(x), fn(x))
    assert dl.stats().frames_compiled - before.frames_compiled == 1


def test_makemore_gru_sweep_compiles_two_frames():
    from tests.frames.llama_like import MakemoreGRU

    dl.manual_seed(0)
    model = MakemoreGRU()
    compiled = dl.compile(model, backend="eager")
    before = dl.stats()
    with dl.no_grad():
        for T in [5, 9, 17, 33, 12, 7, 64, 3, 21, 40, 11, 6, 50]:
            idx = dl.randint(0, 27, (2, T))
            assert_equal_values(compiled(idx), model(idx), rtol=1e-4, atol=1e-5)
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2


@pytest.mark.parametrize("ported", [False, True], ids=["llama_like", "ported_llama"])
def test_llama_sweep_compiles_two_frames(ported, caplog):
    from tests.frames.llama_like import Llama
    from tests.models.porting import port

    dl.manual_seed(0)
    model = port("llama").build() if ported else Llama()
    compiled = dl.compile(model, backend="eager")
    before = dl.stats()
    with dl.no_grad(), caplog.at_level(logging.DEBUG, logger="dynamo_lite.dynamic"):
        for T in [5, 9, 17, 12, 7, 31, 3, 21, 11, 6, 25, 30, 14]:
            tokens = dl.randint(0, 20, (2, T))
            assert_equal_values(compiled(tokens), model(tokens), rtol=1e-4, atol=1e-5)
    after = dl.stats()
    assert_compiled(before, after)
    assert after.frames_compiled - before.frames_compiled <= 2
    assert "created s0 = tokens.size(1)" in caplog.text and "specialized" not in caplog.text


def test_dynamic_log_names_the_line_that_specialized(caplog):
    def fn(x):
        n = x.size(0)
        return x * float(n)  # float() of a size reads its value

    compiled = dl.compile(fn, backend="eager", dynamic=True)
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.dynamic"):
        compiled(dl.randn(6))
    assert "created s0 = x.size(0) (example 6)" in caplog.text
    line = fn.__code__.co_firstlineno + 2
    assert "specialized s0 == 6" in caplog.text and f"test_scan_loops.py:{line} (fn)" in caplog.text


@pytest.mark.parametrize("name", MODELS)
def test_training_has_one_forward_and_one_backward_graph_with_scans(name):
    make, inputs = MODELS[name]
    dl.manual_seed(2)
    model = make()
    shapes = []
    for T in (4, 11):
        out = dl.explain(model, dynamic=True)(*inputs(T))
        assert out.graph_count == 1 and len(out.backward_graphs) == 1 and not out.break_reasons
        forward, backward = out.graphs[0], out.backward_graphs[0]
        assert any(is_scan(n) for n in forward.graph.nodes) and any(is_scan(n) for n in backward.graph.nodes)
        shapes.append((len(forward.graph.nodes), len(backward.graph.nodes)))
    assert shapes[0] == shapes[1]


def test_compiled_backward_through_the_scan_on_numpy_equals_eager():
    dl.manual_seed(3)
    model = LoopLSTM(6, 8)
    compiled = dl.compile(model, backend="numpy")
    for T in (5, 8, 13):
        args = _lstm_inputs(T)
        model(*args)[0].sum().backward()
        wanted = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        compiled(*args)[0].sum().backward()
        for p, g in zip(model.parameters(), wanted):
            np.testing.assert_allclose(p.grad.numpy(), g.numpy(), rtol=1e-4, atol=1e-5)
        model.zero_grad()


def _reads_its_list(x, h):
    outs = []
    for t in range(x.size(0)):
        h = dl.tanh(x[t] + h) + (outs[-1] if len(outs) > 0 else 0)
        outs.append(h)
    return dl.stack(outs)


def test_a_body_reading_its_output_list_is_unrolled_and_equal(caplog):
    compiled = dl.compile(_reads_its_list, backend="eager", dynamic=True)
    before = dl.stats()
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.dynamic"):
        for T in (3, 5):
            x, h = dl.randn(T, 4), dl.randn(4)
            assert_equal_values(compiled(x, h), _reads_its_list(x, h))
    assert_compiled(before, dl.stats())
    assert "reads a list it appends to" in caplog.text


def _break_after_the_loop(x, h):
    outs = []
    for t in range(x.size(0)):
        h = dl.tanh(x[t] + h)
        outs.append(h)
    print("steps done")  # a graph break with the list still live
    return dl.stack(outs) * 2


def test_a_graph_break_after_the_loop_with_the_list_live_unrolls_it(capsys):
    compiled = dl.compile(_break_after_the_loop, backend="eager", dynamic=True)
    x, h = dl.randn(4, 3), dl.randn(3)
    before = dl.stats()
    assert_equal_values(compiled(x, h), _break_after_the_loop(x, h))
    assert_compiled(before, dl.stats(), expect_breaks=1)


@pytest.mark.parametrize("name", MODELS)
def test_numpy_backend_compiles_the_scan_body_once(name):
    from dynamo_lite.backends.numpy.scan import NumpyScanRunner

    make, inputs = MODELS[name]
    model = make()
    args = inputs(6)
    with dl.no_grad():
        out = dl.explain(model, backend="numpy", dynamic=True)(*args)
        compiled_gm = next(iter(out.compiled.values()))[0]  # the graph module the backend compiled
        scan_node = next(n for n in compiled_gm.graph.nodes if is_scan(n))
        runner = scan_node.args[0].run
        assert isinstance(runner, NumpyScanRunner) and runner.function is not None
        assert "_step" in runner.gm.code and "t" not in [n.name for n in runner.gm.graph.nodes]
        assert_equal_values(out.result, model(*args), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_numpy_backend_compiles_the_reverse_scan_body(name, monkeypatch):
    """The backward's scan body takes the length as an input it does not read: it must still be
    compiled as numpy code, not run op by op."""
    from dynamo_lite.backends.numpy.scan import NumpyScanRunner

    runners = []
    original = NumpyScanRunner.__init__

    def recording(self, *args, **kwargs):
        original(self, *args, **kwargs)
        runners.append(self)

    monkeypatch.setattr(NumpyScanRunner, "__init__", recording)
    make, inputs = MODELS[name]
    dl.manual_seed(4)
    model = make()
    compiled = dl.compile(model, backend="numpy", dynamic=True)
    args = inputs(7)
    before = dl.stats()
    out = compiled(*args)
    (out[0] if isinstance(out, tuple) else out).sum().backward()
    assert_compiled(before, dl.stats())
    ran = [r for r in runners if r.function is not None]
    assert len(ran) == 2  # the forward scan's body and the reverse scan's
    for runner in ran:
        assert "runs eagerly" not in runner.gm.backend_code, runner.gm.backend_code


def test_the_reverse_scan_reads_the_saved_hidden_product_instead_of_recomputing_it():
    dl.manual_seed(6)
    model = LoopLSTM(6, 8)
    out = dl.explain(model, dynamic=True)(*_lstm_inputs(5))
    backward = out.backward_graphs[0]
    reverse = next(n for n in backward.graph.nodes if is_scan(n)).args[0]
    products = [n for n in reverse.gm.graph.nodes if getattr(n.target, "name", None) in ("linear", "matmul", "mm")]
    assert len(products) == 1  # the carry's gradient through the hidden-to-hidden weight; the gates are read
    assert any(n.op == "placeholder" and n.name.startswith("saved_2") for n in reverse.gm.graph.nodes)
