"""All knobs of dynamo_lite in one place (``dl.config``): the cache size limit and logging.

Example:
    >>> dl.config.cache_size_limit = 16        # recompiles allowed per function
    >>> dl.config.set_logs("recompiles,guards")  # same as DYNAMO_LITE_LOGS=recompiles,guards
"""
from __future__ import annotations

import logging
import os
import sys
import types
import warnings

# Loggers under "dynamo_lite" that DYNAMO_LITE_LOGS / set_logs switch on (at DEBUG).
LOG_COMPONENTS = ("bytecode", "graph", "guards", "recompiles", "graph_breaks", "dynamic")
LOG_ENV_VAR = "DYNAMO_LITE_LOGS"
_ROOT_LOGGER = "dynamo_lite"

cache_size_limit: int = 8
"""Entries kept per function; on the next miss the function runs eagerly from then on."""

logs: frozenset = frozenset()
"""Enabled log components (set with ``set_logs`` or by assigning a comma list)."""


def parse_logs(spec) -> frozenset:
    """Parse ``"recompiles,guards"`` (or an iterable of names; ``"all"`` for every one).

    Raises:
        ValueError: naming an unknown component and listing the valid ones.
    """
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    names = {name.strip().lstrip("+") for name in names} - {""}
    if "all" in names:
        return frozenset(LOG_COMPONENTS)
    unknown = sorted(names - set(LOG_COMPONENTS))
    if unknown:
        raise ValueError(
            f"unknown dynamo_lite log component(s) {unknown}; valid: {', '.join(LOG_COMPONENTS)}, all"
        )
    return frozenset(names)


def _apply_logs(enabled: frozenset) -> None:
    for name in LOG_COMPONENTS:
        level = logging.DEBUG if name in enabled else logging.NOTSET
        logging.getLogger(f"{_ROOT_LOGGER}.{name}").setLevel(level)
    root = logging.getLogger(_ROOT_LOGGER)
    # Components that are off (and the package's other loggers) stay quiet even when the program's
    # own logging shows INFO or DEBUG: compiling must not change what a program prints.
    root.setLevel(logging.WARNING)
    # Print to stderr unless the program configured logging itself (then records propagate there).
    has_own = any(getattr(h, "dynamo_lite_handler", False) for h in root.handlers)
    if enabled and not has_own and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[%(name)s] %(levelname)s %(message)s"))
        handler.dynamo_lite_handler = True
        root.addHandler(handler)


def set_logs(spec) -> None:
    """Switch log components on (all others off): ``set_logs("graph,guards")``, ``set_logs("")``."""
    global logs
    logs = parse_logs(spec)
    _apply_logs(logs)


class _ConfigModule(types.ModuleType):
    """Rejects misspelt knobs and applies ``logs`` when assigned."""

    def __setattr__(self, name, value):
        if name.startswith("__"):
            return super().__setattr__(name, value)
        if name == "logs":
            return set_logs(value)
        if name not in _KNOBS:
            raise AttributeError(f"dl.config has no option {name!r}; options: {', '.join(sorted(_KNOBS))}")
        if name == "cache_size_limit" and (not isinstance(value, int) or value < 0):
            raise ValueError(f"cache_size_limit must be a non-negative int, got {value!r}")
        super().__setattr__(name, value)


_KNOBS = frozenset({"cache_size_limit", "logs"})

try:
    set_logs(os.environ.get(LOG_ENV_VAR, ""))
except ValueError as exc:  # a bad environment must not break `import dynamo_lite`
    warnings.warn(f"{LOG_ENV_VAR} ignored: {exc}", stacklevel=2)

sys.modules[__name__].__class__ = _ConfigModule
