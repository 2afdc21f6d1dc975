"""Tiered compilation: run a fast-to-build backend's function until a faster one is built in the background.

NOTE: [tiering] ``backend="auto"`` on CPU compiles each graph with ``numpy`` (milliseconds)
and returns a ``TieredFunction`` around it. Once the graph is *hot* (its calls have run
for ``AutoBackend.tier_up_seconds`` in total: a C build costs a few hundred ms, which a
graph run a handful of times in a test or a script never earns back), a daemon thread
builds the upper tier (``native``: C source, compiler, load; the compiler runs as a
subprocess, so the calling thread keeps the GIL and keeps running the first tier).
When the build is done the next call runs the new function. A build that fails (no
compiler, a compiler error) is logged once per reason and the graph stays on the first
tier for good. Both tiers compute the same values (within the float tolerance every
backend is tested to): which one ran is visible in ``dl.explain`` and the graph log.
"""
from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger("dynamo_lite")
graph_log = logging.getLogger("dynamo_lite.graph")


class Tier:
    """An upper tier of a backend: its compiler (raising on failure) and its availability check.

    Args:
        name: the upper tier's backend name (``"native"``).
        compile: ``compile(gm, example_inputs) -> callable``; raises when it cannot build.
        unavailable: ``() -> str | None``, why it cannot build on this machine (None: it can).
    """

    def __init__(self, name: str, compile, unavailable):
        self.name, self.compile, self.unavailable = name, compile, unavailable
        self.reported: set = set()

    def report_once(self, message: str) -> None:
        if message not in self.reported:
            self.reported.add(message)
            log.warning(message)


class TieredFunction:
    """Calls the first tier's function until the upper tier's is built (see NOTE: [tiering]).

    Attributes:
        backend_name: the backend whose function the next call runs.
        build_error: why the upper tier was not built, if it failed.
    """

    def __init__(self, function, first_name: str, tier: Tier, build_upper, hot_after_seconds: float, label: str,
                 example_inputs=()):
        self.current, self.backend_name = function, first_name
        self.build_error: str | None = None
        self._tier, self._build_upper, self._label = tier, build_upper, label
        self._hot_after, self._spent = hot_after_seconds, 0.0
        self._thread: threading.Thread | None = None
        self._timing = True
        if hot_after_seconds <= 0:
            self._start(list(example_inputs))

    def __call__(self, *args):
        if not self._timing:
            return self.current(*args)
        started = time.perf_counter()
        try:
            return self.current(*args)
        finally:
            self._spent += time.perf_counter() - started
            if self._spent >= self._hot_after:
                self._start(list(args))  # built for this call's inputs: none are kept from the first call

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the upper tier's build (if started); True once the build has finished."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self._thread is not None and not self._thread.is_alive()

    def _start(self, inputs: list) -> None:
        self._timing = False
        reason = self._tier.unavailable()
        if reason is not None:
            self.build_error = reason
            self._tier.report_once(f"backend 'auto' stays on {self.backend_name}: {reason}")
            return
        self._thread = threading.Thread(target=self._build, args=(inputs,), name=f"dynamo_lite {self._tier.name} build", daemon=True)
        self._thread.start()

    def _build(self, inputs: list) -> None:
        started = time.perf_counter()
        try:
            function = self._build_upper(inputs)
        except Exception as exc:  # a failed build must never reach the user's calls
            self.build_error = f"{type(exc).__name__}: {exc}"
            self._tier.report_once(f"backend 'auto' stays on {self.backend_name}: {self._tier.name} build failed: "
                                   f"{self.build_error}")
            return
        previous = self.backend_name
        self.current, self.backend_name = function, self._tier.name
        graph_log.debug("%s: switched from %s to %s (built in %.0f ms in the background)", self._label, previous,
                        self._tier.name, (time.perf_counter() - started) * 1e3)

    def __repr__(self) -> str:
        return f"<TieredFunction of {self._label} running {self.backend_name}>"
