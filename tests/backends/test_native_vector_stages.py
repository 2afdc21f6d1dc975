"""Staged vector loops (NOTE: [vector stages]): how a group is cut, and that a staged loop gives the scalar loop's bits.

Each width's test builds as in test_native_vector_loops.py (AVX2 with the AVX-512 functions left out) and skips
on a CPU without it; the sizes span several blocks, a partial last block and a lane-masked tail.
"""
from __future__ import annotations

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.backends.native as native
import dynamo_lite.nn.functional as F
from dynamo_lite.backends.native.toolchain import build
from dynamo_lite.backends.native.vector_stages import BLOCK, MAX_HANDED, handed_over, staged, stages
from tests.backends.native_cases import Recording, needs_compiler
from tests.backends.test_native_vector_loops import (ISA_DEFINES, ISAS, assert_same_bits_or_both_nan, library,
                                                    needs_isa, special_inputs)
from tests.helpers import assert_compiled

pytestmark = needs_compiler
__all__ = ["library"]  # the module fixture, shared


def staged_group(x, y, row):
    """Two exp-based members mid-group, a value read two stages later that is also an output, a broadcast row."""
    a = x.sigmoid()
    b = (a * y + row).tanh()
    c = F.silu(b - a) * (x.abs() * -0.5).exp()  # bounded: no ulp of difference meets an infinity
    return a, c + row * a


def _members(fn, *inputs):
    """The call nodes of ``fn``'s captured graph, in order."""
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm

    dl.compile(fn, backend=capture)(*inputs)
    return [n for n in graphs[0].graph.nodes if n.op == "call_function"]


def test_a_group_is_cut_after_each_exp_based_member():
    members = _members(staged_group, *[dl.randn(2, 3), dl.randn(2, 3), dl.randn(3)])
    parts = stages(members)
    names = [[m.target.name for m in part] for part in parts]
    assert names == [["sigmoid"], ["mul", "add", "tanh"], ["sub", "silu"], ["abs", "mul", "exp"], ["mul", "mul", "add"]]
    handed = handed_over(parts)
    # sigmoid (read by stages 1, 2 and 4), tanh (stage 2), silu (stage 4), exp (stage 4); not the members
    # read only inside their own stage
    assert [m.target.name for m in handed] == ["sigmoid", "tanh", "silu", "exp"]
    assert staged(members) == (parts, handed)


def test_groups_with_one_exp_based_member_at_the_end_keep_the_single_loop():
    members = _members(lambda x, y: (x * y + 1.0).tanh(), dl.randn(2, 3), dl.randn(2, 3))
    assert staged(members) is None
    members = _members(lambda x, y: (x * y + 1.0) * 2.0, dl.randn(2, 3), dl.randn(2, 3))
    assert staged(members) is None


def test_too_many_values_crossing_stages_keep_the_single_loop():
    def wide(x):
        parts = [x * float(k + 2) for k in range(MAX_HANDED + 1)]
        t = x.tanh()
        total = t
        for p in parts:
            total = total + p
        return total

    members = _members(wide, dl.randn(2, 3))
    assert staged(members) is None


def _compile(monkeypatch, define: str):
    monkeypatch.setattr(native, "build", lambda source: build(define + source))
    recording = Recording()
    return dl.compile(staged_group, backend=recording), recording


@pytest.mark.parametrize("isa", ISAS)
@pytest.mark.parametrize("cols", [2 * BLOCK + 37, BLOCK, 13])  # blocks, a partial one and a tail; one block; a tail
def test_a_staged_loop_gives_the_scalar_loops_bits(library, monkeypatch, isa, cols):
    needs_isa(library, isa)
    inputs = special_inputs(3, cols)
    vector, recording = _compile(monkeypatch, ISA_DEFINES[isa.name])
    before = dl.stats()
    with np.errstate(all="ignore"):
        from_vector = vector(*inputs)
    assert_compiled(before, dl.stats())
    code = recording.codes[0]
    assert f"at += {BLOCK}" in code and f"float s0[{BLOCK}]" in code and f"{isa.function('sigmoidf')}(" in code
    dl.reset()
    scalar, _ = _compile(monkeypatch, "#define DL_NO_VECTOR_LOOPS 1\n")
    with np.errstate(all="ignore"):
        from_scalar, expected = scalar(*inputs), staged_group(*inputs)
    for a, b in zip(from_vector, from_scalar):
        assert_same_bits_or_both_nan(a.numpy(), b.numpy())
    for actual, wanted in zip(from_vector, expected):
        actual, wanted = actual.numpy(), wanted.numpy()
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(wanted))
        np.testing.assert_allclose(actual, wanted, rtol=1e-5, atol=1e-6)
