# fuzz-case: family E (a dict argument that grows while it is iterated raises RuntimeError)
import numpy as np
import dynamo_lite as dl


def f(x, d):
    y = x * 2
    for key in d:
        d[key + "!"] = y
    return y


def make_inputs(k):
    return dl.ones(3) + k, {"a": 1}
