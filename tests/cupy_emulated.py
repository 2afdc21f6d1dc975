"""The ``cupy_emulated`` fixture: the cupy backend's generated CUDA, run on the host.

Tests that must hold on every backend use it to cover the cupy backend without a GPU
(see tests/backends/test_cupy_emulation.py for the emulation itself).
"""
import pytest


@pytest.fixture(scope="module")
def cupy_emulated():
    """Register the emulated cupy backend for the module's tests; yields its name."""
    from dynamo_lite.backends import registry
    from dynamo_lite.backends.cupy import CupyBackend
    from dynamo_lite.backends.cupy.emulation import HostEmulationRuntime, compiler

    if compiler() is None:
        pytest.skip("no host C++ compiler to emulate CUDA kernels")
    registry.register_backend("cupy_emulated", CupyBackend(HostEmulationRuntime, device_type="cpu"),
                              devices=("cpu",), override=True)
    yield "cupy_emulated"
    registry.unregister_backend("cupy_emulated")
