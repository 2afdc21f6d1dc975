"""``with`` over user context managers (a class with __enter__/__exit__, a
``@contextlib.contextmanager`` generator): entered and left inside the graph, the
exception path included, and correct across graph breaks in the block
(NOTE: [user context managers])."""
from __future__ import annotations

import contextlib
import itertools

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent

LOG: list = []
CLOCK = itertools.count()


def reset_state(call: int = 0) -> None:
    global CLOCK
    LOG.clear()
    CLOCK = itertools.count(100 * call)


def state():
    return list(LOG)


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


class Tracker:
    """Logs entering and leaving; suppresses the exception types it is given."""

    def __init__(self, name, suppress=()):
        self.name = name
        self.suppress = suppress

    def __enter__(self):
        LOG.append(("enter", self.name))
        return self

    def __exit__(self, exc_type, exc, tb):
        LOG.append(("exit", self.name, None if exc_type is None else exc_type.__name__,
                    None if exc is None else str(exc)))
        return exc_type is not None and issubclass(exc_type, self.suppress)


class Scaled:
    """``as`` binds what __enter__ returns: here a tensor, not the manager."""

    def __init__(self, t):
        self.t = t
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self.t * 2

    def __exit__(self, *exc):
        self.depth -= 1


class Timer:
    """Reads a clock the compiler cannot trace (a graph break inside __enter__/__exit__)."""

    def __enter__(self):
        self.start = next(CLOCK)
        return self

    def __exit__(self, *exc):
        self.elapsed = next(CLOCK) - self.start
        return False


@contextlib.contextmanager
def scope(name, suppress=()):
    LOG.append(("in", name))
    try:
        yield name.upper()
    except suppress as e:
        LOG.append(("caught", type(e).__name__))
    finally:
        LOG.append(("out", name))


def _tracker_block(x, k):
    y = x + 1
    with Tracker("a") as tr:
        y = y * k
        LOG.append(tr.name)
    return y - 1, tr


def _scaled_as_binding(x, obj):
    with obj as doubled:
        y = x + doubled
        depth = obj.depth
    return y, depth, obj.depth


def _suppressed_key_error(x, d, k):
    y = x * 2
    with Tracker("s", suppress=(KeyError,)):
        y = y + d[k]  # a missing key raises; __exit__ swallows it
        y = y * 3
    return y + 1


def _not_suppressed(x, d, k):
    y = x * 2
    with Tracker("n", suppress=(IndexError,)):
        y = y + d[k]
    return y + 1


def _nested_in_no_grad(x, w):
    with dl.no_grad():
        with Tracker("inner"):
            y = x * w
    with Tracker("outer"):
        with dl.no_grad():
            z = y * w
        z = z + x * w
    return y, z


def _contextmanager_block(x, k):
    y = x - 1
    with scope("g") as name:
        y = y * k
        LOG.append(name)
    return y


def _contextmanager_suppresses(x, d, k):
    y = x - 1
    with scope("g", suppress=(KeyError,)):
        y = y + d[k]
    return y * 2


NO_BREAK_PROGRAMS = [
    (_tracker_block, lambda c: (t(c), c + 2)),
    (_scaled_as_binding, lambda c: (t(c), Scaled(t(c, 3)))),
    (_suppressed_key_error, lambda c: (t(c), {"a": t(c)}, "a" if c == 1 else "b")),
    (_nested_in_no_grad, lambda c: (t(c), dl.ones(3, requires_grad=True))),
    (_contextmanager_block, lambda c: (t(c), c + 2)),
    (_contextmanager_suppresses, lambda c: (t(c), {"a": t(c)}, "a" if c == 1 else "b")),
]


@pytest.mark.parametrize("program, make_args", NO_BREAK_PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_a_user_context_manager_compiles_into_one_graph(program, make_args, backend):
    assert_transparent(program, make_args, backend, setup=reset_state, state=state, graphs=1, breaks=0)
    assert dl.is_grad_enabled()


def _contextmanager_not_suppressed(x, d, k):
    y = x * 2
    with scope("n", suppress=(IndexError,)):
        y = y + d[k]
    return y + 1


@pytest.mark.parametrize("program, last", [
    (_not_suppressed, ("exit", "n", "KeyError", "'b'")),
    (_contextmanager_not_suppressed, ("out", "n")),
], ids=lambda v: getattr(v, "__name__", ""))
def test_an_exception_the_manager_does_not_suppress_leaves_the_function(program, last, backend):
    assert_transparent(program, lambda c: (t(c), {"a": t(c)}, "b"), backend, setup=reset_state, state=state)
    assert LOG[-1] == last
    assert not dl.stats().fallbacks, dl.stats().fallbacks


def _print_in_the_block(x, k):
    y = x + 1
    with Tracker("p") as tr:
        y = y * k
        print("inside", tr.name, len(LOG))
        y = y + 2
    return y * 3, tr


def _print_in_the_block_made_outside(x, tr):
    y = x + 1
    with tr as same:
        print("inside", same is tr)
        y = y + 2
    return y


def _timer_block(x):
    y = x + 1
    with Timer() as timer:
        y = y * 2
    return y, timer.elapsed


def _break_in_a_contextmanager_block(x, k):
    y = x - 1
    with scope("b") as name:
        y = y * k
        print("inside", name)
        y = y + 1
    return y


def _break_then_suppressed(x, d, k):
    y = x + 1
    with Tracker("r", suppress=(KeyError,)):
        print("before")
        y = y + d[k]
        y = y * 3
    return y - 1


@dl.disable
def _opaque_raise(k):
    if k > 1:
        raise ValueError(f"k too big: {k}")
    return k


def _eager_call_raises_inside_the_block(x, k):
    y = x + 1
    with Tracker("e", suppress=(ValueError,)):
        y = y * _opaque_raise(k)
    return y - 1


def _block_in_a_callee(y):
    with Tracker("callee") as tr:
        print("in the callee", tr.name)
        return y + 1


def _calls_a_block_that_breaks(x):
    y = x * 2
    return _block_in_a_callee(y) * 3


def _break_then_not_suppressed(x, xs, k):
    y = x + 1
    with scope("u", suppress=(KeyError,)):
        print("before")
        y = y + xs[k]  # an IndexError the generator does not catch
    return y


# (program, arguments of call c, graphs, breaks): the graphs and breaks dl.explain reports
# for the frame and the resume functions, and the callee frames a break in an inlined
# __enter__/__exit__ compiles.
BREAK_PROGRAMS = [
    (_print_in_the_block, lambda c: (t(c), c + 2), 2, 1),
    (_print_in_the_block_made_outside, lambda c: (t(c), Tracker("o")), 2, 1),
    # A break in __enter__ and one in __exit__: each runs eagerly, and so do their frames (each
    # break counted once, though the block's frame and the method's own frame both meet it).
    (_timer_block, lambda c: (t(c),), 2, 2),
    # The generator cannot be rebuilt at its yield: the with statement runs eagerly, and
    # the block resumes (a print, then the exit: contextlib's __exit__ runs eagerly).
    (_break_in_a_contextmanager_block, lambda c: (t(c), c + 2), 3, 3),
    (_break_then_suppressed, lambda c: (t(c), {"a": t(c)}, "a" if c == 1 else "b"), 2, 1),
    (_eager_call_raises_inside_the_block, lambda c: (t(c), c + 1), 2, 1),
    (_calls_a_block_that_breaks, lambda c: (t(c),), 3, 1),  # the callee's print, counted once
    (_break_then_not_suppressed, lambda c: (t(c), [t(c)], c % 2), None, None),
]


@pytest.mark.parametrize("program, make_args, graphs, breaks", BREAK_PROGRAMS,
                         ids=lambda v: getattr(v, "__name__", None))
def test_a_graph_break_inside_the_block_resumes_inside_it(program, make_args, graphs, breaks, backend):
    assert_transparent(program, make_args, backend, setup=reset_state, state=state, graphs=graphs, breaks=breaks)
    # Only the exception path of a resume function may run eagerly: leaving a block by an
    # exception through an exit the compiler does not trace (contextlib's own).
    others = [record for record in dl.stats().fallbacks
              if not ("<resume@" in record.function and "inside an exception handler's cleanup" in record.reason)]
    assert not others, others
    assert dl.is_grad_enabled()


class BadEnter:
    def __enter__(self):
        LOG.append("bad")
        raise KeyError("nope")

    def __exit__(self, *exc):
        LOG.append("never")


def _two_managers_in_one_statement(x, k):
    y = x + 1
    with Tracker("a"), Tracker("b", suppress=(KeyError,)):
        y = y * k
        if k > 2:
            raise KeyError("k")
    return y


def _enter_raises(x):
    y = x + 1
    with Tracker("outer", suppress=(KeyError,)):
        with BadEnter():  # its __exit__ never runs; the outer one gets the KeyError
            y = y * 100
    return y


def _return_inside_the_block(x, k):
    with Tracker("r"):
        if k > 2:
            return x + 1
        y = x * 2
    return y


def _continue_and_break_inside_a_block_in_a_loop(x, n):
    y = x
    for i in range(n):
        with Tracker(f"l{i}"):
            if i == 1:
                continue
            if i == 3:
                break
            y = y + i
    return y


def _break_in_a_block_nested_in_a_contextmanager_block(x):
    y = x + 1
    with scope("o"):
        with Tracker("i"):
            print("mid")
            y = y - 1
    return y


@pytest.mark.parametrize("program, make_args", [
    (_two_managers_in_one_statement, lambda c: (t(c), c + 1)),
    (_enter_raises, lambda c: (t(c),)),
    (_return_inside_the_block, lambda c: (t(c), c + 1)),
    (_continue_and_break_inside_a_block_in_a_loop, lambda c: (t(c), c + 3)),
    (_break_in_a_block_nested_in_a_contextmanager_block, lambda c: (t(c),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_leaving_blocks_every_way_matches_eager(program, make_args, backend):
    assert_transparent(program, make_args, backend, setup=reset_state, state=state)
    assert not dl.stats().fallbacks, dl.stats().fallbacks
