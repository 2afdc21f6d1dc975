"""Run a program eagerly and compiled on each backend; report how the compiled runs differ.

A compiled run must also have compiled: one graph or more, no eager fallback (a silent
fallback would hide the backend under test).
"""
from __future__ import annotations

import linecache
import logging
from dataclasses import dataclass, field

import numpy as np

import dynamo_lite as dl

from .compare import value_differences
from .program import Program


class NativeCompiler:
    """The native backend raising on a failed C build (instead of quietly compiling with
    numpy: a build error becomes a fallback we see), counting the graphs that got C kernels."""

    __name__ = "native"

    def __init__(self):
        from dynamo_lite.backends.native import NativeBackend

        self.backend = NativeBackend(fall_back=False)
        self.graphs = self.graphs_with_c_kernels = 0

    def __call__(self, gm, example_inputs):
        function = self.backend(gm, example_inputs)
        self.graphs += 1
        self.graphs_with_c_kernels += "C kernels of this graph" in getattr(gm, "backend_code", "")
        return function


def backend_compilers(names: list[str]) -> dict:
    """Backend name -> what ``dl.compile`` gets; ``native`` only where a C compiler is found."""
    compilers = {}
    for name in names:
        if name == "native":
            from dynamo_lite.backends.native import compiler_available

            if compiler_available()[0]:
                compilers[name] = NativeCompiler()
        else:
            compilers[name] = name
    return compilers


@dataclass
class Call:
    result: object = None
    error: tuple[str, str] | None = None
    inputs: list = field(default_factory=list)
    grads: list | None = None


@dataclass
class Run:
    calls: list[Call] = field(default_factory=list)
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
    """The program's calls of ``f`` on fresh inputs, eagerly (``compiler`` None) or compiled."""
    fn, make_inputs = load(program)
    outcome = Run()
    if compiler is not None:
        dl.reset()
        fn = dl.compile(fn, backend=compiler, dynamic=True if program.resize else None)
    logging.disable(logging.CRITICAL)
    try:
        for k in range(program.calls):
            args = make_inputs(k)
            result, error = _capture(fn, args)
            grads = None
            if program.backward and error is None:
                grads, error = _capture(_backward, (result, args))
            outcome.calls.append(Call(result, error, args, grads))
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
    if stats.graph_count == 0 and expected.calls[0].error is None:
        return [Finding(backend, "no_graph", ["no graph was compiled"])]
    findings = []
    for k, (want, got) in enumerate(zip(expected.calls, actual.calls)):
        where = f"call {k}: " if program.calls > 1 else ""
        if want.error != got.error:
            return findings + [Finding(backend, "exception", [f"{where}eager raised {want.error}, compiled {got.error}"])]
        problems = []
        if want.error is None:
            for name, w, g in zip(program.outputs, want.result, got.result):
                problems += value_differences(w, g, program.exact[name], where + name)
            problems += value_differences(want.grads, got.grads, False, where + "grads")
        if problems:
            findings.append(Finding(backend, "result", problems))
        params = program.used_inputs()
        problems = [p for name, w, g in zip(params, want.inputs, got.inputs)
                    for p in value_differences(w, g, True, f"{where}input {name}")]
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


def _backward(result, args) -> list:
    """``backward()`` of the sum of the float results that require grad; the inputs' grads."""
    terms = [out.float().sum() for out in result if isinstance(out, dl.Tensor) and out.requires_grad]
    if terms:
        sum(terms).backward()
    return [arg.grad for arg in args]


def _capture(fn, args):
    try:
        with np.errstate(all="ignore"):
            return fn(*args), None
    except Exception as exc:  # compared with the other run's
        return None, (type(exc).__name__, str(exc))
