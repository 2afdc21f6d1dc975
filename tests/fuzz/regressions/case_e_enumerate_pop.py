# fuzz-case: seed=105 backend=eager kind=stdout (hand-reduced: family E)
import numpy as np
import dynamo_lite as dl


def f(x, xs):
    y = x + 1
    for i, v in enumerate(xs):
        y = y + v
        xs.pop()
    return y, i, xs


def make_inputs(k):
    return dl.ones(3) + k, [dl.ones(3) * 2, dl.ones(3) * 3, dl.ones(3) * 4]
