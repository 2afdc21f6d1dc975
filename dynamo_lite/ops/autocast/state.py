"""The per-thread autocast state dispatch reads, and the slot the autocast policy plugs into."""
from __future__ import annotations

import threading

from ...tensor.dtype import bfloat16, float16

#: the dtype ``dl.autocast(device_type)`` uses when none is given.
DEFAULT_DTYPES = {"cpu": bfloat16, "cuda": float16}


class AutocastState(threading.local):
    """Per thread: the autocast dtype of each device type while autocast is on for it (else absent).

    ``dtypes`` and ``configured`` are replaced, never mutated, so a saved value restores the state.
    """

    dtypes: dict = {}  # noqa: RUF012  (read-only default; each change assigns a new dict)
    #: the dtype ``get_autocast_dtype`` reports per device type (set even while autocast is off).
    configured: dict = DEFAULT_DTYPES
    #: ``dtypes`` as a string, which compiled code is guarded on ("off" when no device type is on).
    key: str = "off"

    def set(self, dtypes: dict, configured: dict) -> None:
        self.dtypes, self.configured = dtypes, configured
        self.key = ",".join(f"{device}={dtype}" for device, dtype in sorted(dtypes.items())) or "off"


AUTOCAST = AutocastState()


class AutocastHook:
    """Where ops/autocast/policy.py plugs in (NOTE: [autocast]): dispatch imports only this module,
    so the policy can use the conversion ops without an import cycle."""

    policies: dict = {}  # noqa: RUF012  (op name -> policy; filled once when the policy module is imported)
    cast = None


AUTOCAST_HOOK = AutocastHook()
