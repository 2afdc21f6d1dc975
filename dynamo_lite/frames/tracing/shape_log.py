"""The ``dynamic`` log: where each size symbol was made and where (and why) one was fixed to a value.

``DYNAMO_LITE_LOGS=dynamic`` prints, for each translation, ``created s0 = x.size(1) (example 9)
at model.py:12 (forward)`` and ``specialized s0 == 9 (the code relied on 20*s0 == 180) at
model.py:30 (forward)``: the user's line being traced when the shape env heard of it (the
innermost inlined call), so a needless specialization can be found and written away.
"""
from __future__ import annotations

import logging
import sys

from ..logs import dynamic_log

_WORDS = {"create": "created", "specialize": "specialized"}


def shape_observer(event: str, detail: str) -> None:
    """The ShapeEnv observer of a translation (cheap unless the ``dynamic`` log is on)."""
    if not dynamic_log.isEnabledFor(logging.DEBUG):
        return
    dynamic_log.debug("%s %s at %s", _WORDS.get(event, event), detail, user_location(sys._getframe(1)))


def user_location(frame) -> str:
    """``file:line (function)`` of the innermost traced user code on the Python stack."""
    while frame is not None:
        tx = frame.f_locals.get("self")
        if tx is not None and hasattr(tx, "instructions") and hasattr(tx, "lineno") and hasattr(tx, "code"):
            return f"{tx.code.co_filename}:{tx.lineno} ({tx.code.co_name})"
        frame = frame.f_back
    return "a pass after tracing (backend or joint graph)"
