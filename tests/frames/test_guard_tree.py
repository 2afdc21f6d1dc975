"""The guard tree: shared loads, direct member reads, per-call work independent of model size."""
from __future__ import annotations

import sys

import dynamo_lite as dl
from benchmarks.guard_scaling import ResidualStack
from benchmarks.models import WORKLOADS
from dynamo_lite import nn
from dynamo_lite.frames.api import default_hook
from tests.helpers import assert_equal_values


def _entry(model):
    (entry,) = default_hook.cache_for(model.forward).entries
    return entry


def _per_call_code(entry) -> str:
    code = entry.report.guard_code
    start = code.index("def check(")
    end = code.find("def __dl_full", start)
    return code[start:end if end >= 0 else len(code)]


class _CallCounter:
    """Counts calls of Python functions with a given name (through sys.setprofile)."""

    def __init__(self, name: str):
        self.name, self.count = name, 0

    def __enter__(self):
        def profile(frame, event, arg):
            if event == "call" and frame.f_code.co_name == self.name:
                self.count += 1

        sys.setprofile(profile)
        return self

    def __exit__(self, *exc):
        sys.setprofile(None)


def _count_calls(cls, method: str, fn, calls: int = 5) -> int:
    original = getattr(cls, method)
    count = 0

    def counting(*args):
        nonlocal count
        count += 1
        return original(*args)

    setattr(cls, method, counting)
    try:
        for _ in range(calls):
            fn()
    finally:
        setattr(cls, method, original)
    return count


def test_cached_calls_never_go_through_module_getattr_or_getitem(backend):
    workload = WORKLOADS["gpt"]
    model, inputs = workload.make(), workload.make_inputs()
    compiled = dl.compile(model, backend=backend, fullgraph=True)
    compiled(*inputs)
    compiled(*inputs)  # the first cached call runs the full check once
    assert _count_calls(nn.Module, "__getattr__", lambda: compiled(*inputs)) == 0
    assert _count_calls(nn.ModuleList, "__getitem__", lambda: compiled(*inputs)) == 0
    assert dl.stats().cache_hits == 11 and dl.stats().frames_compiled == 1


def test_per_call_guard_code_does_not_grow_with_the_model():
    sizes = {}
    for blocks in (2, 16):
        dl.reset()
        model, x = ResidualStack(blocks), dl.randn(4, 32)
        dl.compile(model, backend="eager")(x)
        entry = _entry(model)
        sizes[blocks] = _per_call_code(entry).count("\n")
        assert "_version_tag" in _per_call_code(entry)
        assert "._modules['blocks']" in entry.report.guard_code and "self.blocks" not in entry.report.guard_code
    assert sizes[2] == sizes[16]


def test_full_check_runs_only_after_a_retag():
    model, x = ResidualStack(3), dl.randn(4, 32)
    compiled = dl.compile(model, backend="eager")
    compiled(x)
    with _CallCounter("__dl_full0") as full:
        compiled(x)  # the tags read while tracing are still the model's: no full check
        compiled(x)
    assert full.count == 0
    model.step = 7  # retags the root, changes nothing the graph read
    with _CallCounter("__dl_full0") as full:
        compiled(x)
        compiled(x)
    assert full.count == 1
    assert dl.stats().recompiles == 0


def test_a_parameter_rebind_elsewhere_revalidates_once():
    model, other = ResidualStack(2), ResidualStack(1)
    x = dl.randn(4, 32)
    compiled = dl.compile(model, backend="numpy")
    compiled(x)
    compiled(x)
    other.blocks[0].linear.weight.data = dl.randn(32, 32)  # counted process-wide
    with _CallCounter("__dl_full0") as full:
        assert_equal_values(compiled(x), model(x))
        compiled(x)
    assert full.count == 1 and dl.stats().recompiles == 0


def test_recompile_names_the_replaced_member_in_words():
    model, x = ResidualStack(4), dl.randn(4, 32)
    compiled = dl.compile(model, backend="eager")
    compiled(x)
    model.blocks[2] = type(model.blocks[2])(32)
    assert_equal_values(compiled(x), model(x))
    reason = str(dl.stats().guard_failures[-1])
    assert "self.blocks[2]" in reason and "expected the same object" in reason


def test_a_list_attribute_is_checked_on_every_call():
    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.factors = [2.0, 3.0]

        def forward(self, x):
            return x * self.factors[1]

    model, x = Scaled(), dl.randn(3)
    compiled = dl.compile(model, backend="eager")
    compiled(x)
    assert "factors" in _per_call_code(_entry(model))
    model.factors[1] = -1.0  # the module is not retagged
    assert_equal_values(compiled(x), x * -1.0)
    assert "self.factors[1]: expected 3.0, got -1.0" in str(dl.stats().guard_failures[-1])


def test_a_module_with_its_own_setattr_is_not_trusted_to_retag():
    class Raw(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        def __setattr__(self, name, value):  # bypasses Module.__setattr__ (and its retag)
            object.__setattr__(self, name, value)

        def forward(self, x):
            return x * self.scale

    model, x = Raw(), dl.randn(3)
    compiled = dl.compile(model, backend="eager")
    compiled(x)
    compiled(x)
    model.scale = 5.0
    assert_equal_values(compiled(x), x * 5.0)
    assert dl.stats().recompiles == 1


def test_tied_weights_are_guarded_as_one_object():
    workload = WORKLOADS["gpt"]
    model, inputs = workload.make(), workload.make_inputs()
    compiled = dl.compile(model, backend="numpy")
    compiled(*inputs)
    assert "transformer.wte.weight is" in str(_entry(model).report.guards) or \
        "lm_head.weight is" in str(_entry(model).report.guards)
    model.lm_head.weight = nn.Parameter(model.lm_head.weight.clone() * 2)  # untied
    assert_equal_values(compiled(*inputs), model(*inputs), rtol=1e-5, atol=1e-5)
    assert dl.stats().recompiles == 1


def test_aliased_inputs_are_checked_on_every_call():
    def f(a, b):
        return a + b

    compiled = dl.compile(f, backend="eager")
    x, y = dl.randn(3), dl.randn(3)
    compiled(x, x)
    assert_equal_values(compiled(x, y), x + y)
    assert "aliased when compiled" in str(dl.stats().guard_failures[-1])


def test_a_mutation_between_tracing_and_guard_compilation_is_not_trusted():
    """Tags are noted when a module is first read by the trace; a later retag makes the
    first cached call run the full check (here a backend mutates the model mid-compile)."""

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        def forward(self, x):
            return x * self.scale

    model, x = Scaled(), dl.randn(3)

    def mutating_backend(gm, example_inputs):
        model.scale = 5.0  # after the trace read 2.0, before the guards are compiled
        return gm.forward

    compiled = dl.compile(model, backend=mutating_backend)
    compiled(x)
    assert_equal_values(compiled(x), x * 5.0)
    assert "self.scale: expected 2.0, got 5.0" in str(dl.stats().guard_failures[-1])
