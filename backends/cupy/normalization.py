"""Fused softmax, log_softmax and layer_norm kernels: one pass per statistic over each row."""
from __future__ import annotations

import math

from .c_types import cast, ctype, literal, math_fn
from .kernel import ROWS, make_kernel
from .rows import RowSpace, choose_launch, indent, loop_header


def _combine(launch: str, var: str, functor: str) -> list:
    """Combine the threads' partial ``var`` across the block (a thread per row needs nothing)."""
    return [f"  {var} = dl_block_reduce({var}, dl_partial, {functor}());"] if launch == ROWS else []


def _loop(space: RowSpace, launch: str, prefix: str, inner: list) -> list:
    """An element loop over the current row computing the element into ``<prefix>elem``."""
    _, elements = loop_header(space, launch)
    lines, value, extras, offsets = space.element("r", prefix)
    return ["  " + elements, *indent(lines, 2), *indent(inner(value, extras, offsets), 2), "  }"]


def _contiguous_over(node) -> tuple:
    meta = node.meta["val"]
    return tuple(meta._strides)


def build_softmax(node, sources: list, members: list, target):
    """softmax / log_softmax of ``target`` along ``node.args[1]`` (max, sum of exp, write)."""
    log = node.target.name == "log_softmax"
    out = node.meta["val"]._dtype
    T = ctype(out).compute
    shape = tuple(target.meta["val"]._sizes)
    space = RowSpace(shape, (node.args[1],), sources, members, target, outputs=[(node, _contiguous_over(node))])
    launch = choose_launch(space.rows, space.row_size)
    exp = math_fn("exp", out)

    def x(value) -> str:
        return cast(value.expr, value.dtype, out)

    body = [f"DL_SHARED({T}, dl_partial);"] if launch == ROWS else []
    rows, _ = loop_header(space, launch)
    body += [rows, *indent(space.outer_lines), f"  {T} peak = {literal(-math.inf, out)};"]
    body += _loop(space, launch, "a_", lambda v, e, o: [f"peak = dl_max(peak, {x(v)});"])
    body += _combine(launch, "peak", "DlMax")
    body += [f"  {T} total = {literal(0, out)};"]
    body += _loop(space, launch, "b_", lambda v, e, o: [f"total += {exp}({x(v)} - peak);"])
    body += _combine(launch, "total", "DlSum")
    if log:
        body += [f"  const {T} log_total = {math_fn('log', out)}(total);"]
        result = "({x} - peak - log_total)"
    else:
        result = "(" + exp + "({x} - peak) / total)"
    store = ctype(out).store
    body += _loop(space, launch, "c_",
                  lambda v, e, o: [f"out0[{o[0]}] = {store.format(result.format(x=x(v)))};"])
    body.append("}")
    return make_kernel(node.target.name, space.params, body, launch=launch, work=space.rows,
                       shared_itemsize=ctype(out).compute_itemsize if launch == ROWS else 0,
                       row_size=space.row_size, inputs=tuple(space.reads), outputs=(node,),
                       nodes=tuple(members) + (node,))


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
    space = RowSpace(shape, reduced, sources, members, target, extras=extras,
                     outputs=[(node, _contiguous_over(node))])
    launch = choose_launch(space.rows, space.row_size)
    n = literal(space.row_size, out)

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

    body = [f"DL_SHARED({T}, dl_partial);"] if launch == ROWS else []
    rows, _ = loop_header(space, launch)
    body += [rows, *indent(space.outer_lines), f"  {T} total = {literal(0, out)};"]
    body += _loop(space, launch, "a_", lambda v, e, o: [f"total += {x(v)};"])
    body += _combine(launch, "total", "DlSum")
    body += [f"  const {T} mean = total / {n};", f"  {T} squares = {literal(0, out)};"]
    body += _loop(space, launch, "b_", lambda v, e, o: [f"const {T} d = {x(v)} - mean;", "squares += d * d;"])
    body += _combine(launch, "squares", "DlSum")
    body += [f"  const {T} rstd = {literal(1, out)} / {math_fn('sqrt', out)}(squares / {n} + {literal(eps, out)});"]
    body += _loop(space, launch, "c_", write)
    body.append("}")
    return make_kernel("layer_norm", space.params, body, launch=launch, work=space.rows,
                       shared_itemsize=ctype(out).compute_itemsize if launch == ROWS else 0,
                       row_size=space.row_size, inputs=tuple(space.reads), outputs=(node,),
                       nodes=tuple(members) + (node,))
