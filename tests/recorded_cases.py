"""Cases written once against the torch API, recorded with PyTorch and replayed on dynamo_lite.

A case is a function of the library module (``torch`` or ``dynamo_lite``) returning tensors (or
nested tuples of them), or raising for bad input. A ``record_*.py`` script (run once with the
PyTorch oracle interpreter) calls ``record`` to store torch's outputs in an ``.npz`` and its
exceptions (type and message) in a ``.json``; the tests compare dynamo_lite's with
``check_outputs`` and ``check_error``. This module imports neither torch nor pytest (the oracle
interpreter has no pytest).
"""
from __future__ import annotations

import builtins
import json

import numpy as np


def flat(result) -> list:
    """The tensors of a nested tuple/list result, in order."""
    return [t for r in result for t in flat(r)] if isinstance(result, (tuple, list)) else [result]


def record(library, value_cases: dict, error_cases: dict, npz_path, errors_path) -> str:
    """Run every case with ``library`` (torch) and store outputs as ``<name>/<i>`` and errors by name."""
    store, errors = {}, {}
    for name, case in value_cases.items():
        for i, out in enumerate(flat(case(library))):
            store[f"{name}/{i}"] = out.detach().numpy()
    for name, case in error_cases.items():
        try:
            case(library)
        except Exception as exc:  # the expected error
            errors[name] = [type(exc).__name__, str(exc)]
        else:
            raise AssertionError(f"{name} did not raise")
    np.savez_compressed(npz_path, **store)
    errors_path.write_text(json.dumps(errors, indent=1, sort_keys=True) + "\n")
    return f"recorded {len(store)} arrays, {len(errors)} errors with torch {library.__version__}"


def check_outputs(name: str, result, recorded, *, rtol: float, atol: float) -> None:
    """dynamo_lite's outputs of case ``name`` equal torch's recorded ones: count, dtype, shape and values."""
    outputs = flat(result)
    assert f"{name}/{len(outputs)}" not in recorded.files, f"{name}: torch returned more outputs"
    for i, out in enumerate(outputs):
        want, got = recorded[f"{name}/{i}"], out.detach().numpy()
        assert got.dtype == want.dtype and got.shape == want.shape, (name, i, got.dtype, want.dtype, got.shape)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{name} output {i}")


def check_error(call, recorded_error, *, error_types=None, prefix_until=None) -> None:
    """``call()`` raises torch's recorded exception: the same type (``error_types`` maps torch's own
    classes to dynamo_lite's) and message (``torch.Size`` read as ``dl.Size``; compared up to and
    including ``prefix_until`` when given, for messages that print torch-only structures)."""
    error_type, message = recorded_error
    message = message.replace("torch.Size", "dl.Size")
    expected_type = (error_types or {}).get(error_type) or getattr(builtins, error_type)
    try:
        call()
    except Exception as exc:  # compared below
        caught = exc
    else:
        raise AssertionError(f"expected {error_type}: {message}")
    assert isinstance(caught, expected_type), f"raised {caught!r}, torch raised {error_type}"
    if prefix_until is not None:
        cut = message.index(prefix_until) + len(prefix_until)
        assert str(caught)[:cut] == message[:cut]
    else:
        assert str(caught) == message
