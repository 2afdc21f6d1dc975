"""Property test: random tensor programs give the same results compiled and eager."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import dynamo_lite as dl
from tests.helpers import assert_equal_values, compiled_backends

LOG: list = []


def _helper_with_break(t):
    LOG.append(t.shape)  # a side effect on a list from outside the frame
    if t.sum() > 0:  # a data-dependent branch inside an inlined call
        return t * 0.5
    return t + 0.25


# Each step maps (current tensor, other input) -> new tensor; all shape-preserving so any
# sequence composes. Some steps break the graph (print, item) on purpose.
STEPS = {
    "helper_break": lambda t, o: _helper_with_break(t) - o,
    "squares_gen": lambda t, o: sum(v * v for v in (t, o)),
    "stack_unbind": lambda t, o: dl.stack(list(t.unbind(0)), dim=0),
    "add": lambda t, o: t + o,
    "mul_scalar": lambda t, o: t * 1.5,
    "rsub": lambda t, o: 2 - t,
    "relu": lambda t, o: t.relu(),
    "tanh": lambda t, o: dl.tanh(t),
    "sigmoid": lambda t, o: t.sigmoid(),
    "where": lambda t, o: dl.where(t > 0, t, o),
    "softmax": lambda t, o: dl.softmax(t, dim=-1),
    "transpose_back": lambda t, o: t.t().contiguous().t(),
    "sum_keepdim": lambda t, o: t - t.sum(dim=0, keepdim=True),
    "clamp": lambda t, o: t.clamp(-1.0, 1.0),
    "inplace_add": lambda t, o: t.add_(1.0) * 1.0,
    "item_break": lambda t, o: t * float(t.sum().item() > 0),
    "branch_break": lambda t, o: (t + 1) if t.mean() > 0 else (t - 1),
}


def build_program(step_names):
    def program(x, y):
        t = x * 1.0
        for name in step_names:
            t = STEPS[name](t, y)
        return t, t.sum()

    return program


@settings(max_examples=30, deadline=None)
@given(
    steps=st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=6),
    rows=st.integers(1, 4),
    cols=st.integers(1, 5),
    seed=st.integers(0, 2**16),
    backend=st.sampled_from(compiled_backends()),
)
def test_random_programs_match_eager(steps, rows, cols, seed, backend):
    dl.reset()
    rng = np.random.default_rng(seed)
    x = dl.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    y = dl.from_numpy(rng.standard_normal((rows, cols)).astype(np.float32))
    program = build_program(steps)
    LOG.clear()
    expected = program(x.clone(), y)
    expected_log = list(LOG)
    LOG.clear()
    compiled = dl.compile(program, backend=backend)
    for _ in range(2):  # the second call runs from the cache
        assert_equal_values(compiled(x.clone(), y), expected, rtol=1e-4, atol=1e-5)
        assert LOG == expected_log
        LOG.clear()
    assert dl.stats().fallbacks == (), "every frame and resume function is compiled"
