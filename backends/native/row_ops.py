"""Row-wise reductions and normalizations in C: which calls are lowered, and each op's loop body.

NOTE: [native rows] A reduction or normalization reads its input as *rows*: the reduced
dims (consecutive dims of the input, merged into one dim of length ``R``) and, around
them, the kept dims (each row's position, at run time: sizes and strides per operand).
Every operand must step through a row by 1 (contiguous) or 0 (broadcast, e.g. a
reduction's own output or a kept-dim bias), so each pass over a row is a unit-stride
loop gcc vectorizes. Sums accumulate in double (float32 and float64 inputs alike): at
least as exact as NumPy's pairwise float32 sums eager uses, within torch's float32
tolerance. Each body repeats eager's operation order in the output dtype otherwise
(softmax: max, exp of the difference, sum, scaling by the sum's reciprocal; layer_norm: mean, mean of squared
deviations, ``+ eps``, ``1 / sqrt``, scale, shift), so NaN and infinity come out as in
eager (a NaN anywhere in a row makes the max NaN, and so the whole row, as NumPy's
``amax`` does). Anything else (other dtypes, a ``dtype=`` cast, strided rows,
non-consecutive dims) keeps the NumPy backend's code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES, literal


@dataclass
class RowSpec:
    """What a lowerable row op reads and computes.

    Attributes:
        dims: the reduced dims of the input (consecutive, ascending).
        extras: tensors read per row element besides the input (layer_norm's weight, bias).
        params: constants of the body (eps, correction).
        keeps_shape: the output has the input's shape (normalizations), else the reduced shape.
    """

    dims: tuple
    extras: list = field(default_factory=list)
    params: dict = field(default_factory=dict)
    keeps_shape: bool = False


def _dtype_of(node):
    return getattr(getattr(node.meta.get("val"), "_dtype", None), "numpy", None)


def _ndim(node) -> int:
    return len(node.meta["val"]._sizes)


def _normalization(node):
    if node.kwargs or len(node.args) not in (2, 3) or (len(node.args) == 3 and node.args[2] is not None):
        return None
    return RowSpec((node.args[1],), keeps_shape=True)


def _layer_norm(node):
    if node.kwargs:
        return None
    defaults = [None, None, 1e-5]  # weight, bias, eps
    x, shape, weight, bias, eps = list(node.args) + defaults[len(node.args) - 2:]
    if len(node.args) > 5 or type(eps) not in (int, float):
        return None
    ndim = _ndim(x)
    extras = [t for t in (weight, bias) if t is not None]
    return RowSpec(tuple(range(ndim - len(shape), ndim)), extras, {"eps": float(eps), "weight": weight is not None,
                                                                   "bias": bias is not None}, keeps_shape=True)


def _reduction(*allowed):
    def parse(node):
        if len(node.args) != 1 or set(node.kwargs) - {"dim", "keepdim", *allowed}:
            return None
        if node.kwargs.get("dtype") is not None:
            return None
        dims = node.kwargs.get("dim")
        dims = tuple(range(_ndim(node.args[0]))) if dims is None else tuple(dims)
        correction = node.kwargs.get("correction")
        return RowSpec(dims, params={"correction": 1.0 if correction is None else float(correction)})

    return parse


def parse_row_call(node) -> RowSpec | None:
    """The RowSpec of ``node`` when it has a C row lowering (see NOTE: [native rows]), else None."""
    if node.op != "call_function" or getattr(node.target, "name", None) not in ROW_BODIES:
        return None
    source = node.args[0] if node.args else None
    if not isinstance(source, Node) or _dtype_of(node) not in C_TYPES or _dtype_of(source) != _dtype_of(node):
        return None
    if _ndim(source) == 0:
        return None
    spec = PARSERS[node.target.name](node)
    if spec is None or not spec.dims or spec.dims != tuple(range(spec.dims[0], spec.dims[-1] + 1)):
        return None
    if any(not isinstance(t, Node) or _dtype_of(t) != _dtype_of(node) for t in spec.extras):
        return None
    return spec


# -- loop bodies ----------------------------------------------------------------------------
class BodyContext:
    """What a body writes with: the element type, the row input's definition, the operands.

    Attributes:
        t: the C element type; ``acc`` the accumulator type (double).
        element: lines defining ``x`` (the input element at index ``i``) inside a loop.
        out: the output pointer (a row for normalizations, one element for reductions).
        extra: pointers of the extras (``w``, ``b``) in the RowSpec's order.
        params: the RowSpec's params.
    """

    def __init__(self, t, element, out, extra, params):
        self.t, self.acc, self.element, self.out, self.extra, self.params = t, "double", element, out, extra, params

    def loop(self, reduction: str = "", body: list = (), element: bool = True) -> list:
        """A vectorized loop over the row running ``body`` (with ``x`` defined unless not ``element``)."""
        pragma = f"#pragma omp simd {reduction}".rstrip()
        lines = (self.element if element else []) + list(body)
        return [pragma, "for (int64_t i = 0; i < R; i++) {", *("  " + line for line in lines), "}"]

    def lit(self, value) -> str:
        return literal(value, self.t)

    def total(self, name: str = "acc", value: str = "x") -> list:
        """``name`` = the double sum of ``value`` over the row."""
        return [f"double {name} = 0;"] + self.loop(f"reduction(+:{name})", [f"{name} += (double)({value});"])

    def extremum(self, greater: bool) -> list:
        """``m`` = the row's max (min), NaN if the row holds one (as NumPy's amax/amin)."""
        start, better = ("-INFINITY", ">") if greater else ("INFINITY", "<")
        kind = "max" if greater else "min"
        return ([f"{self.t} m = ({self.t}){start};", "int nan = 0;"]
                + self.loop(f"reduction({kind}:m) reduction(|:nan)", [f"m = x {better} m ? x : m;", "nan |= x != x;"])
                + [f"if (nan) m = ({self.t})NAN;"])

    def mean_of_row(self) -> list:
        return self.total() + [f"const {self.t} mean = ({self.t})(acc / (double)R);"]


def _fn(ctx, name, arg) -> str:
    return f"{name}{'f' if ctx.t == 'float' else ''}({arg})"


def _sum(ctx):
    return ctx.total() + [f"{ctx.out}[0] = ({ctx.t})acc;"]


def _mean(ctx):
    return ctx.mean_of_row() + [f"{ctx.out}[0] = mean;"]


def _variance(ctx, root: bool):
    # NumPy's var: the mean, the sum of squared deviations, divided by max(R - correction, 0).
    correction = ctx.params["correction"]
    lines = ctx.total() + ["const double mu = acc / (double)R;"]
    lines += ctx.total("ss", "(x - mu) * (x - mu)")
    lines.append(f"double dof = (double)R - {correction!r}; if (dof < 0) dof = 0;")
    value = "sqrt(ss / dof)" if root else "ss / dof"
    return lines + [f"{ctx.out}[0] = ({ctx.t})({value});"]


def _extremum_body(greater):
    return lambda ctx: ctx.extremum(greater) + [f"{ctx.out}[0] = m;"]


def _softmax(ctx):
    t = ctx.t
    lines = ctx.extremum(True)
    lines += ["double acc = 0;"] + ctx.loop("reduction(+:acc)", [f"const {t} e = {_fn(ctx, 'exp', 'x - m')};",
                                                               f"{ctx.out}[i] = e;", "acc += (double)e;"])
    # The total is in [1, R] (the max's own term is 1) or NaN: multiplying by its reciprocal
    # instead of dividing (eager) is within an ulp and keeps NaN.
    lines.append(f"const {t} scale = {ctx.lit(1.0)} / ({t})acc;")
    return lines + ctx.loop(body=[f"{ctx.out}[i] = {ctx.out}[i] * scale;"], element=False)


def _log_softmax(ctx):
    t = ctx.t
    lines = ctx.extremum(True) + ctx.total(value=_fn(ctx, "exp", "x - m"))
    lines.append(f"const {t} lse = {_fn(ctx, 'log', f'({t})acc')};")
    return lines + ctx.loop(body=[f"{ctx.out}[i] = (x - m) - lse;"])


def _layer_norm_body(ctx):
    t, params = ctx.t, ctx.params
    lines = ctx.mean_of_row()
    lines += ctx.total("ss", f"({t})((x - mean) * (x - mean))")
    lines.append(f"const {t} var = ({t})(ss / (double)R) + {ctx.lit(params['eps'])};")
    lines.append(f"const {t} rstd = {ctx.lit(1.0)} / {_fn(ctx, 'sqrt', 'var')};")
    value = "(x - mean) * rstd"
    extras = iter(ctx.extra)
    if params["weight"]:
        value = f"({value}) * {next(extras)}[i]"
    if params["bias"]:
        value = f"({value}) + {next(extras)}[i]"
    return lines + ctx.loop(body=[f"{ctx.out}[i] = {value};"])


# op name -> body(BodyContext) -> C lines computing one row.
ROW_BODIES = {
    "sum": _sum,
    "mean": _mean,
    "var": lambda ctx: _variance(ctx, False),
    "std": lambda ctx: _variance(ctx, True),
    "amax": _extremum_body(True),
    "amin": _extremum_body(False),
    "max": _extremum_body(True),
    "min": _extremum_body(False),
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "layer_norm": _layer_norm_body,
}

PARSERS = {
    "sum": _reduction("dtype"),
    "mean": _reduction("dtype"),
    "var": _reduction("correction"),
    "std": _reduction("correction"),
    "amax": _reduction(),
    "amin": _reduction(),
    "max": _reduction(),
    "min": _reduction(),
    "softmax": _normalization,
    "log_softmax": _normalization,
    "layer_norm": _layer_norm,
}
