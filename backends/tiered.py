"""Tiered compilation: run a fast-to-build backend's function, build a faster one in the background, keep the faster.

NOTE: [tiering] ``backend="auto"`` on CPU compiles each graph with ``numpy`` (milliseconds)
and returns a ``TieredFunction`` around it. Once the graph is *hot* (its calls have run
for ``AutoBackend.tier_up_seconds`` in total: a C build costs a few hundred ms, which a
graph run a handful of times in a test or a script never earns back), a daemon thread
builds the upper tier (``native``: C source, compiler, load; the compiler runs as a
subprocess, so the calling thread keeps the GIL and keeps running the first tier).
When the build is done, the next calls measure the upper tier, the first tier and the
graph run eagerly node by node on the real inputs, and keep the fastest (NOTE: [tier
choice by measurement] in ``tier_choice.py``): compiled code is never kept where it is
slower than eager. A build that fails (no compiler, a compiler error) is logged once per
reason; the graph then chooses between the first tier and eager the same way. All
candidates compute the same values (within the float tolerance every backend is tested
to): which one runs, and the times that chose it, are shown by ``dl.explain``.

NOTE: [measuring clock] A measured call is timed by the upper tier's clock (``Tier.clock``, asked
per call). The native tier's is the calling thread's CPU time when the kernels and NumPy's
BLAS run on that thread alone (``dl.set_num_threads(1)``): then every
candidate's work happens on it, and time the thread spends descheduled (a machine busier
than its cores) is not charged to whichever candidate happened to run; in a loaded run of
the real-model benchmark wall-clock medians of three calls kept the numpy tier for a ResNet
whose native tier is faster. With more threads the work is spread over them and wall time
is what counts.
"""
from __future__ import annotations

import logging
import threading
import time

from .tier_choice import TierChoice

log = logging.getLogger("dynamo_lite")
graph_log = logging.getLogger("dynamo_lite.graph")

EAGER = "eager"
MAX_SKIPPED = 64  # measured calls at other input sizes before the choice is made on what was counted


def _signature(args) -> tuple:
    """What makes two calls' times comparable: each argument's sizes (None for a non-tensor)."""
    return tuple(getattr(a, "_sizes", None) for a in args)


class Tier:
    """An upper tier of a backend: its compiler (raising on failure) and its availability check.

    Args:
        name: the upper tier's backend name (``"native"``).
        compile: ``compile(gm, example_inputs) -> callable``; raises when it cannot build.
        unavailable: ``() -> str | None``, why it cannot build on this machine (None: it can).
        clock: ``() -> timer``, the timer of the next measured call (NOTE: [measuring clock]);
            None: wall time.
    """

    def __init__(self, name: str, compile, unavailable, clock=None):
        self.name, self.compile, self.unavailable = name, compile, unavailable
        self.clock = clock or (lambda: time.perf_counter)
        self.reported: set = set()

    def report_once(self, message: str) -> None:
        if message not in self.reported:
            self.reported.add(message)
            log.warning(message)


class TieredFunction:
    """Calls the first tier's function until the upper tier's is built, then the fastest (see NOTE: [tiering]).

    Args:
        function: the first tier's function.
        first_name: its backend's name.
        tier: the upper tier.
        build_upper: ``() -> callable``, builds the upper tier's function (raises on failure).
        hot_after_seconds: time spent in calls before the build starts (0: at once).
        label: the graph's name in logs.
        eager: the graph run node by node (a candidate of the choice), or None.
        rounds: counted calls of each candidate when choosing.
        recheck_calls: calls after a choice before it is measured again (doubling each time;
            0 never rechecks).
        clock: the timer of calls (None: the tier's, chosen per measured call; tests pass a made-up one).

    Attributes:
        backend_name: the backend whose function the next call runs.
        build_error: why the upper tier was not built, if it failed.
        upper: the upper tier's function once built (a candidate from the next call on).
        candidates: backend name -> function, of the functions the choice measures.
        choice: the ``TierChoice`` of the latest measurement (None before the first).
    """

    def __init__(self, function, first_name: str, tier: Tier, build_upper, hot_after_seconds: float, label: str,
                 eager=None, rounds: int = 3, recheck_calls: int = 1000, clock=None, example_inputs=()):
        self.current, self.backend_name = function, first_name
        self.candidates = {first_name: function}
        if eager is not None:
            self.candidates[EAGER] = eager
        self.build_error: str | None = None
        self.build_seconds: float | None = None
        self.choice: TierChoice | None = None
        self._timed_by = None
        self._first_name = first_name
        self._tier, self._build_upper, self._label = tier, build_upper, label
        self._hot_after, self._spent = hot_after_seconds, 0.0
        self._rounds, self._recheck_every, self._clock = rounds, recheck_calls, clock
        self._thread: threading.Thread | None = None
        self.upper = None  # the upper tier's function, handed over by the build thread
        self._state = "cold"  # cold -> building -> measuring -> settled (-> measuring on a recheck)
        self._calls_left = 0  # settled calls before the next recheck (the fast path while > 0)
        if hot_after_seconds <= 0:
            self._start(list(example_inputs))

    def __call__(self, *args):
        if self._calls_left > 0:
            self._calls_left -= 1
            return self.current(*args)
        return self._slow_call(args)

    def _slow_call(self, args):
        state = self._state
        if state == "building" and (self._thread is None or not self._thread.is_alive()):
            self._begin_choice(warm_first=True)
            state = self._state
        if state == "measuring":
            return self._measured_call(args)
        if state == "settled":  # the calls before a recheck are used up
            if self._recheck_every <= 0:
                self._calls_left = 1 << 62
                return self.current(*args)
            self._begin_choice(warm_first=False)
            return self._measured_call(args)
        if state == "cold":
            clock = self._clock or time.perf_counter
            started = clock()
            try:
                return self.current(*args)
            finally:
                self._spent += clock() - started
                if self._spent >= self._hot_after:
                    self._start(list(args))  # built for this call's inputs: none are kept from the first call
        return self.current(*args)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the upper tier's build (if started); True once the build has finished."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self._thread is not None and not self._thread.is_alive()

    @property
    def decided(self) -> bool:
        """Whether a measurement has chosen the function the calls run."""
        return self._state == "settled"

    def measurement(self) -> str | None:
        """The times that chose (or are choosing) the running function, in words; None before any."""
        if self.choice is None:
            return None
        built = f"; {self._tier.name} built in {self.build_seconds * 1e3:.0f} ms" if self.build_seconds else ""
        timed = "; thread CPU time" if self._timed_by is time.thread_time else ""
        return self.choice.summary() + built + timed

    def _start(self, inputs: list) -> None:
        self._state = "building"
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
        self.build_seconds = time.perf_counter() - started
        self.upper = function

    def _begin_choice(self, warm_first: bool) -> None:
        if self.upper is not None and self._tier.name not in self.candidates:
            self.candidates = {self._tier.name: self.upper, **self.candidates}
        # The first tier has run already; a fresh candidate's first call is a warm-up.
        warmups = {name: int(warm_first and name != self._first_name) for name in self.candidates}
        self.choice = TierChoice(list(self.candidates), rounds=self._rounds, warmups=warmups)
        self._signature, self._skipped = None, 0
        self._timed_by = None  # the clock of the last measured call (NOTE: [measuring clock])
        self._state = "measuring"
        self._settle_if_decided()

    def _measured_call(self, args):
        name = self.choice.next()
        function = self.candidates[name]
        self.current, self.backend_name = function, name
        signature = _signature(args)
        if self._signature is None:
            self._signature = signature
        clock = self._timed_by = self._clock or self._tier.clock()
        started = clock()
        result = function(*args)
        elapsed = clock() - started
        if signature == self._signature:
            self.choice.record(name, elapsed)
        else:  # other sizes: not comparable (NOTE: [tier choice by measurement])
            self._skipped += 1
            if self._skipped >= MAX_SKIPPED:
                self.choice.decide_now()
        self._settle_if_decided()
        return result

    def _settle_if_decided(self) -> None:
        if not self.choice.decided:
            return
        self.backend_name = self.choice.winner
        self.current = self.candidates[self.backend_name]
        self._state = "settled"
        self._calls_left = self._recheck_every if self._recheck_every > 0 else 1 << 62
        self._recheck_every *= 2
        graph_log.debug("%s: runs %s (measured %s)", self._label, self.backend_name, self.choice.summary())

    def __repr__(self) -> str:
        return f"<TieredFunction of {self._label} running {self.backend_name}>"
