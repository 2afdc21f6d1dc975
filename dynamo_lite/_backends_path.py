"""Finds ``dynamo_lite.backends`` when running from a source checkout."""
from __future__ import annotations

import importlib.util
import os
import sys


def locate_backends() -> None:
    """Register the repository-root ``backends/`` folder as ``dynamo_lite.backends``.

    NOTE: [backends location] ``backends/`` sits at the repository root and an install
    maps it to ``dynamo_lite.backends`` (pyproject ``package-dir``). Run from a checkout
    (``python3 -m pytest`` puts the root first on ``sys.path``), the package is found as a
    plain folder without that mapping, so the backends package is loaded from its file
    here, under its installed name. The checkout's own folder wins even when an editable
    install of another checkout is present: its mapping would otherwise pair this
    checkout's ``dynamo_lite`` with the other checkout's backends. A regular install has
    ``backends`` inside the package folder, and nothing happens.
    """
    name = "dynamo_lite.backends"
    package_dir = os.path.dirname(os.path.abspath(__file__))
    if name in sys.modules or os.path.isdir(os.path.join(package_dir, "backends")):
        return
    folder = os.path.join(os.path.dirname(package_dir), "backends")
    init = os.path.join(folder, "__init__.py")
    if not os.path.isfile(init):
        return
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[folder])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    # An import binds a submodule as an attribute of its parent; do the same, so that
    # `dl.backends` works in a checkout as it does in an install.
    setattr(sys.modules["dynamo_lite"], "backends", module)
