# fuzz-case: family E, at a graph break (hand-reduced from seeds 81, 133, 177)
import numpy as np
import dynamo_lite as dl


def f(x, xs):
    y = x + 1
    for i, v in enumerate(xs, 1):
        y = y + v * i
        print("i", i)
        xs.append(v)
        if i > 3:
            break
    return y


def make_inputs(k):
    return dl.ones(3) + k, [dl.ones(3) * 2, dl.ones(3) * 3]
