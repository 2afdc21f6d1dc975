"""The differential fuzzer in CI: a fixed set of seeds, the saved regression cases, and
checks that the fuzzer itself can find a difference and minimize it."""
from __future__ import annotations

import functools

import pytest

import dynamo_lite as dl

from .generator import generate
from .known_failures import KNOWN_FAILURES
from .minimize import minimize
from .observe import differences, snapshot
from .prelude import INPUTS, PARAMS
from .pool import CRASH_SEED_VARIABLE, run_seeds
from .program import Program, Stmt
from .regressions import load_cases
from .runner import check_source, cpu_backends
from .triage import body_text

SEEDS = range(0, 250)
BACKENDS = cpu_backends()


@functools.cache
def outcome_of(seed: int):
    return check_source(generate(seed).source(), BACKENDS, f"fuzz_{seed}")


def _seed_param(seed: int):
    reason = KNOWN_FAILURES.get(seed)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(seed, marks=marks, id=f"seed{seed}")


@pytest.mark.parametrize("seed", [_seed_param(seed) for seed in SEEDS])
def test_generated_program_behaves_the_same_compiled(seed):
    outcome = outcome_of(seed)
    assert outcome.status != "invalid", "the generator made a program that does not run"
    assert not outcome.mismatches, "\n".join(map(str, outcome.mismatches)) + "\n" + generate(seed).source()


def test_most_generated_programs_compile_into_graphs():
    """A fuzzer whose programs all fall back to eager would prove nothing."""
    kinds = [outcome_of(seed).compiled_as for seed in SEEDS]
    with_graphs = sum(kind in ("graph", "breaks") for kind in kinds)
    assert with_graphs >= 0.75 * len(kinds), {k: kinds.count(k) for k in set(kinds)}
    assert kinds.count("graph") >= 0.2 * len(kinds)


def _case_param(case):
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, marks=marks, id=case.path.stem)


@pytest.mark.parametrize("case", [_case_param(case) for case in load_cases()])
def test_saved_regression_case(case):
    outcome = check_source(case.source, BACKENDS, case.path.stem)
    assert outcome.status == "ok", "\n".join(map(str, outcome.mismatches))
    if case.expect_fallback:
        assert outcome.compiled_as == "fallback", outcome.compiled_as
        assert any(case.expect_fallback in reason for reason in outcome.fallback_reasons), outcome.fallback_reasons
    else:
        assert outcome.compiled_as in ("graph", "breaks"), outcome.fallback_reasons


def _off_by_one(graph_module, example_inputs):
    """A deliberately wrong backend: every tensor output of the graph is one too large."""
    def run(*args):
        outputs = graph_module(*args)
        if isinstance(outputs, (tuple, list)):
            return type(outputs)(o + 1 if isinstance(o, dl.Tensor) else o for o in outputs)
        return outputs + 1 if isinstance(outputs, dl.Tensor) else outputs
    return run


def _planted_program() -> Program:
    """A program with one statement whose result the wrong backend changes, among others."""
    lines = ["t0 = x + y", "xs.append(t0)", "k = len(xs) + n", "planted = x * 3", "obj.t = t0 * k", "return planted"]
    return Program(7, generate(7).prelude, list(PARAMS), [Stmt(line) for line in lines], INPUTS)


def test_a_wrong_backend_is_caught_and_minimized():
    program = _planted_program()
    outcome = check_source(program.source(), [_off_by_one], "planted")
    assert outcome.compiled_as in ("graph", "breaks")
    assert [m.kind for m in outcome.mismatches] == ["result"]

    def fails(source):
        return any(m.kind == "result" for m in check_source(source, [_off_by_one], "planted").mismatches)

    small = minimize(program, fails)
    body = body_text(small)
    assert "planted = x * 3" in body and "return planted" in body
    assert "xs.append" not in body and "obj.t" not in body
    assert fails(small.source())


def test_identity_differences_are_reported():
    a, b = [dl.ones(2)], [dl.ones(2)]
    same = snapshot({"result": a, "args.xs": a})
    other = snapshot({"result": b, "args.xs": a})
    assert differences(same["args.xs"], same["args.xs"], "args.xs") == []
    assert differences(same["args.xs"], other["args.xs"], "args.xs") == [
        "args.xs: the object at result != list[tensor(float32, shape (2,), [1. 1.])]"
    ]


def test_a_crashing_seed_is_reported_and_the_run_continues(monkeypatch):
    monkeypatch.setenv(CRASH_SEED_VARIABLE, "2")
    results = {r.seed: r for r in run_seeds(range(0, 5), ["eager"], jobs=2, chunk=3)}
    assert sorted(results) == [0, 1, 2, 3, 4]
    assert results[2].status == "crash" and "SIGSEGV" in results[2].crash, results[2].crash
    assert "Fatal Python error" in results[2].crash  # the worker's faulthandler traceback
    assert all(results[seed].status == "ok" and results[seed].compiled_as for seed in (0, 1, 3, 4))


def test_the_generator_is_deterministic():
    assert generate(42).source() == generate(42).source()
    assert generate(42).source() != generate(43).source()
