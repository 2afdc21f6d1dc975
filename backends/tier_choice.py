"""Choosing a graph's implementation by measurement: interleaved timed calls, medians, the fastest kept.

NOTE: [tier choice by measurement] Once a graph's upper tier is built (or known not to
build), ``TierChoice`` decides which implementation its calls run from then on: the upper
tier (``native``), the first tier (``numpy``) and the graph run node by node (``eager``).
Each user call runs exactly one candidate (a graph may mutate its inputs, so a call is never
repeated to time another candidate); candidates take turns, so load on the machine falls on
all of them alike. A candidate's first call is a warm-up and is not counted (page faults,
thread pool start). After every round a candidate whose best time is more than
``drop_ratio`` times the best of all leaves the race (a slow eager run is not paid ``rounds``
times); after ``rounds`` counted rounds the candidate with the smallest median wins. Ties go
to the earlier candidate in the order given. Only calls with the input sizes of the first
measured call count (a graph with symbolic sizes may get others; their times would not
compare); after ``tiered.MAX_SKIPPED`` calls of other sizes the best so far wins. The decision is revisited rarely
(``TieredFunction`` restarts a choice after ``recheck_calls`` calls, doubling each time).
The logic is pure: it is told timings, never takes them, so tests drive it with made-up ones.
"""
from __future__ import annotations

from statistics import median


class TierChoice:
    """Which candidate the next call runs while measuring, and the winner once decided.

    Args:
        names: the candidates, in order of preference on a tie.
        rounds: counted calls of each candidate still in the race.
        warmups: uncounted first calls of each candidate (per name; default 1 each).
        drop_ratio: a candidate whose best is above this times the overall best is dropped.

    Example:
        >>> choice = TierChoice(["native", "numpy"], rounds=1, warmups={"native": 0, "numpy": 0})
        >>> choice.record(choice.next(), 1.0); choice.record(choice.next(), 2.0)
        >>> choice.winner
        'native'
    """

    def __init__(self, names, rounds: int = 3, warmups: dict | None = None, drop_ratio: float = 1.5):
        if not names:
            raise ValueError("TierChoice needs at least one candidate")
        self.names = list(dict.fromkeys(names))
        self.rounds, self.drop_ratio = rounds, drop_ratio
        self.warmups = {name: (warmups or {}).get(name, 1) for name in self.names}
        self.samples: dict = {name: [] for name in self.names}
        self.racing = list(self.names)
        self.dropped: dict = {}  # name -> best time when it left the race
        self._turn = 0
        self.winner: str | None = self.names[0] if len(self.names) == 1 else None

    @property
    def decided(self) -> bool:
        return self.winner is not None

    def next(self) -> str:
        """The candidate the next call should run (the winner once decided)."""
        if self.winner is not None:
            return self.winner
        return self.racing[self._turn % len(self.racing)]

    def record(self, name: str, seconds: float) -> None:
        """Count one call of ``name`` that took ``seconds``; decides after the last round."""
        if self.winner is not None or name not in self.racing:
            return
        if self.warmups[name] > 0:
            self.warmups[name] -= 1
        else:
            self.samples[name].append(seconds)
        self._turn += 1
        if self._turn % len(self.racing) == 0:
            self._end_round()

    def _end_round(self) -> None:
        counted = {name: self.samples[name] for name in self.racing if self.samples[name]}
        if len(counted) == len(self.racing):
            best = min(min(s) for s in counted.values())
            for name in list(self.racing):
                if min(counted[name]) > self.drop_ratio * best and len(self.racing) > 1:
                    self.racing.remove(name)
                    self.dropped[name] = min(counted[name])
        self._turn = 0
        if len(self.racing) == 1 or all(len(self.samples[name]) >= self.rounds for name in self.racing):
            self.winner = min(self.racing, key=lambda name: (median(self.samples[name]), self.names.index(name)))

    def decide_now(self) -> str:
        """End the race early: the smallest median among the candidates with counted calls (else the first)."""
        if self.winner is None:
            timed = [name for name in self.racing if self.samples[name]]
            self.winner = min(timed, key=lambda name: (median(self.samples[name]), self.names.index(name))) \
                if timed else self.names[0]
        return self.winner

    def medians(self) -> dict:
        """name -> median counted seconds (the best one for a dropped candidate), for measured ones."""
        return {name: (median(s) if name not in self.dropped else self.dropped[name])
                for name, s in self.samples.items() if s}

    def summary(self) -> str:
        """One line: each candidate's time and the choice (``native 1.20 ms, numpy 1.50 ms -> native``)."""
        medians = self.medians()
        parts = [f"{name} {_ms(medians[name])}" + (" (dropped)" if name in self.dropped else "")
                 for name in self.names if name in medians]
        return ", ".join(parts) + (f" -> {self.winner}" if self.winner else " (measuring)")


def _ms(seconds: float) -> str:
    if seconds >= 1e-2:
        return f"{seconds * 1e3:.1f} ms"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} us"
