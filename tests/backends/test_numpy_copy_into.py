"""A fused group writes a copy-back's value straight into the updated tensor (NOTE: [copy into the updated tensor])."""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
from tests.backends.native_cases import Recording, needs_compiler

BACKENDS = ["numpy", pytest.param("native", marks=needs_compiler)]


class Codes:
    """A backend by name that keeps each graph's backend code."""

    def __init__(self, name: str):
        self.backend = Recording() if name == "native" else dl.lookup_backend(name)
        self.codes = []

    def __call__(self, gm, example_inputs):
        function = self.backend(gm, example_inputs)
        self.codes.append(getattr(gm, "backend_code", "") or "")
        return function


def _run_both(fn, make_args, backend):
    eager_args, compiled_args = make_args(), make_args()
    expected = fn(*eager_args)
    codes = Codes(backend)
    actual = dl.compile(fn, backend=codes, fullgraph=True)(*compiled_args)
    expected, actual = (list(r) if isinstance(r, tuple) else [r] for r in (expected, actual))
    for e, c in zip(eager_args + expected, compiled_args + actual):
        assert e.numpy().tobytes() == c.numpy().tobytes()
        assert e._version == c._version
    assert dl.stats().graph_count == 1
    return "\n".join(codes.codes)


def _adam_like(p, m, v, g):
    with dl.no_grad():
        m.lerp_(g, 0.1)
        v.mul_(0.999).addcmul_(g, g, value=0.001)
        p.mul_(0.99).addcdiv_(m, v.sqrt().add_(1e-8), value=-0.01)
    return p.sum()


def _tensors(*shapes):
    """A maker of the same fresh tensors on every call."""
    return lambda: [dl.from_numpy(np.random.default_rng(i).standard_normal(s).astype(np.float32))
                    for i, s in enumerate(shapes)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_updates_are_written_in_place_with_eager_values_and_versions(backend):
    dl.reset()
    rng_state = _tensors((256, 300), (256, 300), (256, 300), (256, 300))
    make = lambda: [t.abs() if i == 2 else t for i, t in enumerate(rng_state())]  # noqa: E731
    code = _run_both(_adam_like, make, backend)
    # the three updated tensors are written by their group: no copy kernel left
    assert "_k_copy_" not in code, code


@pytest.mark.parametrize("backend", BACKENDS)
def test_old_values_read_before_the_update_in_its_group_or_earlier(backend):
    def f(x, w):
        with dl.no_grad():
            total = (x * w).sum()  # the old x, in a group and a reduction scheduled before
            tripled = x * 3  # the old x, in the update's own group, before its member
            x.add_(1)
        return total, tripled

    dl.reset()
    code = _run_both(f, _tensors((64, 100), (64, 100)), backend)
    assert "_k_copy_" not in code, code


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copy_from_an_op_outside_any_group_stays(backend):
    def f(x):
        with dl.no_grad():
            y = x * 2 + 1
            total = x.sum()
            x.copy_(y)  # y is cloned first: the copy's source is no group output
        return total

    dl.reset()
    code = _run_both(f, _tensors((64, 100)), backend)
    assert "_k_copy_" in code


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tensor_sharing_storage_keeps_its_copy(backend):
    def f(x, y):
        with dl.no_grad():
            x.copy_(x * 2 + y)
        return y * 1

    def make():
        base = dl.from_numpy(np.arange(200, dtype=np.float32))
        return [base[:100], base[100:]]

    dl.reset()
    code = _run_both(f, make, backend)
    assert "_k_copy_" in code
