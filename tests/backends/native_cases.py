"""What the native backend tests share: a backend that keeps each graph's debug text, the skip mark."""
from __future__ import annotations

import pytest

from dynamo_lite.backends.native import NativeBackend
from tests.helpers import native_skip_reason

needs_compiler = pytest.mark.skipif(native_skip_reason() is not None, reason=f"native: {native_skip_reason()}")


class Recording:
    """A NativeBackend that keeps the debug text (NumPy code and C source) of every graph."""

    symbolic_shapes = True  # like the backend it wraps: a graph with symbolic sizes comes whole

    def __init__(self):
        self.backend = NativeBackend()
        self.codes = []

    def __call__(self, gm, example_inputs):
        function = self.backend(gm, example_inputs)
        self.codes.append(gm.backend_code)
        return function

    def count(self, kind: str) -> int:
        """How many C kernels of ``kind`` (``group``, ``row``) the graphs call."""
        return sum(code.count(f"native kernel dl_{kind}") for code in self.codes)
