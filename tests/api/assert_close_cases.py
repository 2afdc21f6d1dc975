"""assert_close calls recorded once with torch.testing.assert_close (tests/api/fixtures/record_assert_close.py).

A case is ``(name, actual, expected, kwargs)``; ``Tn(values, dtype)`` stands for a tensor
of that dtype name, anything else is passed as it is (numbers, lists, dicts of them).
The recorder stores torch's exception type and message (or None when it passed).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tn:
    values: object
    dtype: str = "float32"


NAN = float("nan")

CASES = [
    ("close", Tn([1.0, 2.0]), Tn([1.0, 2.0 + 1e-6]), {}),
    ("one_mismatch", Tn([1.0, 2.0, 3.0]), Tn([1.0, 2.5, 3.0]), {}),
    ("mismatch_2d", Tn([[1.0, 2.0], [3.0, 4.0]]), Tn([[1.0, 2.0], [3.0, 5.0]]), {}),
    ("expected_zero", Tn([1.0, 0.0]), Tn([1.0, 0.1]), {}),
    ("shape", Tn([1.0, 2.0]), Tn([1.0, 2.0, 3.0]), {}),
    ("dtype", Tn([1.0, 2.0]), Tn([1.0, 2.0], "float64"), {}),
    ("dtype_unchecked", Tn([1.0, 2.0], "float64"), Tn([1.0, 2.0]), {"check_dtype": False}),
    ("integers", Tn([1, 2], "int64"), Tn([1, 3], "int64"), {}),
    ("booleans", Tn([True], "bool"), Tn([False], "bool"), {}),
    ("nan", Tn([[1.0, NAN]]), Tn([[1.0, NAN]]), {}),
    ("nan_equal", Tn([[1.0, NAN]]), Tn([[1.0, NAN]]), {"equal_nan": True}),
    ("explicit_tolerances", Tn([1.0, 2.0]), Tn([1.0, 2.5]), {"rtol": 0.1, "atol": 0.1}),
    ("only_rtol", Tn([1.0, 2.0]), Tn([1.0, 2.0]), {"rtol": 1e-3}),
    ("half_defaults", Tn([1.0, 2.0], "float16"), Tn([1.0, 2.001], "float16"), {}),
    ("zero_dim", Tn(1.0), Tn(1.5), {}),
    ("empty", Tn([]), Tn([]), {}),
    ("custom_message", Tn([1.0, 2.0]), Tn([1.0, 2.5]), {"msg": "custom"}),
    ("floats", 1.0, 1.5, {}),
    ("ints", 1, 2, {}),
    ("int_vs_float", 1, 1.0, {}),
    ("nested_list", [1.0, [2.0]], [1.0, [2.5]], {}),
    ("list_of_tensors", [Tn([1.0]), Tn([2.0])], [Tn([1.0]), Tn([2.1])], {}),
    ("dict_of_tensors", {"a": Tn([1.0])}, {"a": Tn([1.5])}, {}),
    ("length", [1.0, 2.0], [1.0], {}),
    ("keys", {"a": 1.0}, {"b": 1.0}, {}),
    ("tensor_vs_list", Tn([1.0, 2.0]), [1.0, 2.0], {}),
]


def build(spec, make_tensor):
    """``spec`` with every ``Tn`` made a tensor by ``make_tensor(values, dtype_name)``."""
    if isinstance(spec, Tn):
        return make_tensor(spec.values, spec.dtype)
    if isinstance(spec, list):
        return [build(s, make_tensor) for s in spec]
    if isinstance(spec, dict):
        return {k: build(v, make_tensor) for k, v in spec.items()}
    return spec
