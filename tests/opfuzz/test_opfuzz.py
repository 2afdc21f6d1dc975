"""The backends agree with eager on a fixed range of fuzzed programs; the fuzzer can fail."""
import dynamo_lite as dl

from .generator import PROFILES, generate
from .minimize import minimize
from .ops import OPS
from .runner import backend_compilers, check

SEEDS = range(40)


def test_fixed_seeds_match_eager(backend):
    compilers = backend_compilers([backend])
    failures = [(seed, str(f)) for seed in SEEDS for f in check(generate(seed), compilers)]
    assert not failures, "\n".join(f"seed {seed}: {finding}" for seed, finding in failures)


def test_generation_is_deterministic_and_covers_every_family():
    assert generate(7).source() == generate(7).source()
    families = {op.family for op in OPS}
    drawn = {op.family for seed in SEEDS for line in generate(seed).lines for op in OPS
             if op.name == line.op.split("!")[0]}
    assert drawn == families
    assert any(generate(seed).resize for seed in SEEDS)  # some programs are called again with other sizes
    assert len(PROFILES) >= 2


def _negates_float_results(gm, example_inputs):
    """A broken backend: every float result comes back negated (-0.0 for 0.0, and so on)."""
    def run(*args):
        out = gm(*args)
        return tuple(-o if isinstance(o, dl.Tensor) and o.dtype.is_floating_point else o for o in out)
    return run


def test_a_wrong_backend_is_found_and_minimized():
    found = [seed for seed in range(20) if check(generate(seed), {"broken": _negates_float_results})]
    assert len(found) >= 5
    program = generate(found[0])
    finding = check(program, {"broken": _negates_float_results})[0]
    small = minimize(program, {"broken": _negates_float_results}, (finding.backend, finding.kind))
    assert len(small.lines) < len(program.lines) or len(program.lines) == 1
    assert check(small, {"broken": _negates_float_results})
