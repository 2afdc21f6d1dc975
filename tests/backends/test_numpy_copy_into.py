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


class Updated(dl.nn.Module):
    """Parameters updated in place under no_grad (attributes of the graph, as an optimizer's)."""

    def __init__(self, shared: bool = False):
        super().__init__()
        rng = np.random.default_rng(0)
        base = dl.from_numpy(rng.standard_normal(2 * 64 * 100).astype(np.float32))
        if shared:  # two parameters over one storage
            self.w = dl.nn.Parameter(base[:6400].view(64, 100))
            self.u = dl.nn.Parameter(base[6400:].view(64, 100))
        else:
            self.w = dl.nn.Parameter(base[:6400].view(64, 100).clone())
            self.u = dl.nn.Parameter(base[6400:].view(64, 100).clone())

    def forward(self, x):
        with dl.no_grad():
            total = (self.w * x).sum()  # the old w, in a reduction scheduled before the update
            tripled = self.w * 3  # the old w, in the update's group, before its member
            self.w.mul_(0.5).add_(self.u)
            self.u.lerp_(x, 0.1)
        return total, tripled


def _run_both(make, backend):
    eager, compiled = make(), make()  # (a deep copy would not keep storages shared)
    x = dl.from_numpy(np.random.default_rng(1).standard_normal((64, 100)).astype(np.float32))
    codes = Codes(backend)
    run = dl.compile(compiled, backend=codes)
    for _ in range(2):
        expected, actual = eager(x), run(x)
        for e, c in zip(list(expected) + [eager.w, eager.u], list(actual) + [compiled.w, compiled.u]):
            assert e.detach().numpy().tobytes() == c.detach().numpy().tobytes()
            assert e._version == c._version
    return "\n".join(codes.codes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameter_updates_are_written_in_place_with_eager_values_and_versions(backend):
    dl.reset()
    code = _run_both(Updated, backend)
    assert "copy_(" in code and "_k_copy_" not in code, code


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_sharing_a_storage_update_like_eager(backend):
    dl.reset()
    code = _run_both(lambda: Updated(shared=True), backend)
    # no update computed into a parameter's memory: a write through one would show through the other
    assert "_bump_version" in code and not any(f"_w = _window(self_{p}_mem" in code for p in "wu")


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_optimizer_step_writes_parameters_and_state_in_place(backend):
    def make():
        dl.manual_seed(0)
        model = dl.nn.Linear(300, 200)
        for p in model.parameters():
            p.grad = dl.randn(*p.shape)
        return model, dl.optim.AdamW(model.parameters(), lr=1e-2)

    dl.reset()
    (eager, eager_opt), (model, opt) = make(), make()
    codes = Codes(backend)
    step = dl.compile(lambda: opt.step(), backend=codes)
    for _ in range(3):
        eager_opt.step()
        step()
    for p, q in zip(eager.parameters(), model.parameters()):
        assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes() and p._version == q._version
        for key, value in eager_opt.state[p].items():
            assert value.numpy().tobytes() == opt.state[q][key].numpy().tobytes(), key
    assert "_k_copy_" not in codes.codes[-1], codes.codes[-1]
