"""Backends the machine cannot run: not listed, and the error docs/backends.md promises for inputs they do not serve."""
from __future__ import annotations

import importlib.util

import pytest

import dynamo_lite as dl
from dynamo_lite.backends import InvalidBackend, backend_spec, list_backends, register_backend
from dynamo_lite.backends.registry import unregister_backend

HAS_CUPY = importlib.util.find_spec("cupy") is not None


def test_cupy_is_listed_only_where_cupy_is_installed():
    assert ("cupy" in list_backends()) == HAS_CUPY
    assert ("cupy" in list_backends("cuda")) == HAS_CUPY
    assert backend_spec("cupy").requires == "cupy"  # still registered: asking for it by name says what is missing


def test_a_backend_needing_a_missing_module_is_not_listed():
    register_backend("needs_missing", lambda gm, inputs: gm.forward, requires="no_such_module_for_dl_tests")
    try:
        assert "needs_missing" not in list_backends()
        register_backend("needs_numpy", lambda gm, inputs: gm.forward, requires="numpy")
        assert "needs_numpy" in list_backends()
    finally:
        unregister_backend("needs_missing")
        unregister_backend("needs_numpy")


def test_the_cupy_backend_given_cpu_inputs_raises_runtime_error_naming_both_devices():
    def f(x):
        return x + 1

    compiled = dl.compile(f, backend="cupy")
    before = dl.stats()
    with pytest.raises(RuntimeError, match=r"backend 'cupy' compiles graphs whose tensors are on cuda, but an "
                                           r"input is on cpu; move inputs with \.to\('cuda'\)") as info:
        compiled(dl.ones(2))
    assert isinstance(info.value, InvalidBackend)
    assert not dl.stats().fallbacks[len(before.fallbacks):]  # raised to the caller, not an eager fallback
