"""The ops the fuzzer draws from: each renders one expression over operand values.

An entry is ``FuzzOp(name, family, arity, render, exact, continuous)``. ``render(r, *vals)``
gets a ``random.Random`` and the operands (``Value``: ``.name``, ``.t`` the eager tensor)
and returns the expression's source, or None when the op does not apply to them.
``exact``: "always" (IEEE-exact, so every backend must match eager bit for bit),
"ints" (exact on integer/bool operands, a tolerance on floats: summation order) or "never"
(transcendental: a tolerance, see compare.py). A ``continuous=False`` op (comparisons,
rounding, argmax, casts to integers) is only applied to exactly-computed operands: a
one-ulp difference upstream may flip its result. Division by an operand is treated the
same way (``reciprocal``, ``/``, ``addcdiv``, ``rsqrt``): near zero it turns an ulp of
difference in the divisor into any relative difference (found on seed 2115: the
gradient of ``log_softmax(x).reciprocal()`` where the log-softmax is -2.4e-7).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import dynamo_lite as dl

F = "F"  # the programs' alias of dl.nn.functional


@dataclass(frozen=True)
class FuzzOp:
    name: str
    family: str
    arity: int
    render: Callable
    exact: str = "always"
    continuous: bool = True


OPS: list[FuzzOp] = []


@dataclass(frozen=True)
class Statement:
    """A rendered statement that is not ``v = <expr>``: it mutates ``result`` (a value's name)."""

    text: str
    result: str


def op(name, family, arity=1, exact="always", continuous=True):
    def register(render):
        OPS.append(FuzzOp(name, family, arity, render, exact, continuous))
        return render
    return register


def is_float(t) -> bool:
    return t.dtype.is_floating_point


def is_int(t) -> bool:
    return not t.dtype.is_floating_point and not t.dtype.is_complex


def scalar(r, like=None) -> str:
    """A Python scalar or 0-dim tensor literal, biased towards ``like``'s kind."""
    kind = r.choice(["int", "float", "float", "bool", "tensor"] if like is None or is_float(like)
                    else ["int", "int", "int", "bool", "float", "tensor"])
    if kind == "int":
        return repr(r.choice([0, 1, 2, -1, -3, 7, 100]))
    if kind == "bool":
        return repr(r.choice([True, False]))
    if kind == "float":
        return r.choice(["0.5", "-0.0", "0.0", "2.0", "-1.5", "1e-3", "1e30", "float('inf')", "float('nan')", "3.0"])
    dtype = r.choice(["dl.float32", "dl.int64", "dl.float64", "dl.int32", "dl.bool", "dl.float16"])
    value = {"dl.bool": "True"}.get(dtype, r.choice(["2", "-1", "3"]))
    return f"dl.tensor({value}, dtype={dtype})"


def dim(r, t) -> int:
    return r.randrange(-t.ndim, t.ndim) if t.ndim else 0


def dims(r, t):
    """A dim, a list of dims, or None (all)."""
    if t.ndim == 0:
        return r.choice([None, 0])
    choice = r.random()
    if choice < 0.2:
        return None
    if choice < 0.6:
        return dim(r, t)
    return sorted(r.sample(range(t.ndim), r.randint(1, t.ndim)))


# ---- pointwise unary -------------------------------------------------------------------
for _name, _expr, _exact, _cont in [
    ("neg", "-{a}", "always", True), ("abs", "{a}.abs()", "always", True), ("relu", "{a}.relu()", "always", True),
    ("floor", "{a}.floor()", "always", False), ("ceil", "dl.ceil({a})", "always", False),
    ("round", "{a}.round()", "always", False), ("trunc", "dl.trunc({a})", "always", False),
    ("sign", "{a}.sign()", "always", False), ("frac", "{a}.frac()", "always", False),
    ("sqrt", "{a}.sqrt()", "always", True), ("square", "dl.square({a})", "always", True),
    ("reciprocal", "{a}.reciprocal()", "always", False), ("isnan", "{a}.isnan()", "always", False),
    ("isinf", "dl.isinf({a})", "always", False), ("isfinite", "dl.isfinite({a})", "always", False),
    ("nan_to_num", "dl.nan_to_num({a})", "always", True),
    ("logical_not", "dl.logical_not({a})", "always", False), ("bitwise_not", "~{a}", "always", False),
    ("relu6", "F.relu6({a})", "always", True), ("hardtanh", "F.hardtanh({a}, -0.5, 2.0)", "always", True),
    ("leaky_relu", "F.leaky_relu({a}, 0.125)", "always", True),
    ("exp", "{a}.exp()", "never", True), ("expm1", "dl.expm1({a})", "never", True),
    ("log", "{a}.log()", "never", True), ("log1p", "dl.log1p({a})", "never", True),
    ("log2", "dl.log2({a})", "never", True), ("sin", "{a}.sin()", "never", True), ("cos", "dl.cos({a})", "never", True),
    ("tanh", "{a}.tanh()", "never", True), ("sigmoid", "{a}.sigmoid()", "never", True),
    ("erf", "dl.erf({a})", "never", True), ("rsqrt", "{a}.rsqrt()", "never", False),
    ("gelu", "F.gelu({a})", "never", True), ("gelu_tanh", "F.gelu({a}, approximate='tanh')", "never", True),
    ("silu", "F.silu({a})", "never", True), ("elu", "F.elu({a})", "never", True),
    ("softplus", "F.softplus({a})", "never", True), ("pow_scalar", "{a} ** 2.5", "never", True),
    ("pow_int", "{a} ** 2", "always", True), ("rpow", "2 ** {a}", "never", True),
]:
    op(_name, "unary", 1, _exact, _cont)(lambda r, a, _e=_expr: _e.format(a=a.name))


@op("clamp", "unary")
def _clamp(r, a):
    low, high = r.choice([("-1", "1"), ("0", "None"), ("None", "0.5"), ("-0.0", "0.0"), ("2", "-2")])
    if is_int(a.t):
        low, high = low.replace("0.5", "1").replace("-0.0", "0").replace("0.0", "0"), high.replace("0.5", "1").replace("0.0", "0")
    return f"{a.name}.clamp({low}, {high})"


@op("cast", "cast", continuous=False)
def _cast(r, a):
    return r.choice([f"{a.name}.float()", f"{a.name}.int()", f"{a.name}.long()", f"{a.name}.double()", f"{a.name}.half()",
                     f"{a.name}.bool()", f"{a.name}.to(dl.bfloat16)", f"{a.name}.to(dl.uint8)", f"{a.name}.to(dl.int8)",
                     f"{a.name}.to(dl.float16)"])


@op("float_cast", "cast")
def _float_cast(r, a):
    return r.choice([f"{a.name}.float()", f"{a.name}.double()", f"{a.name}.to(dl.float32)"])


# ---- pointwise binary / ternary ----------------------------------------------------------
for _name, _expr, _exact, _cont in [
    ("add", "{a} + {b}", "always", True), ("sub", "dl.sub({a}, {b})", "always", True), ("mul", "{a} * {b}", "always", True),
    ("div", "{a} / {b}", "always", False), ("floor_divide", "{a} // {b}", "always", False),
    ("remainder", "{a} % {b}", "always", False), ("fmod", "dl.fmod({a}, {b})", "always", False),
    ("maximum", "dl.maximum({a}, {b})", "always", True), ("minimum", "dl.minimum({a}, {b})", "always", True),
    ("eq", "{a} == {b}", "always", False), ("ne", "{a} != {b}", "always", False), ("lt", "{a} < {b}", "always", False),
    ("le", "dl.le({a}, {b})", "always", False), ("gt", "{a} > {b}", "always", False), ("ge", "{a} >= {b}", "always", False),
    ("logical_and", "dl.logical_and({a}, {b})", "always", False), ("logical_or", "dl.logical_or({a}, {b})", "always", False),
    ("logical_xor", "dl.logical_xor({a}, {b})", "always", False),
    ("bitwise_and", "{a} & {b}", "always", False), ("bitwise_or", "{a} | {b}", "always", False),
    ("bitwise_xor", "{a} ^ {b}", "always", False), ("atan2", "dl.atan2({a}, {b})", "never", True),
    ("pow", "dl.pow({a}, {b})", "never", True),
]:
    op(_name, "binary", 2, _exact, _cont)(lambda r, a, b, _e=_expr: _e.format(a=a.name, b=b.name))

for _name, _expr, _cont in [
    ("add_scalar", "{a} + {s}", True), ("rsub_scalar", "{s} - {a}", True), ("mul_scalar", "{a} * {s}", True),
    ("div_scalar", "{a} / {s}", True), ("rdiv_scalar", "{s} / {a}", False), ("floor_divide_scalar", "{a} // {s}", False),
    ("remainder_scalar", "{a} % {s}", False), ("fmod_scalar", "dl.fmod({a}, {s})", False),
    ("lt_scalar", "{a} < {s}", False), ("eq_scalar", "{a} == {s}", False), ("maximum_scalar", "dl.clamp_min({a}, {s})", True),
]:
    op(_name, "scalar", 1, "always", _cont)(lambda r, a, _e=_expr: _e.format(a=a.name, s=scalar(r, a.t)))


@op("where", "ternary", 3, continuous=False)  # the condition compares: exact operands only
def _where(r, c, a, b):
    cond = c.name if c.t.dtype == dl.bool else f"({c.name} > 0)"
    other = b.name if r.random() < 0.7 else scalar(r, a.t)
    return f"dl.where({cond}, {a.name}, {other})"


@op("masked_fill", "ternary", 2, continuous=False)
def _masked_fill(r, a, m):
    mask = m.name if m.t.dtype == dl.bool else f"({m.name} < 0)"
    return f"{a.name}.masked_fill({mask}, {scalar(r, a.t)})"


@op("lerp", "ternary", 3, exact="never")
def _lerp(r, a, b, w):
    weight = w.name if r.random() < 0.5 else r.choice(["0.25", "0.75", "0.5"])
    return f"dl.lerp({a.name}, {b.name}, {weight})"


@op("addcmul", "ternary", 3)
def _addcmul(r, a, b, c):
    return f"dl.addcmul({a.name}, {b.name}, {c.name}, value={r.choice([1, 0.5, -2])})"


@op("addcdiv", "ternary", 3, continuous=False)
def _addcdiv(r, a, b, c):
    return f"dl.addcdiv({a.name}, {b.name}, {c.name}, value={r.choice([1, 0.5, -2])})"


@op("clamp_tensor", "ternary", 3)
def _clamp_tensor(r, a, lo, hi):
    return f"dl.clamp({a.name}, {lo.name}, {hi.name})"


# ---- reductions and normalizations ----------------------------------------------------------
@op("reduce", "reduction", exact="ints", continuous=True)
def _reduce(r, a):
    name = r.choice(["sum", "mean", "amax", "amin", "prod", "var", "std", "logsumexp", "nansum"])
    d, keep = dims(r, a.t), r.random() < 0.4
    if name in ("var", "std") and r.random() < 0.5:
        return f"{a.name}.{name}({d!r}, correction={r.choice([0, 1, 2])}, keepdim={keep})"
    if d is None and name != "sum":
        return f"{a.name}.{name}()" if name not in ("logsumexp",) else None
    return f"dl.{name}({a.name}, {d!r}, keepdim={keep})" if name in ("logsumexp", "nansum") \
        else f"{a.name}.{name}({d!r}, keepdim={keep})"


@op("extremum", "reduction", continuous=False)
def _extremum(r, a):
    name, d, keep = r.choice(["max", "min", "argmax", "argmin"]), dim(r, a.t), r.random() < 0.4
    if r.random() < 0.2:
        return f"{a.name}.{name}()"
    part = "" if name.startswith("arg") else r.choice([".values", ".indices", "[0]"])
    return f"{a.name}.{name}({d}, keepdim={keep}){part}"


@op("any_all", "reduction", continuous=False)
def _any_all(r, a):
    name = r.choice(["any", "all"])
    return f"{a.name}.{name}({dim(r, a.t)})" if r.random() < 0.6 else f"{a.name}.{name}()"


@op("cumsum", "reduction", exact="ints")
def _cumsum(r, a):
    return f"{a.name}.{r.choice(['cumsum', 'cumprod'])}({dim(r, a.t)})"


@op("softmax", "normalization", exact="never")
def _softmax(r, a):
    name = r.choice(["softmax", "log_softmax"])
    return f"F.{name}({a.name}, {dim(r, a.t)})" if is_float(a.t) else None


@op("norm", "normalization", exact="never")
def _norm(r, a):
    if a.t.ndim == 0 or not is_float(a.t):
        return None
    k = r.randint(1, a.t.ndim)
    shape = tuple(a.t.shape[-k:])
    kind = r.choice(["layer_norm", "layer_norm_affine", "rms_norm", "normalize"])
    if kind == "layer_norm":
        return f"F.layer_norm({a.name}, {shape})"
    if kind == "layer_norm_affine":
        return f"F.layer_norm({a.name}, {shape}, dl.linspace(0.5, 1.5, {shape[-1]}), dl.full({shape}, 0.25))"
    if kind == "rms_norm":
        return f"F.rms_norm({a.name}, {shape}, eps={r.choice(['None', '1e-5'])})"
    return f"F.normalize({a.name}, dim={dim(r, a.t)})"


# ---- contractions, convolutions, pooling (weights are new inputs: ``r.new_input``) -----------
@op("matmul", "contraction", exact="never")
def _matmul(r, a):
    if a.t.ndim == 0 or not is_float(a.t):
        return None
    k, n = a.t.shape[-1], r.choice([1, 3, 5])
    if a.t.ndim == 1 or r.random() < 0.6:
        return f"{a.name} @ {r.new_input((k, n), a.t.dtype)}"
    if a.t.ndim == 3 and r.random() < 0.5:
        return f"dl.bmm({a.name}, {r.new_input((a.t.shape[0], k, n), a.t.dtype)})"
    return f"dl.matmul({a.name}, {r.new_input(tuple(a.t.shape[:-2]) + (k, n), a.t.dtype)})"


@op("linear", "contraction", exact="never")
def _linear(r, a):
    if a.t.ndim == 0 or not is_float(a.t):
        return None
    k, n = a.t.shape[-1], r.choice([1, 2, 4])
    weight = r.new_input((n, k), a.t.dtype)
    bias_shape = r.choice([None, (n,), (1,), ()])
    bias = "None" if bias_shape is None else r.new_input(bias_shape, a.t.dtype)
    return f"F.linear({a.name}, {weight}, {bias})"


@op("addmm", "contraction", exact="never")
def _addmm(r, a):
    if a.t.ndim != 2 or not is_float(a.t):
        return None
    m, k, n = *a.t.shape, r.choice([1, 3])
    bias = r.new_input(r.choice([(n,), (1, n), (m, n), (1,), (), (m, 1)]), a.t.dtype)
    extra = r.choice(["", ", beta=0.5", ", alpha=2.0", ", beta=0"])
    return f"dl.addmm({bias}, {a.name}, {r.new_input((k, n), a.t.dtype)}{extra})"


@op("conv2d", "conv", exact="never")
def _conv2d(r, a):
    if a.t.ndim != 4 or not is_float(a.t) or a.t.dtype not in (dl.float32, dl.float64) or min(a.t.shape) == 0:
        return None
    n, c, h, w = a.t.shape
    groups = r.choice([g for g in (1, 2, 3) if c % g == 0])
    out = groups * r.choice([1, 2])
    kh, kw = r.choice([1, 2, 3]), r.choice([1, 3])
    stride, padding, dilation = r.choice([1, 2, (2, 1)]), r.choice([0, 1, (1, 0)]), r.choice([1, 1, 2])
    weight = r.new_input((out, c // groups, kh, kw), a.t.dtype)
    bias = r.new_input((out,), a.t.dtype) if r.random() < 0.6 else "None"
    return (f"F.conv2d({a.name}, {weight}, {bias}, stride={stride!r}, padding={padding!r}, dilation={dilation}, "
            f"groups={groups})")


@op("pool2d", "conv", exact="never")
def _pool2d(r, a):
    if a.t.ndim != 4 or not is_float(a.t) or min(a.t.shape) == 0:
        return None
    k = r.choice([1, 2, 3])
    stride, padding = r.choice([None, 1, 2]), r.choice([0, k // 2])
    ceil = r.random() < 0.3
    if r.random() < 0.5:
        return (f"F.max_pool2d({a.name}, {k}, stride={stride}, padding={padding}, dilation={r.choice([1, 2])}, "
                f"ceil_mode={ceil})")
    include = r.random() < 0.5
    return f"F.avg_pool2d({a.name}, {k}, stride={stride}, padding={padding}, ceil_mode={ceil}, count_include_pad={include})"


# ---- shapes, views, indexing --------------------------------------------------------------
@op("view", "shape")
def _view(r, a):
    t, name = a.t, a.name
    choices = [f"{name}.reshape(-1)", f"{name}.flatten()", f"{name}.contiguous()", f"{name}.unsqueeze({r.randint(0, t.ndim)})"]
    if t.ndim >= 2:
        choices += [f"{name}.t()" if t.ndim == 2 else f"{name}.transpose(0, -1)", f"{name}.flatten(1)",
                    f"{name}.permute(*{list(reversed(range(t.ndim)))})", f"{name}.mT"]
    if t.ndim >= 1:
        choices += [f"{name}.view({t.shape[0]}, -1)" if t.numel() else f"{name}.reshape(-1)",
                    f"{name}.unsqueeze(0).expand(2, *{tuple(t.shape)})", f"{name}.squeeze()"]
    return r.choice(choices)


@op("slice", "shape")
def _slice(r, a):
    if a.t.ndim == 0:
        return None
    parts = [r.choice([":", "1:", "::2", ":-1", "1::2", "0"]) for _ in range(r.randint(1, a.t.ndim))]
    if r.random() < 0.2:
        parts = ["...", r.choice(["0", "-1", "None"])]
    return f"{a.name}[{', '.join(parts)}]"


@op("cat", "shape", 2)
def _cat(r, a, b):
    if a.t.shape != b.t.shape or a.t.ndim == 0:
        return None
    if r.random() < 0.5:
        return f"dl.stack([{a.name}, {b.name}], {r.randint(-a.t.ndim - 1, a.t.ndim)})"
    return f"dl.cat([{a.name}, {b.name}, {a.name}], {dim(r, a.t)})"


@op("split", "shape")
def _split(r, a):
    if a.t.ndim == 0 or a.t.shape[0] == 0:
        return None
    d = dim(r, a.t)
    if r.random() < 0.5:
        return f"{a.name}.split({r.choice([1, 2, 3])}, {d})[{r.choice([0, -1])}]"
    return f"{a.name}.chunk({r.choice([2, 3])}, {d})[0]"


@op("index_select", "indexing", continuous=True)
def _index_select(r, a):
    if a.t.ndim == 0:
        return None
    d = dim(r, a.t)
    size = a.t.shape[d]
    if size == 0:
        return None
    index = [r.randrange(size) for _ in range(r.randint(1, 4))]
    return f"{a.name}.index_select({d}, dl.tensor({index}))"


@op("gather", "indexing")
def _gather(r, a):
    if a.t.ndim == 0 or 0 in tuple(a.t.shape):
        return None
    d = dim(r, a.t)
    shape = list(a.t.shape)
    seed = r.randrange(1000)
    return f"{a.name}.gather({d}, (dl.arange({a.t.numel()}).reshape({shape}) * {seed}) % {shape[d]})"


# ---- in-place on intermediates and on views of them ----------------------------------------
@op("inplace", "inplace", 2)
def _inplace(r, a, b):
    kind = r.choice(["add_", "mul_", "sub_", "clamp_", "relu_", "copy_", "masked_fill_", "view_mul_", "setitem",
                     "zero_", "div_"])
    if kind == "clamp_":
        return f"{a.name}.clamp_(min=0)"
    if kind in ("relu_", "zero_"):
        return f"{a.name}.{kind}()"
    if kind == "masked_fill_":
        return f"{a.name}.masked_fill_({b.name} > 0, {scalar(r, a.t)})"
    if kind == "view_mul_":
        return Statement(f"{a.name}[1:].mul_(-2)" if a.t.ndim else f"{a.name}.mul_(-2)", a.name)
    if kind == "setitem":
        return None if a.t.ndim == 0 else Statement(f"{a.name}[0] = {scalar(r, a.t)}", a.name)
    return f"{a.name}.{kind}({b.name})"
