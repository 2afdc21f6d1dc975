"""dl.jit's TorchScript entry points: script, trace, annotate, ignore, export, save/load errors."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import pytest

import dynamo_lite as dl
import dynamo_lite.jit as jit
from dynamo_lite import Tensor
from tests.helpers import assert_compiled, assert_equal_values


def _sum_rows(x: Tensor) -> Tensor:
    rows = jit.annotate(List[Tensor], [])
    for i in range(x.size(0)):
        rows.append(x[i] * 2)
    return dl.stack(rows).sum(0)


def test_script_function_compiles_and_matches_eager():
    scripted = jit.script(_sum_rows)
    x = dl.randn(3, 4)
    before = dl.stats()
    assert_equal_values(scripted(x), _sum_rows(x))
    assert_compiled(before, dl.stats())
    assert jit.script(scripted) is scripted


def test_graph_for_of_a_function_holds_its_ops():
    scripted = jit.script(_sum_rows)
    graph = scripted.graph_for(dl.randn(2, 4))
    assert graph.op_count >= 3 and "stack" in str(graph)


def test_annotations_of_every_typing_form_are_tolerated():
    def fn(x: Tensor, scale: Optional[float] = None) -> Tuple[Tensor, Dict[str, Tensor]]:
        pairs = jit.annotate(List[Tuple[Tensor, Tensor]], [])
        names = jit.annotate(Dict[str, Tensor], {})
        pairs.append((x, x + 1))
        names["y"] = pairs[0][1] * (2.0 if scale is None else scale)
        return x.relu(), names

    x = dl.randn(5)
    before = dl.stats()
    assert_equal_values(jit.script(fn)(x), fn(x))
    assert_compiled(before, dl.stats())


class _Scaled(dl.nn.Module):
    __constants__ = ["factor"]
    factor: jit.Final[float]

    def __init__(self):
        super().__init__()
        self.factor = 3.0
        self.linear = dl.nn.Linear(4, 2)

    def forward(self, x):
        return self.helper(x) * self.factor

    @jit.ignore
    def helper(self, x):
        return self.linear(x)

    @jit.export
    def twice(self, x):
        return self.linear(x) * 2

    @jit.unused
    def never(self, x):
        raise RuntimeError("unused")


def test_script_module_shares_state_and_compiles_exports():
    model = _Scaled()
    scripted = jit.script(model)
    x = dl.randn(3, 4)
    before = dl.stats()
    assert_equal_values(scripted(x), model(x))
    assert_equal_values(scripted.twice(x), model.twice(x))
    assert_compiled(before, dl.stats())
    assert scripted.linear.weight is model.linear.weight
    assert scripted.graph_for(x).op_count > 0


def test_trace_runs_the_example_and_returns_a_compiled_callable():
    model = _Scaled()
    x = dl.randn(2, 4)
    before = dl.stats()
    traced = jit.trace(model, (x,))
    assert dl.stats().frames_compiled > before.frames_compiled
    assert_equal_values(traced(x), model(x))
    traced_fn = jit.trace(_sum_rows, x)
    assert_equal_values(traced_fn(x), _sum_rows(x))
    assert jit.trace_module(model, {"forward": x, "twice": (x,)})(x).shape == (2, 2)


def test_script_of_a_class_returns_it_unchanged():
    class Pair:
        def __init__(self, a: Tensor, b: Tensor):
            self.a, self.b = a, b

    assert jit.script(Pair) is Pair


def test_script_rejects_a_non_callable_like_torch():
    with pytest.raises(RuntimeError, match="cannot be compiled"):
        jit.script(5)


@pytest.mark.parametrize("call", [lambda: jit.save(_Scaled(), "m.pt"), lambda: jit.load("m.pt")])
def test_save_and_load_say_to_save_the_state_dict(call):
    with pytest.raises(NotImplementedError, match=r"dl\.save\(module\.state_dict\(\)"):
        call()


def test_markers_return_their_argument():
    fn = _sum_rows
    assert jit.script_if_tracing(fn) is fn and jit.annotate(int, 3) == 3 and jit.Attribute(4, int) == 4
    assert jit.wait(jit.fork(lambda a: a + 1, 1)) == 2
    assert not jit.is_scripting() and not jit.is_tracing()
    with jit.optimized_execution(True), jit.fuser("fuser2"):
        pass
