"""Guarded per-code cache: hits, misses, recompiles, config matching, the size limit, fallbacks."""
import logging
import types

import pytest

from dynamo_lite.frames.runtime.cache import CacheEntry, CodeCache, fallback_entry
from dynamo_lite.frames.runtime.context import CompileConfig
from dynamo_lite.frames.errors import Unsupported
from dynamo_lite.frames.report import TranslationReport
from dynamo_lite.frames.runtime.hook import FrameHook
from dynamo_lite.frames.runtime.stats import CompileStats, FallbackRecord, StatsSnapshot

CONFIG_A = CompileConfig(backend=lambda gm, example_inputs: gm.forward, backend_name="a")
CONFIG_B = CompileConfig(backend=lambda gm, example_inputs: gm.forward, backend_name="b")


def type_guarded_entry(request, runs, graphs=0):
    """An entry for the argument types of ``request``: run returns the sum of the args."""
    kinds = tuple(type(v) for v in request.values)

    def describe(values):
        for name, value, kind in zip(request.names, values, kinds):
            if type(value) is not kind:
                return f"type({name}): expected {kind.__name__}, got {type(value).__name__}"
        return None

    def run(*values):
        runs.append(values)
        return sum(values)

    return CacheEntry(
        guard=lambda values: tuple(type(v) for v in values) == kinds,
        run=run,
        describe_failure=describe,
        config=request.config,
        report=TranslationReport(graphs=["g"] * graphs),
    )


class Recorder:
    def __init__(self, graphs=1):
        self.requests, self.runs, self.graphs = [], [], graphs

    def __call__(self, request):
        self.requests.append(request)
        return type_guarded_entry(request, self.runs, self.graphs)


@pytest.fixture
def recorder():
    return Recorder()


@pytest.fixture
def settings():
    return types.SimpleNamespace(cache_size_limit=8)


@pytest.fixture
def hook(recorder, settings):
    hook = FrameHook(translate=recorder, settings=settings)
    yield hook
    hook.reset()


def call(hook, fn, *args, config=CONFIG_A):
    with hook.activate(config):
        return fn(*args)


def add(x, y):
    return "eager"


def test_hit_and_miss_counting(hook, recorder):
    hook.instrument(add)
    assert call(hook, add, 1, 2) == 3
    assert call(hook, add, 3, 4) == 7
    s = hook.stats.snapshot()
    assert (s.cache_misses, s.cache_hits, s.frames_compiled, s.recompiles, s.graph_count) == (1, 1, 1, 0, 1)
    assert len(recorder.requests) == 1 and len(recorder.runs) == 2


def test_recompile_records_the_worded_guard_failure(hook, recorder, caplog):
    hook.instrument(add)
    call(hook, add, 1, 2)
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.recompiles"):
        assert call(hook, add, 1.5, 2) == 3.5
    s = hook.stats.snapshot()
    assert s.recompiles == 1 and s.cache_misses == 2 and s.frames_compiled == 2
    assert [str(r) for r in s.guard_failures] == ["add: type(x): expected int, got float"]
    assert "recompiling add" in caplog.text and "type(x): expected int, got float" in caplog.text


def test_entries_are_most_recent_first(hook):
    hook.instrument(add)
    call(hook, add, 1, 2)
    call(hook, add, 1.0, 2.0)
    cache = hook.cache_for(add)
    assert [e.guard((1.0, 2.0)) for e in cache.entries] == [True, False]
    call(hook, add, 1, 2)  # a hit on the older entry does not reorder
    assert cache.entries[1].guard((1, 2))


def test_entries_are_matched_against_the_active_config(hook, recorder):
    hook.instrument(add)
    call(hook, add, 1, 2, config=CONFIG_A)
    call(hook, add, 1, 2, config=CONFIG_B)
    assert [r.config for r in recorder.requests] == [CONFIG_A, CONFIG_B]
    assert hook.stats.recompiles == 0  # a first compile under B, not a recompile
    call(hook, add, 1, 2, config=CONFIG_A)
    call(hook, add, 1, 2, config=CONFIG_B)
    assert len(recorder.requests) == 2 and hook.stats.cache_hits == 2


def test_equal_configs_share_entries(hook, recorder):
    hook.instrument(add)
    same_as_a = CompileConfig(CONFIG_A.backend, "a")
    call(hook, add, 1, 2, config=CONFIG_A)
    call(hook, add, 1, 2, config=same_as_a)
    assert len(recorder.requests) == 1


def test_cache_size_limit_warns_and_runs_eagerly(hook, recorder, settings, caplog):
    settings.cache_size_limit = 2
    hook.instrument(add)
    call(hook, add, 1, 2)
    call(hook, add, 1.0, 2.0)
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        assert call(hook, add, "a", "b") == "eager"
    assert len(recorder.requests) == 2
    [record] = [r for r in caplog.records if r.levelno == logging.WARNING]
    message = record.getMessage()
    assert "add (" in message and __file__ in message  # names the function and where it is
    assert "cache_size_limit = 2" in message
    assert "type(x): expected float, got str" in message  # the last guard failure
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        assert call(hook, add, "c", "d") == "eager"  # eager from then on, warned once
        assert call(hook, add, 1, 2) == 3  # existing entries still serve their calls
    assert not caplog.records
    assert len(recorder.requests) == 2


def test_cache_size_limit_zero_never_translates(hook, recorder, settings):
    settings.cache_size_limit = 0
    hook.instrument(add)
    assert call(hook, add, 1, 2) == "eager"
    assert recorder.requests == []


def test_unsupported_falls_back_once_and_is_cached(hook, caplog):
    def refuse(request):
        refuse.calls += 1
        raise Unsupported("data-dependent branch", hint="use dl.where")

    refuse.calls = 0
    hook._translate = refuse
    hook.instrument(add)
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.graph_breaks"):
        assert call(hook, add, 1, 2) == "eager"
    assert call(hook, add, 1, 2) == "eager"
    assert refuse.calls == 1
    [fallback] = hook.stats.snapshot().fallbacks
    assert fallback.function == "add" and fallback.filename == __file__
    assert fallback.lineno == add.__code__.co_firstlineno
    assert "data-dependent branch" in fallback.reason and "use dl.where" in fallback.reason
    assert "data-dependent branch" in caplog.text
    assert hook.stats.cache_hits == 1


def test_unsupported_with_fullgraph_reaches_the_user_with_a_location(hook):
    hook._translate = lambda request: (_ for _ in ()).throw(Unsupported("print() in graph"))
    hook.instrument(add)
    strict = CompileConfig(CONFIG_A.backend, "a", fullgraph=True)
    with pytest.raises(Unsupported) as info:
        call(hook, add, 1, 2, config=strict)
    assert info.value.filename == __file__ and info.value.lineno == add.__code__.co_firstlineno
    assert hook.cache_for(add).entries == ()  # not cached: raises again next time
    assert hook.state.config is None and hook.state.suspended == 0


def test_internal_error_is_logged_and_falls_back(hook, caplog):
    def broken(request):
        raise KeyError("oops")

    hook._translate = broken
    hook.instrument(add)
    with caplog.at_level(logging.WARNING, logger="dynamo_lite"):
        assert call(hook, add, 1, 2) == "eager"
    assert "internal compiler error: KeyError" in caplog.text
    assert "internal compiler error" in hook.stats.snapshot().fallbacks[0].reason


def test_internal_error_with_fullgraph_becomes_unsupported(hook):
    def broken(request):
        raise ZeroDivisionError("bug")

    hook._translate = broken
    hook.instrument(add)
    strict = CompileConfig(CONFIG_A.backend, "a", fullgraph=True)
    with pytest.raises(Unsupported, match="internal compiler error: ZeroDivisionError") as info:
        call(hook, add, 1, 2, config=strict)
    assert info.value.filename == __file__
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_translator_fallback_entry_counts_as_fallback(hook):
    hook._translate = lambda request: fallback_entry(request.config, "nothing to capture")
    hook.instrument(add)
    assert call(hook, add, 1, 2) == "eager"
    s = hook.stats.snapshot()
    assert s.frames_compiled == 0 and [r.reason for r in s.fallbacks] == ["nothing to capture"]


def test_a_raising_guard_rejects_the_call(hook, recorder):
    def translate(request):
        entry = recorder(request)
        if len(recorder.requests) == 1:
            entry.guard = lambda values: 1 / 0
            entry.describe_failure = lambda values: 1 / 0
        return entry

    hook._translate = translate
    hook.instrument(add)
    call(hook, add, 1, 2)
    assert call(hook, add, 1, 2) == 3  # the second translation serves it
    [failure] = hook.stats.snapshot().guard_failures
    assert "guard check raised ZeroDivisionError" in failure.reason


# ---------------------------------------------------------------------- CodeCache and stats units
def test_code_cache_lookup_and_first_failure():
    cache = CodeCache(add.__code__, ("x", "y"), 0)
    runs = []
    request = types.SimpleNamespace(values=(1, 2), names=("x", "y"), config=CONFIG_A)
    cache.add(type_guarded_entry(request, runs))
    assert cache.lookup(CONFIG_A, (5, 6)) is cache.entries[0]
    assert cache.lookup(CONFIG_B, (5, 6)) is None
    assert cache.lookup(CONFIG_A, (5.0, 6)) is None
    assert cache.first_failure(CONFIG_A, (5, 6.0)) == "type(y): expected int, got float"
    assert cache.first_failure(CONFIG_B, (5, 6.0)) is None
    assert "add" in repr(cache) and "1 entries" in repr(cache)
    cache.clear()
    assert cache.entries == () and not cache.gave_up


def test_stats_snapshot_access():
    stats = CompileStats()
    stats.cache_hits = 3
    stats.fallbacks.append(FallbackRecord("f", "file.py", 3, "why"))
    snap = stats.snapshot()
    assert isinstance(snap, StatsSnapshot)
    assert snap["cache_hits"] == snap.cache_hits == 3
    assert snap.as_dict()["fallbacks"][0]["reason"] == "why"
    assert "cache_hits: 3" in str(snap) and "f (file.py:3): why" in str(snap)
    with pytest.raises(KeyError):
        snap["nope"]
    stats.reset()
    assert stats.snapshot() == StatsSnapshot()
