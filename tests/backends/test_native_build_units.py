"""Native libraries of large graphs: identical kernels emitted once, units built apart (NOTE: [native build units])."""
from __future__ import annotations

import re

import numpy as np

import dynamo_lite as dl
from dynamo_lite.backends.native import lowering
from tests.backends.native_cases import Recording, needs_compiler
from tests.helpers import assert_compiled

pytestmark = needs_compiler


def stack(steps: int):
    def f(x, w):
        for _ in range(steps):
            x = dl.softmax(dl.tanh(x @ w), -1) * 2.0 + x
        return x
    return f


def compiled_with_source(fn, *args):
    recording = Recording()
    before = dl.stats()
    actual = dl.compile(fn, backend=recording)(*args)
    assert_compiled(before, dl.stats())
    return actual, recording.codes[0]


def test_identical_kernels_of_a_deep_stack_are_emitted_once():
    x, w = dl.randn(8, 32), dl.randn(32, 32) * 0.2
    fn = stack(12)
    actual, code = compiled_with_source(fn, x, w)
    np.testing.assert_allclose(actual.numpy(), fn(x, w).numpy(), rtol=1e-5, atol=1e-5)
    defined = re.findall(r"\nvoid (dl_[a-z]+\d+)\(", code)
    called = re.findall(r"# native kernel (dl_[a-z]+\d+):", code)
    assert len(called) >= 12 * 2 and len(set(called)) == len(defined) <= 4  # a gemm, a row, a group or two
    assert len(set(called)) < len(called)


def test_a_library_over_the_unit_size_is_built_as_several_units(monkeypatch):
    # Units of one kernel each: every chain (a cumsum, NumPy code, ends one) is cut after each kernel too.
    monkeypatch.setattr(lowering, "MAX_UNIT_BYTES", 1)

    def f(x, w):
        a = dl.softmax(x @ w, -1)
        b = (dl.tanh(a * 3.0) + x).cumsum(-1)
        c = dl.layer_norm(b @ w, (32,)).cumsum(-1)
        return dl.sigmoid(c) * a

    x, w = dl.randn(8, 32), dl.randn(32, 32)
    report = dl.explain(f, backend="native")(x, w)
    (gm, function, _), = report.compiled.values()
    units = int(re.search(r"native build: (\d+) units", gm.build_units).group(1))
    kernels = gm.backend_code.count("# native kernel dl_")
    assert units == kernels >= 3 and gm.build_units in str(report)
    np.testing.assert_allclose(function(x, w)[0].numpy(), f(x, w).numpy(), rtol=1e-5, atol=1e-5)
