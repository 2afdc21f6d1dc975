"""Run a program uncompiled and compiled on each backend; report every difference.

Each run executes the program's source in a fresh module namespace, then calls ``f``
``CALLS`` times, each with fresh arguments from ``make_inputs(k)``. A call is recorded as
a snapshot of its result, its arguments after the call and the module's globals (one
identity numbering across them, see observe.py), what it printed, and what it raised.
"""
from __future__ import annotations

import contextlib
import inspect
import io
import linecache
import logging
import signal
from dataclasses import dataclass, field

import dynamo_lite as dl

from .observe import differences, program_globals, snapshot

CALLS = 3
CALL_TIMEOUT_S = 5
# A compiled call also compiles (the native backend runs a C compiler), and the machine
# may be busy: only a much longer compiled call counts as a hang.
COMPILED_CALL_TIMEOUT_S = 90


def cpu_backends() -> list[str]:
    """The registered backends that run CPU tensors, eager first (the reference)."""
    from dynamo_lite.backends import backend_spec

    return [n for n in ("eager", "numpy", "native") if n in dl.list_backends() and "cpu" in backend_spec(n).devices]


class ProgramTimeout(BaseException):
    """A call ran longer than its time limit (a BaseException: user ``except`` can't catch it)."""


@dataclass
class CallRecord:
    state: dict | None
    stdout: str
    error: tuple[str, str] | None


@dataclass
class RunRecord:
    """The calls of one run; ``setup_error`` if the module itself did not run."""

    calls: list[CallRecord] = field(default_factory=list)
    setup_error: str | None = None
    stats: object = None  # dl.stats() after the first call (compiled runs)


@dataclass
class Mismatch:
    """How a compiled run differed from the uncompiled one."""

    backend: str
    call: int
    kind: str  # exception | stdout | result | args | globals | state
    details: list[str]

    def signature(self) -> tuple[str, str]:
        return self.backend, self.kind

    def __str__(self) -> str:
        lines = "\n".join(f"    {line}" for line in self.details[:6])
        return f"[{self.backend}] call {self.call}: {self.kind} differs\n{lines}"


def _on_alarm(signum, frame):
    raise ProgramTimeout("call ran longer than its time limit")


def _call(fn, args, timeout_s: int) -> tuple[object, tuple[str, str] | None, str]:
    out = io.StringIO()
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.alarm(timeout_s)
    try:
        with contextlib.redirect_stdout(out):
            result, error = fn(*args), None
    except ProgramTimeout as exc:
        result, error = None, ("ProgramTimeout", str(exc))
    except Exception as exc:  # compared with what the other run raised
        result, error = None, (type(exc).__name__, str(exc))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return result, error, out.getvalue()


def run_source(source: str, backend: str | None, name: str = "fuzz_program", calls: int = CALLS) -> RunRecord:
    """Run ``source``'s ``f`` uncompiled (``backend=None``) or compiled with ``backend``."""
    filename = f"<{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": name}
    record = RunRecord()
    try:
        exec(compile(source, filename, "exec"), namespace)
        fn, make_inputs = namespace["f"], namespace["make_inputs"]
    except Exception as exc:  # an invalid program (the minimizer makes many)
        record.setup_error = f"{type(exc).__name__}: {exc}"
        return record
    if backend is not None:
        dl.reset()
        fn = dl.compile(fn, backend=backend)
    # Internal compiler errors are counted from dl.stats() fallbacks, not printed.
    logging.disable(logging.CRITICAL)
    try:
        _run_calls(fn, make_inputs, namespace, backend, calls, record)
    finally:
        logging.disable(logging.NOTSET)
    if backend is not None:
        dl.reset()
    return record


def _run_calls(fn, make_inputs, namespace, backend, calls, record) -> None:
    params = list(inspect.signature(namespace["f"]).parameters)
    for k in range(calls):
        try:
            args = make_inputs(k)
        except Exception as exc:
            record.setup_error = f"make_inputs: {type(exc).__name__}: {exc}"
            return
        grad_mode = dl.is_grad_enabled()
        result, error, stdout = _call(fn, args, CALL_TIMEOUT_S if backend is None else COMPILED_CALL_TIMEOUT_S)
        if backend is not None and k == 0:
            record.stats = dl.stats()
        # A call that leaves the grad mode changed is a difference, and must not leak into
        # the next call or program (it once made the minimizer keep a passing program).
        values = {"state.grad_enabled": dl.is_grad_enabled()}
        dl.set_grad_enabled(grad_mode)
        values.update({"result": result, **{f"args.{p}": a for p, a in zip(params, args)}})
        values.update({f"globals.{name}": v for name, v in program_globals(namespace).items()})
        state = snapshot(values)
        record.calls.append(CallRecord(state, stdout, error))


def compare(expected: RunRecord, actual: RunRecord, backend: str) -> Mismatch | None:
    """The first difference between an uncompiled and a compiled run, or None."""
    if actual.setup_error != expected.setup_error:
        return Mismatch(backend, 0, "setup", [f"{expected.setup_error} != {actual.setup_error}"])
    for k, (want, got) in enumerate(zip(expected.calls, actual.calls)):
        if want.error != got.error:
            return Mismatch(backend, k, "exception", [f"eager raised {want.error}, compiled {got.error}"])
        if want.stdout != got.stdout:
            return Mismatch(backend, k, "stdout", [f"eager printed {want.stdout!r}", f"compiled {got.stdout!r}"])
        if list(want.state) != list(got.state):
            return Mismatch(backend, k, "globals", [f"globals {list(want.state)} != {list(got.state)}"])
        for path in want.state:
            found = differences(want.state[path], got.state[path], path)
            if found:
                return Mismatch(backend, k, path.split(".")[0], found)
    return None


def classify(stats) -> str:
    """What compiling did to a program on its first call: ``graph`` (one graph, no break),
    ``breaks`` (graphs and graph breaks), ``no_graph`` (compiled, but no tensor work was
    captured) or ``fallback`` (the frame ran eagerly)."""
    if stats is None:
        return "fallback"
    if stats.graph_count == 0:
        return "fallback" if stats.fallbacks else "no_graph"
    if stats.frames_compiled > 1 or stats.fallbacks:
        return "breaks"
    return "graph"


@dataclass
class Outcome:
    """The verdict on one program."""

    status: str  # ok | mismatch | invalid
    mismatches: list[Mismatch] = field(default_factory=list)
    compiled_as: str = ""  # classify() of the first backend
    fallback_reasons: list[str] = field(default_factory=list)


def backend_label(backend) -> str:
    """A backend's name (``dl.compile`` also takes a compiler callable)."""
    return backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))


def check_source(source: str, backends: list, name: str = "fuzz_program", calls: int = CALLS) -> Outcome:
    """Run ``source`` uncompiled and on each backend (a name or a compiler callable) and compare."""
    expected = run_source(source, None, name, calls)
    if expected.setup_error is not None or any(c.error and c.error[0] == "ProgramTimeout" for c in expected.calls):
        return Outcome("invalid")
    outcome = Outcome("ok")
    for i, backend in enumerate(backends):
        actual = run_source(source, backend, name, calls)
        if i == 0:
            outcome.compiled_as = classify(actual.stats)
            if actual.stats is not None:
                outcome.fallback_reasons = [record.reason for record in actual.stats.fallbacks]
        mismatch = compare(expected, actual, backend_label(backend))
        if mismatch is not None:
            outcome.status = "mismatch"
            outcome.mismatches.append(mismatch)
    return outcome
