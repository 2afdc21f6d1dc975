"""The second round of ported activations and losses against answers recorded from PyTorch, eager and compiled.

``fixtures/portmods.npz`` holds each case's inputs, torch's outputs and gradients and
``fixtures/portmods_errors.json`` torch's exception type and message for bad input; both
were written by ``fixtures/record_portmods.py`` with PyTorch 2.13 (CPU) from the cases
in ``portmods_cases.py``.
"""
from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from tests.helpers import assert_same

from . import portmods_cases as C
from .porting_cases import build_inputs, cotangent
from .test_porting_torch import _case_function, _outputs

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "portmods.npz")
ERRORS = json.loads((FIXTURES / "portmods_errors.json").read_text())
TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}
CASE_IDS = [c[0] for c in C.CASES]


def _torch_message(message: str) -> str:
    """torch's message as dynamo_lite words it (shapes print as ``dl.Size``)."""
    return message.replace("torch.Size", "dl.Size")


@pytest.mark.parametrize("name,path,args,kwargs,ctor", C.CASES, ids=CASE_IDS)
def test_matches_torch(name, path, args, kwargs, ctor):
    args, kwargs = build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    outputs = _outputs(_case_function(path, ctor)(*args, **kwargs))
    expected = [RECORDED[k] for k in sorted(RECORDED.files) if k.startswith(f"{name}/out")]
    assert len(outputs) == len(expected)
    for out, want in zip(outputs, expected):
        assert out.dtype == dl.tensor(want).dtype and tuple(out.shape) == want.shape, name
        np.testing.assert_allclose(out.detach().numpy(), want, **TOLERANCE, err_msg=name)


@pytest.mark.parametrize("name,path,args,kwargs,ctor", C.CASES, ids=CASE_IDS)
def test_compiled_matches_eager(name, path, args, kwargs, ctor):
    args, kwargs = build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    function = _case_function(path, ctor)
    breaks = C.BREAKS.get(name, 0)
    assert_same(lambda *a: function(*a, **kwargs), *args, backend="numpy", expect_breaks=breaks,
                expect_graphs=not breaks)


@pytest.mark.parametrize("name,path,args,kwargs,ctor", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, path, args, kwargs, ctor):
    args, kwargs = build_inputs(name, args, kwargs, RECORDED, dl.tensor)
    error_type, message = ERRORS[name]
    message = _torch_message(message)
    with pytest.raises(getattr(builtins, error_type)) as caught:
        _case_function(path, ctor)(*args, **kwargs)
    assert str(caught.value) == message
    compiled = dl.compile(lambda *a: _case_function(path, ctor)(*a, **kwargs))
    with pytest.raises(type(caught.value)) as caught_compiled:
        compiled(*args)
    assert str(caught_compiled.value) == message


def _gradient_input(array):
    if C.is_label(array):
        return dl.tensor(array)
    return dl.tensor(array, dtype=dl.float64).requires_grad_()


@pytest.mark.parametrize("name", C.GRAD_CASES)
def test_gradients_match_torch(name):
    _, path, args, kwargs, ctor = next(c for c in C.CASES if c[0] == name)
    args, kwargs = build_inputs(name, args, kwargs, RECORDED, _gradient_input)
    output = _outputs(_case_function(path, ctor)(*args, **kwargs))[0]
    (output * dl.tensor(cotangent(tuple(output.shape)))).sum().backward()
    leaves = [t for t in _outputs([*args, *kwargs.values()]) if t.requires_grad]
    assert len(leaves) == len([k for k in RECORDED.files if k.startswith(f"{name}/grad")])
    for i, t in enumerate(leaves):
        np.testing.assert_allclose(t.grad.numpy(), RECORDED[f"{name}/grad{i}"], rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} input {i}")
