"""The parity corpus: every program equals eager when compiled (on the eager and numpy backends), and the
share of programs that take more graphs than TorchDynamo (or fall back) stays at or under a ratchet.

RATCHET is the fraction measured when it was last lowered; it may only go down (the target is 0.05).
"""
from __future__ import annotations

import pytest

from tests.parity import corpus_containers, corpus_control, corpus_functions, corpus_misc, corpus_modules, corpus_objects

from tests.parity.harness import run_case

CORPUS = [*corpus_control.CASES, *corpus_functions.CASES, *corpus_containers.CASES,
          *corpus_modules.CASES, *corpus_objects.CASES, *corpus_misc.CASES]

#: The measured share of programs compiled into more graphs than TorchDynamo makes (or falling back to eager).
#: A ratchet: lower it when a fix lowers the measurement, never raise it. The target is 0.05.
RATCHET = 0.025  # 4 of 169 programs (0.024)


@pytest.mark.parametrize("backend", ["eager", "numpy"])
@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_program_equals_eager(case, backend):
    measured = run_case(case, backend)
    assert not measured.internal_errors, measured.internal_errors


def test_summary_over_breaking_share_is_under_the_ratchet():
    names = [c.name for c in CORPUS]
    assert len(set(names)) == len(names), "case names must be unique"
    results = [(case, run_case(case, "eager")) for case in CORPUS]
    over = [(case.name, m, case.dynamo) for case, m in results if m.over(case)]
    silent = [case.name for case, m in results if m.graphs == 0 < case.dynamo and not m.breaks and not m.fallbacks]
    assert not silent, f"compiled nothing and recorded no break or fallback: {silent}"
    share = len(over) / len(results)
    report = "\n".join(f"  {name}: {m.graphs} graphs, {m.breaks} breaks (TorchDynamo {dynamo} graphs) "
                       f"{[r.reason for r in m.fallbacks]}" for name, m, dynamo in over)
    print(f"\nparity: {len(over)}/{len(results)} = {share:.3f} over TorchDynamo's graph count\n{report}")
    assert share <= RATCHET, report
