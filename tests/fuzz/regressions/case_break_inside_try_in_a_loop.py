# fuzz-case: seed=323 backend=eager kind=crash (the compiled frame segfaulted the interpreter: a graph break inside a try inside a loop over d.items(); fixed by 3e56ec4)
import numpy as np
import dynamo_lite as dl


def f(x, d):
    t0 = x + 1
    for key, t1 in d.items():
        try:
            t1 = t1.view(5, 3)
        except RuntimeError as e:
            print("caught", key, e)
    return t0


def make_inputs(k):
    return dl.ones(3, 4) + k, {"a": dl.ones(3, 4), "b": dl.ones(3, 4) * k}
