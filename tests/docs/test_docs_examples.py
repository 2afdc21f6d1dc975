"""Every Python example in docs/*.md runs, and the printed output a doc shows is what it prints.

NOTE: [doc-test markers] The blocks of one doc run in order in one namespace (a doc reads
top to bottom), in a temporary directory. An HTML comment on the line right above a fence
(invisible in the rendered page) tells the test more:

- ``<!-- doc-test: skip REASON -->`` above a python block: not run, for the reason given
  (a CUDA device, several processes, an excerpt of the package's own source, a sketch).
- ``<!-- doc-test: setup CODE -->`` above a python block: one line of Python run first (the
  names a snippet takes as given, such as a model or a batch).
- ``<!-- doc-test: file NAME -->`` above a python block: compiled as file NAME (a report
  that prints ``NAME:line`` shows the doc's own file name and lines).
- ``<!-- doc-test: output -->`` above a plain block right after a python block: what that
  python block prints (stdout and stderr, as a terminal shows them), compared as doctest compares (``...`` matches anything).
  ``<!-- doc-test: output 3.11 -->`` compares only under that CPython version (bytecode
  offsets and instruction names differ between versions); elsewhere the block still runs.

Python blocks without a marker run too, with nothing to compare.
"""
from __future__ import annotations

import contextlib
import doctest
import io
import linecache
import pathlib
import re
import sys

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
MARKER = re.compile(r"^<!--\s*doc-test:\s*(\w+)\s*(.*?)\s*-->$")


class Block:
    """One fenced block of a doc: its language, text, first line and the markers above it."""

    def __init__(self, lang: str, text: str, line: int, markers: dict):
        self.lang, self.text, self.line, self.markers = lang, text, line, markers


def _blocks(path: pathlib.Path) -> list:
    lines, blocks, i = path.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        if not lines[i].startswith("```"):
            i += 1
            continue
        markers, above = {}, i - 1
        while above >= 0 and MARKER.match(lines[above].strip()):
            kind, value = MARKER.match(lines[above].strip()).groups()
            markers[kind] = value
            above -= 1
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        blocks.append(Block(lines[i][3:].strip(), "\n".join(lines[i + 1:end]) + "\n", i + 2, markers))
        i = end + 1
    return blocks


def _checked_markers(blocks) -> None:
    for block in blocks:
        unknown = set(block.markers) - {"skip", "setup", "file", "output"}
        assert not unknown, f"line {block.line}: unknown doc-test marker(s) {unknown}"
        assert "skip" not in block.markers or block.markers["skip"], f"line {block.line}: a skip needs its reason"


def _compare(block: Block) -> bool:
    wanted = block.markers.get("output")
    return wanted is not None and (not wanted or wanted == f"{sys.version_info[0]}.{sys.version_info[1]}")


@pytest.mark.parametrize("doc", sorted(p.name for p in DOCS.glob("*.md")))
def test_docs_examples_run_and_print_what_they_show(doc, tmp_path, monkeypatch):
    blocks = _blocks(DOCS / doc)
    _checked_markers(blocks)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"doc_{doc[:-3]}"}
    ran = 0
    for index, block in enumerate(blocks):
        if block.lang != "python" or "skip" in block.markers:
            continue
        if "setup" in block.markers:
            exec(compile(block.markers["setup"], f"<{doc} setup>", "exec"), namespace)
        name = block.markers.get("file") or f"<{doc}:{block.line}>"
        linecache.cache[name] = (len(block.text), None, block.text.splitlines(True), name)  # source lines in reports
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):  # what a terminal shows
            exec(compile(block.text, name, "exec"), namespace)
        ran += 1
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if following is not None and following.lang != "python" and _compare(following):
            checker = doctest.OutputChecker()  # trailing blank lines aside
            want, got = following.text.rstrip("\n") + "\n", printed.getvalue().rstrip("\n") + "\n"
            assert checker.check_output(want, got, doctest.ELLIPSIS), (
                f"{doc}:{following.line}: the doc shows\n{following.text}\nbut the example printed\n"
                f"{printed.getvalue()}")
    assert ran == sum(b.lang == "python" and "skip" not in b.markers for b in blocks)


def test_every_output_marker_follows_a_python_block():
    for doc in sorted(DOCS.glob("*.md")):
        blocks = _blocks(doc)
        for before, block in zip(blocks, blocks[1:]):
            if "output" in block.markers:
                assert before.lang == "python" and "skip" not in before.markers, f"{doc.name}:{block.line}"
