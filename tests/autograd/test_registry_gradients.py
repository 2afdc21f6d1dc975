"""Every registry op is either differentiable (a formula that gradchecks) or listed as not.

The list of ops without a gradient is ``NOT_DIFFERENTIABLE`` in
dynamo_lite/autograd/derivatives/table.py, each group with its reason. A new op that is
in neither table fails ``test_every_op_is_classified``; a formula without a gradcheck
case fails ``test_every_formula_has_a_case``.
"""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from dynamo_lite.autograd.derivatives import DECOMPOSITIONS, DERIVATIVES, NOT_DIFFERENTIABLE, lookup
from dynamo_lite.ops import REGISTRY
from dynamo_lite.ops.core.dispatch import AUTOGRAD

from .cases import CASES, RANDOM, RANDOM_FILLS

DIFFERENTIABLE = sorted(n for n, op in REGISTRY.items() if n not in NOT_DIFFERENTIABLE)


def test_every_op_is_classified():
    unclassified = [n for n in DIFFERENTIABLE
                    if lookup(n, "inplace" in REGISTRY[n].tags) is None and n not in DECOMPOSITIONS]
    assert not unclassified, (
        f"ops with neither a derivative formula (or decomposition) nor an entry in NOT_DIFFERENTIABLE: "
        f"{unclassified}"
    )
    assert not set(NOT_DIFFERENTIABLE) & set(DERIVATIVES)
    assert set(NOT_DIFFERENTIABLE) <= set(REGISTRY), sorted(set(NOT_DIFFERENTIABLE) - set(REGISTRY))


def test_every_formula_has_a_case():
    missing = [n for n in DIFFERENTIABLE if n not in CASES and n not in RANDOM]
    assert not missing, f"differentiable ops without a gradcheck case in tests/autograd/cases.py: {missing}"


def _recorded_ops(fn, args):
    """The names of the ops that ran through autograd recording while ``fn(*args)`` ran."""
    seen = []
    original = AUTOGRAD.record

    def spy(op, op_args, kwargs):
        seen.append(op.name)
        return original(op, op_args, kwargs)

    AUTOGRAD.record = spy
    try:
        fn(*args)
    finally:
        AUTOGRAD.record = original
    return seen


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradcheck(name):
    for fn, args, *_ in CASES[name]:
        assert name in _recorded_ops(fn, args), f"the case for {name!r} does not record it"
        assert dl.autograd.gradcheck(fn, args, eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradgradcheck(name):
    for fn, args, *options in CASES[name]:
        if options and not options[0]["gradgrad"]:
            continue
        assert dl.autograd.gradgradcheck(fn, args, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", sorted(NOT_DIFFERENTIABLE))
def test_not_differentiable_ops_give_outputs_without_history(name):
    op = REGISTRY[name]
    assert name not in DERIVATIVES and lookup(name, "inplace" in op.tags) is None


@pytest.mark.parametrize("inplace", [False, True])
def test_dropout_gradient_is_its_mask_and_values_match_the_op(inplace):
    x = dl.randn(200, dtype=dl.float32)
    leaf = x.clone().requires_grad_()
    dl.manual_seed(3)
    expected = dl.dropout(x, 0.3)  # no grad: the op itself
    dl.manual_seed(3)
    out = dl.dropout(leaf * 1 if inplace else leaf, 0.3, inplace=inplace)
    assert out.tolist() == expected.tolist()
    out.sum().backward()
    kept = (expected != 0).to(dl.float32)
    assert leaf.grad.tolist() == (kept / 0.7).tolist()


@pytest.mark.parametrize("name", sorted(RANDOM_FILLS))
def test_random_fills_have_zero_gradient(name):
    x = dl.full((4,), 0.3, dtype=dl.float64, requires_grad=True)
    base = x * 1
    assert name in _recorded_ops(RANDOM_FILLS[name], [base])
    (out,) = [RANDOM_FILLS[name](x * 1)]
    (out * 3 + x).sum().backward()
    assert out.grad_fn is not None and x.grad.tolist() == [1.0] * 4
