"""Packed sequences (pack / pad functions, and RNN/LSTM/GRU over them) against answers recorded from PyTorch.

``fixtures/packed.npz`` (weights, inputs, outputs, final states, gradients) and
``fixtures/packed_errors.json`` (torch's exception type and message) were written by
``fixtures/record_packed.py`` with PyTorch 2.13 (CPU), float64, from ``packed_cases.py``.
"""
from __future__ import annotations

import builtins
import json
import pathlib

import numpy as np
import pytest

import dynamo_lite as dl
from dynamo_lite.nn.utils import rnn as R
from tests.helpers import assert_same

from . import packed_cases as C

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
RECORDED = np.load(FIXTURES / "packed.npz")
ERRORS = json.loads((FIXTURES / "packed_errors.json").read_text())
TOLERANCE = {"rtol": 1e-10, "atol": 1e-12}


def _layer(name, cls, kwargs):
    layer = getattr(dl.nn, cls)(C.INPUT_SIZE, C.HIDDEN_SIZE, dtype=dl.float64, **kwargs)
    prefix = f"{name}/param/"
    layer.load_state_dict({k[len(prefix):]: dl.tensor(RECORDED[k]) for k in RECORDED.files if k.startswith(prefix)})
    return layer


def _inputs(name, cls, lengths, lengths_tensor, with_h0):
    padded = dl.tensor(RECORDED[f"{name}/input"]).requires_grad_()
    given = dl.tensor(lengths) if lengths_tensor else lengths
    hx = None
    if with_h0:
        states = [dl.tensor(RECORDED[f"{name}/h0_{i}"]) for i in range(2 if cls == "LSTM" else 1)]
        hx = tuple(states) if cls == "LSTM" else states[0]
    return padded, given, hx


def _run(layer, padded, lengths, hx, batch_first, enforce_sorted):
    packed = R.pack_padded_sequence(padded, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    output, hidden = layer(packed, hx)
    return output, hidden if isinstance(hidden, tuple) else (hidden,)


def _check(actual, key):
    np.testing.assert_allclose(actual.detach().numpy(), RECORDED[key], **TOLERANCE, err_msg=key)


@pytest.mark.parametrize("name,cls,kwargs,lengths,enforce_sorted,lengths_tensor,with_h0", C.RNN_CASES,
                         ids=[c[0] for c in C.RNN_CASES])
def test_layer_over_packed_matches_torch(name, cls, kwargs, lengths, enforce_sorted, lengths_tensor, with_h0):
    layer = _layer(name, cls, kwargs)
    padded, given, hx = _inputs(name, cls, lengths, lengths_tensor, with_h0)
    batch_first = kwargs.get("batch_first", False)
    output, hidden = _run(layer, padded, given, hx, batch_first, enforce_sorted)
    assert isinstance(output, R.PackedSequence)
    _check(output.data, f"{name}/out/data")
    assert output.batch_sizes.tolist() == RECORDED[f"{name}/out/batch_sizes"].tolist()
    if enforce_sorted:
        assert output.sorted_indices is None and output.unsorted_indices is None
    else:
        assert output.sorted_indices.tolist() == RECORDED[f"{name}/out/sorted_indices"].tolist()
    for i, h in enumerate(hidden):
        _check(h, f"{name}/out/hidden{i}")
    padded_out, out_lengths = R.pad_packed_sequence(output, batch_first=batch_first)
    _check(padded_out, f"{name}/out/padded")
    assert out_lengths.tolist() == RECORDED[f"{name}/out/lengths"].tolist() and out_lengths.dtype == dl.int64
    loss = (output.data * dl.tensor(C.cotangent(np, tuple(output.data.shape)))).sum()
    for h in hidden:
        loss = loss + (h * dl.tensor(C.cotangent(np, tuple(h.shape)))).sum()
    loss.backward()
    _check(padded.grad, f"{name}/grad/input")
    for key, parameter in layer.named_parameters():
        _check(parameter.grad, f"{name}/grad/{key}")


@pytest.mark.parametrize("name,cls,kwargs,lengths,enforce_sorted,lengths_tensor,with_h0", C.RNN_CASES,
                         ids=[c[0] for c in C.RNN_CASES])
def test_layer_over_packed_compiled_matches_eager(name, cls, kwargs, lengths, enforce_sorted, lengths_tensor,
                                                  with_h0):
    layer = _layer(name, cls, kwargs)
    padded, given, hx = _inputs(name, cls, lengths, lengths_tensor, with_h0)
    padded = padded.detach()
    batch_first = kwargs.get("batch_first", False)

    def packed_forward(padded, hx):
        output, hidden = _run(layer, padded, given, hx, batch_first, enforce_sorted)
        return R.pad_packed_sequence(output, batch_first=batch_first), hidden

    # The step loop needs batch_sizes as Python ints: reading them (tolist) is data-dependent, a graph break
    # in the layer and one in pad_packed_sequence (each reported by every enclosing frame, counted once);
    # lengths given as a tensor are read too. Everything between the reads is captured.
    breaks = 1 + 1 + (1 if lengths_tensor else 0)
    assert_same(packed_forward, padded, hx, backend="numpy", expect_breaks=breaks)


@pytest.mark.parametrize("name,pack_kwargs,pad_kwargs", C.PACK_CASES, ids=[c[0] for c in C.PACK_CASES])
def test_pack_and_pad_match_torch(name, pack_kwargs, pad_kwargs):
    packed = R.pack_padded_sequence(dl.tensor(RECORDED[f"{name}/input"]), **pack_kwargs)
    for field, value in zip(packed._fields, packed):
        key = f"{name}/packed/{field}"
        assert (value is None) == (key not in RECORDED.files), key
        if value is not None:
            np.testing.assert_array_equal(value.numpy(), RECORDED[key], err_msg=key)
    padded, lengths = R.pad_packed_sequence(packed, **pad_kwargs)
    np.testing.assert_array_equal(padded.numpy(), RECORDED[f"{name}/padded"])
    np.testing.assert_array_equal(lengths.numpy(), RECORDED[f"{name}/lengths"])


def test_pack_sequence_round_trip():
    sequences = [dl.arange(2.0), dl.arange(5.0), dl.arange(3.0)]
    packed = R.pack_sequence(sequences, enforce_sorted=False)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1, 1] and packed.sorted_indices.tolist() == [1, 2, 0]
    padded, lengths = R.pad_packed_sequence(packed, batch_first=True)
    assert lengths.tolist() == [2, 5, 3]
    assert [padded[i, :n].tolist() for i, n in enumerate(lengths.tolist())] == [s.tolist() for s in sequences]
    assert packed.double().data.dtype == dl.float64 and not packed.is_cuda


@pytest.mark.parametrize("name,what,kwargs", C.ERROR_CASES, ids=[c[0] for c in C.ERROR_CASES])
def test_errors_match_torch(name, what, kwargs):
    error_type, message = ERRORS[name]
    padded = dl.zeros(4, 3, 2)
    calls = {
        "pad_packed_sequence": lambda: R.pad_packed_sequence(R.pack_padded_sequence(padded, [4, 2, 1]), **kwargs),
        "pack_sequence": lambda: R.pack_sequence([dl.zeros(2), dl.zeros(3)], **kwargs),
        "pack_padded_sequence": lambda: R.pack_padded_sequence(padded, **kwargs),
    }
    with pytest.raises(getattr(builtins, error_type)) as caught:
        calls[what]()
    assert str(caught.value) == message
