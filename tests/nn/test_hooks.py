"""Module forward hooks: torch's calling convention eagerly, and compiled code that honours them."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_equal_values


class Pair(dl.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = dl.nn.Linear(3, 3)
        self.second = dl.nn.Linear(3, 3)

    def forward(self, x, scale=1.0):
        return self.second(self.first(x)) * scale


def _model():
    dl.manual_seed(0)
    return Pair()


# -- eager semantics ----------------------------------------------------------------------
def test_pre_hook_replaces_args_and_hook_replaces_output():
    model = _model()
    x = dl.randn(2, 3)
    expected = model.second(model.first(x * 2)) + 1
    model.register_forward_pre_hook(lambda module, args: args[0] * 2)  # a non-tuple is wrapped
    model.register_forward_hook(lambda module, args, output: output + 1)
    np.testing.assert_allclose(model(x).detach().numpy(), expected.detach().numpy(), rtol=1e-6)


def test_hooks_with_kwargs_see_and_replace_kwargs():
    model = _model()
    calls = []

    def pre(module, args, kwargs):
        calls.append(("pre", sorted(kwargs)))
        return args, {"scale": 3.0}

    def post(module, args, kwargs, output):
        calls.append(("post", kwargs["scale"]))

    model.register_forward_pre_hook(pre, with_kwargs=True)
    model.register_forward_hook(post, with_kwargs=True)
    x = dl.randn(2, 3)
    out = model(x, scale=2.0)
    assert calls == [("pre", ["scale"]), ("post", 3.0)]
    np.testing.assert_allclose(out.detach().numpy(), (model.forward(x) * 3.0).detach().numpy(), rtol=1e-6)


def test_prepend_order_and_removable_handles():
    model = _model()
    order = []
    first = model.register_forward_hook(lambda m, a, o: order.append("first"))
    model.register_forward_hook(lambda m, a, o: order.append("second"))
    with model.register_forward_hook(lambda m, a, o: order.append("prepended"), prepend=True):
        model(dl.randn(1, 3))
    first.remove()
    first.remove()  # removing twice is harmless, as in torch
    model(dl.randn(1, 3))
    assert order == ["prepended", "first", "second", "second"]
    assert len({first.id, model.register_forward_hook(print).id}) == 2


def test_bad_hooks_raise_like_torch():
    model = _model()
    with pytest.raises(TypeError, match="hook must be callable"):
        model.register_forward_hook(3)
    model.register_forward_pre_hook(lambda m, a, k: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, new_kwargs\)"):
        model(dl.randn(1, 3))


# -- compiled -----------------------------------------------------------------------------
def test_hooks_present_at_compile_time_are_traced_into_the_graph(backend):
    model = _model()
    model.first.register_forward_hook(lambda m, a, o: o.relu())
    model.second.register_forward_pre_hook(lambda m, a, k: ((a[0] * 0.5,), k), with_kwargs=True)
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    x = dl.randn(4, 3)
    for _ in range(2):
        assert_equal_values(compiled(x), model(x))
    stats = dl.stats()
    assert stats.graph_count == 1 and stats.frames_compiled == 1 and stats.cache_hits == 1


def test_adding_and_removing_hooks_after_compiling_recompiles(backend):
    model = _model()
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    x = dl.randn(4, 3)
    plain = model(x)
    assert_equal_values(compiled(x), plain)
    handle = model.first.register_forward_hook(lambda m, a, o: o * 10)
    hooked = model(x)
    assert not np.allclose(hooked.detach().numpy(), plain.detach().numpy())
    assert_equal_values(compiled(x), hooked)
    stats = dl.stats()
    assert stats.recompiles == 1 and stats.cache_hits == 0 and not stats.fallbacks
    assert "self.first._forward_hooks.keys()" in stats.guard_failures[0].reason
    handle.remove()
    assert_equal_values(compiled(x), plain)  # the first translation (no hooks) applies again
    assert dl.stats().cache_hits == 1 and dl.stats().recompiles == 1


def test_hook_side_effects_replay_in_compiled_code(backend):
    model = _model()
    shapes = []
    model.second.register_forward_hook(lambda m, a, o: shapes.append(tuple(o.shape)))
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    compiled(dl.randn(2, 3))
    compiled(dl.randn(2, 3))
    assert shapes == [(2, 3), (2, 3)]
    assert dl.stats().graph_count == 1 and dl.stats().cache_hits == 1


def test_printing_hook_breaks_the_graph_and_prints_the_same(backend, capsys):
    model = _model()
    model.first.register_forward_pre_hook(lambda m, a: print("calling", m.in_features))
    x = dl.randn(2, 3)
    expected = model(x)
    assert capsys.readouterr().out == "calling 3\n"
    assert_equal_values(dl.compile(model, backend=backend)(x), expected)
    assert capsys.readouterr().out == "calling 3\n"
    assert dl.stats().graph_count == 2 and not dl.stats().fallbacks


def test_untraceable_hook_breaks_the_graph_and_stays_correct(backend):
    model = _model()
    values = []
    model.first.register_forward_hook(lambda m, a, o: values.append(float(o.sum().item())))
    compiled = dl.compile(model, backend=backend)
    x = dl.randn(2, 3)
    assert_equal_values(compiled(x), model.second(model.first.forward(x)))
    assert len(values) == 1 and values[0] == pytest.approx(float(model.first.forward(x).sum().item()), rel=1e-5)
    stats = dl.stats()
    # The graph breaks at the hook's host read (item()); the hook's own frame compiles
    # around it (the bound list.append it holds is rebuilt after the break).
    assert stats.graph_count >= 2
    assert not stats.fallbacks


def test_top_level_hooks_of_a_compiled_module_run(backend):
    model = _model()
    model.register_forward_hook(lambda m, a, o: o - 1)
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    x = dl.randn(2, 3)
    assert_equal_values(compiled(x), model(x))
    assert dl.stats().frames_compiled == 1


def test_registering_and_removing_hooks_retags_the_module_and_its_parents():
    model = _model()
    before = (model._version_tag, model.first._version_tag)
    handle = model.first.register_forward_hook(lambda m, a, o: None)
    registered = (model._version_tag, model.first._version_tag)
    assert registered[0] != before[0] and registered[1] != before[1]
    handle.remove()
    assert model._version_tag != registered[0] and model.first._version_tag != registered[1]
