"""Every out-of-place Tensor method whose torch twin has an in-place version ``name_`` has it too, and it behaves.

The list of torch's in-place methods is tests/ops/fixtures/torch_inplace_methods.txt (how it
was made is written at its top). The behaviour expected of ``name_`` is torch's: the result of
``name`` written into ``self`` (same object, same storage, version bumped), torch's error when
the result's dtype cannot be cast to ``self``'s or its shape is not ``self``'s; view twins
(``t_``, ``transpose_``, ``squeeze_`` ...) give ``self`` the view's shape and strides.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "torch_inplace_methods.txt"
TORCH_INPLACE = [line.strip() for line in FIXTURE.read_text().splitlines() if line.strip() and not line.startswith("#")]


def test_the_fixture_lists_in_place_names_only():
    assert len(TORCH_INPLACE) == len(set(TORCH_INPLACE)) > 150
    assert all(name.endswith("_") and not name.endswith("__") and not name.startswith("_") for name in TORCH_INPLACE)


def test_every_out_of_place_method_has_its_in_place_twin():
    missing = [name for name in TORCH_INPLACE if hasattr(dl.Tensor, name[:-1]) and not hasattr(dl.Tensor, name)]
    assert missing == []


def _float(*shape):
    return dl.from_numpy(np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32))


# (method, arguments after self, a fresh self): each compared with the out-of-place method.
VALUE_CASES = [
    ("triu", (1,), lambda: _float(4, 4)), ("tril", (-1,), lambda: _float(3, 5)),
    ("cumsum", (1,), lambda: _float(2, 5)), ("cumprod", (0,), lambda: _float(3, 2)),
    ("erfc", (), lambda: _float(6)), ("polygamma", (1,), lambda: _float(5).abs() + 0.5),
    ("eq", (0.0,), lambda: dl.tensor([0.0, 1.0, 0.0])), ("ne", (dl.tensor([1.0, 1.0, 2.0]),), lambda: _float(3)),
    ("lt", (0.0,), lambda: _float(4)), ("le", (0.0,), lambda: _float(4)),
    ("gt", (0.0,), lambda: _float(4)), ("ge", (0.0,), lambda: _float(4)),
    ("greater", (0.0,), lambda: _float(4)), ("greater_equal", (0.0,), lambda: _float(4)),
    ("less", (0.0,), lambda: _float(4)), ("less_equal", (0.0,), lambda: _float(4)),
    ("not_equal", (0.0,), lambda: _float(4)),
    ("logical_and", (dl.tensor([1.0, 0.0, 2.0]),), lambda: dl.tensor([3.0, 5.0, 0.0])),
    ("logical_or", (dl.tensor([1.0, 0.0, 0.0]),), lambda: dl.tensor([0.0, 0.0, 2.0])),
    ("logical_xor", (dl.tensor([1.0, 0.0, 2.0]),), lambda: dl.tensor([1.0, 5.0, 0.0])),
    ("logical_not", (), lambda: dl.tensor([1.0, 0.0, -2.0])),
    ("addmm", (_float(3, 4), _float(4, 2)), lambda: _float(3, 2)),
    ("addmv", (_float(3, 4), _float(4)), lambda: _float(3)),
    ("addr", (_float(3), _float(2)), lambda: _float(3, 2)),
    ("addbmm", (_float(2, 3, 4), _float(2, 4, 5)), lambda: _float(3, 5)),
    ("baddbmm", (_float(2, 3, 4), _float(2, 4, 5)), lambda: _float(2, 3, 5)),
]


@pytest.mark.parametrize("name, args, make", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_a_value_twin_writes_the_out_of_place_result_into_self(name, args, make):
    expected = getattr(make(), name)(*args)
    x = make()
    storage, version = x.data_ptr(), x._version
    returned = getattr(x, name + "_")(*args)
    assert returned is x and x.data_ptr() == storage and x._version > version
    assert x.dtype == make().dtype  # written in self's dtype (a comparison's bools as 0/1)
    np.testing.assert_allclose(x.numpy(), expected.to(x.dtype).numpy(), rtol=1e-6, atol=1e-6)


def test_clip_causal_mask():
    # openai/CLIP's build_attention_mask: torch.empty(n, n).fill_(float("-inf")).triu_(1)
    mask = dl.empty(3, 3).fill_(float("-inf"))
    mask.triu_(1)
    assert mask.tolist() == [[0.0, float("-inf"), float("-inf")], [0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]]


def test_a_twin_raises_torchs_errors():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        dl.tensor([1, 2]).erfc_()
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        dl.ones(3).eq_(dl.ones(2, 3))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation"):
        dl.ones(2, 2, requires_grad=True).triu_()


def test_a_twin_on_a_non_leaf_differentiates_like_the_out_of_place_method():
    w = dl.randn(3, 3, requires_grad=True)
    (w * 2).triu(1).sum().backward()
    expected = w.grad.clone()
    w.grad = None
    y = w * 2
    y.triu_(1)
    y.sum().backward()
    assert w.grad.tolist() == expected.tolist()


VIEW_CASES = [
    ("t", (), (2, 3)), ("transpose", (0, 2), (2, 3, 4)), ("swapaxes", (0, 1), (2, 3)), ("swapdims", (1, 0), (2, 3)),
    ("squeeze", (), (1, 3, 1)), ("squeeze", (0,), (1, 3)), ("unsqueeze", (1,), (2, 3)),
    ("as_strided", ((2, 2), (1, 2)), (2, 3)),
]


@pytest.mark.parametrize("name, args, shape", VIEW_CASES, ids=[f"{c[0]}{c[1]}" for c in VIEW_CASES])
def test_a_view_twin_gives_self_the_views_geometry(name, args, shape):
    base = dl.arange(float(np.prod(shape))).reshape(shape)
    expected = getattr(base, name)(*args)
    x = base.clone()
    storage = x.data_ptr()
    assert getattr(x, name + "_")(*args) is x
    assert x.shape == expected.shape and x.stride() == expected.stride() and x.data_ptr() == storage
    assert x.tolist() == expected.tolist()


def test_a_view_twin_of_a_non_leaf_keeps_its_gradient():
    w = dl.randn(2, 3, requires_grad=True)
    y = w * dl.arange(6.0).reshape(2, 3)
    y.t_()
    assert y.shape == (3, 2)
    (y * dl.arange(6.0).reshape(3, 2)).sum().backward()
    assert w.grad.tolist() == (dl.arange(6.0).reshape(2, 3) * dl.arange(6.0).reshape(3, 2).t()).tolist()


def _compiled_triu(x):
    y = x * 2
    y.triu_(1)
    return y + 1


def _compiled_comparison(x, y):
    z = x.clone()
    z.gt_(y)
    return z * 3


def _compiled_view_twin(x):
    y = x + 1
    y.t_()
    return y * 2


@pytest.mark.parametrize("fn, args, breaks", [
    (_compiled_triu, (dl.randn(4, 4),), 0),
    (_compiled_comparison, (dl.randn(5), dl.randn(5)), 0),
    (_compiled_view_twin, (dl.randn(2, 3),), None),  # may break at the view twin; results must equal
])
def test_twins_compile_and_equal_eager(fn, args, breaks):
    if breaks is None:
        compiled = dl.compile(fn, backend="eager")
        for _ in range(2):
            assert compiled(*args).tolist() == fn(*args).tolist()
            assert compiled(*args).stride() == fn(*args).stride()
        return
    assert_same(fn, *args, expect_breaks=breaks)
