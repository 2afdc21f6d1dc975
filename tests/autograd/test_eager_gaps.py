"""Eager-autograd gaps closed after the first autograd landing: numpy() on a tensor requiring grad,
complex gradients (torch's conjugate convention, against recorded torch fixtures), cumprod's
gradient with zero inputs, addcmul/addcdiv broadcasting."""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.autograd import gradcheck, gradgradcheck

from .complex_cases import CASES as COMPLEX_CASES

# Made by tests/autograd/record_complex_fixtures.py (PyTorch 2.13, complex128, inputs and loss
# weights drawn with NumPy seed 0 and stored with torch's gradients).
COMPLEX_FIXTURES = json.loads((pathlib.Path(__file__).parent / "fixtures" / "torch_complex_grads.json").read_text())
NUMPY_MESSAGE = "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."


# -- numpy() ------------------------------------------------------------------------------------
def test_numpy_of_tensor_requiring_grad_raises_like_torch():
    leaf = dl.randn(3, requires_grad=True)
    for tensor in (leaf, leaf * 2):
        with pytest.raises(RuntimeError) as info:
            tensor.numpy()
        assert str(info.value) == NUMPY_MESSAGE
        with pytest.raises(RuntimeError, match="requires grad"):
            np.asarray(tensor)


def test_numpy_of_tensor_requiring_grad_allowed_detached_forced_or_under_no_grad():
    leaf = dl.tensor([1.0, 2.0], requires_grad=True)
    assert leaf.detach().numpy().tolist() == [1.0, 2.0]
    assert leaf.numpy(force=True).tolist() == [1.0, 2.0]
    with dl.no_grad():
        assert leaf.numpy().tolist() == [1.0, 2.0]
    assert leaf.tolist() == [1.0, 2.0]  # tolist is allowed in torch too


# -- complex gradients --------------------------------------------------------------------------
def _from_pairs(value, kind):
    array = np.asarray(value, dtype=np.float64)
    return array[..., 0] + 1j * array[..., 1] if kind == "c" else array


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_complex_gradient_matches_torch(name):
    specs, expression = COMPLEX_CASES[name]
    fixture = COMPLEX_FIXTURES[name]
    inputs = {arg: dl.tensor(_from_pairs(fixture["inputs"][arg], kind)).requires_grad_()
              for arg, (_, kind) in specs.items()}
    result = eval(expression, dict(inputs, lib=dl))
    parts = dl.view_as_real(result) if result.dtype.is_complex else result
    (parts * dl.tensor(np.asarray(fixture["weights"]))).sum().backward()
    for arg, (_, kind) in specs.items():
        grad = inputs[arg].grad
        assert grad.dtype is (dl.complex128 if kind == "c" else dl.float64), arg
        np.testing.assert_allclose(grad.numpy(), _from_pairs(fixture["grads"][arg], kind), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}: d/d{arg}")


# -- cumprod with zeros ----------------------------------------------------------------------
CUMPROD_INPUTS = {
    "no_zero": [1.5, -0.5, 2.0, 0.75],
    "one_zero": [1.5, 0.0, 2.0, -0.75],
    "zero_first": [0.0, 1.5, 2.0, -0.75],
    "zero_last": [1.5, -2.0, 0.5, 0.0],
    "two_zeros": [1.5, 0.0, 2.0, 0.0, 3.0],
}


@pytest.mark.parametrize("name", sorted(CUMPROD_INPUTS))
def test_cumprod_gradient_with_zero_inputs(name):
    x = dl.tensor(CUMPROD_INPUTS[name], dtype=dl.float64, requires_grad=True)
    assert gradcheck(lambda t: dl.cumprod(t, 0), (x,))
    assert gradgradcheck(lambda t: dl.cumprod(t, 0), (x,))


def test_cumprod_gradient_with_zeros_along_an_inner_dim_equals_the_exact_sum():
    values = np.array([[1.5, 0.0, 2.0, 0.0], [0.5, -1.0, 0.0, 3.0], [0.0, 0.0, 1.0, 2.0]])
    x = dl.tensor(values, requires_grad=True)
    weights = np.arange(1.0, 13.0).reshape(3, 4)
    (dl.cumprod(x, 1) * dl.tensor(weights)).sum().backward()
    # d/dx_i sum_k w_k prod_{j<=k} x_j = sum_{k>=i} w_k prod_{j<=k, j!=i} x_j, term by term
    expected = np.zeros_like(values)
    for row in range(3):
        for i in range(4):
            for k in range(i, 4):
                expected[row, i] += weights[row, k] * np.prod([values[row, j] for j in range(k + 1) if j != i])
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


# -- addcmul / addcdiv broadcasting -------------------------------------------------------------
@pytest.mark.parametrize("name, reference", [
    ("addcmul", lambda s, a, b, value: s + value * a * b),
    ("addcdiv", lambda s, a, b, value: s + value * a / b),
])
def test_addc_ops_broadcast_tensor1_smaller_than_the_result(name, reference):
    rng = np.random.default_rng(0)
    s, a, b = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.uniform(1.0, 2.0, (3, 1))
    op = getattr(dl, name)
    for dtype in (dl.float64, dl.float32):
        got = op(dl.tensor(s, dtype=dtype), dl.tensor(a, dtype=dtype), dl.tensor(b, dtype=dtype), value=0.5)
        np.testing.assert_allclose(got.numpy(), reference(s, a, b, 0.5), rtol=1e-6)
    inputs = [dl.tensor(v, requires_grad=True) for v in (s, a, b)]
    assert gradcheck(lambda *t: op(*t, value=0.5), inputs)
    target = dl.tensor(s)
    getattr(target, name + "_")(dl.tensor(a), dl.tensor(b), value=0.5)
    np.testing.assert_allclose(target.numpy(), reference(s, a, b, 0.5), rtol=1e-12)


def test_addcmul_integer_broadcast():
    got = dl.addcmul(dl.zeros(3, 4, dtype=dl.int64), dl.arange(4), dl.arange(3).reshape(3, 1), value=2)
    assert got.tolist() == (2 * np.arange(3).reshape(3, 1) * np.arange(4)).tolist()
