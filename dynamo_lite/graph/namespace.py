"""Unique, never-reused Python identifiers for graph nodes and generated globals."""
from __future__ import annotations

import builtins
import keyword
import re

_SUFFIX = re.compile(r"^(.*?)_(\d+)$")
_ILLEGAL_CHARS = re.compile(r"[^0-9a-zA-Z_]+")

# Names a node may never take: keywords (syntax errors), builtins (generated code may use
# them, e.g. ``float('inf')``) and ``forward`` (the generated function itself).
RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {"forward"}


def sanitize(candidate: str) -> str:
    """Turn any string into a plain identifier: ``"layer.0.weight"`` -> ``"layer_0_weight"``."""
    name = _ILLEGAL_CHARS.sub("_", str(candidate)) or "_"
    if name[0].isdigit():
        name = "_" + name
    return name


class Namespace:
    """Allocates identifiers; a name once handed out is never handed out again.

    Example:
        >>> ns = Namespace()
        >>> ns.create_name("add"), ns.create_name("add"), ns.create_name("add_1")
        ('add', 'add_1', 'add_2')
    """

    def __init__(self, reserved=RESERVED):
        self._used: set[str] = set(reserved)
        self._next_suffix: dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        """Return ``candidate`` (sanitized) if free, else ``base_<n>`` for the first free n."""
        name = sanitize(candidate)
        if name not in self._used:
            self._used.add(name)
            return name
        match = _SUFFIX.match(name)
        base = match.group(1) if match and match.group(1) else name
        suffix = self._next_suffix.get(base, 1)
        while f"{base}_{suffix}" in self._used:
            suffix += 1
        name = f"{base}_{suffix}"
        self._next_suffix[base] = suffix + 1
        self._used.add(name)
        return name

    def reserve(self, name: str) -> None:
        """Mark ``name`` as taken (e.g. a node name when allocating global names)."""
        self._used.add(name)

    def __contains__(self, name: str) -> bool:
        return name in self._used

    def copy(self) -> "Namespace":
        other = Namespace(())
        other._used = set(self._used)
        other._next_suffix = dict(self._next_suffix)
        return other
