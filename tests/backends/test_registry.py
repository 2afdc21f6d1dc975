"""Backend registry: registration forms, lookup errors, device/priority resolution of "auto", eager."""
import operator
import types

import numpy as np
import pytest

from dynamo_lite.backends import eager, registry
from dynamo_lite.backends.registry import (
    AUTO, InvalidBackend, backend_spec, best_backend, input_device_types, list_backends, lookup_backend,
    register_backend, resolve_backend, unregister_backend,
)


@pytest.fixture(autouse=True)
def restore_registry():
    saved = dict(registry._BACKENDS)
    yield
    registry._BACKENDS.clear()
    registry._BACKENDS.update(saved)


def fake_input(device_type):
    return types.SimpleNamespace(device=types.SimpleNamespace(type=device_type))


def test_eager_is_registered_for_every_device():
    assert "eager" in list_backends()
    assert lookup_backend("eager") is eager.eager
    spec = backend_spec("eager")
    assert spec.devices == {"cpu", "cuda"} and spec.priority == 0


def test_eager_returns_the_graph_modules_forward():
    gm = types.SimpleNamespace(forward=lambda x: x + 1)
    assert eager.eager(gm, [1])(1) == 2


def test_eager_runs_a_real_graph_module():
    from dynamo_lite.graph import Graph, GraphModule

    graph = Graph()
    x, y = graph.placeholder("x"), graph.placeholder("y")
    graph.output(graph.call_function(operator.mul, (graph.call_function(operator.add, (x, y)), y)))
    compiled = lookup_backend("eager")(GraphModule(None, graph), [2, 3])
    assert compiled(2, 3) == 15
    a, b = np.arange(3.0), np.full(3, 2.0)
    np.testing.assert_array_equal(compiled(a, b), (a + b) * b)


def test_register_as_decorator_by_name():
    @register_backend("mine", devices=("cpu",))
    def mine(gm, example_inputs):
        return gm.forward

    assert lookup_backend("mine") is mine
    assert list_backends() == sorted(list_backends())
    assert "mine" in list_backends("cpu") and "mine" not in list_backends("cuda")


def test_register_bare_decorator_and_direct_call():
    @register_backend
    def bare(gm, example_inputs):
        return gm.forward

    def direct(gm, example_inputs):
        return gm.forward

    assert register_backend("direct_one", direct) is direct
    assert lookup_backend("bare") is bare and lookup_backend("direct_one") is direct


def test_duplicate_registration_needs_override():
    with pytest.raises(ValueError, match="'eager' is already registered"):
        register_backend("eager", lambda gm, ex: gm.forward)

    def replacement(gm, example_inputs):
        return gm.forward

    register_backend("eager", replacement, override=True, priority=0)
    assert lookup_backend("eager") is replacement


def test_reserved_and_invalid_registrations():
    with pytest.raises(ValueError, match="'auto' is reserved"):
        register_backend("auto", lambda gm, ex: gm.forward)
    with pytest.raises(TypeError, match="must be callable"):
        register_backend("number", 3)


def test_unknown_backend_names_the_available_ones():
    with pytest.raises(InvalidBackend, match=r"Invalid backend: 'nope', see dl.list_backends\(\).*eager"):
        lookup_backend("nope")
    with pytest.raises(InvalidBackend):
        backend_spec("nope")


def test_unregister():
    register_backend("temp", lambda gm, ex: gm.forward)
    unregister_backend("temp")
    assert "temp" not in list_backends()


def test_auto_prefers_the_highest_priority_backend_for_the_device():
    assert best_backend({"cpu"}) == "numpy"  # the CPU default
    register_backend("fast_cpu", lambda gm, ex: "fast cpu", devices=("cpu",), priority=100)
    register_backend("fast_gpu", lambda gm, ex: "fast gpu", devices=("cuda",), priority=100)
    register_backend("unranked", lambda gm, ex: "unranked", devices=("cpu", "cuda"))  # never automatic
    assert best_backend({"cpu"}) == "fast_cpu"
    assert best_backend({"cuda"}) == "fast_gpu"
    assert best_backend({"cpu", "cuda"}) == "eager"  # the only ranked one that runs both
    assert best_backend(set()) == "fast_cpu"  # no tensors: cpu
    assert AUTO(None, [fake_input("cuda"), 3]) == "fast gpu"
    assert AUTO(None, [1.0]) == "fast cpu"
    assert AUTO.choose([fake_input("cpu")]) == "fast_cpu"


def test_auto_ties_go_to_the_earlier_registration():
    register_backend("second", lambda gm, ex: "second", priority=backend_spec("numpy").priority)
    assert best_backend({"cpu"}) == "numpy"


def test_auto_without_a_backend_for_the_device():
    unregister_backend("eager")
    unregister_backend("numpy")
    with pytest.raises(InvalidBackend, match="found no backend supporting devices \\['cpu'\\]"):
        best_backend({"cpu"})


def test_input_device_types():
    assert input_device_types([fake_input("cuda"), fake_input("cpu"), 2]) == {"cpu", "cuda"}
    assert input_device_types([]) == {"cpu"}


def test_resolve_backend_forms():
    assert resolve_backend("auto") == (AUTO, "auto")
    assert resolve_backend("eager") == (eager.eager, "eager")

    def custom(gm, example_inputs):
        return gm.forward

    assert resolve_backend(custom) == (custom, "custom")
    with pytest.raises(TypeError, match="registered name or a callable"):
        resolve_backend(None)
    with pytest.raises(InvalidBackend):
        resolve_backend("nope")
