# fuzz-case: seed=463 backend=eager kind=crash (the interpreter segfaulted in the resume function of a graph break inside a try: the hook's prologue recomputed the handlers' stack depths)
import numpy as np
import dynamo_lite as dl


def f(x, d):
    y = x.abs() + 1
    try:
        x = x.view(5, 3)
    except RuntimeError as e:
        y = d["zz"]
    return y


def make_inputs(k):
    return dl.ones(3, 4) + k, {"a": 1}
