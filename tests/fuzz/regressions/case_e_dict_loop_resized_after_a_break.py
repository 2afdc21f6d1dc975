# fuzz-case: seed=1210 backend=eager kind=result (a dict resized after a graph break inside a loop over its items: eager raises "dictionary changed size during iteration", the compiled frame finished the loop over a snapshot)
import numpy as np
import dynamo_lite as dl


def f(x, d):
    y = x + 1
    for k, v in d.items():
        print(k, v.sum().item())
        d.setdefault("g", y)
    return y


def make_inputs(k):
    return dl.ones(3, 4) + k, {"a": dl.ones(3, 4), "b": dl.ones(3, 4) * k}
