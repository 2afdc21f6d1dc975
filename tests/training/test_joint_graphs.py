"""Compiled forward + compiled backward graphs for the model zoo equal eager training.

NOTE: [joint graph] and NOTE: [compiled function node] in dynamo_lite/frames/aot/.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from benchmarks import models as zoo
from dynamo_lite.autograd import op_node
from dynamo_lite.frames.aot import compiled_function
from tests.cupy_emulated import cupy_emulated  # noqa: F401  (fixture)

F64_RTOL = 1e-12
F32_RTOL = 1e-6
TRAINING_BATCH = 4


def _gpt_targets():
    dl.manual_seed(7)
    return dl.randint(0, zoo.GPT_VOCAB, (zoo.GPT_BATCH, zoo.GPT_BLOCK))


def _weighted_sum(out):
    """A loss reading every output: sum(out_i * w_i) with fixed random weights."""
    outs = out if isinstance(out, tuple) else (out,)
    dl.manual_seed(11)
    total = None
    for o in outs:
        term = (o * dl.randn(*o.shape, dtype=o.dtype)).sum()
        total = term if total is None else total + term
    return total


def _mse_to_target(out):
    """A bounded loss for training (a weighted sum has no minimum and diverges)."""
    outs = out if isinstance(out, tuple) else (out,)
    dl.manual_seed(11)
    total = None
    for o in outs:
        term = ((o - dl.randn(*o.shape, dtype=o.dtype)) ** 2).mean()
        total = term if total is None else total + term
    return total


def _gpt_loss(out):
    return out[1]  # (logits, loss): logits get no gradient (a zero tangent)


# name -> (make model, make inputs, loss of the model's output)
MODELS = {
    "mlp": (zoo.make_mlp, zoo.mlp_inputs, _weighted_sum),
    "lstm_cell": (zoo.make_lstm_cell, zoo.lstm_cell_inputs, _weighted_sum),
    "attention_block": (zoo.make_attention_block, zoo.attention_block_inputs, _weighted_sum),
    "small_cnn": (zoo.make_small_cnn, zoo.small_cnn_inputs, _weighted_sum),
    "gpt": (zoo.make_gpt, lambda: zoo.gpt_inputs() + (_gpt_targets(),), _gpt_loss),
}


def _build(name, dtype):
    make, make_inputs, loss = MODELS[name]
    model = make().to(dtype=dtype)
    inputs = tuple(t.to(dtype) if t.dtype.is_floating_point else t for t in make_inputs())
    return model, inputs, loss


def _grads(model):
    return {name: p.grad for name, p in model.named_parameters()}


def _assert_close_grads(actual, expected, rtol):
    assert list(actual) == list(expected)
    for name in expected:
        e, a = expected[name], actual[name]
        assert (a is None) == (e is None), name
        if e is None:
            continue
        e, a = e.numpy(), a.numpy()
        assert np.abs(e).max() > 0, f"{name}: the eager gradient is zero, the comparison proves nothing"
        scale = np.abs(e).max()
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol * scale, err_msg=name)


class Counting:
    """Counts per-op backward nodes created and CompiledFunctionBackward runs."""

    def __init__(self, monkeypatch):
        self.op_nodes = 0
        self.compiled_backward_runs = 0
        original_init = op_node.OpNode.__init__
        original_apply = compiled_function.CompiledFunctionBackward.apply

        def counting_init(node, *args, **kwargs):
            self.op_nodes += 1
            original_init(node, *args, **kwargs)

        def counting_apply(node, grads):
            self.compiled_backward_runs += 1
            return original_apply(node, grads)

        monkeypatch.setattr(op_node.OpNode, "__init__", counting_init)
        monkeypatch.setattr(compiled_function.CompiledFunctionBackward, "apply", counting_apply)


@pytest.mark.parametrize("dtype, rtol", [(dl.float32, F32_RTOL), (dl.float64, F64_RTOL)], ids=["f32", "f64"])
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_backward_gives_eager_gradients(name, dtype, rtol, backend, monkeypatch):
    eager_model, inputs, loss_of = _build(name, dtype)
    compiled_model, _, _ = _build(name, dtype)
    loss_of(eager_model(*inputs)).backward()

    counting = Counting(monkeypatch)
    compiled = dl.compile(compiled_model, backend=backend)
    out = compiled(*inputs)
    assert counting.op_nodes == 0, "the compiled forward recorded per-op backward nodes"
    first = out[0] if isinstance(out, tuple) else out
    assert first.grad_fn.name() == "CompiledFunctionBackward"
    loss_of(out).backward()
    assert counting.compiled_backward_runs == 1
    _assert_close_grads(_grads(compiled_model), _grads(eager_model), rtol)
    stats = dl.stats()
    assert stats.graph_count == 1 and stats.graph_breaks == 0 and not stats.fallbacks


@pytest.mark.parametrize("name", list(MODELS))
def test_explain_shows_one_forward_and_one_backward_graph(name):
    model, inputs, _ = _build(name, dl.float32)
    report = dl.explain(model)(*inputs)
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert len(report.backward_graphs) == 1
    text = str(report)
    assert "Backward graph 0" in text and "Graph 0" in text
    backward_inputs = [n.target for n in report.backward_graphs[0].graph.nodes if n.op == "placeholder"]
    assert any(t.startswith("tangent_") for t in backward_inputs)


@pytest.mark.parametrize("name", ["mlp", "lstm_cell", "attention_block", "small_cnn", "gpt"])
def test_adamw_training_loss_curve_matches_eager(name, backend):
    curves = []
    for compile_it in (False, True):
        model, inputs, loss_of = _build(name, dl.float32)
        loss_of = _gpt_loss if name == "gpt" else _mse_to_target
        inputs = tuple(t[:TRAINING_BATCH] for t in inputs)  # the zoo's models on a smaller batch: 100 steps each
        optimizer = dl.optim.AdamW(model.parameters(), lr=1e-3)
        run = dl.compile(model, backend=backend) if compile_it else model
        curve = []
        for _ in range(50):
            optimizer.zero_grad()
            loss = loss_of(run(*inputs))
            loss.backward()
            optimizer.step()
            curve.append(loss.item())
        curves.append(curve)
    eager, compiled = np.array(curves[0]), np.array(curves[1])
    assert eager[-1] != eager[0]  # it trained
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-5)
    assert dl.stats().graph_count == 1 and not dl.stats().fallbacks


@pytest.mark.parametrize("dtype, rtol", [(dl.float32, F32_RTOL), (dl.float64, F64_RTOL)], ids=["f32", "f64"])
@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_backward_on_the_cupy_backend(name, dtype, rtol, cupy_emulated, monkeypatch):
    """The cupy backend's generated kernels (run on the host) for both graphs, within the
    same tolerances: its sums follow eager's order where eager's error is large (a bias
    gradient summed over 1024 rows) and are near exact elsewhere (NOTE: [summation
    order] in backends/cupy/rows.py)."""
    test_compiled_backward_gives_eager_gradients(name, dtype, rtol, cupy_emulated, monkeypatch)
