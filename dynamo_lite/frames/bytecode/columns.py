"""Original and rewritten bytecode as two columns, aligned by instruction where they match."""
from __future__ import annotations

import dis
import difflib
import itertools
import re
from dataclasses import dataclass


@dataclass
class Row:
    """One row of the two columns: an instruction on either side (None: nothing there).

    ``kind`` is ``equal`` (the same instruction on both sides), ``replace``, ``delete``
    (only in the original) or ``insert`` (only in the rewritten code).
    """

    kind: str
    original: str | None
    rewritten: str | None


def instruction_texts(code) -> list:
    """One line per instruction: ``line offset OPNAME argument`` (object addresses dropped)."""
    line_at = {offset: line for start, end, line in code.co_lines() for offset in range(start, end, 2)}
    lines = []
    for ins in dis.get_instructions(code):
        line = line_at.get(ins.offset)
        argument = re.sub(r" at 0x[0-9a-f]+", "", ins.argrepr)
        lines.append((f"{line or '':>4} {ins.offset:>4} ", f"{ins.opname} {argument}".rstrip()))
    return lines


def aligned_rows(original, rewritten) -> list:
    """The Rows of two code objects, matching instructions compared without offsets.

    Example:
        >>> rows = aligned_rows(report.original_code, report.transformed_code)
        >>> [r.kind for r in rows][:2]
        ['equal', 'insert']
    """
    left, right = instruction_texts(original), instruction_texts(rewritten)
    matcher = difflib.SequenceMatcher(None, [t for _, t in left], [t for _, t in right], autojunk=False)
    rows = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        pairs = itertools.zip_longest(left[i1:i2], right[j1:j2])
        for a, b in pairs:
            kind = tag if tag in ("equal", "replace") else ("delete" if b is None else "insert")
            if tag == "replace" and (a is None or b is None):
                kind = "delete" if b is None else "insert"
            rows.append(Row(kind, "".join(a) if a else None, "".join(b) if b else None))
    return rows
