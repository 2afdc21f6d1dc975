"""``python3 -m tests.fuzz --seeds 0:5000``: run generated programs, report and minimize mismatches."""
from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import time
from pathlib import Path

from .generator import generate
from .known_failures import KNOWN_FAILURES
from .minimize import minimize
from .pool import run_seeds, worker_main
from .regressions import load_cases, save_case
from .runner import check_source, cpu_backends
from .triage import guess_family, one_line

KNOWN_FILE = Path(__file__).parent / "known_failures.py"

CLASSES = ("graph", "breaks", "no_graph", "fallback")


def parse_seeds(text: str) -> range:
    """``"0:5000"`` (half-open) or ``"17"``."""
    if ":" in text:
        start, stop = text.split(":")
        return range(int(start), int(stop))
    return range(int(text), int(text) + 1)


def minimized_failure(seed: int, mismatch, backends_budget: int):
    """The smallest program of ``seed`` failing on the same backend the same way."""
    signature = mismatch.signature()

    def fails(source: str) -> bool:
        outcome = check_source(source, [mismatch.backend], f"fuzz_min_{seed}", calls=mismatch.call + 1)
        return any(m.signature() == signature for m in outcome.mismatches)

    return minimize(generate(seed), fails, backends_budget)


def report(counts, classes, reasons, kinds, elapsed, out) -> None:
    total = sum(counts.values())
    checked = total - counts["invalid"] - counts["crash"]
    print(f"\n{total} programs in {elapsed:.1f}s ({elapsed / max(total, 1) * 1000:.0f} ms each): "
          f"{counts['ok']} ok, {counts['mismatch']} mismatches, {counts['crash']} crashes, "
          f"{counts['invalid']} invalid", file=out)
    shares = ", ".join(f"{name} {classes[name]} ({classes[name] / max(checked, 1):.0%})" for name in CLASSES)
    print(f"compiled as: {shares}", file=out)
    if kinds:
        print("mismatch kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()), file=out)
    if reasons:
        print("most common fallback reasons:", file=out)
        for reason, n in reasons.most_common(8):
            print(f"  {n:5d}  {reason}", file=out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m tests.fuzz", description=__doc__)
    parser.add_argument("--seeds", default="0:200", help="a seed or a half-open range START:STOP")
    parser.add_argument("--backends", default=",".join(cpu_backends()), help="comma-separated backends")
    parser.add_argument("--minimize", type=int, default=10, metavar="N", help="minimize the first N failures")
    parser.add_argument("--budget", type=int, default=150, help="candidate programs per minimization")
    parser.add_argument("--save", action="store_true", help="save minimized failures under tests/fuzz/regressions/")
    parser.add_argument("--show", action="store_true", help="print each seed's program and exit")
    parser.add_argument("--cases", action="store_true", help="run the saved regression cases instead")
    parser.add_argument("--known", action="store_true",
                        help="rewrite known_failures.py: failing seeds already listed keep their reason, "
                             "new ones are minimized and triaged, passing ones are dropped")
    parser.add_argument("-j", "--jobs", type=int, default=1,
                        help="worker processes at once (at most the machine's cores; it is shared)")
    parser.add_argument("--chunk", type=int, default=50, help="seeds per worker process")
    parser.add_argument("--seed-timeout", type=float, default=600.0,
                        help="seconds without progress after which a seed counts as a crash (hang)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    seeds = parse_seeds(args.seeds)
    if args.show:
        for seed in seeds:
            print(f"# seed {seed}\n{generate(seed).source()}")
        return 0
    if args.cases:
        return run_cases(backends)
    if args.worker:
        return worker_main(seeds, backends)
    jobs = max(1, min(args.jobs, os.cpu_count() or 1))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the workers too (pool's finally)

    counts, classes = collections.Counter(), collections.Counter()
    reasons, kinds = collections.Counter(), collections.Counter()
    failures, crashes = [], []
    start = time.perf_counter()
    print(f"fuzzing seeds {seeds.start}:{seeds.stop} on {', '.join(backends)} "
          f"(Python {sys.version.split()[0]}, {jobs} worker(s), {args.chunk} seeds each)", flush=True)
    results = {}
    for i, outcome in enumerate(run_seeds(seeds, backends, jobs, args.chunk, args.seed_timeout), 1):
        results[outcome.seed] = outcome
        if outcome.status == "crash":
            print(f"seed {outcome.seed}: CRASH {outcome.crash}", flush=True)
        elif outcome.mismatches:
            print(f"seed {outcome.seed}: {outcome.mismatches[0]}", flush=True)
        if i % 100 == 0:
            mismatches = sum(r.status == "mismatch" for r in results.values())
            print(f"... {i}/{len(seeds)} programs, {mismatches} mismatches, "
                  f"{time.perf_counter() - start:.0f}s", flush=True)
    for outcome in sorted(results.values(), key=lambda r: r.seed):
        counts[outcome.status] += 1
        if outcome.status == "crash":
            crashes.append(outcome.seed)
            continue
        if outcome.status != "invalid":
            classes[outcome.compiled_as] += 1
        for reason in outcome.fallback_reasons:
            reasons[reason.split(" at ")[0][:100]] += 1
        for mismatch in outcome.mismatches:
            kinds[mismatch.kind] += 1
        if outcome.mismatches:
            failures.append((outcome.seed, outcome.mismatches[0]))
    report(counts, classes, reasons, kinds, time.perf_counter() - start, sys.stdout)
    if crashes:
        print("crashed seeds (rerun one with `python3 -X faulthandler -m tests.fuzz --worker --seeds N`): "
              + " ".join(map(str, sorted(crashes))))
    failures.sort()

    known, families, seen = {}, collections.Counter(), set()
    if args.known:  # seeds already listed keep their reason: only new failures are minimized
        known = {seed: KNOWN_FAILURES[seed] for seed, _ in failures if seed in KNOWN_FAILURES}
        failures = [(seed, mismatch) for seed, mismatch in failures if seed not in known]
    for seed, mismatch in failures[: len(failures) if args.known else args.minimize]:
        small = minimized_failure(seed, mismatch, args.budget)
        family = guess_family(small)
        families[family.split(":")[0]] += 1
        known[seed] = f"{family} — minimized: {one_line(small)}"
        source = small.source()
        if source in seen:
            continue
        seen.add(source)
        print(f"\n=== seed {seed}, minimized to {small.size()} statements ({family}): {mismatch}\n{source}")
        if args.save:
            path = save_case(source, seed, mismatch.backend, mismatch.kind, family)
            print(f"saved {path}")
    if families:
        print("\nroot causes of the minimized failures: " + ", ".join(f"{k} {n}" for k, n in families.most_common()))
    if args.known:
        write_known(known)
    return 1 if counts["mismatch"] or counts["crash"] else 0


def write_known(known: dict) -> None:
    """Rewrite the table of known failing seeds (keeping its docstring)."""
    text = KNOWN_FILE.read_text()
    head = text.split("KNOWN_FAILURES", 1)[0]
    entries = "".join(f"    {seed}: {reason!r},\n" for seed, reason in sorted(known.items()))
    KNOWN_FILE.write_text(f"{head}KNOWN_FAILURES: dict[int, str] = {{\n{entries}}}\n")
    print(f"wrote {len(known)} known failures to {KNOWN_FILE}")


def run_cases(backends: list[str]) -> int:
    """Check every saved regression case; print which still fail."""
    failing = 0
    for case in load_cases():
        outcome = check_source(case.source, backends, case.path.stem)
        state = "FAIL" if outcome.mismatches else "ok"
        failing += bool(outcome.mismatches)
        print(f"{state:4s} {case.path.name}  (xfail: {case.xfail})")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
