"""Compiled forward/backward graphs keep eager autograd's semantics: guards, unused outputs,
buffers, dropout masks, retain_graph, double backward, in-place fallbacks, the recompute rule."""
from __future__ import annotations

import logging

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite import nn
from dynamo_lite.frames.aot import partition as partition_module
from dynamo_lite.nn import functional as F


def _mlp():
    dl.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.GELU(approximate="tanh"), nn.Linear(8, 3))


def _grad_fn_name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def test_toggling_requires_grad_on_a_parameter_recompiles(backend):
    model, reference = _mlp(), _mlp()
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(5, 4)
    compiled(x).sum().backward()
    assert dl.stats().frames_compiled == 1
    model[0].weight.requires_grad_(False)
    reference[0].weight.requires_grad_(False)
    out = compiled(x)
    assert dl.stats().frames_compiled == 2  # a new translation, not the graph differentiating weight
    assert _grad_fn_name(out) == "CompiledFunctionBackward"
    model.zero_grad()
    out.sum().backward()
    reference(x).sum().backward()
    assert model[0].weight.grad is None and reference[0].weight.grad is None
    np.testing.assert_allclose(model[0].bias.grad.numpy(), reference[0].bias.grad.numpy(), rtol=1e-6)
    model.requires_grad_(False)
    with dl.no_grad():
        pass
    out = compiled(x)
    assert dl.stats().frames_compiled == 3 and not out.requires_grad


def test_requires_grad_of_an_input_is_guarded(backend):
    w = dl.randn(3, requires_grad=True)

    def f(x):
        return (x * w).tanh()

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(3)
    compiled(x).sum().backward()
    x.requires_grad_()
    out = compiled(x)
    out.sum().backward()
    expected = 1 - f(x.detach()).detach() ** 2
    np.testing.assert_allclose(x.grad.numpy(), (expected * w.detach()).numpy(), rtol=1e-6)
    assert dl.stats().frames_compiled == 2


def test_no_grad_and_grad_translations_are_never_shared(backend):
    model = _mlp()
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(2, 4)
    with dl.no_grad():
        assert not compiled(x).requires_grad
    assert _grad_fn_name(compiled(x)) == "CompiledFunctionBackward"
    with dl.no_grad():
        assert not compiled(x).requires_grad
    assert dl.stats().frames_compiled == 2


def test_an_output_without_gradient_gets_a_zero_tangent(backend):
    dl.manual_seed(0)
    w = dl.randn(4, 4, requires_grad=True)

    def f(x):
        h = x @ w
        return h.tanh(), h.sigmoid(), h.argmax(dim=1), h.detach() * 2

    compiled = dl.compile(f, backend=backend)
    x = dl.randn(3, 4)
    a, b, index, detached = compiled(x)
    assert not index.requires_grad and not detached.requires_grad
    b.sum().backward()  # a's gradient is never given
    got = w.grad.numpy().copy()
    w.grad = None
    f(x)[1].sum().backward()
    np.testing.assert_allclose(got, w.grad.numpy(), rtol=1e-6)
    assert dl.stats().graph_count == 1 and not dl.stats().fallbacks


def test_batchnorm_running_stats_and_gradients_equal_eager(backend):
    def make():
        dl.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))

    eager, model = make(), make()
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(6, 3)
    for _ in range(3):
        eager(x).pow(2).sum().backward()
        out = compiled(x)
        assert _grad_fn_name(out) == "CompiledFunctionBackward"
        out.pow(2).sum().backward()
    for (name, a), (_, b) in zip(eager.state_dict().items(), model.state_dict().items()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7, err_msg=name)
    for (name, a), (_, b) in zip(eager.named_parameters(), model.named_parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)


def test_dropout_backward_uses_the_forward_mask(backend):
    w = dl.ones(64, 32, requires_grad=True)

    def f(x):
        return F.dropout(x * w, p=0.5, training=True)

    compiled = dl.compile(f, backend=backend)
    x = dl.ones(64, 32)
    out = compiled(x)
    assert _grad_fn_name(out) == "CompiledFunctionBackward"
    out.sum().backward()
    kept = out.detach().numpy() != 0
    assert 0.3 < kept.mean() < 0.7
    np.testing.assert_array_equal(w.grad.numpy(), np.where(kept, 2.0, 0.0))


def test_retain_graph_and_a_second_backward(backend):
    model = _mlp()
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(2, 4)
    loss = compiled(x).pow(2).sum()
    loss.backward(retain_graph=True)
    first = model[0].weight.grad.numpy().copy()
    loss.backward()
    np.testing.assert_allclose(model[0].weight.grad.numpy(), 2 * first, rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_double_backward_runs_the_graph_again_op_by_op(backend):
    w = dl.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def f(x):
        return (x * w).tanh().sum()

    x = dl.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g_compiled,) = dl.autograd.grad(dl.compile(f, backend=backend)(x), x, create_graph=True)
    (gg_compiled,) = dl.autograd.grad(g_compiled.sum(), w)
    (g_eager,) = dl.autograd.grad(f(x), x, create_graph=True)
    (gg_eager,) = dl.autograd.grad(g_eager.sum(), w)
    np.testing.assert_allclose(g_compiled.detach().numpy(), g_eager.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(gg_compiled.numpy(), gg_eager.numpy(), rtol=1e-6)


def test_double_backward_through_dropout_raises(backend):
    w = dl.ones(8, requires_grad=True)
    out = dl.compile(lambda x: F.dropout(x * w, 0.5).sum(), backend=backend)(dl.ones(8))
    with pytest.raises(RuntimeError, match="double backward"):
        dl.autograd.grad(out, w, create_graph=True)


def test_a_saved_input_modified_in_place_raises_at_backward(backend):
    w = dl.randn(3, 3, requires_grad=True)

    def f(x):
        return (x @ w).sum()

    x = dl.randn(2, 3)
    out = dl.compile(f, backend=backend)(x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
    eager_out = f(x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):  # as eager raises
        eager_out.backward()


def test_an_in_place_op_on_an_intermediate_is_compiled_out_of_place(backend):
    def make():
        dl.manual_seed(0)
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(inplace=True), nn.Linear(8, 3))

    eager, model = make(), make()
    x = dl.randn(5, 4)
    eager(x).pow(2).sum().backward()
    out = dl.compile(model, backend=backend)(x)
    assert _grad_fn_name(out) == "CompiledFunctionBackward"
    out.pow(2).sum().backward()
    for (name, a), (_, b) in zip(eager.named_parameters(), model.named_parameters()):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-6, atol=1e-7, err_msg=name)


def test_an_in_place_op_on_a_view_runs_op_by_op(backend, caplog):
    w = dl.randn(3, 4, requires_grad=True)

    def f(x):
        h = x * w
        h[0].mul_(2)
        return h * 3

    x = dl.randn(3, 4)
    with caplog.at_level(logging.INFO, logger="dynamo_lite"):
        out = dl.compile(f, backend=backend)(x)
    assert "in-place op mul_" in caplog.text
    assert _grad_fn_name(out) == _grad_fn_name(f(x)) == "MulBackward0"  # recorded op by op, as eager
    out.sum().backward()
    expected = 3 * x.numpy()
    expected[0] *= 2
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6)


def test_an_in_place_op_on_a_value_an_earlier_op_saved_raises_like_eager(backend):
    w = dl.randn(4, requires_grad=True)

    def f(x):
        h = x * w
        y = h * h  # saves h
        h.relu_()
        return y + h

    x = dl.randn(4)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        f(x).sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        dl.compile(f, backend=backend)(x).sum().backward()


def test_an_in_place_op_on_a_saved_result_raises_like_eager(backend):
    # relu saves its result; changing it in place afterwards makes eager's backward raise
    w = dl.randn(4, requires_grad=True)

    def f(x):
        y = (x * w).relu()
        y.add_(1)
        return y

    x = dl.randn(4)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as expected:
        f(x).sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as got:
        dl.compile(f, backend=backend)(x).sum().backward()
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("select", [lambda h: h.max(dim=1).values, lambda h: h.min(1)[0],
                                    lambda h: h.sort(dim=1).values[:, :2], lambda h: h.topk(2, dim=1).values],
                         ids=["max_dim", "min_dim", "sort", "topk"])
def test_ops_whose_formula_reads_their_indices_have_a_compiled_backward(backend, select):
    # their formulas read the int64 indices output (no gradient of its own) through ``result``
    dl.manual_seed(0)
    w = dl.randn(4, 6, requires_grad=True)
    x = dl.randn(3, 4)

    def f(x):
        return (select(x @ w) * 2).sum()

    f(x).backward()
    expected, w.grad = w.grad.numpy().copy(), None
    out = dl.compile(f, backend=backend)(x)
    assert _grad_fn_name(out) == "CompiledFunctionBackward"
    out.backward()
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-6, atol=1e-6)


def test_pointwise_values_are_recomputed_not_saved(monkeypatch):
    """NOTE: [recompute rule]: the MLP's backward saves the input, weights and the first
    linear's output; GELU's intermediates are recomputed."""
    kept = []
    original = partition_module.partition

    def spy(joint):
        result = original(joint)
        kept.append(result)
        return result

    monkeypatch.setattr("dynamo_lite.frames.aot.compile_joint.partition", spy)
    dl.compile(_mlp(), backend="eager")(dl.randn(2, 4))
    (result,) = kept
    kinds = sorted(kind for kind, _ in result.saved)
    assert kinds == ["attribute", "input", "output"]
    (saved_intermediate,) = [n for n in result.backward.nodes if n.op == "placeholder" and "linear" in n.name]
    assert result.recomputed == 1  # gelu(linear), which the second linear's weight gradient reads
    assert "gelu" in [getattr(n.target, "name", None) for n in result.backward.nodes]


def test_an_output_that_is_a_view_of_an_input_runs_op_by_op(backend):
    def f(x):
        return x[0], x * 2

    x = dl.randn(3, 4, requires_grad=True)
    view, doubled = dl.compile(f, backend=backend)(x)
    expected_view, _ = f(x)
    assert _grad_fn_name(view) == _grad_fn_name(expected_view) != "CompiledFunctionBackward"
    (view.sum() + doubled.sum()).backward()
    expected = np.full((3, 4), 2.0)
    expected[0] += 1
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def _outputs_viewing_each_other(x, w):
    h = (x @ w) * 2 + 1
    return h, h.view(-1), h.t(), h[0]


# what the caller does with the four outputs before backward: (a, b, c, d) -> loss
VIEW_USES = {
    "read_all": lambda a, b, c, d: (a * a).sum() + (b * 3).sum() + (c * c).sum() + d.sum(),
    "write_a_view": lambda a, b, c, d: (b.mul_(2), (a * a).sum() + d.sum())[1],
    "write_the_base": lambda a, b, c, d: (a.add_(1), (b * b).sum() + (c * d[0]).sum())[1],
    "write_a_row": lambda a, b, c, d: (d.mul_(3), (c * c).sum())[1],
}


@pytest.mark.parametrize("use", list(VIEW_USES))
def test_outputs_that_view_each_other_equal_eager(backend, use):
    """A graph returning ``h`` and views of it: the views' ``_base`` is the returned ``h`` (one
    storage, one version counter), in-place writes through any of them reach the others and
    rewrite autograd history as in eager, and the gradients are eager's."""
    dl.manual_seed(0)
    w0, x = dl.randn(3, 4), dl.randn(2, 3)
    compiled = dl.compile(_outputs_viewing_each_other, backend=backend)
    results = []
    for fn in (_outputs_viewing_each_other, compiled):
        w = w0.clone().requires_grad_()
        a, b, c, d = fn(x, w)
        if fn is compiled:
            assert type(a.grad_fn).__name__ == "CompiledFunctionBackward"
        relations = [v._base is a for v in (b, c, d)] + [b.data_ptr() == a.data_ptr()]
        loss = VIEW_USES[use](a, b, c, d)
        versions = [t._version for t in (a, b, c, d)]
        loss.backward()
        results.append((relations, versions, loss.item(), a.detach().numpy().copy(), w.grad.numpy().copy()))
    (e_rel, e_ver, e_loss, e_a, e_grad), (c_rel, c_ver, c_loss, c_a, c_grad) = results
    assert c_rel == e_rel == [True] * 4
    assert c_ver == e_ver
    np.testing.assert_allclose(c_loss, e_loss, rtol=1e-6)
    np.testing.assert_allclose(c_a, e_a, rtol=1e-6)
    np.testing.assert_allclose(c_grad, e_grad, rtol=1e-6)
    assert dl.stats().graph_count == 1 and not dl.stats().fallbacks


def test_an_in_place_update_under_no_grad_keeps_the_parameter_differentiable(backend):
    def f(x, w):
        with dl.no_grad():
            w.mul_(0.5)
        return (x * w).sum()

    x = dl.randn(4)
    w_eager, w_compiled = dl.ones(4, requires_grad=True), dl.ones(4, requires_grad=True)
    f(x, w_eager).backward()
    dl.compile(f, backend=backend)(x, w_compiled).backward()
    np.testing.assert_array_equal(w_compiled.detach().numpy(), w_eager.detach().numpy())
    np.testing.assert_allclose(w_compiled.grad.numpy(), w_eager.grad.numpy(), rtol=1e-6)


def test_parameter_requires_grad_guards_sit_under_the_module_version_tag():
    """An unchanged model costs one tag comparison, not one requires_grad check per parameter."""
    report = dl.explain(_mlp())(dl.randn(2, 4))
    fast_path, _, full_check = report.frames[0].report.guard_code.partition("def __dl_full")
    assert "input._requires_grad is False" in fast_path
    assert "_requires_grad is True" not in fast_path and full_check.count("_requires_grad is True") == 4
