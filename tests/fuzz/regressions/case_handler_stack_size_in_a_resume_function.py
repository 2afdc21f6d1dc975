# fuzz-case: seed=1320 backend=eager kind=exception (the except clause of a resume function inside a try ran with a too small value stack: the bytecode library sized it from the normal flow only, so the handler's call read garbage)
import numpy as np
import dynamo_lite as dl


def maybe_raise(v, k):
    if k > 1:
        raise ValueError(f"k too big: {k}")
    return v * k


def f(x, y, n, xs):
    t1 = x - 1
    try:
        for i in range(n):
            v = x.tolist()
        t1 = maybe_raise(t1, n)
    except (KeyError, IndexError, ValueError, RuntimeError) as e:
        print("caught", type(e).__name__, e)
        xs.append(y.clamp(-2, 2))
    return y, t1, xs


def make_inputs(k):
    return dl.ones(3, 4) + k, dl.ones(3, 4) * k, 1 + k % 2, [dl.ones(2)]
