"""Generate a random straight-line tensor program by growing it against eager execution.

Each step draws an op (``ops.OPS``) and operands among the values so far, renders the
statement and runs it eagerly: a statement that raises is drawn again, so every program
is valid eagerly (except, rarely, a last statement that raises on purpose: integer
division by zero). Eager values tell the next op its operands' dtypes and shapes.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace

import numpy as np

import dynamo_lite as dl
import dynamo_lite.nn.functional as F

from .inputs import DTYPES, FLOAT_DTYPES, LAYOUTS, VALUE_KINDS, InputSpec, make_input
from .ops import OPS, FuzzOp, Statement, is_float
from .program import Line, Program

FAMILY_WEIGHTS = {"unary": 3, "binary": 3, "scalar": 2, "ternary": 1.5, "reduction": 2, "normalization": 1,
                  "contraction": 1, "conv": 2, "shape": 2, "indexing": 1, "cast": 1, "inplace": 1.5}
POINTWISE = {"unary": 3, "binary": 3, "scalar": 2, "ternary": 1.5, "inplace": 0.5}


@dataclass(frozen=True)
class Profile:
    """What a program is made of: op families (weights), input dtypes, ranks. ``mixed``
    draws from everything; the others aim at one part of the backends with float32
    chains long enough to fuse (the native backend's C loops, row kernels, GEMM and
    convolution epilogues)."""

    families: dict
    dtypes: tuple
    ranks: tuple
    other_dtype_share: float = 0.4


PROFILES = {
    "mixed": Profile(FAMILY_WEIGHTS, ("float32",) * 3 + ("float64", "float16", "bfloat16", "int32", "int64", "bool"),
                     (0, 1, 1, 2, 2, 3, 4, 4, 4)),
    "pointwise": Profile({**POINTWISE, "cast": 0.3, "shape": 0.5}, ("float32",), (0, 1, 2, 2, 3, 4), 0.1),
    "rows": Profile({**POINTWISE, "reduction": 2, "normalization": 3}, ("float32", "float32", "float64"), (1, 2, 3), 0.05),
    "gemm": Profile({**POINTWISE, "contraction": 4}, ("float32", "float32", "float64"), (1, 2, 2, 3), 0.05),
    "conv": Profile({**POINTWISE, "conv": 4}, ("float32",), (4,), 0.05),
}
MAX_NUMEL = 100_000
MAX_INPUT_NUMEL = 40_000
ATTEMPTS = 40


@dataclass
class Value:
    name: str
    t: dl.Tensor
    exact: bool


class Draw(random.Random):
    """The generator's randomness, and the inputs (weights) ops ask for while rendering."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.pending: dict[str, InputSpec] = {}
        self.count = 0
        self.grad = False  # whether new float inputs require grad

    def new_input(self, shape, dtype) -> str:
        """A new input of ``shape`` and ``dtype`` (kept only if the statement is)."""
        name = f"w{self.count + len(self.pending)}"
        dtype_name = str(dtype).rsplit(".", 1)[-1]
        self.pending[name] = InputSpec(tuple(shape), dtype_name, "normal", self.choice(LAYOUTS[:3]), self.randrange(10**6),
                                       self.grad and dtype_name in FLOAT_DTYPES)
        return name


def _shape(r: random.Random, ranks: tuple) -> tuple:
    rank = r.choice(ranks)
    if rank and r.random() < 0.15:  # large enough for blocked loops and threads, small enough to be quick
        shape = [r.choice([1, 3, 17, 64, 100, 129]) for _ in range(rank - 1)] + [r.choice([31, 128, 257])]
        while _prod(shape) > MAX_INPUT_NUMEL:
            shape[shape.index(max(shape))] //= 3
        return tuple(shape)
    return tuple(r.choice([0] if r.random() < 0.04 else [1, 2, 3, 4, 5, 6, 7]) for _ in range(rank))


def _broadcastable(r: random.Random, shape: tuple) -> tuple:
    if r.random() < 0.6:
        return shape
    shape = shape[r.randint(0, len(shape)):] if r.random() < 0.4 else shape
    return tuple(1 if r.random() < 0.4 else n for n in shape)


def _input_spec(r: random.Random, shape: tuple, main_dtype: str, other_dtype_share: float) -> InputSpec:
    dtype = r.choice(DTYPES) if r.random() < other_dtype_share else main_dtype
    values = r.choice(VALUE_KINDS) if r.random() < 0.5 else "normal"
    layout = r.choice(LAYOUTS) if r.random() < 0.6 else "contiguous"
    return InputSpec(_broadcastable(r, shape), dtype, values, layout, r.randrange(10**6))


def _pick_operands(r: random.Random, fuzz_op: FuzzOp, values: list[Value]) -> list[Value] | None:
    pool = values if fuzz_op.continuous else [v for v in values if v.exact]
    if not pool:
        return None
    # Recent values first: chains of ops are what fusion and epilogues are made of.
    weights = [1 + i for i in range(len(pool))]
    return r.choices(pool, weights=weights, k=fuzz_op.arity)


def _result_exact(fuzz_op: FuzzOp, operands: list[Value]) -> bool:
    if not all(v.exact for v in operands):
        return False
    if fuzz_op.exact == "ints":
        return not any(is_float(v.t) for v in operands)
    return fuzz_op.exact == "always"


def generate(seed: int, min_ops: int = 3, max_ops: int = 15, dynamic_share: float = 0.25,
             backward_share: float = 0.2) -> Program:
    """The program of ``seed`` (deterministic): one with a statement or more."""
    for attempt in range(10):
        program = _generate(seed, Draw(seed + attempt * 1_000_003), min_ops, max_ops, dynamic_share, backward_share)
        if program.lines:
            return program
    raise RuntimeError(f"no statement could be generated for seed {seed}")


def _generate(seed, r, min_ops, max_ops, dynamic_share, backward_share) -> Program:
    profile = PROFILES[r.choice(list(PROFILES))]
    shape = _shape(r, profile.ranks)
    main_dtype = r.choice(profile.dtypes)
    specs = {f"x{i}": _input_spec(r, shape, main_dtype, profile.other_dtype_share) for i in range(r.randint(1, 3))}
    backward = main_dtype in ("float32", "float64") and r.random() < backward_share
    r.grad = backward
    if backward:
        specs = {name: replace(s, requires_grad=s.dtype in FLOAT_DTYPES) for name, s in specs.items()}
    namespace = {"dl": dl, "F": F}
    values = []
    for name, spec in specs.items():
        namespace[name] = make_input(*_spec_args(spec))
        values.append(Value(name, namespace[name], True))
    program = Program(seed, specs, [], [], {v.name: True for v in values}, backward=backward)
    families = list(profile.families)
    for _ in range(r.randint(min_ops, max_ops)):
        for _attempt in range(ATTEMPTS):
            family = r.choices(families, weights=list(profile.families.values()))[0]
            fuzz_op = r.choice([o for o in OPS if o.family == family])
            if _try_step(r, fuzz_op, values, namespace, program):
                break
        if program.lines and program.lines[-1].op.endswith("!raises"):
            break
    last = program.lines[-1].name if program.lines else values[-1].name
    outputs = [v.name for v in values[len(specs):-1] if r.random() < 0.35 and v.name != last]
    program.outputs = list(dict.fromkeys(outputs + [last]))
    if shape and shape[0] > 1 and r.random() < dynamic_share:
        program.resize = (shape[0], shape[0] + r.choice([1, 2, 5]))
    return program


def _prod(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def _spec_args(spec: InputSpec) -> tuple:
    return spec.shape, spec.dtype, spec.values, spec.layout, spec.seed, spec.requires_grad


def _try_step(r: Draw, fuzz_op: FuzzOp, values: list[Value], namespace: dict, program: Program) -> bool:
    operands = _pick_operands(r, fuzz_op, values)
    r.pending = {}
    rendered = operands and fuzz_op.render(r, *operands)
    if not rendered:
        return False
    name = f"v{len(program.lines)}"
    text = (f"{rendered.text}\n{name} = {rendered.result}" if isinstance(rendered, Statement)
            else f"{name} = {rendered}")
    for input_name, spec in r.pending.items():
        namespace[input_name] = make_input(*_spec_args(spec))
    try:
        with np.errstate(all="ignore"):
            exec(text, namespace)
    except Exception as exc:  # drawn again, unless it is the integer division by zero we look for
        if "ZeroDivisionError" in str(exc) and r.random() < 0.5:
            _commit(r, program, Line(text, name, fuzz_op.name + "!raises", True))
            return True
        return False
    result = namespace[name]
    if not isinstance(result, dl.Tensor) or result.numel() > MAX_NUMEL:
        return False
    exact = _result_exact(fuzz_op, operands)
    if isinstance(rendered, Statement):  # mutated in place: the target is only as exact as the operands
        exact = exact and next(v.exact for v in values if v.name == rendered.result)
    _commit(r, program, Line(text, name, fuzz_op.name, exact))
    for input_name, spec in r.pending.items():
        values.append(Value(input_name, namespace[input_name], True))
    values.append(Value(name, result, exact))
    return True


def _commit(r: Draw, program: Program, line: Line) -> None:
    program.inputs.update(r.pending)
    for input_name in r.pending:
        program.exact[input_name] = True
    r.count += len(r.pending)
    program.lines.append(line)
    program.exact[line.name] = line.exact
