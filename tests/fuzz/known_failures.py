"""Seeds of the fixed pytest set (``test_fuzz.SEEDS``) whose programs still behave
differently compiled, each with its root cause: the test marks them
``xfail(strict=True)``, so a fix turns the seed's test red until its line is removed.

Regenerate the list with ``python3 -m tests.fuzz --seeds 0:250 --known`` after a fix.
"""

KNOWN_FAILURES: dict[int, str] = {
    81: 'E: a loop over a list that the code after a graph break in the loop mutates iterates a tuple snapshot — minimized: fn1 = lambda u: u * 2 + x; t2 = fn1(x); for i9, t8 in enumerate(xs):; if i9 >= 3:; break; v12 = f"{i9:03d} {float(y.sum()):.2f}"; xs.extend([t2, x]); return ...',
    133: 'E: a loop over a list that the code after a graph break in the loop mutates iterates a tuple snapshot — minimized: global G_count, G_t; G_count += 1; for i2, t1 in enumerate(xs):; try:; x = xs[n + 1]; except (KeyError, IndexError, ValueError, RuntimeError) as e:; xs.inser...',
}
