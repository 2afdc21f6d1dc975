"""Seeded generator of small Python programs mixing tensor ops with Python semantics.

``generate(seed)`` always returns the same ``Program``. Every generated ``f`` takes the
arguments of ``prelude.PARAMS``; its statements are drawn from the tables below, each
entry a weight and a template that uses variables already bound in the function (an
``Env`` maps each name to its kind: ``t`` tensor of shape (3, 4), ``i`` int, ``l`` list
of tensors, ``d`` dict of str -> tensor, ``o`` a ``Box``, ``v`` any other value).
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from .prelude import HELPERS, INPUTS, PARAMS, prelude
from .program import Program, Stmt


@dataclass
class Env:
    """Names bound at this point of ``f`` and their kinds; ``loop`` allows break/continue."""

    vars: dict[str, str]
    loop: bool = False
    depth: int = 0

    def of(self, kind: str) -> list[str]:
        return [name for name, k in self.vars.items() if k == kind]

    def child(self, loop: bool | None = None) -> Env:
        """A nested block: names bound inside it are not visible after it."""
        return Env(dict(self.vars), self.loop if loop is None else loop, self.depth + 1)


class ProgramGenerator:
    """Draws one program from ``random.Random(seed)``."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.counter = itertools.count()
        self.helpers: set[str] = set()

    # ---- small choices ------------------------------------------------------------------
    def pick(self, env: Env, kind: str) -> str:
        return self.rng.choice(env.of(kind))

    def new(self, env: Env, kind: str) -> str:
        name = f"{kind}{next(self.counter)}"
        env.vars[name] = kind
        return name

    def choose(self, options: list) -> str:
        """One of ``options`` (zero-argument callables): only the chosen one binds names."""
        choice = self.rng.choice(options)
        return choice() if callable(choice) else choice

    def draw(self, env: Env, bands: list) -> list[Stmt]:
        """One statement from ``bands`` of ``(upper bound of a uniform roll, kind, options)``:
        kind None makes the option a statement of its own, kind ``v`` a new name bound to
        it, any other kind a new or rebound name of that kind."""
        roll = self.rng.random()
        _, kind, options = next(band for band in bands if roll < band[0])
        expr = self.choose(options)
        if kind is None:
            return [Stmt(expr)]
        name = self.new(env, kind) if kind == "v" else self.target(env, kind)
        return [Stmt(f"{name} = {expr}")]

    def helper(self, name: str) -> str:
        self.helpers.add(name)
        return name

    def target(self, env: Env, kind: str) -> str:
        """A name to assign a value of ``kind`` to: a new one, or rebinding an existing one."""
        if self.rng.random() < 0.35 and env.of(kind):
            return self.pick(env, kind)
        return self.new(env, kind)

    # ---- expressions --------------------------------------------------------------------
    def tensor_expr(self, env: Env) -> str:
        """An expression whose value is a (3, 4) float32 tensor."""
        a, b = self.pick(env, "t"), self.pick(env, "t")
        k = self.pick(env, "i")
        o = self.pick(env, "o")
        forms = [
            lambda: f"{a} + {b}",
            lambda: f"{a} * {b}",
            lambda: f"{a} - {b}",
            lambda: f"({a} * {k}).relu()",
            lambda: f"{a}.abs() + 1",
            lambda: f"{a}.neg()", lambda: f"{a}.clamp(-2, 2)", lambda: f"dl.where({a} > 0, {a}, {b})",
            lambda: f"{a}.sum(0, keepdim=True) + {b}", lambda: f"{a}.amax(1, keepdim=True) * {b}", lambda: f"{a} * {k}",
            lambda: f"{a}.mean() + {b}", lambda: f"dl.maximum({a}, {b})", lambda: f"{a}.masked_fill({b} > 0, 1.0)",
            lambda: f"{a}.view(12).view(3, 4)", lambda: f"{a}.t().contiguous().t()", lambda: f"dl.cat([{a}, {b}])[:3]",
            lambda: f"{a} / 2",
            lambda: f"{a}.clone()",
            lambda: f"{a} + {k}",
            lambda: f"{a} + G_t",
            lambda: f"{a} * G_cfg['scale']",
            lambda: f"{a} * G_cfg.get('shift', 1) if 'scale' in G_cfg else {b}",  # dict reads by key
            lambda: f"{a} * {o}.v", lambda: f"{o}.scale({a})", lambda: f"{o}.t + {a}", lambda: f"{a} - {o}.count",
            lambda: f"{a}.to(dl.float64)", lambda: f"({a} > 0).float() * {b}", lambda: f"{a}.int() + {b}",
            lambda: f"{a}.double().float()", lambda: f"{a} @ {b}.t() @ {a}",
            lambda: f"{self.helper('mix')}({a}, {b})",
            lambda: f"{self.helper('log_value')}({a})" if self.rng.random() < .5
            else f"{a} * 3",
        ]
        return self.choose(forms)

    def int_expr(self, env: Env) -> str:
        k, o = self.pick(env, "i"), self.pick(env, "o")
        a, xs, d = self.pick(env, "t"), self.pick(env, "l"), self.pick(env, "d")
        return self.choose([
            lambda: f"{k} + 1",
            lambda: f"len({xs})",
            lambda: f"len({d})",
            lambda: f"{k} * 3 % 5",
            lambda: f"max({k}, n)",
            lambda: f"{o}.count",
            lambda: f"{o}.bump()", "G_count", lambda: f"int({a}.sum().item())", lambda: f"int({a}.max().item())",
            lambda: f"{self.helper('count')}()", lambda: f"{k} - len({xs})", lambda: f"sum(1 for _ in {xs})",
        ])

    def condition(self, env: Env) -> str:
        k, o = self.pick(env, "i"), self.pick(env, "o")
        a, xs, d = self.pick(env, "t"), self.pick(env, "l"), self.pick(env, "d")
        return self.choose([
            lambda: f"{k} > 1",
            lambda: f"{k} == n",
            lambda: f"len({xs}) > 2",
            lambda: f"{xs}",
            lambda: f'"a" in {d}',
            lambda: f"{o}.count > 0",
            lambda: f"{a}.sum().item() > 0",
            lambda: f"{a}.max().item() >= 2",
            lambda: f"not {d}",
            lambda: f"{k} % 2 == 0",
            lambda: f"isinstance({k}, int) and {k} < 3", lambda: f'hasattr({o}, "extra")',
        ])

    # ---- simple statements -------------------------------------------------------------
    def s_tensor_assign(self, env):
        expr = self.tensor_expr(env)
        return [Stmt(f"{self.target(env, 't')} = {expr}")]

    def s_tensor_inplace(self, env):
        a, b = self.pick(env, "t"), self.pick(env, "t")
        return [Stmt(self.choose([
            lambda: f"{a} += {b}",
            lambda: f"{a} *= 2",
            lambda: f"{a}.add_({b})",
            lambda: f"{a}.mul_(2)",
            lambda: f"{a}[0] = {b}[1]",
            lambda: f"{a}[:, 1] += 1", lambda: f"{a}.clamp_(-1, 1)", lambda: f"{a}.view(12)[0:4].add_(1)",
            lambda: f"{a}[1].mul_(2)", lambda: f"{a}.t().sub_(1)", lambda: f"{a}[{b} > 0] = 0",
            lambda: f"{a}.copy_({b})", lambda: f"{a}.masked_fill_({b} < 0, 2.0)",
        ]))]

    def s_int_assign(self, env):
        expr = self.int_expr(env)
        return [Stmt(f"{self.target(env, 'i')} = {expr}")]

    def s_list(self, env):
        xs, a, b = self.pick(env, "l"), self.pick(env, "t"), self.pick(env, "t")
        k = self.pick(env, "i")
        mutations = [
            lambda: f"{xs}.append({self.tensor_expr(env)})",
            lambda: f"{xs}.insert(0, {a})",
            lambda: f"{xs}.extend([{a}, {b}])",
            lambda: f"{xs} += [{a}]",
            lambda: f"if {xs}: {xs}[0] = {a}",
            lambda: f"if {xs}: del {xs}[0]",
            lambda: f"{xs}.reverse()",
            lambda: f"{xs}.clear()", lambda: f"{xs}[:1] = [{b}]", lambda: f"{xs}.remove({xs}[-1]) if {xs} else None",
        ]
        lists = [
            lambda: f"list({xs})",
            lambda: f"{xs}[:]",
            lambda: f"{xs}",
            lambda: f"[v * 2 for v in {xs}]",
            lambda: f"[{a}, {b}]",
            lambda: f"list({self.helper('gen_scaled')}({xs}))", lambda: f"{xs} + [{a}]", lambda: f"[*{xs}, {b}]",
            lambda: f"[v for v in {xs} if v.sum().item() > 0]",
            # a break inside a comprehension over a tuple (3.11: the comprehension is a function called with an iterator)
            lambda: f"[print('c', end='') or v * 2 for v in ({a}, {b})]",
            lambda: f"[v + 1 for v in ({a}, {b}) if v.sum().item() > 0]",
            # a break in each item of a comprehension longer than the cache limit
            lambda: f"[print('c', end='') or {a} * j for j in range(12)]",
        ]
        tensors = [
            lambda: f"{xs}.pop() if {xs} else {a}", lambda: f"{xs}[-1] if {xs} else {a}", lambda: f"sum({xs}, {a})",
            lambda: f"dl.stack({xs}).sum(0) if {xs} else {a}", lambda: f"sum({self.helper('gen_scaled')}({xs}), {a})",
            lambda: f"sum((v * 2 for v in {xs}), {a})", lambda: f"next({self.helper('gen_logged')}({xs}), {a})",
            lambda: f"{xs}.pop(0) if {xs} else {a}", lambda: f"{xs}[{k}]",
        ]
        return self.draw(env, [(0.45, None, mutations), (0.7, "l", lists), (1.0, "t", tensors)])

    def s_dict(self, env):
        d, a, b = self.pick(env, "d"), self.pick(env, "t"), self.pick(env, "t")
        mutations = [
            lambda: f'{d}["c"] = {self.tensor_expr(env)}',
            lambda: f'{d}.pop("a", None)',
            lambda: f'{d}.update({{"e": {a}}})',
            lambda: f'{d} |= {{"f": {b}}}', lambda: f'{d}.setdefault("g", {a})', lambda: f'if "b" in {d}: del {d}["b"]',
            lambda: f'{d}["a"] = {d}.get("a", {a}) * 2',
        ]
        dicts = [
            lambda: f"dict({d})", lambda: f'{{**{d}, "h": {a}}}', lambda: f"{{key: v * 2 for key, v in {d}.items()}}",
            lambda: f'dict([("p", {a}), ("q", {b})])',
            lambda: f"{d}",
            lambda: f"{d}.copy()",
            lambda: f'dict({d}, z={a})',
        ]
        tensors = [
            lambda: f'{d}.get("a", {a})',
            lambda: f"{d}.popitem()[1] if {d} else {a}",
            lambda: f"sum({d}.values(), {a})",
            lambda: f'{d}["b"]', lambda: f'{d}.pop("b", {b})',
        ]
        others = [lambda: f"list({d}.keys())", lambda: f"{d}.keys()", lambda: f"{d}.items()", lambda: f"sorted({d})"]
        return self.draw(env, [(0.4, None, mutations), (0.6, "d", dicts), (0.9, "t", tensors), (1.0, "v", others)])

    def s_object(self, env):
        o, a, k = self.pick(env, "o"), self.pick(env, "t"), self.pick(env, "i")
        options = [
            lambda: f"{o}.t = {self.tensor_expr(env)}",
            lambda: f"{self.target(env, 't')} = {o}.t",
            lambda: f"{o}.count += 1",
            lambda: f"{o}.v = {k}", lambda: f"{o}.extra = {k}", lambda: f"{self.target(env, 't')} = {a} * {o}.v",
            lambda: f"{self.target(env, 'i')} = {o}.bump()", lambda: f"{self.target(env, 'o')} = Box({a})",
            lambda: f"{self.new(env, 'v')} = type({o}).kind", lambda: f"{self.new(env, 'v')} = {o}.kind",
            lambda: f'if hasattr({o}, "extra"): del {o}.extra', lambda: f'setattr({o}, "t", {a})',
            lambda: f'{self.target(env, "t")} = getattr({o}, "t")',
            lambda: f"{self.new(env, 'v')} = vars({o}).get('extra')",
        ]
        if self.rng.random() < 0.1:
            options.append('Box.kind += "!"')
        return [Stmt(self.choose(options))]

    def s_global(self, env):
        a, k = self.pick(env, "t"), self.pick(env, "i")
        options = [
            "G_count += 1",
            lambda: f"G_t = {self.tensor_expr(env)}",
            lambda: f"G_list.append({k})",
            lambda: f'G_cfg["scale"] = {k}', lambda: f'G_cfg["shift"] = {k}', 'G_cfg.pop("shift", None)',
            lambda: f"{self.target(env, 't')} = {a} * G_cfg['scale'] + G_t", lambda: f"G_list.append({a})",
        ]
        return [Stmt(self.choose(options))]

    def s_print(self, env):
        a, k, xs = self.pick(env, "t"), self.pick(env, "i"), self.pick(env, "l")
        return [Stmt(self.choose([
            lambda: f'print("p", {k}, len({xs}))', lambda: f'print("t", {a})', lambda: f'print(f"k={{{k}}} n={{n}}")',
            lambda: f'print("s", {a}.sum().item())',
        ]))]

    def s_misc(self, env):
        a, k, xs = self.pick(env, "t"), self.pick(env, "i"), self.pick(env, "l")
        b = self.pick(env, "t")
        options = [
            lambda: f"{self.new(env, 'v')} = ({k}, n)", lambda: f"{self.new(env, 'v')} = {a}.shape",
            lambda: f"{self.new(env, 'v')} = {a}.dtype", lambda: f"{self.new(env, 'v')} = {a}.tolist()",
            lambda: f"{self.new(env, 'v')} = str({k})",
            lambda: f"{self.target(env, 't')} = {self.helper('add_default')}({a})",
            lambda: f'if {k} > 2: raise ValueError(f"big {{{k}}}")',
            lambda: f"{self.target(env, 't')} = {self.helper('maybe_raise')}({a}, {k})",
            lambda: f"{self.target(env, 't')} = {self.helper('pick')}({xs}) if {xs} else {b}",
        ]
        return [Stmt(self.choose(options))]

    def s_python(self, env):
        a, b, k, xs = self.pick(env, "t"), self.pick(env, "t"), self.pick(env, "i"), self.pick(env, "l")
        o = self.pick(env, "o")
        options = [
            lambda: f"{self.target(env, 't')}, {self.target(env, 't')} = {a} * 2, {b} + 1",
            lambda: f"{self.target(env, 't')}, *{self.target(env, 'l')} = {xs}",
            lambda: f"if ({self.new(env, 'v')} := len({xs})) > 1: {a} = {a} + 1",
            lambda: f"{self.target(env, 'i')} = int(isinstance({a}, dl.Tensor)) + int(0 < {k} < 3)",
            lambda: f"{self.target(env, 'o')} = {self.helper('Sub')}({a})",
            lambda: f"{self.target(env, 't')} = {o}.scale({a}) if isinstance({o}, Box) else {a}",
            lambda: f"{self.new(env, 'v')} = lambda u: u * {k} + {a}",
            lambda: f"{self.target(env, 'i')} = {a}.shape[0] + {a}.ndim + {a}.numel()",
            lambda: f"{self.target(env, 'i')} = divmod({k} * 7, 3)[0] - {k} // 2 + abs(-{k}) ** 2",
            lambda: f"{self.new(env, 'v')} = f\"{{{k}:03d}} {{float({a}.sum()):.2f}}\"",
            lambda: f"{self.new(env, 'v')} = sorted([{k}, n, len({xs})], reverse=True)",
            lambda: f"{self.new(env, 'v')} = [(i, v.shape[0]) for i, v in enumerate({xs}, 1)]",
            lambda: f"{self.new(env, 'v')} = list(zip(range(n), reversed({xs})))",
            lambda: f"{self.new(env, 'v')} = {{{k}, n, 3}} | {{len({xs})}}",
            lambda: f"{self.target(env, 'i')} = {xs}.index({xs}[-1]) if {xs} else -1",
            lambda: f"{self.target(env, 't')} = min({xs}, key=lambda v: float(v.sum())) if {xs} else {a}",
        ]
        return [Stmt(self.choose(options))]

    def c_with(self, env):
        manager = self.helper("Ctx") + "()" if self.rng.random() < 0.3 else "dl.no_grad()"
        return [Stmt(f"with {manager}:", self.body(env.child()))]

    def s_closure(self, env):
        a, b, k = self.pick(env, "t"), self.pick(env, "t"), self.pick(env, "i")
        roll = self.rng.random()
        fn = f"fn{next(self.counter)}"
        if roll < 0.4:
            return [Stmt(f"def {fn}(u):", [Stmt(f"return u * {k} + {a}")]),
                    Stmt(f"{self.target(env, 't')} = {fn}({b})")]
        if roll < 0.7:
            cell = self.new(env, "i")
            return [Stmt(f"{cell} = 0"),
                    Stmt(f"def {fn}():", [Stmt(f"nonlocal {cell}"), Stmt(f"{cell} += 1"), Stmt(f"return {cell}")]),
                    Stmt(f"{self.target(env, 'i')} = {fn}() + {fn}()")]
        return [Stmt(f"{fn} = lambda u: u * 2 + {a}"), Stmt(f"{self.target(env, 't')} = {fn}({b})")]

    def s_loop_exit(self, env):
        if not env.loop:
            return None
        k = self.pick(env, "i")
        return [Stmt(f"if {k} > 1: {self.rng.choice(['break', 'continue'])}")]

    # ---- compound statements -----------------------------------------------------------
    def body(self, env: Env, count: int | None = None) -> list[Stmt]:
        return self.block(env, count or self.rng.randint(1, 3))

    def c_if(self, env):
        cond = self.condition(env)
        clauses = [("else:", self.body(env.child()))] if self.rng.random() < 0.5 else []
        return [Stmt(f"if {cond}:", self.body(env.child()), clauses)]

    def c_for(self, env):
        inner = env.child(loop=True)
        roll = self.rng.random()
        if roll < 0.3:
            i = self.new(inner, "i")
            return [Stmt(f"for {i} in range(n):", self.body(inner))]
        v = self.new(inner, "t")
        if roll < 0.6:
            xs = self.pick(env, "l")
            i = self.new(inner, "i")
            bounded = [Stmt(f"if {i} >= 3:", [Stmt("break")])]  # the body may grow the list
            return [Stmt(f"for {i}, {v} in enumerate({xs}):", bounded + self.body(inner))]
        if roll < 0.8:
            d = self.pick(env, "d")
            key = self.new(inner, "v")
            return [Stmt(f"for {key}, {v} in {d}.items():", self.body(inner))]
        xs = self.pick(env, "l")
        gen = self.helper(self.rng.choice(["gen_scaled", "gen_logged"]))
        return [Stmt(f"for {v} in {gen}({xs}[:3]):", self.body(inner))]

    def c_while(self, env):
        w = f"w{next(self.counter)}"  # not in env: the body must not rebind the loop counter
        inner = env.child(loop=True)
        return [Stmt(f"{w} = 0"), Stmt(f"while {w} < n:", [Stmt(f"{w} += 1")] + self.body(inner))]

    def c_try(self, env):
        a, d, xs, k = self.pick(env, "t"), self.pick(env, "d"), self.pick(env, "l"), self.pick(env, "i")
        risky = self.choose([
            lambda: f'{self.target(env.child(), "t")} = {d}["zz"]', lambda: f"{a} = {xs}[{k} + 1]",
            lambda: f"{a} = {self.helper('maybe_raise')}({a}, {k})", lambda: f'raise ValueError("boom")',
            lambda: f"{a} = {a}.view(5, 3)", lambda: f"{a} = {a} + {k}",
        ])
        body = self.body(env.child()) + [Stmt(risky)] + self.body(env.child(), 1)
        handler_env = env.child()
        handler = self.body(handler_env, 1)
        if self.rng.random() < 0.5:
            handler.insert(0, Stmt('print("caught", type(e).__name__, e)'))
        clauses = [("except (KeyError, IndexError, ValueError, RuntimeError) as e:", handler)]
        if self.rng.random() < 0.3:
            clauses.append(("finally:", [Stmt("G_count += 1")]))
        return [Stmt("try:", body, clauses)]

    SIMPLE = [
        (30, "s_tensor_assign"), (6, "s_tensor_inplace"), (6, "s_int_assign"), (10, "s_list"),
        (8, "s_dict"), (8, "s_object"), (5, "s_global"), (3, "s_print"), (4, "s_misc"),
        (4, "s_closure"), (3, "s_loop_exit"), (5, "s_python"),
    ]
    COMPOUND = [(6, "c_if"), (6, "c_for"), (2, "c_while"), (4, "c_try"), (2, "c_with")]

    def block(self, env: Env, count: int) -> list[Stmt]:
        table = self.SIMPLE + (self.COMPOUND if env.depth < 2 else [])
        weights = [w for w, _ in table]
        stmts = []
        while len(stmts) < count:
            _, name = self.rng.choices(table, weights)[0]
            made = getattr(self, name)(env)
            if made is not None:
                stmts += made
        return stmts

    def returned(self, env: Env) -> Stmt:
        names = list(env.vars)
        values = self.rng.sample(names, self.rng.randint(1, min(4, len(names))))
        values.sort(key=lambda name: env.vars[name] != "t")  # mostly tensors first
        if self.rng.random() < 0.15:
            values.append(values[0])  # the same object twice: identity must survive
        return Stmt(f"return {', '.join(values)}" if len(values) > 1 else f"return {values[0]}")

    def program(self) -> Program:
        env = Env(dict(PARAMS))
        # Tensor work first: a frame whose first statement cannot be traced has nothing to
        # compile before it and falls back whole, which would hide the rest of the program.
        body = [Stmt("global G_count, G_t")] + self.s_tensor_assign(env)
        body += self.block(env, self.rng.randint(3, 9)) + [self.returned(env)]
        helpers = [name for name in HELPERS if name in self.helpers]
        return Program(self.seed, prelude(self.rng, helpers), list(PARAMS), body, INPUTS)


def generate(seed: int) -> Program:
    """The program of ``seed`` (the same on every run and Python version)."""
    return ProgramGenerator(seed).program()
