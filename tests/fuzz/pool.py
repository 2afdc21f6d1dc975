"""Run fuzz seeds in chunks in worker subprocesses, so a crash of one seed does not end the run.

A worker (``python3 -X faulthandler -m tests.fuzz --worker --seeds A:B``) checks its seeds
in order and writes two protocol lines per seed to stdout: ``@@fuzz start <seed>`` before
and ``@@fuzz done <json>`` after. When a worker dies (a segfault, an abort) or stops making
progress for ``seed_timeout`` seconds, the seed it started last is the one that crashed:
it is recorded as a crash with the worker's exit status and the end of its stderr (the
faulthandler traceback), and a new worker continues with the seeds after it.
"""
from __future__ import annotations

import collections
import faulthandler
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from .generator import generate
from .runner import Mismatch, check_source

PROTOCOL = "@@fuzz "
# The tests of this module make a worker segfault at this seed (a real crash, on purpose).
CRASH_SEED_VARIABLE = "DL_FUZZ_TEST_CRASH_AT_SEED"
STDERR_TAIL_LINES = 30


@dataclass
class SeedResult:
    """The verdict on one seed as a worker reports it (or as the pool records a crash)."""

    seed: int
    status: str  # ok | mismatch | invalid | crash
    compiled_as: str = ""
    fallback_reasons: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    crash: str = ""  # how the worker died, and the end of its stderr

    def to_json(self) -> str:
        payload = dict(self.__dict__, mismatches=[m.__dict__ for m in self.mismatches])
        return json.dumps(payload)

    @classmethod
    def from_json(cls, text: str) -> "SeedResult":
        payload = json.loads(text)
        payload["mismatches"] = [Mismatch(**m) for m in payload["mismatches"]]
        return cls(**payload)


def check_seed(seed: int, backends: list[str]) -> SeedResult:
    """Check one generated program in this process."""
    outcome = check_source(generate(seed).source(), backends, f"fuzz_{seed}")
    return SeedResult(seed, outcome.status, outcome.compiled_as, outcome.fallback_reasons, outcome.mismatches)


def worker_main(seeds: range, backends: list[str]) -> int:
    """The worker side: check ``seeds`` in order, reporting each through the protocol."""
    out = sys.stdout
    crash_at = os.environ.get(CRASH_SEED_VARIABLE)
    for seed in seeds:
        print(f"{PROTOCOL}start {seed}", file=out, flush=True)
        if crash_at == str(seed):
            faulthandler._sigsegv()
        result = check_seed(seed, backends)
        print(f"{PROTOCOL}done {result.to_json()}", file=out, flush=True)
    return 0


class _Worker:
    """One running worker subprocess over a range of seeds."""

    def __init__(self, seeds: range, backends: list[str], python: str):
        self.seeds = seeds
        self.current: int | None = None
        self.finished: set[int] = set()
        self.buffer = b""
        self.last_progress = time.monotonic()
        self.stderr = tempfile.TemporaryFile()
        command = [python, "-X", "faulthandler", "-m", "tests.fuzz", "--worker",
                   "--seeds", f"{seeds.start}:{seeds.stop}", "--backends", ",".join(backends)]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self.stderr, env=env,
                                        cwd=os.getcwd())

    def read_lines(self) -> list[str] | None:
        """The complete lines the worker wrote since the last read; None at end of output."""
        chunk = os.read(self.process.stdout.fileno(), 65536)
        if not chunk:
            return None
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [line.decode("utf-8", "replace") for line in lines]

    def stderr_tail(self) -> str:
        self.stderr.seek(0)
        lines = self.stderr.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-STDERR_TAIL_LINES:])

    def remaining(self, culprit: int) -> range:
        """The seeds still to check: after the crashing seed, or from the seed the worker
        died at when an earlier one was to blame (it gets a run of its own)."""
        return range(self.current + 1 if culprit == self.current else self.current, self.seeds.stop)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        self.stderr.close()


def _crashes_alone(seed: int, backends: list[str], python: str, seed_timeout: float) -> str | None:
    """Run ``seed`` in a worker of its own: how it died, or None if it passed."""
    command = [python, "-X", "faulthandler", "-m", "tests.fuzz", "--worker", "--seeds", str(seed),
               "--backends", ",".join(backends)]
    try:
        done = subprocess.run(command, capture_output=True, timeout=seed_timeout, cwd=os.getcwd())
    except subprocess.TimeoutExpired:
        return _exit_text(None, True, seed_timeout)
    if done.returncode == 0:
        return None
    tail = "\n".join(done.stderr.decode("utf-8", "replace").splitlines()[-STDERR_TAIL_LINES:])
    return f"{_exit_text(done.returncode, False, seed_timeout)}\n{tail}"


def _culprit(worker: _Worker, how: str, backends, python, seed_timeout) -> SeedResult:
    """The crash of ``worker``, blamed on the seed that causes it: the seed it was running
    if that seed crashes on its own, else the first earlier seed of its chunk that does
    (a corrupted interpreter may only fail later)."""
    if _crashes_alone(worker.current, backends, python, seed_timeout) is None:
        for seed in range(worker.seeds.start, worker.current):
            alone = _crashes_alone(seed, backends, python, seed_timeout)
            if alone is not None:
                return SeedResult(seed, "crash", crash=f"{alone}\n(the worker died later, at seed {worker.current})")
        how += "\n(no seed of the chunk crashes on its own)"
    return SeedResult(worker.current, "crash", crash=how)


def _exit_text(returncode: int | None, timed_out: bool, seed_timeout: float) -> str:
    if timed_out:
        return f"no progress for {seed_timeout:.0f}s (killed)"
    if returncode is not None and returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit status {returncode}"


def run_seeds(seeds: range, backends: list[str], jobs: int = 1, chunk: int = 50,
              seed_timeout: float = 600.0, python: str | None = None):
    """Yield a ``SeedResult`` per seed (in completion order), running ``jobs`` workers at once.

    A crash found later for a seed that already passed in its worker is yielded again:
    the last result of a seed is its verdict.
    """
    python = python or sys.executable
    pending = collections.deque(range(start, min(start + chunk, seeds.stop))
                                for start in range(seeds.start, seeds.stop, chunk))
    selector = selectors.DefaultSelector()
    running: dict[int, _Worker] = {}

    def launch() -> None:
        while pending and len(running) < jobs:
            worker = _Worker(pending.popleft(), backends, python)
            running[worker.process.stdout.fileno()] = worker
            selector.register(worker.process.stdout, selectors.EVENT_READ, worker)

    def retire(worker: _Worker, timed_out: bool = False):
        selector.unregister(worker.process.stdout)
        del running[worker.process.stdout.fileno()]
        if timed_out:
            worker.process.kill()
        returncode = worker.process.wait()
        crashed = worker.current is not None and worker.current not in worker.finished
        if crashed:
            how = _exit_text(returncode, timed_out, seed_timeout)
            culprit = _culprit(worker, f"{how}\n{worker.stderr_tail()}", backends, python, seed_timeout)
            yield culprit
            rest = worker.remaining(culprit.seed)
            if len(rest):
                pending.appendleft(rest)
        elif returncode != 0 or len(worker.finished) < len(worker.seeds):
            # Died between seeds (e.g. at start-up): the run cannot trust this chunk.
            raise RuntimeError(f"fuzz worker for seeds {worker.seeds.start}:{worker.seeds.stop} failed "
                               f"({_exit_text(returncode, False, seed_timeout)}):\n{worker.stderr_tail()}")
        worker.close()

    launch()
    try:
        while running:
            for key, _ in selector.select(timeout=1.0):
                worker = key.data
                lines = worker.read_lines()
                if lines is None:
                    yield from retire(worker)
                    continue
                for line in lines:
                    if not line.startswith(PROTOCOL):
                        continue  # a program's own output outside a call
                    verb, _, rest = line[len(PROTOCOL):].partition(" ")
                    worker.last_progress = time.monotonic()
                    if verb == "start":
                        worker.current = int(rest)
                    else:
                        result = SeedResult.from_json(rest)
                        worker.finished.add(result.seed)
                        yield result
            now = time.monotonic()
            for worker in [w for w in running.values() if now - w.last_progress > seed_timeout]:
                yield from retire(worker, timed_out=True)
            launch()
    finally:
        for worker in list(running.values()):
            worker.close()
        selector.close()

