"""What a job script uses to record its checks (imported from the jobs folder by path)."""
from __future__ import annotations

import json
import pathlib
import traceback


class Checks:
    """name -> {"ok", "detail"}; ``save`` writes them as rank<R>.json into the job's folder."""

    def __init__(self, out_dir: str, rank: int):
        self.path = pathlib.Path(out_dir) / f"rank{rank}.json"
        self.results = {}

    def run(self, name: str, fn) -> None:
        """Record whether ``fn()`` returns without raising (an AssertionError's text is the detail)."""
        try:
            fn()
            self.results[name] = {"ok": True, "detail": ""}
        except Exception as exc:  # recorded and reported by the test
            self.results[name] = {"ok": False, "detail": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}

    def save(self) -> None:
        self.path.write_text(json.dumps(self.results, indent=1))
