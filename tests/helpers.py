"""Shared test helpers: compare compiled and eager runs of the same function, on every backend."""
from __future__ import annotations

import copy

import numpy as np

import dynamo_lite as dl


def compiled_backends(device: str = "cpu", cuda: bool = False, unavailable: bool = False) -> list:
    """The backends compiled-vs-eager tests on ``device`` tensors run on: ``eager`` (the
    reference), ``numpy``, ``native`` when a C compiler is found (or ``unavailable``: the
    ``backend`` fixture then skips it with the reason), and ``cupy`` when ``cuda`` (a CUDA
    device is present); only registered ones that run ``device`` tensors.

    ``tests/conftest.py`` turns this into the ``backend`` fixture (CPU tensors).
    """
    from dynamo_lite.backends import backend_spec

    native = ["native"] if unavailable or native_skip_reason() is None else []
    names = ["eager", "numpy"] + native + (["cupy"] if cuda else [])
    return [n for n in names if n in dl.list_backends() and device in backend_spec(n).devices]


def native_skip_reason() -> str | None:
    """Why native kernels cannot be built here (no C compiler), or None."""
    from dynamo_lite.backends.native import compiler_available

    available, reason = compiler_available()
    return None if available else reason


def run_in_threads(fn, argument_lists, repeats: int) -> list:
    """Call ``fn(*arguments)`` ``repeats`` times on one thread per argument list, all at
    once; returns each thread's last result and fails if any call raised."""
    import threading

    results, errors = [None] * len(argument_lists), []

    def worker(i):
        try:
            for _ in range(repeats):
                results[i] = fn(*argument_lists[i])
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(argument_lists))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def run_capturing(fn, *args, **kwargs):
    """(result, None) or (None, exception) of one call."""
    try:
        return fn(*args, **kwargs), None
    except Exception as exc:  # the comparison is the point
        return None, exc


def assert_equal_values(actual, expected, *, rtol=1e-5, atol=1e-6, path="result"):
    """Deep comparison: tensors by dtype, shape and values; containers item by item."""
    if isinstance(expected, dl.Tensor):
        assert isinstance(actual, dl.Tensor), f"{path}: expected a Tensor, got {type(actual).__name__}"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype} != {expected.dtype}"
        assert tuple(actual.shape) == tuple(expected.shape), f"{path}: shape {actual.shape} != {expected.shape}"
        assert actual.device == expected.device, f"{path}: device {actual.device} != {expected.device}"
        np.testing.assert_allclose(actual.detach().cpu().numpy(), expected.detach().cpu().numpy(), rtol=rtol, atol=atol,
                                   err_msg=path)
        return
    if isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected), f"{path}: {type(actual).__name__} != {type(expected).__name__}"
        assert len(actual) == len(expected), f"{path}: length {len(actual)} != {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_equal_values(a, e, rtol=rtol, atol=atol, path=f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert type(actual) is dict and list(actual) == list(expected), f"{path}: keys differ"
        for k in expected:
            assert_equal_values(actual[k], expected[k], rtol=rtol, atol=atol, path=f"{path}[{k!r}]")
        return
    assert type(actual) is type(expected) and actual == expected, f"{path}: {actual!r} != {expected!r}"


def assert_same(fn, *args, backend="eager", calls=2, copy_args=False, expect_fallback=False, expect_breaks=0,
                expect_graphs=True, **compile_kwargs):
    """Run ``fn`` eagerly and compiled with the same arguments; results and raised
    exceptions (type and message) must agree on every call, and the compile counters
    must show that compilation happened: graphs captured, no eager fallback, exactly
    ``expect_breaks`` graph breaks. A test whose function is meant to run eagerly says
    so with ``expect_fallback=True`` (then a fallback must happen); one without tensor
    work (pure Python) with ``expect_graphs=False`` (frames compiled, no graph needed).
    Returns the compiled fn.
    """
    compiled = dl.compile(fn, backend=backend, **compile_kwargs)
    before = dl.stats()
    for _ in range(calls):
        eager_args = copy.deepcopy(args) if copy_args else args
        expected, expected_exc = run_capturing(fn, *eager_args)
        compiled_args = copy.deepcopy(args) if copy_args else args
        actual, actual_exc = run_capturing(compiled, *compiled_args)
        if expected_exc is not None or actual_exc is not None:
            assert type(actual_exc) is type(expected_exc), f"eager raised {expected_exc!r}, compiled {actual_exc!r}"
            assert str(actual_exc) == str(expected_exc)
        else:
            assert_equal_values(actual, expected)
    assert_compiled(before, dl.stats(), expect_fallback=expect_fallback, expect_breaks=expect_breaks,
                    expect_graphs=expect_graphs)
    return compiled


def assert_compiled(before, after, *, expect_fallback=False, expect_breaks=0, expect_graphs=True) -> None:
    """The counters between two ``dl.stats()`` snapshots show the expected compilation."""
    fallbacks = after.fallbacks[len(before.fallbacks):]
    breaks = after.graph_breaks - before.graph_breaks
    if expect_fallback:
        assert fallbacks, "expected an eager fallback, but every frame compiled"
        return
    assert not fallbacks, "compilation fell back to eager: " + "; ".join(str(f) for f in fallbacks)
    if expect_graphs:
        assert after.graph_count > before.graph_count, "no graph was compiled"
    else:
        assert after.frames_compiled > before.frames_compiled, "no frame was compiled"
    assert breaks == expect_breaks, f"expected {expect_breaks} graph breaks, got {breaks}"


def run_rewritten(out, fn, *args):
    """Run the rewritten source of every frame of ``out`` in place of the code it spells:
    the compiled graphs bound, each resume call going to the resume function's own view
    (a frame that fell back has none: its resume function runs as it is)."""
    sources, bindings = out.rewritten_source, out.rewritten_bindings
    assert list(sources) == [f.name for f in out.frames if f.name in sources]
    assert all(f.report.fallback_reason for f in out.frames if f.name not in sources)
    functions, namespaces = {}, []
    for name, source in sources.items():
        code = compile(source, "<rewritten>", "exec")
        namespace = {**fn.__globals__, **bindings[name]}
        exec(code, namespace)
        defined = source.split("(")[0].removeprefix("def ")
        functions[defined] = namespace[defined]
        namespaces.append(namespace)
    for namespace in namespaces:
        namespace.update((key, functions[key]) for key in list(namespace) if key in functions)
    return functions[fn.__name__](*args)
