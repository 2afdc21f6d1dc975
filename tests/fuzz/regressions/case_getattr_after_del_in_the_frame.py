# fuzz-case: seed=570 backend=eager kind=globals (reading an attribute deleted in the frame skipped the class's __getattr__)
import numpy as np
import dynamo_lite as dl

LOG = []


class Box:
    def __init__(self, t):
        self.t = t

    def __getattr__(self, name):
        LOG.append(name)
        raise AttributeError(name)


def f(x, obj):
    y = x * 2
    obj.extra = 1
    del obj.extra
    found = hasattr(obj, "extra")
    return y + found, found


def make_inputs(k):
    return dl.ones(3) + k, Box(dl.ones(3))
