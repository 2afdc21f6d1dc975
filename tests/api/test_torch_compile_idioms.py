"""torch.compile's idioms ported code uses: compile's mode/options/disable, __version__, matmul precision,
dl.compiler, dl._dynamo."""
from __future__ import annotations

import importlib.metadata
import logging

import pytest

import dynamo_lite as dl
from dynamo_lite.frames.runtime.wrappers import CompiledModule


def relu_twice(x):
    return (x * 2).relu()


def test_compile_takes_torch_signature_by_keyword():
    compiled = dl.compile(model=relu_twice, fullgraph=True, dynamic=False, backend="eager", mode="default",
                          options=None, disable=False)
    before = dl.stats()
    assert compiled(dl.tensor([-1.0, 2.0])).tolist() == [0.0, 4.0]
    assert dl.stats().graph_count == before.graph_count + 1


@pytest.mark.parametrize("mode", ["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
def test_every_torch_mode_compiles(mode):
    compiled = dl.compile(relu_twice, mode=mode)
    before = dl.stats()
    assert compiled(dl.tensor([-1.0, 3.0])).tolist() == [0.0, 6.0]
    assert dl.stats().graph_count == before.graph_count + 1 and not dl.stats().fallbacks[len(before.fallbacks):]


def test_a_mode_without_effect_is_reported_by_explain_and_logged(caplog):
    with caplog.at_level(logging.INFO, logger="dynamo_lite"):
        model = dl.compile(dl.nn.ReLU(), mode="reduce-overhead")
    assert "mode='reduce-overhead' has no effect" in caplog.text
    text = str(dl.explain(model)(dl.ones(2)))
    assert "Compile options without effect:\n  mode='reduce-overhead' has no effect: it records CUDA graphs" in text


def test_max_autotune_builds_the_c_tier_at_once():
    config = dl.compile(relu_twice, mode="max-autotune")._dynamo_lite_config
    assert config.backend is not dl.backends.AUTO and config.backend.tier_up_seconds == 0.0
    assert config.notes == ()
    named = dl.compile(relu_twice, mode="max-autotune", backend="eager")._dynamo_lite_config
    assert named.notes == ("max-autotune has no effect with backend 'eager': it starts the C tier of backend "
                           "'auto' at the first call",)


def test_options_map_onto_knobs_and_notes():
    assert dl.compile(relu_twice, options={"trace.enabled": True})._dynamo_lite_config.debug is True
    config = dl.compile(relu_twice, options={"triton.cudagraphs": True, "max_autotune": True})._dynamo_lite_config
    assert config.backend.tier_up_seconds == 0.0
    assert config.notes == ("options['triton.cudagraphs'] has no effect: dynamo_lite has no such knob",)


def test_modes_and_options_torch_rejects_raise_its_errors():
    with pytest.raises(RuntimeError, match="Either mode or options can be specified, but both can't be specified"):
        dl.compile(relu_twice, mode="default", options={})
    with pytest.raises(RuntimeError, match="Unrecognized mode=fastest, should be one of: default, reduce-overhead"):
        dl.compile(relu_twice, mode="fastest")
    with pytest.raises(RuntimeError, match="Unexpected optimization option bogus, known options are"):
        dl.compile(relu_twice, options={"bogus": 1})


def test_disable_returns_the_function_unchanged():
    module = dl.nn.ReLU()
    assert dl.compile(relu_twice, disable=True) is relu_twice
    assert dl.compile(module, disable=True) is module
    assert dl.compile(disable=True)(relu_twice) is relu_twice


def test_compile_with_options_only_is_a_decorator():
    @dl.compile(mode="max-autotune", backend="eager")
    def f(x):
        return x + 1

    assert f(dl.ones(1)).tolist() == [2.0] and f._dynamo_lite_config.backend_name == "eager"
    assert isinstance(dl.compile(mode="default")(dl.nn.ReLU()), CompiledModule)


def test_version_comes_from_the_package_metadata():
    try:
        installed = importlib.metadata.version("dynamo_lite")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that is not installed
        installed = None
    assert dl.__version__ == (installed or "0.1.0")  # pyproject.toml's [project] version
    assert dl.__version__ == "0.1.0"


def test_version_falls_back_to_the_checkout(monkeypatch):
    from dynamo_lite import version

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert version.package_version() == "0.1.0"


def test_float32_matmul_precision_takes_torchs_values():
    assert dl.get_float32_matmul_precision() == "highest"
    try:
        for value in ("high", "medium", "highest"):
            dl.set_float32_matmul_precision(value)
            assert dl.get_float32_matmul_precision() == value
        with pytest.raises(ValueError, match="'low' is not one of 'highest', 'high', or 'medium'"):
            dl.set_float32_matmul_precision("low")
        assert dl.get_float32_matmul_precision() == "highest"
    finally:
        dl.set_float32_matmul_precision("highest")


def test_the_compiler_namespace():
    assert dl.compiler.reset is dl.reset and dl.compiler.disable is dl.disable and dl.compiler.compile is dl.compile
    assert dl.compiler.list_backends() == dl.list_backends()
    assert (dl.compiler.is_compiling(), dl.compiler.is_dynamo_compiling(), dl.compiler.is_exporting()) == (
        False, False, False)

    def f(x):
        inside = dl.compiler.is_compiling() and dl.compiler.is_dynamo_compiling() and not dl.compiler.is_exporting()
        return x + 1 if inside else x - 1

    before = dl.stats()
    assert dl.compile(f, backend="eager")(dl.ones(1)).tolist() == [2.0]
    assert dl.stats().graph_breaks == before.graph_breaks  # constants at trace time, no break


def test_dynamo_namespace_reset_explain_config():
    assert dl._dynamo.reset is dl.reset and dl._dynamo.explain is dl.explain
    assert dl._dynamo.config is dl.config
    before = dl._dynamo.config.cache_size_limit
    try:
        dl._dynamo.config.cache_size_limit = 3
        assert dl.config.cache_size_limit == 3
    finally:
        dl._dynamo.config.cache_size_limit = before
    with pytest.raises(AttributeError, match="has no option 'suppress_errorz'"):
        dl._dynamo.config.suppress_errorz = True
    out = dl._dynamo.explain(relu_twice)(dl.ones(2))
    assert out.graph_count == 1 and out.graph_break_count == 0
