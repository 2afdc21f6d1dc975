# fuzz-case: seed=50 backend=eager kind=fallback (internal compiler error: list.index without bounds; list.index(x, start) searched before start)
import numpy as np
import dynamo_lite as dl


def f(x, n, xs):
    ys = [n, 2, 3, 2, n]
    found = ys.index(2) + ys.index(2, 2) * 10 + ys.index(n, 1) * 100 + ys.index(3, -3, 4) * 1000
    last = xs.index(xs[0])
    return x * found + last


def make_inputs(k):
    t = dl.ones(3) + k
    return t, 1 + k % 2, [t]
