"""The module-level part of a generated program: globals, the ``Box`` class, helpers, inputs."""
from __future__ import annotations

import random

from .program import Stmt

# Arguments of every generated ``f``, and their kinds (see generator.Env).
PARAMS = {"x": "t", "y": "t", "n": "i", "xs": "l", "d": "d", "obj": "o"}

# Fresh arguments per call: small integer-valued tensors (so sums and comparisons are exact
# on every backend) that differ from call to call; the int, the list's length and the
# dict's keys of call 1 differ from those of calls 0 and 2 (guards and recompiles).
INPUTS = '''\
def make_inputs(k):
    rng = np.random.RandomState(k)

    def t():
        return dl.tensor(rng.randint(-3, 4, size=(3, 4)).astype("float32"))

    d = {"a": t(), "b": t()}
    if k == 1:
        d["c"] = t()
    return t(), t(), 1 + k % 2, [t() for _ in range(2 + k % 2)], d, Box(t())
'''

GLOBALS = [
    "G_count = 0",
    "G_list = []",
    "G_t = dl.ones(3, 4)",
    'G_cfg = {"scale": 2, "mode": "fast", "depth": 3}',
]

# Helpers f may call; each is (name, source). Kinds of their results are in generator.py.
HELPERS = {
    "mix": "def mix(a, b):\n    return a * 2 + b",
    "log_value": "def log_value(v):\n    G_list.append(len(G_list))\n    return v + 1",
    "count": "def count():\n    global G_count\n    G_count += 1\n    return G_count",
    "maybe_raise": (
        "def maybe_raise(v, k):\n    G_list.append(k)\n    if k > 1:\n"
        '        raise ValueError(f"k too big: {k}")\n    return v * k'
    ),
    "gen_scaled": "def gen_scaled(items):\n    for v in items:\n        yield v * 2",
    "gen_logged": "def gen_logged(items):\n    for v in items:\n        G_list.append(len(G_list))\n        yield v",
    "pick": "def pick(items, i=0):\n    return items[i] if items else None",
    "add_default": "def add_default(v, acc=[]):\n    acc.append(1)\n    return v + len(acc)",
    "Sub": (
        "class Sub(Box):\n    def scale(self, u):\n        return super().scale(u) * 2\n"
        "    def bump(self):\n        self.count += 10\n        return self.count"
    ),
    "Ctx": (
        "class Ctx:\n    def __enter__(self):\n        G_list.append('enter')\n        return self\n"
        "    def __exit__(self, *exc):\n        G_list.append('exit')\n        return False"
    ),
}


def box_class(rng: random.Random) -> Stmt:
    """``class Box`` with a random selection of features (never removed by the minimizer)."""
    body = [
        Stmt('kind = "box"'),
        Stmt("def __init__(self, t):", [Stmt("self.t = t"), Stmt("self.count = 0"), Stmt("self._v = 1")]),
        Stmt("def scale(self, u):", [Stmt("return u * self._v + self.t")]),
        Stmt("def bump(self):", [Stmt("self.count += 1"), Stmt("return self.count")]),
    ]
    if rng.random() < 0.6:
        body.append(Stmt("@property\ndef v(self):", [Stmt("return self._v")]))
        body.append(Stmt("@v.setter\ndef v(self, value):", [Stmt("self._v = max(0, min(value, 3))")]))
    else:
        body.append(Stmt("@property\ndef v(self):", [Stmt("return self._v * 2")]))
    if rng.random() < 0.3:
        body.append(Stmt("def __setattr__(self, name, value):", [
            Stmt('object.__setattr__(self, "sets", self.__dict__.get("sets", 0) + 1)'),
            Stmt("object.__setattr__(self, name, value)"),
        ]))
    if rng.random() < 0.05:
        body.append(Stmt("def __getattr__(self, name):", [
            Stmt("G_list.append(name)"), Stmt("raise AttributeError(name)"),
        ]))
    if rng.random() < 0.2:
        body.append(Stmt("def __repr__(self):", [Stmt('return f"Box(count={self.count})"')]))
    return Stmt("class Box:", body, fixed=True)


def prelude(rng: random.Random, helpers: list[str]) -> list[Stmt]:
    """Globals, ``Box`` and the helpers the body uses, in definition order."""
    stmts = [Stmt(line) for line in GLOBALS] + [box_class(rng)]
    for name in helpers:
        header, rest = HELPERS[name].split("\n", 1)
        stmts.append(_parse_block(header, rest))
    return stmts


def _parse_block(header: str, rest: str) -> Stmt:
    """A helper's source as a Stmt tree (one level of nesting per 4 spaces)."""
    lines = [line[4:] for line in rest.split("\n")]
    return Stmt(header, _parse_lines(lines))


def _parse_lines(lines: list[str]) -> list[Stmt]:
    block, i = [], 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        inner = []
        while j < len(lines) and lines[j].startswith("    "):
            inner.append(lines[j][4:])
            j += 1
        block.append(Stmt(line, _parse_lines(inner)) if line.endswith(":") else Stmt(line))
        i = j
    return block
