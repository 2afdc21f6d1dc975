"""nll_loss and cross_entropy with a class index out of range raise torch's ``IndexError: Target N is out of bounds.``

torch's CPU kernels (nll_loss, nll_loss2d) check each target that is not ``ignore_index`` in
order and raise ``IndexError`` naming the first one outside ``[0, C)``; written here from that
documented behaviour, no torch involved.
"""
from __future__ import annotations

import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

F = dl.nn.functional


@pytest.mark.parametrize("loss", [F.cross_entropy, lambda x, t, **k: F.nll_loss(x.log_softmax(1), t, **k)])
@pytest.mark.parametrize("target, bad", [([0, 5, 1], 5), ([0, -1, 7], -1), ([9, 2, 6], 9)])
def test_an_out_of_range_target_is_an_index_error(loss, target, bad):
    with pytest.raises(IndexError, match=rf"^Target {bad} is out of bounds\.$"):
        loss(dl.randn(3, 5), dl.tensor(target))


def test_spatial_targets_are_checked_too():
    with pytest.raises(IndexError, match=r"^Target 4 is out of bounds\.$"):
        F.cross_entropy(dl.randn(2, 4, 3), dl.tensor([[0, 1, 2], [3, 4, 0]]))


def test_ignore_index_may_lie_outside_the_classes():
    loss = F.cross_entropy(dl.zeros(3, 5), dl.tensor([0, -100, 4]))  # -100: the default ignore_index
    assert abs(loss.item() - 1.6094379) < 1e-6  # log(5) over the two kept targets
    loss = F.nll_loss(dl.zeros(2, 5), dl.tensor([7, 1]), ignore_index=7)
    assert loss.item() == 0.0


def _loss(x, t):
    return F.cross_entropy(x * 2, t)


def test_compiled_raises_the_same_error():
    x = dl.randn(3, 5)
    assert_same(_loss, x, dl.tensor([0, 1, 2]))
    dl.reset()
    assert_same(_loss, x, dl.tensor([0, 5, 2]))  # the same IndexError and message, compiled and eager
    compiled = dl.compile(_loss, backend="numpy")
    for target in ([0, 1, 2], [0, 5, 2]):  # one graph serves both: the check runs inside it
        try:
            expected = _loss(x, dl.tensor(target)).item()
        except IndexError as error:
            expected = str(error)
        try:
            actual = compiled(x, dl.tensor(target)).item()
        except IndexError as error:
            actual = str(error)
        assert actual == pytest.approx(expected, rel=1e-6) if isinstance(expected, float) else actual == expected
