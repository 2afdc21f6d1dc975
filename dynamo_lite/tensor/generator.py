"""Random number generators: an explicit state object that random kernels draw from.

NOTE: [random state] Every random op takes a ``generator`` argument (the wrapper passes
``default_generator`` when the user gives none), so the state a kernel draws from is a
visible argument of the op: eager, traced and compiled runs all draw from the same
object and produce the same numbers after the same ``manual_seed``. CUDA kernels seed a
CuPy ``RandomState`` with a number drawn from this generator.
"""
from __future__ import annotations

import os

import numpy as np

DEFAULT_SEED = 67280421310721
_STATE_BYTES = 40  # PCG64: 128-bit state, 128-bit increment, has_uint32 flag, cached uint32


class Generator:
    """A seedable source of random numbers (PCG64), like ``torch.Generator``.

    Example:
        >>> g = dl.Generator().manual_seed(0)
        >>> a = dl.rand(3, generator=g)
        >>> g.manual_seed(0); b = dl.rand(3, generator=g)   # a and b are equal
    """

    def __init__(self, device="cpu"):
        from .device import as_device

        self.device = as_device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed) -> "Generator":
        seed = int(seed)
        if not -(2**63) <= seed < 2**64:
            raise RuntimeError(f"Overflow when unpacking long: seed {seed} does not fit in 64 bits")
        self._seed = seed % 2**64
        self.numpy = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self) -> int:
        """Re-seed from OS entropy and return the new seed."""
        seed = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        """The full generator state as a ``uint8`` tensor (pass it to ``set_state``)."""
        from .tensor import from_array

        st = self.numpy.bit_generator.state
        raw = (
            st["state"]["state"].to_bytes(16, "little")
            + st["state"]["inc"].to_bytes(16, "little")
            + int(st["has_uint32"]).to_bytes(4, "little")
            + int(st["uinteger"]).to_bytes(4, "little")
        )
        return from_array(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        raw = bytes(np.asarray(new_state, dtype=np.uint8).reshape(-1))
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a uint8 state tensor of {_STATE_BYTES} bytes (from get_state()), got {len(raw)} bytes"
            )
        bitgen = np.random.PCG64()
        bitgen.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[:16], "little"), "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": int.from_bytes(raw[32:36], "little"),
            "uinteger": int.from_bytes(raw[36:40], "little"),
        }
        self.numpy = np.random.Generator(bitgen)
        return self

    def cupy_random_state(self, cupy):
        """A CuPy RandomState seeded from this generator (advances this generator)."""
        return cupy.random.RandomState(int(self.numpy.integers(0, 2**63 - 1)))

    def __repr__(self) -> str:
        return f"<dynamo_lite.Generator device={self.device}>"


default_generator = Generator()


def manual_seed(seed) -> Generator:
    """Seed the default generator so random factories are reproducible.

    Example:
        >>> dl.manual_seed(0); a = dl.randn(2)
        >>> dl.manual_seed(0); b = dl.randn(2)   # a and b are equal
    """
    return default_generator.manual_seed(seed)
