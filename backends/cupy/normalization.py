"""Fused softmax, log_softmax and layer_norm kernels: one pass per statistic over each row."""
from __future__ import annotations

import math

from .c_types import cast, ctype, literal, math_fn
from .rows import RowSpace, row_reduce


def _output_strides(node) -> tuple:
    return tuple(node.meta["val"]._strides)


def build_softmax(node, sources: list, members: list, target):
    """softmax / log_softmax of ``target`` along ``node.args[1]`` (max, sum of exp, write)."""
    log = node.target.name == "log_softmax"
    out = node.meta["val"]._dtype
    T = ctype(out).compute
    shape = tuple(target.meta["val"]._sizes)
    space = RowSpace(shape, (node.args[1],), sources, members, target, outputs=[(node, _output_strides(node))])
    exp = math_fn("exp", out)

    def x(value) -> str:
        return cast(value.expr, value.dtype, out)

    body = space.row_loop() + [f"  {T} peak = {literal(-math.inf, out)};"]
    body += space.element_loop("a_", lambda v, e, o: [f"peak = dl_max(peak, {x(v)});"])
    S = space.sum_dtype(out)  # NOTE: [summation order]
    body += [row_reduce("peak", "DlMax"), f"  {ctype(S).compute} total = {literal(0, S)};"]
    body += space.element_loop("b_", lambda v, e, o: [f"total += {cast(f'{exp}({x(v)} - peak)', out, S)};"])
    body += [row_reduce("total", "DlSum")]
    if log:
        body += [f"  const {T} log_total = {math_fn('log', out)}({cast('total', S, out)});"]
        result = "({x} - peak - log_total)"
    else:
        body += [f"  const {T} row_total = {cast('total', S, out)};"]
        result = "(" + exp + "({x} - peak) / row_total)"
    store = ctype(out).store
    body += space.element_loop("c_", lambda v, e, o: [f"out0[{o[0]}] = {store.format(result.format(x=x(v)))};"])
    body.append("}")
    return space.kernel(node.target.name, body, node, (out, S))


def layer_norm_args(node) -> tuple:
    """``(input, normalized_shape, weight, bias, eps)`` of a layer_norm node."""
    args = list(node.args) + [None] * (5 - len(node.args))
    eps = args[4] if args[4] is not None else node.kwargs.get("eps", 1e-5)
    return args[0], tuple(args[1]), args[2], args[3], eps


def build_layer_norm(node, sources: list, members: list, target):
    """layer_norm over the trailing dims: mean, variance of deviations, then scale and shift."""
    _, normalized, weight, bias, eps = layer_norm_args(node)
    out = node.meta["val"]._dtype
    T = ctype(out).compute
    shape = tuple(target.meta["val"]._sizes)
    reduced = tuple(range(len(shape) - len(normalized), len(shape)))
    extras = [p for p in (weight, bias) if p is not None]
    space = RowSpace(shape, reduced, sources, members, target, extras=extras, outputs=[(node, _output_strides(node))])

    def x(value) -> str:
        return cast(value.expr, value.dtype, out)

    def write(value, extra_values, offsets) -> list:
        lines = [f"{T} y = ({x(value)} - mean) * rstd;"]
        remaining = list(extra_values)
        if weight is not None:
            lines.append(f"y = y * {x(remaining.pop(0))};")
        if bias is not None:
            lines.append(f"y = y + {x(remaining.pop(0))};")
        return lines + [f"out0[{offsets[0]}] = {ctype(out).store.format('y')};"]

    # NOTE: [summation order]; the deviations and their squares are rounded to T first, as eager's are.
    S = space.sum_dtype(out)
    acc, n = ctype(S).compute, f"({ctype(S).compute}){space.row_size_arg}"
    body = space.row_loop() + [f"  {acc} total = {literal(0, S)};"]
    body += space.element_loop("a_", lambda v, e, o: [f"total += {cast(x(v), out, S)};"])
    body += [row_reduce("total", "DlSum"), f"  const {T} mean = {cast(f'total / {n}', S, out)};",
             f"  {acc} squares = {literal(0, S)};"]
    body += space.element_loop("b_", lambda v, e, o: [f"const {T} d = {x(v)} - mean;",
                                                      f"squares += {cast('d * d', out, S)};"])
    body += [row_reduce("squares", "DlSum"),
             f"  const {T} variance = {cast(f'squares / {n}', S, out)} + {literal(eps, out)};",
             f"  const {T} rstd = {literal(1, out)} / {math_fn('sqrt', out)}(variance);"]
    body += space.element_loop("c_", write)
    body.append("}")
    return space.kernel("layer_norm", body, node, (S,))
