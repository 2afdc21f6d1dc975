"""A program that logs at INFO itself sees nothing of the compiler unless a log component is on:
compiling must not change what a program prints (its logging output included)."""
from __future__ import annotations

import logging

import dynamo_lite as dl
from tests.helpers import assert_same

user_log = logging.getLogger("user_program")


def _breaks_and_recompiles(x, n):
    y = x * 2
    user_log.info("step %d", n)  # library code: a graph break, which the compiler would log at INFO
    return y + n


def test_the_programs_info_logging_sees_only_its_own_records(caplog):
    caplog.set_level(logging.INFO)  # the root logger shows INFO, as logging.basicConfig(level=INFO) would
    dl.config.set_logs("")
    compiled = assert_same(_breaks_and_recompiles, dl.ones(2), 1, expect_breaks=1)
    compiled(dl.ones(2), 2)  # a recompile (the int is a guarded constant)
    names = {record.name for record in caplog.records}
    assert names == {"user_program"}, names


def test_an_enabled_component_still_reaches_the_programs_handlers(caplog):
    caplog.set_level(logging.INFO)
    dl.config.set_logs("graph_breaks")
    try:
        dl.compile(_breaks_and_recompiles)(dl.ones(2), 3)
    finally:
        dl.config.set_logs("")
    assert any(record.name == "dynamo_lite.graph_breaks" for record in caplog.records)
