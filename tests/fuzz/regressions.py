"""Minimized failing programs saved as regression cases, one file per case under regressions/.

A case file is the program's source preceded by comment lines:
``# fuzz-case: seed=<n> backend=<name> kind=<what differed>`` and, while the bug is not
fixed, ``# xfail: <root cause>`` (the parametrized test in test_fuzz.py marks the case
``xfail(strict=True)`` with that reason, so fixing the bug makes the test fail until the
line is removed). A case the compiler deliberately runs eagerly carries
``# expect-fallback: <words of the fallback reason>``: the test then requires that fallback
(with those words) and equal behaviour, so lifting the restriction fails it until the line
is removed.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

DIRECTORY = Path(__file__).parent / "regressions"


@dataclass
class Case:
    path: Path
    source: str
    xfail: str | None
    expect_fallback: str | None = None


def save_case(source: str, seed: int, backend: str, kind: str, reason: str, directory: Path = DIRECTORY) -> Path:
    """Write a new case (named by seed and a hash of the source) and return its path."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:8]
    path = directory / f"case_{seed:05d}_{digest}.py"
    header = f"# fuzz-case: seed={seed} backend={backend} kind={kind}\n# xfail: {reason}\n"
    path.write_text(header + source)
    return path


def load_cases(directory: Path = DIRECTORY) -> list[Case]:
    """Every saved case, sorted by file name."""
    cases = []
    for path in sorted(directory.glob("case_*.py")):
        text = path.read_text()
        xfail = expect_fallback = None
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            if line.startswith("# xfail:"):
                xfail = line.split(":", 1)[1].strip()
            if line.startswith("# expect-fallback:"):
                expect_fallback = line.split(":", 1)[1].strip()
        cases.append(Case(path, text, xfail, expect_fallback))
    return cases
