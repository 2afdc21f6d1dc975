"""Run a program eagerly and compiled on each backend; report how the compiled runs differ.

A compiled run must also have compiled: one graph or more, no eager fallback (a silent
fallback would hide the backend under test).
"""
from __future__ import annotations

import linecache
import logging
import warnings
from dataclasses import dataclass, field

import numpy as np

import dynamo_lite as dl

from .compare import value_differences
from .program import Program


def backend_compilers(names: list[str]) -> dict:
    """Backend name -> what ``dl.compile`` gets. ``native`` raises on a failed C build
    (instead of quietly compiling with numpy), so that a build error is a fallback we see."""
    compilers = {}
    for name in names:
        if name == "native":
            from dynamo_lite.backends.native import NativeBackend, compiler_available

            if not compiler_available()[0]:
                continue
            compilers[name] = NativeBackend(fall_back=False)
        else:
            compilers[name] = name
    return compilers


@dataclass
class Run:
    result: object = None
    error: tuple[str, str] | None = None
    inputs: list = field(default_factory=list)
    stats: object = None


@dataclass
class Finding:
    backend: str
    kind: str  # exception | result | inputs | fallback | no_graph
    details: list[str]

    def __str__(self) -> str:
        return f"[{self.backend}] {self.kind}: " + "; ".join(self.details[:4])


def load(program: Program, tag: str = "opfuzz"):
    source = program.source()
    filename = f"<{tag}_{program.seed}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": f"{tag}_{program.seed}"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"], namespace["make_inputs"]


def run(program: Program, compiler=None) -> Run:
    """One call of the program's ``f`` on fresh inputs, eagerly (``compiler`` None) or compiled."""
    fn, make_inputs = load(program)
    args = make_inputs()
    outcome = Run(inputs=args)
    if compiler is not None:
        dl.reset()
        fn = dl.compile(fn, backend=compiler)
    logging.disable(logging.CRITICAL)
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome.result = fn(*args)
    except Exception as exc:  # compared with eager's
        outcome.error = (type(exc).__name__, str(exc))
    finally:
        logging.disable(logging.NOTSET)
        if compiler is not None:
            outcome.stats = dl.stats()
            dl.reset()
    return outcome


def check(program: Program, compilers: dict) -> list[Finding]:
    """Findings of every backend in ``compilers`` (name -> compiler) against eager."""
    expected = run(program)
    findings = []
    for name, compiler in compilers.items():
        actual = run(program, compiler)
        findings += compare_runs(program, expected, actual, name)
    return findings


def compare_runs(program: Program, expected: Run, actual: Run, backend: str) -> list[Finding]:
    stats = actual.stats
    if stats.fallbacks:
        return [Finding(backend, "fallback", [str(f.reason) for f in stats.fallbacks])]
    if stats.graph_count == 0 and expected.error is None:
        return [Finding(backend, "no_graph", ["no graph was compiled"])]
    if expected.error != actual.error:
        return [Finding(backend, "exception", [f"eager raised {expected.error}, compiled {actual.error}"])]
    findings = []
    if expected.error is None:
        problems = []
        for name, want, got in zip(program.outputs, expected.result, actual.result):
            problems += value_differences(want, got, program.exact[name], name)
        if len(actual.result) != len(expected.result):
            problems.append(f"{len(actual.result)} results != eager {len(expected.result)}")
        if problems:
            findings.append(Finding(backend, "result", problems))
    params = program.used_inputs()
    problems = [p for name, want, got in zip(params, expected.inputs, actual.inputs)
                for p in value_differences(want, got, True, f"input {name}")]
    if problems:
        findings.append(Finding(backend, "inputs", problems))
    return findings


def assert_same_as_eager(fn, make_args, backend: str, exact: bool = True) -> None:
    """``fn`` compiled with ``backend`` returns what it returns eagerly (bit for bit when
    ``exact``, see compare.py), raises what it raises, leaves its arguments as eager does,
    and compiled one graph or more without falling back. ``make_args()`` gives fresh arguments."""
    compiler = backend_compilers([backend]).get(backend, backend)
    args = make_args()
    expected, expected_error = _capture(fn, args)
    compiled_args = make_args()
    dl.reset()
    actual, actual_error = _capture(dl.compile(fn, backend=compiler), compiled_args)
    stats = dl.stats()
    assert not stats.fallbacks, f"fell back to eager: {stats.fallbacks}"
    assert stats.graph_count >= 1, "no graph was compiled"
    assert actual_error == expected_error, f"eager raised {expected_error}, compiled {actual_error}"
    problems = value_differences(expected, actual, exact, "result") + value_differences(args, compiled_args, True, "args")
    assert not problems, "\n".join(problems)


def _capture(fn, args):
    try:
        with np.errstate(all="ignore"):
            return fn(*args), None
    except Exception as exc:  # compared with the other run's
        return None, (type(exc).__name__, str(exc))
