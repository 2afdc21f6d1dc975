"""Graph breaks inside try blocks, with blocks and except clauses: an exception the
eager instruction raises meets the program's handlers, and the code after the break
compiles (NOTE: [breaks inside try/except])."""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.frames.differential import assert_transparent


def t(call: int, n: int = 3):
    return dl.arange(float(n)) + call


def _index_in_a_grad_mode_block_inside_try(x, xs):
    # Fuzz seed 2230: list.index compares tensors (RuntimeError, ambiguous truth value).
    y = x + 1
    try:
        with dl.no_grad():
            n = xs.index(xs[-1])
    except RuntimeError:
        n = -1
    return y * 2, n


def test_an_exception_inside_a_grad_mode_block_inside_try_is_caught(backend):
    assert_transparent(_index_in_a_grad_mode_block_inside_try, lambda c: (t(c), [t(c), t(c) + 1]), backend)
    assert dl.is_grad_enabled()  # the block's __exit__ ran
    stats = dl.stats()
    # The graph before the break, one after it (in the resume function at the except
    # clause, translated too); no frame fell back.
    assert stats.graph_count == 2 and stats.graph_breaks == 1 and not stats.fallbacks, stats


def test_the_same_with_grad_mode_already_off(backend):
    """Entering ``no_grad`` changes nothing then: the break's instruction used to run
    outside the with block and outside the try around it."""
    with dl.no_grad():
        assert_transparent(_index_in_a_grad_mode_block_inside_try, lambda c: (t(c), [t(c), t(c) + 1]), backend)
        assert not dl.is_grad_enabled()
    assert dl.is_grad_enabled()


def _raises_for_big(v, k):
    if k > 1:
        raise ValueError(f"k too big: {k}")
    return v * k


def _print_in_the_try_body(x, k):
    y = x + 1
    try:
        print("before", k)
        y = _raises_for_big(y, k)
        y = y * 3
    except ValueError as e:
        y = y - 1
    return y + 2


def _print_in_the_except_clause(x, xs, k):
    y = x * 2
    try:
        y = y + xs[k]
    except (IndexError, KeyError) as e:
        print("caught", type(e).__name__, e)
        y = y - 5
    return y * y


def _break_in_finally(x, log, k):
    y = x - 1
    try:
        y = _raises_for_big(y, k)
    finally:
        print("finally", len(log))
        log.append(1)
        y = y + 1
    return y


def _bare_raise_after_a_print(x, k):
    y = x + 3
    try:
        y = _raises_for_big(y, k)
    except ValueError:
        print("re-raising")
        raise
    return y


def _current_exception():
    import sys
    return repr(sys.exception())


def _reads_the_handled_exception(x, xs, k):
    y = x * 1
    try:
        y = y + xs[k]
    except IndexError:
        seen = _current_exception()  # a call the frame runs eagerly: the exception is current
        y = y * 2
        return y, seen
    return y, None


def _tensor_branch_inside_try(x):
    y = x + 1
    try:
        if y > 0:  # several elements: bool() raises, as in eager
            y = y * 2
    except RuntimeError:
        y = y - 1
    return y


def _grad_mode_block_without_try(x, k):
    y = x + 1
    with dl.no_grad():
        print("inside")
        y = _raises_for_big(y, k)
    return y


def _clause_that_does_not_match(x, xs, k):
    y = x + 1
    try:
        print("p")
        y = y + xs[k]
    except KeyError:
        y = y * 0
    return y


TRY_PROGRAMS = [
    (_print_in_the_try_body, lambda c: (t(c), c)),
    (_print_in_the_except_clause, lambda c: (t(c), [t(c)], c)),
    (_break_in_finally, lambda c: (t(c), [0] * c, c)),
    (_bare_raise_after_a_print, lambda c: (t(c), c)),
    (_reads_the_handled_exception, lambda c: (t(c), [t(c)], c)),
    (_tensor_branch_inside_try, lambda c: (t(c),)),
    (_grad_mode_block_without_try, lambda c: (t(c), c)),
    (_clause_that_does_not_match, lambda c: (t(c), [t(c)], c)),
]


def _raising_rest(record) -> bool:
    """A resume function whose rest only raises (nothing to compile, or a break inside an
    exception handler's cleanup on the way out) runs eagerly."""
    return "inside an exception handler's cleanup" in record.reason or (
        "nothing before it to compile" in record.reason
        and ("raises" in record.reason or "leaving a with block by an exception" in record.reason))


@pytest.mark.parametrize("program, make_args", TRY_PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_breaks_inside_try_compile_and_behave_the_same(program, make_args, backend):
    assert_transparent(program, make_args, backend, calls=3)
    others = [record for record in dl.stats().fallbacks if not _raising_rest(record)]
    assert not others, others  # the resume functions compiled too
    assert dl.is_grad_enabled()


@pytest.mark.parametrize("program, args, graphs", [
    (_print_in_the_try_body, (t(0), 1), 2),  # x + 1 | y * 3, y + 2 after the print
    (_print_in_the_except_clause, (t(0), [t(0)], 3), 2),  # x * 2 | y - 5, y * y after the print
    (_break_in_finally, (t(0), [], 1), 2),  # x - 1, the call inlined | y + 1 after the print
    (_tensor_branch_inside_try, (t(0),), 2),  # x + 1 | y - 1 in the except clause
], ids=lambda v: getattr(v, "__name__", None))
def test_the_code_after_the_break_compiles(program, args, graphs, backend):
    report = dl.explain(program, backend=backend)(*args)
    assert report.graph_count == graphs, str(report)
    dl.reset()
    dl.compile(program, backend=backend)(*args)
    assert not dl.stats().fallbacks, dl.stats()


def _context_of(exception):
    return repr(exception.__context__)


def _new_error_in_the_except_clause(x, k):
    y = x + 1
    try:
        y = _raises_for_big(y, k)
    except ValueError:
        print("handling")
        try:
            _raises_for_big(y, k + 1)  # raised while handling: its __context__ is the first
        except ValueError as inner:
            print("inner", _context_of(inner))
            y = y * 4
    return y - 1


def _returns_the_caught_exception(x, k):
    y = x * 5
    try:
        y = _raises_for_big(y, k)
    except ValueError as e:
        print("got", e)
        return y, e.args
    return y, ()


@pytest.mark.parametrize("program", [_new_error_in_the_except_clause, _returns_the_caught_exception],
                         ids=lambda f: f.__name__)
def test_exception_state_inside_an_except_clause(program, backend):
    assert_transparent(program, lambda c: (t(c), c), backend, calls=3)
    own = [record for record in dl.stats().fallbacks
           if record.function.startswith(program.__name__) and not _raising_rest(record)]
    assert not own, own  # (the helper reading __context__ is a frame of its own, with no tensor work)


def _raise_while_handling(x, d):
    y = x * 3
    try:
        y = y + d["missing"]
    except KeyError:
        y = y - 1
        raise ValueError("while handling")  # after graph work: raised by the transformed code
    return y


def test_an_exception_raised_while_handling_keeps_its_context(backend):
    compiled = dl.compile(_raise_while_handling, backend=backend)
    for fn in (_raise_while_handling, compiled):
        with pytest.raises(ValueError, match="while handling") as info:
            fn(t(0), {})
        assert type(info.value.__context__) is KeyError
    assert dl.stats().graph_count == 1 and not dl.stats().fallbacks
