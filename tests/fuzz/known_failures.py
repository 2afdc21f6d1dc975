"""Seeds of the fixed pytest set (``test_fuzz.SEEDS``) whose programs still behave
differently compiled, each with its root cause: the test marks them
``xfail(strict=True)``, so a fix turns the seed's test red until its line is removed.

Regenerate the list with ``python3 -m tests.fuzz --seeds 0:250 --known`` after a fix.
"""

KNOWN_FAILURES: dict[int, str] = {
}
