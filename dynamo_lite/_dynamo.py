"""dl._dynamo: torch._dynamo's entry points that ported code calls (``reset``, ``explain``, ``config``, ...).

``config`` is ``dl.config`` itself: ``dl._dynamo.config.cache_size_limit = 16`` sets the
knob the cache reads; an option dynamo_lite does not have raises AttributeError naming the
ones it has.
"""
from __future__ import annotations

from . import config
from .compiler import is_compiling
from .frames.api import disable, reset
from .frames.explain import explain
from .frames.tracing.dynamic_policy import mark_dynamic, mark_static

__all__ = ["config", "disable", "explain", "is_compiling", "mark_dynamic", "mark_static", "reset"]
