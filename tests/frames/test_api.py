"""dl.compile / dl.reset / dl.disable / dl.stats / dl.config, on a hook with a fake translator."""
import logging
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from dynamo_lite import config
from dynamo_lite.backends import AUTO, InvalidBackend, lookup_backend
from dynamo_lite.frames import api
from dynamo_lite.frames.runtime.cache import CacheEntry, fallback_entry
from dynamo_lite.frames.runtime.hook import FrameHook
from dynamo_lite.nn.module import Module
from dynamo_lite.nn.parameter import Parameter
from dynamo_lite.tensor.tensor import from_array

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FakeTranslator:
    """Entries guard on argument types; run returns ("compiled", values)."""

    def __init__(self):
        self.requests = []

    def __call__(self, request):
        self.requests.append(request)
        kinds = tuple(type(v) for v in request.values)
        return CacheEntry(
            guard=lambda values: tuple(type(v) for v in values) == kinds,
            run=lambda *values: ("compiled", values),
            describe_failure=lambda values: "type changed",
            config=request.config,
        )


@pytest.fixture
def translator(monkeypatch):
    translator = FakeTranslator()
    hook = FrameHook(translate=translator)
    monkeypatch.setattr(api, "default_hook", hook)
    yield translator
    hook.reset()


def double(x):
    return ("eager", x)


# ---------------------------------------------------------------------- the forms of dl.compile
def test_compile_a_function(translator):
    compiled = api.compile(double)
    assert compiled.__wrapped__ is double and compiled.__name__ == "double"
    assert compiled(3) == ("compiled", (3,))
    assert compiled(4) == ("compiled", (4,))
    assert len(translator.requests) == 1
    assert double(3) == ("eager", 3)  # the original, called directly, runs eagerly
    assert len(translator.requests) == 1


def test_compile_as_decorator_with_and_without_options(translator):
    @api.compile
    def plain(x):
        return x

    @api.compile(backend="eager", fullgraph=True, dynamic=False, debug=True)
    def configured(x):
        return x

    assert plain(1) == ("compiled", (1,))
    assert configured(1) == ("compiled", (1,))
    first, second = (r.config for r in translator.requests)
    assert first.backend is AUTO and first.backend_name == "auto"
    assert second.backend is lookup_backend("eager") and second.backend_name == "eager"
    assert (second.fullgraph, second.dynamic, second.debug) == (True, False, True)


def test_compile_with_a_callable_backend(translator):
    def my_backend(gm, example_inputs):
        return gm.forward

    compiled = api.compile(double, backend=my_backend)
    compiled(1)
    assert translator.requests[0].config.backend is my_backend
    assert translator.requests[0].config.backend_name == "my_backend"


def test_unknown_backend_fails_at_compile_time():
    with pytest.raises(InvalidBackend, match="Invalid backend: 'nope'.*eager"):
        api.compile(double, backend="nope")
    with pytest.raises(TypeError, match="backend must be"):
        api.compile(double, backend=3)


def test_compile_rejects_non_callables():
    with pytest.raises(TypeError, match="dl.compile expects"):
        api.compile(42)


def test_compile_a_bound_method(translator):
    class Scaler:
        def scale(self, x):
            return ("eager", x)

    obj = Scaler()
    compiled = api.compile(obj.scale)
    assert compiled(2) == ("compiled", (obj, 2))
    assert translator.requests[0].names == ("self", "x")


def test_compile_a_callable_object(translator):
    class Callable:
        def __call__(self, x):
            return ("eager", x)

    obj = Callable()
    assert api.compile(obj)(2) == ("compiled", (obj, 2))


def test_generator_functions_are_returned_unchanged(translator):
    def counting(n):
        yield from range(n)

    assert api.compile(counting) is counting
    assert list(counting(3)) == [0, 1, 2]
    assert translator.requests == []


def test_recursive_compiled_function(translator):
    translator_calls = []

    def fallback(request):
        translator_calls.append(request.values)
        return _eager_entry(request)

    api.default_hook._translate = fallback

    @api.compile
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)

    assert fact(6) == 720
    [(n, fact_cell)] = translator_calls  # the free variable `fact` is the compiled wrapper
    assert n == 6 and fact_cell is fact
    assert api.stats().cache_hits == 5


def _eager_entry(request):
    return fallback_entry(request.config, "eager test")


def test_nested_compiled_functions_use_the_innermost_config(translator):
    inner = api.compile(double, backend="eager")

    @api.compile
    def outer(x):
        return inner(x)

    api.default_hook._translate = lambda request: (translator.requests.append(request), _eager_entry(request))[1]
    assert outer(1) == ("eager", 1)
    assert [r.config.backend_name for r in translator.requests] == ["auto", "eager"]


def test_threads_call_one_compiled_function(translator):
    compiled = api.compile(double)
    results = []

    def worker():
        results.append([compiled(i) for i in range(100)])

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [[("compiled", (i,)) for i in range(100)]] * 4
    assert len(translator.requests) == 1


# ---------------------------------------------------------------------- modules
class Affine(Module):
    def __init__(self):
        super().__init__()
        self.weight = Parameter(from_array(np.ones(3, dtype=np.float32)))
        self.note = "hello"

    def forward(self, x):
        return ("eager", x)

    def describe(self):
        return f"Affine {self.note}"


def test_compile_a_module_returns_a_sharing_wrapper(translator):
    model = Affine()
    compiled = api.compile(model)
    assert isinstance(compiled, Module) and compiled._orig_mod is model
    assert compiled.weight is model.weight
    assert [n for n, _ in compiled.named_parameters()] == ["weight"]
    assert list(compiled.state_dict()) == list(model.state_dict())
    assert compiled.describe() == "Affine hello"  # the subclass's own methods are reached
    compiled.note = "changed"
    assert model.note == "changed"
    assert compiled.train(False) is compiled and model.training is False
    assert compiled(5) == ("compiled", (model, 5))
    assert compiled.forward(6) == ("compiled", (model, 6))
    assert translator.requests[0].names == ("self", "x")
    assert model(7) == ("eager", 7)  # the original module, called directly, is eager
    assert "CompiledModule(" in repr(compiled)


def test_compiled_module_receives_the_original_forward_code(translator):
    model = Affine()
    original = Affine.forward.__code__
    api.compile(model)(1)
    assert translator.requests[0].code is original


# ---------------------------------------------------------------------- reset, disable, stats
def test_reset_restores_code_and_recompiles_on_next_call(translator):
    original = double.__code__
    compiled = api.compile(double)
    compiled(1)
    assert double.__code__ is not original
    api.reset()
    assert double.__code__ is original
    assert api.stats().cache_misses == 0
    assert compiled(1) == ("compiled", (1,))
    assert len(translator.requests) == 2


def test_disable_as_decorator(translator):
    @api.disable
    def helper(x):
        return ("eager helper", x)

    assert api.is_disabled(helper) and api.is_disabled(helper.__wrapped__.__code__)
    compiled = api.compile(helper)
    assert compiled(1) == ("eager helper", 1)
    assert translator.requests == []


def test_disable_is_recursive_by_default(translator):
    callee = api.compile(double)  # instrumented; would compile under an active config

    def uses_callee(x):
        return double(x)

    api.default_hook.instrument(double)
    disabled = api.disable(uses_callee)
    outer = api.compile(lambda x: disabled(x))
    api.default_hook._translate = lambda request: (translator.requests.append(request), _eager_entry(request))[1]
    assert outer(1) == ("eager", 1)
    assert len(translator.requests) == 1  # only the lambda; double ran with the hook off
    assert callee(2) == ("eager", 2)


def test_disable_non_recursive_returns_the_function(translator):
    def helper(x):
        return x

    assert api.disable(helper, recursive=False) is helper
    assert api.is_disabled(helper)


def test_disable_a_module_marks_its_forward(translator):
    model = Affine()
    assert api.disable(model) is model
    assert api.is_disabled(Affine.forward)


def test_stats_counters_and_reset(translator):
    compiled = api.compile(double)
    compiled(1)
    compiled(2)
    compiled(1.0)
    s = api.stats()
    assert (s.frames_compiled, s.cache_hits, s.cache_misses, s.recompiles) == (2, 1, 2, 1)
    assert [g.reason for g in s.guard_failures] == ["type changed"]
    api.stats.reset()
    assert api.stats().cache_hits == 0
    compiled(1)
    assert api.stats().cache_hits == 1  # the caches survived the counter reset


# ---------------------------------------------------------------------- config and logging
@pytest.fixture
def restore_logs():
    saved = config.logs
    yield
    config.set_logs(saved)


def test_config_knobs():
    assert config.cache_size_limit == 8
    with pytest.raises(AttributeError, match="no option 'cache_limit'"):
        config.cache_limit = 3
    with pytest.raises(ValueError, match="non-negative int"):
        config.cache_size_limit = -1


def test_cache_size_limit_is_read_from_config(translator, monkeypatch):
    monkeypatch.setattr(config, "cache_size_limit", 1)
    compiled = api.compile(double)
    compiled(1)
    assert compiled(1.0) == ("eager", 1.0)
    assert len(translator.requests) == 1


def test_set_logs_switches_component_loggers(restore_logs):
    config.set_logs("recompiles,guards")
    assert config.logs == {"recompiles", "guards"}
    assert logging.getLogger("dynamo_lite.recompiles").isEnabledFor(logging.DEBUG)
    assert not logging.getLogger("dynamo_lite.graph").isEnabledFor(logging.DEBUG)
    config.logs = "all"
    assert logging.getLogger("dynamo_lite.graph").isEnabledFor(logging.DEBUG)
    config.set_logs("")
    assert not logging.getLogger("dynamo_lite.guards").isEnabledFor(logging.INFO)
    with pytest.raises(ValueError, match="unknown dynamo_lite log component.*recompiles"):
        config.set_logs("recompile")


def test_logs_env_var_is_read_at_import():
    code = (
        "import logging, dynamo_lite.config as c; "
        "print(sorted(c.logs), logging.getLogger('dynamo_lite.graph_breaks').level)"
    )
    env = dict(os.environ, DYNAMO_LITE_LOGS="graph_breaks,bytecode")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['bytecode', 'graph_breaks'] 10"


def test_compiling_a_compiled_function_replaces_its_options(translator):
    once = api.compile(double)
    twice = api.compile(once, backend="eager")
    assert twice.__wrapped__ is double
    assert not api.default_hook.instrument(once)  # the wrapper itself never gets a prologue
    assert twice(1) == ("compiled", (1,))
    assert translator.requests[0].config.backend_name == "eager"
    model = Affine()
    assert api.compile(api.compile(model))._orig_mod is model


def test_compile_a_partial(translator):
    import functools

    def scale(factor, x):
        return ("eager", factor * x)

    assert api.compile(functools.partial(scale, 3))(2) == ("compiled", (3, 2))
