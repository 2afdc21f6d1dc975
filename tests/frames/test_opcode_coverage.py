"""Which opcodes of each supported Python have no translator handler, against the known gaps.

The lists below are the documentation of what the translator does not support: a frame
that reaches one of these opcodes breaks the graph there (or runs eagerly). A newly
unhandled opcode (a new Python, a handler removed) fails the test, and so does a gap that
got a handler without its line being removed here. Instrumented (``INSTRUMENTED_*``) and
pseudo opcodes (numbered 256 and up) never appear in a code object the translator reads.
"""
from __future__ import annotations

import dis
import sys

import dynamo_lite as dl
from dynamo_lite.frames.translate.handlers import HANDLERS
from tests.helpers import assert_compiled

_COMMON = {
    # async functions: never inlined ('yield from' in an inlined generator is: SEND, END_SEND)
    "BEFORE_ASYNC_WITH", "END_ASYNC_FOR", "GET_AITER", "GET_ANEXT", "GET_AWAITABLE",
    # except* (exception groups)
    "CHECK_EG_MATCH",
    # deleting names other than fast locals
    "DELETE_DEREF", "DELETE_GLOBAL", "DELETE_NAME",
    # module and class bodies (name lookups through a namespace dict), class statements
    "LOAD_NAME", "STORE_NAME", "SETUP_ANNOTATIONS", "LOAD_BUILD_CLASS",
    # structural pattern matching
    "MATCH_CLASS", "MATCH_KEYS", "MATCH_MAPPING", "MATCH_SEQUENCE",
}

KNOWN_GAPS = {
    (3, 11): _COMMON | {"ASYNC_GEN_WRAP", "IMPORT_STAR", "LOAD_CLASSDEREF", "PREP_RERAISE_STAR", "PRINT_EXPR"},
    (3, 12): _COMMON | {
        "CALL_INTRINSIC_2", "CLEANUP_THROW", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS",
        "LOAD_LOCALS",
        "INTERPRETER_EXIT", "RESERVED",  # the interpreter's own, never in user code
    },
    (3, 13): _COMMON | {
        "CALL_INTRINSIC_2", "CLEANUP_THROW", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS",
        "LOAD_LOCALS", "EXIT_INIT_CHECK",
        "INTERPRETER_EXIT", "RESERVED", "ENTER_EXECUTOR",  # the interpreter's own, never in user code
    },
}


def unhandled_opcodes() -> set:
    """Real opcodes of the running Python that no handler is registered for."""
    return {name for name, number in dis.opmap.items()
            if number < 256 and not name.startswith("INSTRUMENTED_") and name not in HANDLERS}


def test_unhandled_opcodes_are_the_known_gaps():
    version = sys.version_info[:2]
    assert version in KNOWN_GAPS, f"Python {version} is not a supported version: add its known gaps"
    gaps, known = unhandled_opcodes(), KNOWN_GAPS[version]
    assert not gaps - known, f"opcodes without a handler, not listed as known gaps: {sorted(gaps - known)}"
    assert not known - gaps, f"listed as gaps but handled now (remove them from KNOWN_GAPS): {sorted(known - gaps)}"



def test_unary_plus_on_a_tensor_compiles_without_a_break():
    # 3.12+ spell ``+x`` as CALL_INTRINSIC_1 5: the intrinsic's number is read from the
    # interpreter's table, so a wrong guess (it was 3) turns every ``+x`` into a break.
    def f(x):
        return +x * 2

    x = dl.arange(4.0)
    dl.reset()
    before = dl.stats()
    out = dl.compile(f, backend="eager")(x)
    assert_compiled(before, dl.stats())
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0]
