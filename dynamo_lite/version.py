"""``dl.__version__``: the installed distribution's version, else the one pyproject.toml of a source checkout declares."""
from __future__ import annotations

import importlib.metadata
import os
import re

DISTRIBUTION = "dynamo_lite"
UNKNOWN = "0+unknown"


def _checkout_version() -> str | None:
    """The ``version = "..."`` of the pyproject.toml beside the package (a checkout run without installing)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "pyproject.toml")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    project = text.partition("[project]")[2].partition("\n[")[0]
    found = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
    return found.group(1) if found else None


def package_version() -> str:
    """The version string (PEP 440) of dynamo_lite as installed; ``"0+unknown"`` when nothing says.

    Example:
        >>> package_version()
        '0.1.0'
    """
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return _checkout_version() or UNKNOWN


__version__ = package_version()
