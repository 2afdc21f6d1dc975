"""Debug output: bytecode diffs (original vs transformed), graphs and guards of each frame."""
from __future__ import annotations

import difflib
import dis
import io
import re
import sys

from ..bytecode.decompiled import render as render_python
from ..logs import bytecode_log, graph_log, guards_log
from ..report import TranslationReport


def disassemble(code) -> list:
    """``dis`` text of one code object (nested code objects left out), one line per item."""
    out = io.StringIO()
    dis.dis(code, file=out, depth=0)
    return out.getvalue().rstrip("\n").splitlines()


def bytecode_diff(original, transformed) -> str:
    """A unified diff of the original and transformed bytecode of one frame."""
    lines = difflib.unified_diff(
        _strip_addresses(disassemble(original)),
        _strip_addresses(disassemble(transformed)),
        fromfile=f"original {original.co_qualname} ({original.co_filename}:{original.co_firstlineno})",
        tofile=f"transformed {transformed.co_qualname}",
        lineterm="",
        n=max(len(disassemble(original)), 1),
    )
    return "\n".join(lines)


LINE_LIMIT = 200  # a constant's repr (a module's globals dict ...) is cut here, not printed whole


def _strip_addresses(lines: list) -> list:
    """Drop ``at 0x...`` so that diffs compare instructions, not object addresses; cut overlong lines."""
    lines = [re.sub(r" at 0x[0-9a-f]+", "", line) for line in lines]
    return [line if len(line) <= LINE_LIMIT else line[:LINE_LIMIT - 5] + " ...)" for line in lines]


def with_diffs(report: TranslationReport) -> TranslationReport:
    """Fill in the bytecode diffs of a translation (made only when someone reads them:
    debug mode, the bytecode log, dl.explain) and return its report."""
    if report.bytecode_diff is None and report.transformed_code is not None:
        report.bytecode_diff = bytecode_diff(report.original_code, report.transformed_code)
        report.resume_diffs = [
            {"name": code.co_name, "offset": origin.offset, "diff": bytecode_diff(origin.code, code)}
            for code, origin in report.resume_codes
        ]
        report.rewritten = render_python(report.transformed_code, report.emitted, report.break_reasons)
    return report


def render(report: TranslationReport, name: str) -> str:
    """The debug report of one translation: bytecode diff, graphs, guards."""
    with_diffs(report)
    parts = [f"==== dynamo_lite: compiled frame {name} ====", "---- bytecode diff ----", report.bytecode_diff,
             "---- rewritten code as Python ----", report.rewritten.source.rstrip("\n")]
    for extra in report.resume_diffs:
        parts += [f"---- resume function {extra['name']} (original offset {extra['offset']}) ----", extra["diff"]]
    titled = [(f"graph {i}", gm) for i, gm in enumerate(report.graphs)]
    titled += [(f"backward graph {i}", gm) for i, gm in enumerate(report.backward_graphs)]
    for title, gm in titled:
        parts += [f"---- {title} ----", gm.print_readable(print_output=False)]
        # NOTE: [backend code in debug output] a backend that generates code leaves it
        # on the GraphModule as ``backend_code`` (the numpy backend's function).
        if getattr(gm, "backend_code", None):
            parts += [f"---- backend code of {title} ----", gm.backend_code.rstrip("\n")]
    parts += ["---- guards ----", report.guards]
    return "\n".join(parts)


def report(request, translation: TranslationReport) -> None:
    """Print (debug=True) or log the translation, as switched by the config and loggers."""
    name = request.code.co_qualname if hasattr(request.code, "co_qualname") else request.code.co_name
    if request.config.debug:
        print(render(translation, name), file=sys.stderr)
    if bytecode_log.isEnabledFor(10):
        with_diffs(translation)
        bytecode_log.debug("bytecode of %s:\n%s\nrewritten code as Python:\n%s", name, translation.bytecode_diff,
                           translation.rewritten.source.rstrip("\n"))
    if graph_log.isEnabledFor(10):
        for gm in translation.graphs + translation.backward_graphs:
            graph_log.debug("graph of %s:\n%s", name, gm.print_readable(print_output=False))
    if guards_log.isEnabledFor(10):
        guards_log.debug("guards of %s:\n%s", name, translation.guards)
