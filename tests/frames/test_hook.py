"""The dispatch prologue: what it passes for every argument kind, eager fallback, reset, threads, reentrancy."""
import asyncio
import dis
import inspect
import sys
import threading
import time
import traceback

import pytest

from dynamo_lite.frames.bytecode import compat
from dynamo_lite.frames.runtime.cache import CacheEntry, cache_of, fallback_entry, original_code
from dynamo_lite.frames.runtime.context import UNBOUND, CompileConfig
from dynamo_lite.frames.runtime.hook import SENTINEL, FrameHook, argument_names

CONFIG = CompileConfig(backend=lambda gm, example_inputs: gm.forward, backend_name="fake")


class FakeTranslator:
    """Records requests; entries guard on the argument types and run ``result(*values)``."""

    def __init__(self, result=lambda *values: ("compiled", values), eager=False):
        self.requests = []
        self.runs = 0
        self.result = result
        self.eager = eager

    def __call__(self, request):
        self.requests.append(request)
        if self.eager:
            return fallback_entry(request.config, "fake eager")
        kinds = tuple(type(v) for v in request.values)

        def run(*values):
            self.runs += 1
            return self.result(*values)

        return CacheEntry(
            guard=lambda values: tuple(type(v) for v in values) == kinds,
            run=run,
            describe_failure=lambda values: None,
            config=request.config,
        )


@pytest.fixture
def translator():
    return FakeTranslator()


@pytest.fixture
def hook(translator):
    hook = FrameHook(translate=translator)
    yield hook
    hook.reset()


def active(hook, fn, *args, **kwargs):
    """Call ``fn`` with CONFIG active on ``hook`` (what dl.compile's wrapper does)."""
    with hook.activate(CONFIG):
        return fn(*args, **kwargs)


# ---------------------------------------------------------------------- argument kinds
def positional(a, b):
    return a + b


def with_defaults(a, b=10, c=20):
    return a + b + c


def keyword_only(a, *, k, m=3):
    return a + k + m


def star_args(a, *rest):
    return a + sum(rest)


def star_kwargs(a, **options):
    return a + sum(options.values())


def everything(a, /, b, c=2, *rest, k, m=4, **options):
    return a + b + c + sum(rest) + k + m + sum(options.values())


ARGUMENT_CASES = [
    (positional, (1, 2), {}, ("a", "b"), (1, 2)),
    (with_defaults, (1,), {"c": 5}, ("a", "b", "c"), (1, 10, 5)),
    (keyword_only, (1,), {"k": 2}, ("a", "k", "m"), (1, 2, 3)),
    (star_args, (1, 2, 3), {}, ("a", "rest"), (1, (2, 3))),
    (star_kwargs, (1,), {"x": 2}, ("a", "options"), (1, {"x": 2})),
    # frame order: positional, keyword-only, then *args and **kwargs
    (everything, (1, 2, 3, 4), {"k": 5, "z": 6}, ("a", "b", "c", "k", "m", "rest", "options"),
     (1, 2, 3, 5, 4, (4,), {"z": 6})),
]


@pytest.mark.parametrize("fn, args, kwargs, names, values", ARGUMENT_CASES, ids=lambda c: getattr(c, "__name__", None))
def test_prologue_passes_every_argument_kind(hook, translator, fn, args, kwargs, names, values):
    expected_eager = fn(*args, **kwargs)
    original = fn.__code__
    signature = inspect.signature(fn)
    try:
        assert hook.instrument(fn)
        assert inspect.signature(fn) == signature
        assert fn.__code__.co_flags == original.co_flags
        assert fn.__code__.co_varnames[: len(names)] == original.co_varnames[: len(names)]
        assert fn(*args, **kwargs) == expected_eager  # no config active: the original body
        assert translator.requests == []
        assert active(hook, fn, *args, **kwargs) == ("compiled", values)
        request = translator.requests[0]
        assert request.names == names
        assert request.values == values
        assert request.code is original
        assert request.f_globals is globals()
        assert request.config is CONFIG and request.hook is hook
    finally:
        hook.reset()
    assert fn.__code__ is original


def test_argument_names_follow_frame_order():
    assert argument_names(everything.__code__) == ("a", "b", "c", "k", "m", "rest", "options")
    assert argument_names((lambda: 0).__code__) == ()


def make_cell_argument():
    def uses_cell(x, y):
        def inner():
            return x * 10
        return inner() + y
    return uses_cell


def make_closure(z):
    def closure(x):
        return x + z
    return closure


def test_cell_arguments_pass_their_contents(hook, translator):
    fn = make_cell_argument()
    assert "x" in fn.__code__.co_cellvars
    hook.instrument(fn)
    assert fn(2, 3) == 23
    assert active(hook, fn, 2, 3) == ("compiled", (2, 3))
    assert translator.requests[0].names == ("x", "y")


def test_cell_argument_body_still_sees_the_cell_on_fallback():
    hook = FrameHook(translate=FakeTranslator(eager=True))
    fn = make_cell_argument()
    hook.instrument(fn)
    assert active(hook, fn, 2, 3) == 23
    hook.reset()


def test_free_variables_pass_cell_contents_then_the_cells(hook, translator):
    fn = make_closure(100)
    hook.instrument(fn)
    kind, values = active(hook, fn, 1)
    assert (kind, values[:2]) == ("compiled", (1, 100))
    assert values[2] is fn.__closure__[0]  # the translation runs with the cells too
    assert translator.requests[0].names == ("x", "z")
    assert translator.requests[0].cells == fn.__closure__
    other = make_closure(7)  # same code, another closure: shares the instrumented code
    hook.instrument(other)
    assert other.__code__ is fn.__code__
    kind, values = active(hook, other, 1)
    assert values[:2] == (1, 7) and values[2] is other.__closure__[0]


def test_unbound_free_variable_reaches_the_translator_as_unbound(hook, translator):
    def outer():
        def reads_later():
            return later
        hook.instrument(reads_later)
        first = active(hook, reads_later)
        later = 5
        return first, active(hook, reads_later)

    (kind, values), (_, bound_values) = outer()
    assert values[0] is UNBOUND and bound_values[0] == 5
    assert repr(UNBOUND) == "<unbound cell>"
    assert len(translator.requests) == 2  # (the fake guards on types: UNBOUND's differs)


def test_unbound_free_variable_raises_like_eager():
    import dynamo_lite as dl

    def outer():
        def reads_later(x):
            return x + later
        compiled = dl.compile(reads_later, backend="eager")
        with pytest.raises(NameError, match="later"):
            compiled(dl.ones(2))
        later = 5
        return compiled(dl.ones(2))

    assert outer().tolist() == [6.0, 6.0]


# ---------------------------------------------------------------------- the returned value
def test_compiled_none_is_returned_not_the_body(hook):
    hook._translate = FakeTranslator(result=lambda *values: None)

    def body(x):
        return "eager"

    hook.instrument(body)
    assert active(hook, body, 1) is None


def test_sentinel_is_not_a_possible_user_value(hook):
    assert repr(SENTINEL) == "<dynamo_lite: run the original body>"
    assert cache_of(positional.__code__) is None


# ---------------------------------------------------------------------- methods, recursion
class Counter:
    def __init__(self, start):
        self.start = start

    def add(self, x):
        return self.start + x


class Base:
    def value(self):
        return 1


class Derived(Base):
    def value(self):
        return super().value() + 1


def test_bound_method_instruments_the_function_behind_it(hook, translator):
    counter = Counter(5)
    assert hook.instrument(counter.add)
    assert cache_of(Counter.add.__code__) is not None
    assert counter.add(1) == 6
    assert active(hook, counter.add, 1) == ("compiled", (counter, 1))
    assert translator.requests[0].names == ("self", "x")


def test_zero_argument_super_survives_instrumentation():
    hook = FrameHook(translate=FakeTranslator(eager=True))
    hook.instrument(Derived.value)
    assert "__class__" in Derived.value.__code__.co_freevars
    assert Derived().value() == 2
    assert active(hook, Derived().value) == 2
    hook.reset()


def factorial(n):
    return 1 if n <= 1 else n * factorial(n - 1)


def test_recursion_dispatches_every_level(hook):
    seen = []

    def translate(request):
        seen.append(request.values)
        return fallback_entry(request.config, "recursion test")

    hook._translate = translate
    hook.instrument(factorial)
    assert active(hook, factorial, 5) == 120
    assert seen == [(5,)]  # one fallback entry serves every level
    assert hook.stats.cache_hits == 4


# ---------------------------------------------------------------------- control flow and tracebacks
def loops_from_the_first_line(n):
    while True:
        n -= 1
        if n < 3:
            return n


def catches(x):
    try:
        return 10 // x
    except ZeroDivisionError:
        return -1
    finally:
        pass


def raises_deep(x):
    values = [1, 2]
    return values[x]


@pytest.mark.parametrize("fn, arg", [(loops_from_the_first_line, 10), (catches, 0), (catches, 2)])
def test_bodies_behave_the_same_after_instrumentation(fn, arg):
    expected = fn(arg)
    hook = FrameHook(translate=FakeTranslator(eager=True))
    hook.instrument(fn)
    try:
        assert fn(arg) == expected
        assert active(hook, fn, arg) == expected
    finally:
        hook.reset()


def _traceback_of(call):
    try:
        call()
    except IndexError:
        return [(f.name, f.lineno, f.line) for f in traceback.extract_tb(sys.exc_info()[2])][1:]
    raise AssertionError("no IndexError")


@pytest.mark.parametrize("activate", [False, True], ids=["inactive", "fallback"])
def test_exceptions_keep_the_original_traceback(activate):
    expected = _traceback_of(lambda: raises_deep(5))
    hook = FrameHook(translate=FakeTranslator(eager=True))
    hook.instrument(raises_deep)
    try:
        call = (lambda: active(hook, raises_deep, 5)) if activate else (lambda: raises_deep(5))
        got = _traceback_of(call)
    finally:
        hook.reset()
    assert got[-1] == expected[-1] == ("raises_deep", raises_deep.__code__.co_firstlineno + 2, "return values[x]")


def test_line_numbers_and_positions_of_the_body_are_unchanged(hook):
    before = [(i.opname, i.positions) for i in dis.get_instructions(raises_deep)]
    hook.instrument(raises_deep)
    after = [(i.opname, i.positions) for i in dis.get_instructions(raises_deep)]
    assert before[0][0] == "RESUME"
    assert after[-(len(before) - 1):] == before[1:]  # the body follows the prologue unchanged
    assert raises_deep.__code__.co_qualname == "raises_deep"


# ---------------------------------------------------------------------- generators stay eager
def gen(n):
    yield from range(n)


async def coro():
    return 1


async def agen():
    yield 1


@pytest.mark.parametrize("fn", [gen, coro, agen])
def test_generators_and_coroutines_are_never_instrumented(hook, translator, fn):
    original = fn.__code__
    assert not hook.instrument(fn)
    assert fn.__code__ is original
    assert hook.instrument_code(original) is None


def test_generator_called_under_a_config_runs_eagerly(hook, translator):
    hook.instrument(gen)
    assert active(hook, lambda: list(gen(3))) == [0, 1, 2]
    assert asyncio.run(coro()) == 1
    assert translator.requests == []


# ---------------------------------------------------------------------- instrumentation bookkeeping
def plain(x):
    return x + 1


def test_reset_restores_code_and_drops_caches(hook, translator):
    original = plain.__code__
    hook.instrument(plain)
    instrumented = plain.__code__
    assert instrumented is not original
    assert original_code(instrumented) is original
    assert hook.original_code(instrumented) is original
    active(hook, plain, 1)
    assert hook.cache_for(plain).entries
    hook.reset()
    assert plain.__code__ is original
    assert hook.cache_for(plain) is None
    assert cache_of(instrumented).entries == ()
    assert hook.stats.cache_misses == 0


def test_instrument_is_idempotent_and_shares_code(hook):
    assert hook.instrument(plain)
    code = plain.__code__
    assert hook.instrument(plain)
    assert plain.__code__ is code
    assert hook.instrument_code(code) is code
    assert hook.instrument_code(original_code(code)) is code


def test_reset_callbacks_run(hook):
    calls = []
    hook.add_reset_callback(lambda: calls.append(1))
    hook.reset()
    assert calls == [1]


def test_non_functions_are_not_instrumented(hook):
    assert not hook.instrument(len)
    assert not hook.instrument(42)


def test_disabled_functions_are_not_instrumented(hook):
    def skipped(x):
        return x

    hook.disable(skipped)
    assert hook.is_disabled(skipped) and hook.is_disabled(skipped.__code__)
    assert not hook.instrument(skipped)
    assert not hook.is_disabled(plain)


def test_disable_restores_an_instrumented_function(hook):
    def later_disabled(x):
        return x

    original = later_disabled.__code__
    hook.instrument(later_disabled)
    hook.disable(later_disabled)
    assert later_disabled.__code__ is original


def test_prologue_uses_the_version_tables():
    code = FrameHook(FakeTranslator()).instrument_code(plain.__code__)
    names = {i.opname for i in dis.get_instructions(code)}
    assert compat.POP_JUMP_IF_NONE in names and compat.POP_JUMP_IF_TRUE in names
    assert ("PRECALL" in names) == compat.CALL_CONVENTION.precall


# ---------------------------------------------------------------------- threads and reentrancy
def test_several_threads_share_one_compiled_function(hook, translator):
    slow = FakeTranslator(result=lambda x, y: x + y)

    def translate(request):
        time.sleep(0.05)  # widen the window in which other threads miss too
        return slow(request)

    hook._translate = translate

    def add(x, y):
        return -1  # the eager body: never the answer when compiled

    hook.instrument(add)
    results, errors = {}, []

    def worker(i):
        try:
            with hook.activate(CONFIG):
                results[i] = [add(i, j) for j in range(50)]
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {i: [i + j for j in range(50)] for i in range(8)}
    assert len(slow.requests) == 1  # compiled once, under the lock
    assert slow.runs == 400


def test_the_hook_is_per_thread(hook, translator):
    hook.instrument(plain)
    seen = []
    with hook.activate(CONFIG):
        thread = threading.Thread(target=lambda: seen.append(plain(1)))
        thread.start()
        thread.join()
    assert seen == [2]  # the other thread had no config active
    assert translator.requests == []


def test_calls_during_translation_run_eagerly(hook):
    inner_results = []

    def translate(request):
        inner_results.append(plain(41))  # instrumented, but the hook is off now
        with hook.activate(CONFIG):  # even an explicit activation is ignored while suspended
            inner_results.append(plain(1))
        return FakeTranslator()(request)

    hook._translate = translate
    hook.instrument(plain)
    assert active(hook, plain, 0) == ("compiled", (0,))
    assert inner_results == [42, 2]
    assert hook.state.config is None and hook.state.suspended == 0
    assert hook.stats.cache_misses == 1
