"""Complex-gradient cases shared by record_complex_fixtures.py (torch) and test_complex_gradients.py.

Each case: input names -> (shape, kind) with kind "c" (complex128) or "r" (float64), and an
expression over those inputs and ``lib`` (torch or dynamo_lite) giving a complex or real
tensor. The loss is ``sum(view_as_real(out) * W)`` (or ``sum(out * W)`` for a real out)
with fixed real weights ``W``, so both the real and the imaginary part of ``out`` matter.
"""

CASES = {
    "mul": ({"a": ((3, 4), "c"), "b": ((3, 4), "c")}, "a * b"),
    "mul_broadcast": ({"a": ((3, 4), "c"), "b": ((4,), "c")}, "a * b"),
    "mul_complex_scalar": ({"a": ((5,), "c")}, "a * (2.0 - 1.5j)"),
    "mul_real_by_complex": ({"x": ((4,), "r"), "a": ((4,), "c")}, "x * a"),
    "abs": ({"a": ((3, 4), "c")}, "a.abs()"),
    "abs_of_product": ({"a": ((6,), "c"), "b": ((6,), "c")}, "(a * b).abs()"),
    "square": ({"a": ((5,), "c")}, "a.square()"),
    "pow_scalar": ({"a": ((5,), "c")}, "a ** 3"),
    "addcmul": ({"s": ((3, 4), "c"), "a": ((4,), "c"), "b": ((3, 1), "c")}, "lib.addcmul(s, a, b, value=0.5)"),
    "matmul": ({"a": ((3, 4), "c"), "b": ((4, 2), "c")}, "a @ b"),
    "div": ({"a": ((3, 4), "c"), "b": ((3, 4), "c")}, "a / b"),
    "div_by_real": ({"a": ((4,), "c"), "x": ((4,), "r")}, "a / (x.abs() + 1)"),
    "addcdiv": ({"s": ((3, 4), "c"), "a": ((4,), "c"), "b": ((3, 1), "c")}, "lib.addcdiv(s, a, b, value=0.5)"),
    "unary_chain": ({"a": ((6,), "c")}, "a.exp().sin() + a.cos() * a.tanh() + a.sigmoid() + a.reciprocal()"),
    "log_sqrt": ({"a": ((6,), "c")}, "(a * a + 2).log() + (a * a + 2).sqrt()"),
    "sum_mean": ({"a": ((3, 4), "c")}, "a.sum(0) * a.mean(1, keepdim=True)"),
    "mm_then_abs": ({"a": ((2, 3), "c"), "b": ((3, 3), "c")}, "lib.mm(a, b).abs()"),
}
