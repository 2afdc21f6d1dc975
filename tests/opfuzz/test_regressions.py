"""Minimized programs on which the fuzzer found a backend differing from eager (each fixed)."""
import dynamo_lite as dl

from .inputs import make_input
from .compare import value_differences
from .runner import assert_same_as_eager, backend_compilers


def test_clamp_bounds_computed_in_the_same_fused_group(backend):
    # opfuzz seed 149 (numpy, native): dl.clamp's tensor bounds arrive as keyword arguments;
    # a bound computed in the same fused group was looked up outside it (internal error).
    def f(x):
        low = x.masked_fill(x < 0, 0.5)
        return dl.clamp(x.rsqrt(), low, x + 1)

    assert_same_as_eager(f, lambda: [make_input((4,), "float32", "normal", "sliced", 316423)], backend)


def test_dynamic_graph_with_a_static_input_whose_offset_changes(backend):
    # opfuzz seed 56 (numpy, native; found through a conv2d backward): under dynamic=True
    # an input with no symbolic size (shape (1,)) keeps its geometry fixed in the generated
    # code; a later call with that input at another storage offset reused the function
    # planned for the new sizes, whose check sent it back to re-plan: RecursionError.
    def f(x, b):
        return x * 2 + b

    base = dl.arange(4.0)
    calls = [(dl.ones(3, 5), base[0:1]), (dl.ones(4, 5), base[1:2]), (dl.ones(4, 5), base[2:3]),
             (dl.ones(6, 5), base[0:1])]
    compiled = dl.compile(f, backend=backend_compilers([backend]).get(backend, backend), dynamic=True)
    for x, b in calls:
        assert value_differences(f(x, b), compiled(x, b), True, "result") == []
    assert not dl.stats().fallbacks and dl.stats().graph_count >= 1
