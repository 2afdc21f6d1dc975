"""Minimized programs on which the fuzzer found a backend differing from eager (each fixed)."""
import dynamo_lite as dl

from .inputs import make_input
from .runner import assert_same_as_eager


def test_clamp_bounds_computed_in_the_same_fused_group(backend):
    # opfuzz seed 149 (numpy, native): dl.clamp's tensor bounds arrive as keyword arguments;
    # a bound computed in the same fused group was looked up outside it (internal error).
    def f(x):
        low = x.masked_fill(x < 0, 0.5)
        return dl.clamp(x.rsqrt(), low, x + 1)

    assert_same_as_eager(f, lambda: [make_input((4,), "float32", "normal", "sliced", 316423)], backend)
