"""Row-wise reductions and normalizations in C: which calls are lowered, and each op's loop body.

NOTE: [native rows] A reduction or normalization reads its input as *rows*: the reduced
dims (consecutive dims of the input, merged into one dim of length ``R``) and, around
them, the kept dims (each row's position, at run time: sizes and strides per operand).
Every operand must step through a row by 1 (contiguous) or 0 (broadcast, e.g. a
reduction's own output or a kept-dim bias), so each pass over a row is a unit-stride
loop gcc vectorizes. Sums run in the element type in NumPy's pairwise order (NOTE:
[native sums]), and each body repeats eager's operation order in the element type
(softmax: max, exp of the difference, sum, scaling by the sum's reciprocal; layer_norm: mean, mean of squared
deviations, ``+ eps``, ``1 / sqrt``, scale, shift), so NaN and infinity come out as in
eager (a NaN anywhere in a row makes the max NaN, and so the whole row, as NumPy's
``amax`` does). Anything else (other dtypes, a ``dtype=`` cast, strided rows,
non-consecutive dims) keeps the NumPy backend's code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from dynamo_lite.graph.node import Node

from .c_ops import C_TYPES, literal, math_call
from .pairwise import pairwise_function
from .vmath import EXP_NORMAL_LOW


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
        t: the C element type (sums accumulate in it, as NumPy's do).
        element: lines defining ``x`` (the input element at index ``i``) inside a loop.
        out: the output pointer (a row for normalizations, one element for reductions).
        extra: pointers of the extras (``w``, ``b``) in the RowSpec's order.
        params: the RowSpec's params.
        name: the row kernel's C name (its helper functions are named after it).
        pointers: the row pointers' declarations (``const float* restrict a0``, ...) and ``names``.
        helpers: C functions the body calls (emitted before the kernel).
    """

    def __init__(self, t, element, out, extra, params, name="dl_row", pointers=(), names=()):
        self.t, self.element, self.out, self.extra, self.params = t, element, out, extra, params
        self.name, self.pointers, self.names = name, list(pointers), list(names)
        self.helpers: list = []

    def loop(self, reduction: str = "", body: list = (), element: bool = True) -> list:
        """A vectorized loop over the row running ``body`` (with ``x`` defined unless not ``element``)."""
        pragma = f"#pragma omp simd {reduction}".rstrip()
        lines = (self.element if element else []) + list(body)
        return [pragma, "for (int64_t i = 0; i < R; i++) {", *("  " + line for line in lines), "}"]

    def lit(self, value) -> str:
        return literal(value, self.t)

    def total(self, name: str = "acc", value: str = "x", scalars: tuple = (), element: bool = True) -> list:
        """``name`` = the sum of ``value`` over the row in NumPy's pairwise order (NOTE: [native sums]);
        ``scalars`` are the row's constants ``value`` reads, ``x`` is defined unless not ``element``."""
        function = f"{self.name}_sum{len(self.helpers)}"
        parameters = ", ".join(self.pointers + [f"{self.t} {s}" for s in scalars] + ["int64_t lo", "int64_t n"])
        self.helpers.append(pairwise_function(function, self.t, parameters, self.names + list(scalars),
                                              self.element if element else [], value))
        arguments = ", ".join(self.names + list(scalars) + ["0", "R"])
        return [f"const {self.t} {name} = ({self.t})0 + {function}({arguments});"]

    def extremum(self, greater: bool, least: bool = False) -> list:
        """``m`` = the row's max (min), NaN if the row holds one (as NumPy's amax/amin); with ``least``
        also ``lo``, the least element (the same pass: the row is read from memory once)."""
        start, better = ("-INFINITY", ">") if greater else ("INFINITY", "<")
        kind = "max" if greater else "min"
        declare = [f"{self.t} m = ({self.t}){start};", "int nan = 0;"]
        reduction = f"reduction({kind}:m) reduction(|:nan)"
        body = [f"m = x {better} m ? x : m;", "nan |= x != x;"]
        if least:
            declare.append(f"{self.t} lo = ({self.t})INFINITY;")
            reduction += " reduction(min:lo)"
            body.append("lo = x < lo ? x : lo;")
        return declare + self.loop(reduction, body) + [f"if (nan) m = ({self.t})NAN;"]

    def mean_of(self, name: str, total: str) -> str:
        """NumPy's mean: the sum divided by the count in double, rounded to the element type."""
        return f"const {self.t} {name} = ({self.t})((double){total} / (double)R);"

    def mean_of_row(self) -> list:
        return self.total() + [self.mean_of("mean", "acc")]


def _fn(ctx, name, arg) -> str:
    return math_call(name, ctx.t, arg)


def _sum(ctx):
    return ctx.total() + [f"{ctx.out}[0] = acc;"]


def _mean(ctx):
    return ctx.mean_of_row() + [f"{ctx.out}[0] = mean;"]


def _variance(ctx, root: bool):
    # NumPy's var: the mean, the sum of squared deviations in the element type, divided in
    # double by max(R - correction, 0); std is the element type's sqrt of that.
    t, correction = ctx.t, ctx.params["correction"]
    lines = ctx.mean_of_row()
    lines += ctx.total("ss", "(x - mean) * (x - mean)", ("mean",))
    lines.append(f"double dof = (double)R - {correction!r}; if (dof < 0) dof = 0;")
    lines.append(f"const {t} var = ({t})((double)ss / dof);")
    return lines + [f"{ctx.out}[0] = {_fn(ctx, 'sqrt', 'var') if root else 'var'};"]


def _extremum_body(greater):
    return lambda ctx: ctx.extremum(greater) + [f"{ctx.out}[0] = m;"]


def _exp_terms(ctx) -> list:
    """``m`` = the row's max, ``out[i] = exp(x - m)`` (a loop of its own: as wide as the vectors, where
    the pairwise sum's leaves run 8 lanes), ``acc`` = their sum (eager's order).

    A row whose max is NaN or infinite comes out all NaN in eager (a NaN term, or inf - inf,
    reaches the sum); every other row has ``x - m`` in [-inf, 0], where exp cannot overflow.
    A float32 row whose least ``x - m`` is at least ``EXP_NORMAL_LOW`` (most rows: no -inf, no
    denormal term) takes an exp without the denormal and -inf paths, a fifth cheaper.
    """
    out, t = ctx.out, ctx.t
    fill_nan = ctx.loop(body=[f"{out}[i] = ({t})NAN;"], element=False)
    nan_row = ["if (m != m || m == INFINITY || m == -INFINITY) {", *_indent(fill_nan), "  continue;", "}"]
    total = ctx.total("acc", f"{out}[i]", element=False)
    if t != "float":
        return ctx.extremum(True) + nan_row + ctx.loop(body=[f"{out}[i] = {_fn(ctx, 'exp', 'x - m')};"]) + total
    normal, full = (ctx.loop(body=[f"{out}[i] = {exp}(x - m);"]) for exp in ("dl_expf_normal", "dl_expf_bounded"))
    return (ctx.extremum(True, least=True) + nan_row
            + [f"if (lo - m >= {literal(EXP_NORMAL_LOW, t)}) {{", *_indent(normal), "} else {", *_indent(full), "}"]
            + total)


def _indent(lines) -> list:
    return ["  " + line for line in lines]


def _softmax(ctx):
    # eager divides the terms by their sum; multiplying by its reciprocal is within an ulp (the
    # sum is in [1, R] or NaN), as the exp itself is, and 16 times cheaper than a vector division.
    t = ctx.t
    lines = _exp_terms(ctx) + [f"const {t} scale = {ctx.lit(1.0)} / acc;"]
    return lines + ctx.loop(body=[f"{ctx.out}[i] = {ctx.out}[i] * scale;"], element=False)


def _log_softmax(ctx):
    lines = _exp_terms(ctx) + [f"const {ctx.t} lse = {_fn(ctx, 'log', 'acc')};"]
    return lines + ctx.loop(body=[f"{ctx.out}[i] = (x - m) - lse;"])


def _layer_norm_body(ctx):
    t, params = ctx.t, ctx.params
    lines = ctx.mean_of_row()
    lines += ctx.total("ss", "(x - mean) * (x - mean)", ("mean",))
    lines.append(ctx.mean_of("var0", "ss"))
    lines.append(f"const {t} var = var0 + {ctx.lit(params['eps'])};")
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
