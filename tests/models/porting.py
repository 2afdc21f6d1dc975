"""Port a model file written against torch the way a user would: rename the imports, nothing else.

``port("resnet")`` reads ``torch_src/resnet.py``, rewrites its ``torch`` imports to
``dynamo_lite`` ones (``import torch`` -> ``import dynamo_lite as torch``, ``import
torch.nn as nn`` -> ``import dynamo_lite.nn as nn`` ...) and executes the result as a fresh
module whose functions keep the file's name and line numbers in tracebacks.
"""
from __future__ import annotations

import pathlib
import re
import sys
import types

SOURCES = pathlib.Path(__file__).parent / "torch_src"

#: (pattern, replacement) applied line by line: the whole port.
IMPORT_RENAMES = (
    (re.compile(r"^import torch\.nn\.functional as (\w+)$"), r"import dynamo_lite.nn.functional as \1"),
    (re.compile(r"^import torch\.nn as (\w+)$"), r"import dynamo_lite.nn as \1"),
    (re.compile(r"^import torch$"), r"import dynamo_lite as torch"),
    (re.compile(r"^from torch\.nn import (.+)$"), r"from dynamo_lite.nn import \1"),
    (re.compile(r"^from torch import (.+)$"), r"from dynamo_lite import \1"),
)


def ported_source(text: str) -> str:
    """``text`` with its torch imports renamed; any other mention of torch is left alone."""
    lines = []
    for line in text.splitlines():
        for pattern, replacement in IMPORT_RENAMES:
            line = pattern.sub(replacement, line)
        lines.append(line)
    return "\n".join(lines) + "\n"


def port(name: str) -> types.ModuleType:
    """The model file ``torch_src/<name>.py`` running on dynamo_lite."""
    path = SOURCES / f"{name}.py"
    module = types.ModuleType(f"ported_{name}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # as an import would (dataclasses look their module up)
    exec(compile(ported_source(path.read_text()), str(path), "exec"), module.__dict__)
    return module
