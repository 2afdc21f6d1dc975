"""The rewritten code as Python is shown by debug mode and the bytecode log, next to the dis diff."""
import logging

import dynamo_lite as dl


def prints_between(x):
    y = x.sin()
    print("middle")
    return y * 2


def test_debug_mode_shows_the_rewritten_code(capsys):
    dl.compile(prints_between, backend="eager", debug=True)(dl.ones(2))
    err = capsys.readouterr().err
    diff_at, view_at = err.index("---- bytecode diff ----"), err.index("---- rewritten code as Python ----")
    assert diff_at < view_at
    assert "def prints_between(x):  # rewritten by dynamo_lite" in err[view_at:]
    assert "__compiled_graph_0(x)" in err and "graph break: print()" in err


def test_bytecode_log_shows_the_rewritten_code(caplog):
    with caplog.at_level(logging.DEBUG, logger="dynamo_lite.bytecode"):
        dl.compile(prints_between, backend="eager")(dl.ones(2))
    assert "rewritten code as Python:\ndef prints_between(x):" in caplog.text
    assert "LOAD_CONST" in caplog.text  # the dis diff is still there
