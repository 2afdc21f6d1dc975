"""dl.nn.functional against answers recorded from PyTorch (tests/nn/torch_cases.py), eager and compiled.

The fixture ``fixtures/functional.npz`` holds each case's inputs and torch's outputs
(and, for ops that update buffers in place, the inputs after the call);
``fixtures/functional_errors.json`` torch's exception type and message for bad input.
Both were written by ``fixtures/record_torch.py`` with PyTorch 2.13 (CPU). Compiled runs
cover every backend (cupy through its host emulation).
"""
from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
import dynamo_lite.nn.functional as F
from tests.cupy_emulated import cupy_emulated  # noqa: F401  (fixture)
from tests.helpers import assert_equal_values

from . import torch_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "functional.npz")
ERRORS = json.loads((FIXTURES / "functional_errors.json").read_text())
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def _inputs(name, args, kwargs):
    """The case's arguments with the recorded arrays in place of the tensor specs."""
    return C.build_inputs(name, args, kwargs, RECORDED, dl.tensor)


def _flat(result):
    if isinstance(result, dl.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flat(r)]
    return []


def _check(name, result, args, kwargs):
    outputs = _flat(result)
    expected = [RECORDED[k] for k in sorted(RECORDED.files) if k.startswith(f"{name}/out")]
    assert len(outputs) == len(expected)
    for out, want in zip(outputs, expected):
        assert out.dtype == dl.tensor(want).dtype and tuple(out.shape) == want.shape
        np.testing.assert_allclose(out.numpy(), want, **TOLERANCE, err_msg=name)
    tensors = [t for t in list(args) + list(kwargs.values()) if isinstance(t, dl.Tensor)]
    for i, t in enumerate(tensors):  # in-place updates (running statistics) match too
        np.testing.assert_allclose(t.numpy(), RECORDED[f"{name}/after{i}"], **TOLERANCE, err_msg=f"{name} arg {i}")


@pytest.mark.parametrize("name,fn,args,kwargs", C.FUNCTIONAL_CASES, ids=[c[0] for c in C.FUNCTIONAL_CASES])
def test_matches_torch(name, fn, args, kwargs):
    args, kwargs = _inputs(name, args, kwargs)
    _check(name, getattr(F, fn)(*args, **kwargs), args, kwargs)


@pytest.mark.parametrize("name,fn,args,kwargs", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_bad_input_raises_like_torch(name, fn, args, kwargs):
    args, kwargs = _inputs(name, args, kwargs)
    kind, message = ERRORS[name]
    with pytest.raises(Exception) as info:
        getattr(F, fn)(*args, **kwargs)
    assert type(info.value).__name__ == kind
    assert str(info.value) == message.replace("torch.Size", "dl.Size")


@pytest.mark.parametrize("name,fn,args,kwargs", C.FUNCTIONAL_CASES, ids=[c[0] for c in C.FUNCTIONAL_CASES])
def test_compiled_matches_eager(name, fn, args, kwargs, backend):
    _check_compiled(name, fn, args, kwargs, backend)


@pytest.mark.parametrize("name,fn,args,kwargs", C.FUNCTIONAL_CASES, ids=[c[0] for c in C.FUNCTIONAL_CASES])
def test_on_the_cupy_backend(name, fn, args, kwargs, cupy_emulated):
    _check_compiled(name, fn, args, kwargs, cupy_emulated)


def _check_compiled(name, fn, args, kwargs, backend):
    function = getattr(F, fn)
    eager_args, eager_kwargs = _inputs(name, args, kwargs)
    expected = function(*eager_args, **eager_kwargs)
    compiled_args, compiled_kwargs = _inputs(name, args, kwargs)
    dl.reset()
    compiled = dl.compile(lambda *a, **k: function(*a, **k), backend=backend, fullgraph=True)
    actual = compiled(*compiled_args, **compiled_kwargs)
    assert dl.stats().graph_count == 1 and dl.stats().frames_compiled == 1
    assert_equal_values(actual, expected, **TOLERANCE)
    for after, want in zip(_flat(compiled_args), _flat(eager_args)):
        np.testing.assert_allclose(after.numpy(), want.numpy(), **TOLERANCE)
